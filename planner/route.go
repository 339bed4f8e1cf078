package planner

import (
	"fmt"
	"math"
)

// RouteScenario is a prefix-sharing workload on a pool of workers.
type RouteScenario struct {
	Workers        int // workers in the pool
	SlotsPerWorker int // KV slots (tokens) of one worker
	BlockSize      int // KV block size in tokens
	Prefixes       int // distinct shared prefixes
	PrefixTokens   int // tokens of each prefix
	Repeats        int // sends of each prefix
	TailTokens     int // unique tokens after the prefix on every send
}

// RoutePolicy is the analytic verdict for one routing policy.
type RoutePolicy struct {
	Name                   string  `json:"name"`
	PerWorkerWorkingTokens int     `json:"per_worker_working_set_tokens"`
	Fits                   bool    `json:"fits"`
	ExpectedHitRate        float64 `json:"expected_hit_rate"`
	Approximation          string  `json:"approximation"`
}

// RoutePlan says whether the prefix working set fits, per policy.
type RoutePlan struct {
	Workers            int           `json:"workers"`
	SlotsPerWorker     int           `json:"slots_per_worker"`
	BlockSize          int           `json:"block_size"`
	Requests           int           `json:"requests"`
	RepeatRequests     int           `json:"repeat_requests"`
	WorkingSetTokens   int           `json:"working_set_tokens"`
	WorkingSetBlocks   int           `json:"working_set_blocks"`
	FitsOneWorker      bool          `json:"fits_one_worker"`
	FitsPool           bool          `json:"fits_pool"`
	MinWorkersKVAware  int           `json:"min_workers_kv_aware"` // 0: no pool size fits (one prefix exceeds a worker)
	MinSlotsRoundRobin int           `json:"min_slots_round_robin"`
	Policies           []RoutePolicy `json:"policies"`
	Verdict            string        `json:"verdict"`
	Derivation         Derivation    `json:"derivation,omitempty"`
}

// PlanRoute estimates, without simulation, where a prefix working set fits
// and the hit rate each policy reaches. The approximations, stated in each
// policy's Approximation, are:
//
//   - a prefix occupies ceil(prefix_tokens / block) blocks on every worker
//     that holds it; tails are unique and never reused;
//   - round-robin and random spread the R sends of a prefix over workers at
//     random, so a worker holds a prefix with probability 1 − (1 − 1/N)^R,
//     and the k-th send finds an earlier send's worker with probability
//     1 − (1 − 1/N)^(k−1);
//   - KV-aware routing sends every repeat to the worker that holds the
//     prefix, so a worker holds ceil(P / N) prefixes;
//   - when a worker's share of the working set exceeds its slots, LRU keeps
//     about slots / share of it resident, and a repeat hits with that
//     probability (uniform reuse; real LRU under a cyclic order does worse,
//     which `kvplan simulate` shows).
func PlanRoute(sc RouteScenario) (*RoutePlan, error) {
	switch {
	case sc.Workers < 1:
		return nil, fmt.Errorf("workers must be >= 1 (got %d)", sc.Workers)
	case sc.SlotsPerWorker < 1:
		return nil, fmt.Errorf("slots per worker must be >= 1 (got %d)", sc.SlotsPerWorker)
	case sc.BlockSize < 1:
		return nil, fmt.Errorf("block size must be >= 1 (got %d)", sc.BlockSize)
	case sc.Prefixes < 1 || sc.PrefixTokens < 1 || sc.Repeats < 1:
		return nil, fmt.Errorf("prefixes, prefix tokens and repeats must each be >= 1 (got %d, %d, %d)", sc.Prefixes, sc.PrefixTokens, sc.Repeats)
	case sc.TailTokens < 0:
		return nil, fmt.Errorf("tail tokens must be >= 0 (got %d)", sc.TailTokens)
	}
	p := &RoutePlan{Workers: sc.Workers, SlotsPerWorker: sc.SlotsPerWorker, BlockSize: sc.BlockSize}
	d := &p.Derivation
	n, r := float64(sc.Workers), float64(sc.Repeats)
	p.Requests = sc.Prefixes * sc.Repeats
	p.RepeatRequests = sc.Prefixes * (sc.Repeats - 1)
	prefixBlocks := ceilDiv(sc.PrefixTokens, sc.BlockSize)
	prefixSlots := prefixBlocks * sc.BlockSize
	p.WorkingSetBlocks = int(d.Add("working_set_blocks", float64(sc.Prefixes*prefixBlocks), "blocks",
		"prefixes × ceil(prefix tokens / block size)", "%d × ceil(%d / %d)", sc.Prefixes, sc.PrefixTokens, sc.BlockSize))
	p.WorkingSetTokens = int(d.Add("working_set_tokens", float64(sc.Prefixes*sc.PrefixTokens), "tokens",
		"prefixes × prefix tokens", "%d × %d", sc.Prefixes, sc.PrefixTokens))
	p.FitsOneWorker = p.WorkingSetBlocks*sc.BlockSize <= sc.SlotsPerWorker
	p.FitsPool = ceilDiv(sc.Prefixes, sc.Workers)*prefixSlots <= sc.SlotsPerWorker

	// Round-robin and random: coverage and same-worker probability.
	coverage := 1 - math.Pow(1-1/n, r)
	d.Add("rr_coverage", coverage, "fraction", "1 − (1 − 1/workers)^repeats: share of prefixes a worker ends up holding", "1 − (1 − 1/%d)^%d", sc.Workers, sc.Repeats)
	rrShare := int(math.Ceil(coverage * float64(sc.Prefixes) * float64(prefixSlots)))
	same := 0.0
	for k := 2; k <= sc.Repeats; k++ {
		same += 1 - math.Pow(1-1/n, float64(k-1))
	}
	if sc.Repeats > 1 {
		same /= r - 1
	}
	d.Add("rr_same_worker", same, "fraction", "mean over sends k = 2..R of 1 − (1 − 1/workers)^(k − 1)", "workers %d, repeats %d", sc.Workers, sc.Repeats)
	resident := func(share int) float64 { return math.Min(1, float64(sc.SlotsPerWorker)/math.Max(1, float64(share))) }
	rrHit := same * resident(rrShare)
	d.Add("rr_expected_hit_rate", rrHit, "fraction", "same-worker probability × min(1, slots / per-worker share)", "%.4f × min(1, %d / %d)", same, sc.SlotsPerWorker, rrShare)

	kvShare := ceilDiv(sc.Prefixes, sc.Workers) * prefixSlots
	kvHit := resident(kvShare)
	d.Add("kv_aware_expected_hit_rate", kvHit, "fraction", "min(1, slots / (ceil(prefixes / workers) × prefix slots))", "min(1, %d / %d)", sc.SlotsPerWorker, kvShare)

	rrApprox := "a worker holds 1 − (1 − 1/N)^R of the prefixes; a repeat finds its worker with mean probability 1 − (1 − 1/N)^(k−1); LRU keeps slots/share resident"
	p.Policies = []RoutePolicy{
		{Name: "round-robin", PerWorkerWorkingTokens: rrShare, Fits: rrShare <= sc.SlotsPerWorker, ExpectedHitRate: rrHit, Approximation: rrApprox + " (shuffled order makes round-robin behave like random)"},
		{Name: "random", PerWorkerWorkingTokens: rrShare, Fits: rrShare <= sc.SlotsPerWorker, ExpectedHitRate: rrHit, Approximation: rrApprox},
		{Name: "kv-aware", PerWorkerWorkingTokens: kvShare, Fits: kvShare <= sc.SlotsPerWorker, ExpectedHitRate: kvHit, Approximation: "each prefix lives on one worker: ceil(P/N) prefixes per worker; LRU keeps slots/share resident"},
		{Name: "kv-aware-no-events", PerWorkerWorkingTokens: rrShare, Fits: rrShare <= sc.SlotsPerWorker, ExpectedHitRate: rrHit, Approximation: "no KV events: every overlap is 0, so the router load-balances and reaches random's hit rate (FACTS §5)"},
	}

	// Fewest workers at which KV-aware routing holds the working set.
	if prefixSlots <= sc.SlotsPerWorker {
		perWorker := sc.SlotsPerWorker / prefixSlots
		p.MinWorkersKVAware = ceilDiv(sc.Prefixes, perWorker)
		d.Add("min_workers_kv_aware", float64(p.MinWorkersKVAware), "workers", "ceil(prefixes / floor(slots / prefix slots))", "ceil(%d / floor(%d / %d))", sc.Prefixes, sc.SlotsPerWorker, prefixSlots)
	}
	p.MinSlotsRoundRobin = p.WorkingSetBlocks * sc.BlockSize
	d.Add("min_slots_round_robin", float64(p.MinSlotsRoundRobin), "tokens", "working set blocks × block size: every worker must hold every prefix", "%d × %d", p.WorkingSetBlocks, sc.BlockSize)
	p.Verdict = p.verdict()
	return p, nil
}

func (p *RoutePlan) verdict() string {
	switch {
	case p.FitsOneWorker:
		return fmt.Sprintf("the working set (%d tokens) fits one worker's %d slots: any policy reuses prefixes; KV-aware routing adds only 'same place' hits", p.WorkingSetTokens, p.SlotsPerWorker)
	case p.FitsPool:
		return fmt.Sprintf("KV-aware routing pays off: the working set (%d tokens) exceeds one worker's %d slots but fits the pool of %d when each prefix stays on one worker", p.WorkingSetTokens, p.SlotsPerWorker, p.Workers)
	case p.MinWorkersKVAware > 0:
		return fmt.Sprintf("the working set does not fit even under KV-aware routing: use at least %d workers, or more slots per worker", p.MinWorkersKVAware)
	default:
		return "one prefix is larger than a worker's slots: no routing can reuse it; add KV memory per worker"
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
