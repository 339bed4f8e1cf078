package capacity

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvplan/kvplan/sim"
	"github.com/kvplan/kvplan/units"
)

// DisagreeAbove is the relative difference between the analytic and the
// simulated figure above which a candidate's figures are said to disagree.
const DisagreeAbove = 0.20

// simPolicy routes the simulated requests without prefix reuse; with
// prefixes, kv-aware routing (Dynamo's KV router) keeps them apart.
var simPolicy = "round-robin"

// Verify runs the timed simulator (sim) on the first n candidates that meet
// the SLO and on the best of each mode, at the candidate's rate with requests Poisson arrivals (seeded),
// through the same step-time models, and records both figures. The
// simulator reports TTFT percentiles p50, p90 and p99; its p95 is taken
// log-linearly between p90 and p99 (exact for an exponential tail):
// p95 ≈ p90 + (p99 − p90) × ln 2 / ln 10, plus the frontend overhead the
// simulator leaves out. Its per-token figure is TPOT
// (each request's mean gap), so ITL is compared on the mean.
//
// The replay is bounded by cost, so that every flag value kvplan accepts
// verifies in seconds (--gpus 100,000 took 49.5 s and 21.5 GB): a pool of
// more than maxSimWorkers workers is replayed as a sample of identical
// workers at the rate that gives each the same load (sample), and the
// requests of all candidates together carry at most maxVerifyTokens tokens.
// Both are said in res.Notes when they apply.
func (q *Query) Verify(res *Result, n, requests int, seed uint64) error {
	var todo []*Candidate
	for _, c := range res.Candidates {
		if len(todo) >= n {
			break
		}
		if c.MeetsSLO {
			todo = append(todo, c)
		}
	}
	// The best of each mode too, so the side-by-side comparison has both figures.
	for _, c := range []*Candidate{res.BestAggregated, res.BestDisaggregated} {
		if c != nil && n > 0 && c.Simulated == nil && !slices.Contains(todo, c) {
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	perRequest := float64(q.InputTokens + q.OutputTokens)
	if most := int(float64(maxVerifyTokens) / float64(len(todo)) / perRequest); most < requests {
		requests = max(minVerifyRequests, most)
		res.Notes = append(res.Notes, fmt.Sprintf("the timed simulator replayed %s requests a candidate: %d candidates × %s tokens a request is at most %s tokens, the most one verification replays",
			units.Thousands(int64(requests)), len(todo), units.Thousands(int64(perRequest)), units.Thousands(int64(maxVerifyTokens))))
	}
	for _, c := range todo {
		smp, why := q.sample(c)
		if why != "" {
			res.Notes = append(res.Notes, fmt.Sprintf("%s is not simulated: %s", c.Describe(), why))
			continue
		}
		sv, err := q.simulate(c, smp, requests, seed)
		if err != nil {
			return fmt.Errorf("simulate %s: %w", c.Describe(), err)
		}
		if smp.note != "" {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: %s", c.Describe(), smp.note))
		}
		c.Simulated = sv
	}
	return nil
}

// The bounds of a verification's cost. A worker of the timed simulator
// holds its own cache tables and batch, so memory and time grow with the
// workers (1,000 workers took 1.6 GB); its time grows with the tokens of
// the requests (about 20 million tokens/s on this project's machine, busy).
var (
	maxSimWorkers   = 64         // workers of one replayed candidate, both roles together
	maxVerifyTokens = 100_000_000 // requests × (input + output tokens), all candidates together
)

const minVerifyRequests = 20 // requests a candidate replays however long they are

// sample is what the simulator replays of a candidate: every worker, or a
// sample of identical workers with the rate scaled so that each worker
// gets the load it gets in the whole pool.
type sample struct {
	workers  []int // per role
	rate     float64
	prefixes int // distinct prefixes (q.Prefixes), scaled with the workers that cache them
	sampled  bool
	note     string
}

// sample picks the workers to replay c on, or says why c cannot be
// replayed within maxSimWorkers.
func (q *Query) sample(c *Candidate) (sample, string) {
	e := c.load
	all := 0
	for _, n := range e.workers {
		all += n
	}
	if all <= maxSimWorkers {
		return sample{workers: e.workers, rate: e.rate, prefixes: q.Prefixes}, ""
	}
	var smp sample
	if len(e.workers) == 1 {
		n := e.workers[0]
		smp = sample{workers: []int{maxSimWorkers}, rate: e.rate * float64(maxSimWorkers) / float64(n)}
	} else {
		// Prefill exact (rate' / P' = rate / P), decode as close as the
		// sample allows: the P' and D' with P' + D' ≤ maxSimWorkers whose
		// decode load is nearest, the larger sample on a tie.
		p, d := e.workers[0], e.workers[1]
		bestErr := math.Inf(1)
		for ps := 1; ps < maxSimWorkers; ps++ {
			ds := int(math.Round(float64(ps) * float64(d) / float64(p)))
			if ds < 1 || ps+ds > maxSimWorkers {
				continue
			}
			if err := math.Abs(float64(d*ps)/float64(p*ds) - 1); err <= bestErr {
				bestErr, smp.workers = err, []int{ps, ds}
			}
		}
		if smp.workers == nil || bestErr > maxSampleLoadError {
			return sample{}, fmt.Sprintf("%d prefill and %d decode workers have no sample of at most %d workers whose every worker gets the load it gets in the whole deployment (within %.0f%%)",
				p, d, maxSimWorkers, maxSampleLoadError*100)
		}
		smp.rate = e.rate * float64(smp.workers[0]) / float64(p)
	}
	frac := smp.rate / e.rate
	if q.Prefixes > 0 {
		smp.prefixes = max(1, int(math.Round(float64(q.Prefixes)*frac)))
	}
	smp.sampled = true
	desc := make([]string, len(e.workers))
	for i := range e.workers {
		desc[i] = fmt.Sprintf("%s of %s", units.Thousands(int64(smp.workers[i])), units.Thousands(int64(e.workers[i])))
	}
	smp.note = fmt.Sprintf("the timed simulator replayed a sample of identical workers (%s) at %.4g requests/s, so that each gets the load it gets in the whole pool; at most %d workers are replayed",
		strings.Join(desc, " and "), smp.rate, maxSimWorkers)
	if q.Prefixes > 0 {
		smp.note += fmt.Sprintf(", and %s of the %s prefixes", units.Thousands(int64(smp.prefixes)), units.Thousands(int64(q.Prefixes)))
	}
	return smp, ""
}

// maxSampleLoadError bounds how far a sampled decode worker's load may be
// from the whole deployment's.
const maxSampleLoadError = 0.05

func (q *Query) simulate(c *Candidate, smp sample, requests int, seed uint64) (*Simulated, error) {
	s, e := c.shape, c.load
	block := s.roles[0].block
	syn := sim.Synthetic{Prefixes: requests, PrefixTokens: q.InputTokens, Repeats: 1, TailTokens: q.InputTokens,
		OutputTokens: q.OutputTokens, BlockSize: block, Seed: seed}
	switch {
	case q.CachedFraction > 0:
		shared := int(math.Round(q.CachedFraction * float64(q.InputTokens)))
		syn.Prefixes, syn.Repeats, syn.TailTokens = 1, requests, q.InputTokens-shared
	case q.Prefixes > 0:
		syn.Prefixes, syn.Repeats = smp.prefixes, max(1, requests/smp.prefixes)
		syn.TailTokens = q.InputTokens - q.PrefixTokens
	}
	src, err := syn.Open()
	if err != nil {
		return nil, err
	}
	first := s.roles[0]
	cfg := sim.DefaultConfig()
	cfg.Workers, cfg.BlockSize, cfg.Policy, cfg.Seed, cfg.RatePerS = smp.workers[0], block, q.routerPolicy(), seed, smp.rate
	cfg.CapacityBlocks = int(first.slots / int64(block))
	eng := &sim.Engine{Step: first.timer, MaxNumBatchedTokens: first.budget, MaxNumSeqs: first.maxSeqs}
	note := ""
	if s.mode == ModeDisaggregated {
		d := s.roles[1]
		eng.DecodeWorkers, eng.DecodeStep = smp.workers[1], d.timer
		eng.DecodeCapacityBlocks = int(d.slots / int64(block))
		eng.DecodeMaxNumBatchedTokens, eng.DecodeMaxNumSeqs = d.budget, d.maxSeqs
		t := e.transfer
		// One path per worker pair, as the analytic model has: a transfer
		// shares only its decode worker's path.
		pairs := t.pairs
		if smp.sampled {
			pairs = max(1, min(smp.workers[0], smp.workers[1]))
		}
		eng.Link = sim.Link{BytesPerS: s.link.EffectiveBytesPerS, LatencyMS: s.link.LatencyMS,
			BytesPerToken: float64(t.pathBytes) / float64(q.InputTokens), Dedicated: !s.link.Shared, Paths: pairs}
		if pairs < smp.workers[1] {
			note = fmt.Sprintf("decode worker i receives over path i mod %d, one path a worker pair", pairs)
		}
	}
	cfg.Engine = eng
	r, err := sim.Run(src, cfg)
	if err != nil {
		return nil, err
	}
	if r.Timing == nil {
		return nil, fmt.Errorf("the simulator returned no timing")
	}
	tm := r.Timing
	// The simulator starts at the engine: the frontend's overhead is added
	// to its TTFT, as the analytic TTFT counts it.
	fe := q.FrontendMS
	sv := &Simulated{Requests: tm.Completed, Note: note,
		SampledWorkers: sampledWorkers(smp), SampleRatePerS: sampleRate(smp),
		TTFTP95MS: fe + tm.TTFTMS.P90 + (tm.TTFTMS.P99-tm.TTFTMS.P90)*math.Ln2/math.Ln10,
		TTFTP90MS: fe + tm.TTFTMS.P90, TTFTP99MS: fe + tm.TTFTMS.P99, ITLMeanMS: tm.TPOTMS.Mean, TPOTP90MS: tm.TPOTMS.P90,
		TransferMeanMS: tm.TransferMS.Mean, Rejected: tm.Rejected}
	sv.TTFTDiff = relDiff(c.TTFTP95MS, sv.TTFTP95MS)
	sv.ITLDiff = relDiff(c.ITLMeanMS, sv.ITLMeanMS)
	sv.Disagree = math.Abs(sv.TTFTDiff) > DisagreeAbove || math.Abs(sv.ITLDiff) > DisagreeAbove
	return sv, nil
}

// relDiff is (analytic − simulated) / simulated, 0 when both are 0.
func relDiff(analytic, simulated float64) float64 {
	if simulated == 0 {
		if analytic == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return (analytic - simulated) / simulated
}

// routerPolicy is the router the plan assumes: round-robin without prefix
// reuse, Dynamo's KV router with it (it sends a prefix back to the worker
// that holds it).
func (q *Query) routerPolicy() string {
	if q.CachedFraction > 0 || q.Prefixes > 0 {
		return "kv-aware"
	}
	return simPolicy
}

// sampledWorkers and sampleRate are the sample's figures for JSON: nil and
// 0 (left out) when every worker was replayed.
func sampledWorkers(smp sample) []int {
	if !smp.sampled {
		return nil
	}
	return smp.workers
}

func sampleRate(smp sample) float64 {
	if !smp.sampled {
		return 0
	}
	return smp.rate
}
