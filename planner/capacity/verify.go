package capacity

import (
	"fmt"
	"math"
	"slices"

	"github.com/kvplan/kvplan/sim"
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
	for _, c := range todo {
		sv, err := q.simulate(c, requests, seed)
		if err != nil {
			return fmt.Errorf("simulate %s: %w", c.Describe(), err)
		}
		c.Simulated = sv
	}
	return nil
}

func (q *Query) simulate(c *Candidate, requests int, seed uint64) (*Simulated, error) {
	s, e := c.shape, c.load
	block := s.roles[0].block
	syn := sim.Synthetic{Prefixes: requests, PrefixTokens: q.InputTokens, Repeats: 1, TailTokens: q.InputTokens,
		OutputTokens: q.OutputTokens, BlockSize: block, Seed: seed}
	switch {
	case q.CachedFraction > 0:
		shared := int(math.Round(q.CachedFraction * float64(q.InputTokens)))
		syn.Prefixes, syn.Repeats, syn.TailTokens = 1, requests, q.InputTokens-shared
	case q.Prefixes > 0:
		syn.Prefixes, syn.Repeats = q.Prefixes, max(1, requests/q.Prefixes)
		syn.TailTokens = q.InputTokens - q.PrefixTokens
	}
	src, err := syn.Open()
	if err != nil {
		return nil, err
	}
	first := s.roles[0]
	cfg := sim.DefaultConfig()
	cfg.Workers, cfg.BlockSize, cfg.Policy, cfg.Seed, cfg.RatePerS = e.workers[0], block, q.routerPolicy(), seed, e.rate
	cfg.CapacityBlocks = int(first.slots / int64(block))
	eng := &sim.Engine{Step: first.timer, MaxNumBatchedTokens: first.budget, MaxNumSeqs: first.maxSeqs}
	note := ""
	if s.mode == ModeDisaggregated {
		d := s.roles[1]
		eng.DecodeWorkers, eng.DecodeStep = e.workers[1], d.timer
		eng.DecodeCapacityBlocks = int(d.slots / int64(block))
		eng.DecodeMaxNumBatchedTokens, eng.DecodeMaxNumSeqs = d.budget, d.maxSeqs
		t := e.transfer
		// One path per worker pair, as the analytic model has: a transfer
		// shares only its decode worker's path.
		eng.Link = sim.Link{BytesPerS: s.link.EffectiveBytesPerS, LatencyMS: s.link.LatencyMS,
			BytesPerToken: float64(t.pathBytes) / float64(q.InputTokens), Dedicated: !s.link.Shared, Paths: t.pairs}
		if t.pairs < e.workers[1] {
			note = fmt.Sprintf("decode worker i receives over path i mod %d, one path a worker pair", t.pairs)
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
