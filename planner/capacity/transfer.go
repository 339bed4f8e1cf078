package capacity

import (
	"math"

	"github.com/kvplan/kvplan/links"
)

// transferLoad is the KV transfer of a disaggregated candidate at a rate.
type transferLoad struct {
	bytes     int64   // one request's prompt KV, all ranks
	pathBytes int64   // on the busiest path (per-GPU rails split it)
	rails     int     // paths one transfer uses in parallel
	pairs     int     // worker pairs, each over its own path: min(prefill, decode workers)
	ratePerS  float64 // transfers per second on one path
	aloneMS   float64 // one transfer with the path to itself
	inFlight  float64 // mean transfers in flight on a path (Little's law)
	util      float64 // path utilization
	meanMS    float64
	p95MS     float64
	stable    bool
	latencyMS float64 // the link's per-transfer latency
	shared    bool    // transfers on a path share it
}

// quantile is the transfer's q-quantile: a transfer sharing its path with
// the q-quantile of the others in flight, N_q = ⌈ln(1 − q) / ln ρ⌉ − 1
// (their number is geometric under processor sharing), so latency + (1 +
// N_q) × the transfer alone, at least the mean; on a path that is not
// shared, the mean.
func (t transferLoad) quantile(q float64) float64 {
	if !t.stable {
		return math.Inf(1)
	}
	if !t.shared || t.util <= 0 {
		return t.meanMS
	}
	others := 0.0
	if t.util > 1-q {
		others = math.Ceil(math.Log(1-q)/math.Log(t.util)) - 1
	}
	return math.Max(t.meanMS, t.latencyMS+(1+others)*(t.aloneMS-t.latencyMS))
}

// transfer computes the KV transfer of shape s with np prefill and nd
// decode workers at rate requests per second: each request's prompt KV (the
// decode side holds none of it, cached prefix included) crosses the link,
// split over per-GPU rails (links.Split); the rate is spread over min(np,
// nd) worker pairs, each over its own path, and transfers on a shared path
// divide it (links.InFlightOpen: processor sharing, Little's law). The 95th
// percentile takes a transfer sharing the path with the 95th percentile of
// the others in flight: under processor sharing their number is geometric,
// P(N ≥ n) = ρⁿ, so N₉₅ = ⌈ln 0.05 / ln ρ⌉ − 1 and p95 = latency + (1 +
// N₉₅) × transfer alone.
func (q *Query) transfer(s *shape, np, nd int, rate float64) transferLoad {
	t := transferLoad{bytes: s.kv.RequestBytes(q.InputTokens) * int64(s.kv.TP), pairs: max(1, min(np, nd))}
	paths, err := links.Split(s.link, t.bytes, s.roles[0].tp, s.roles[1].tp)
	if err != nil {
		return t
	}
	t.pathBytes, t.rails = paths.PathBytes, paths.Rails
	t.ratePerS = rate / float64(t.pairs)
	t.latencyMS, t.shared = s.link.LatencyMS, s.link.Shared
	t.aloneMS = s.link.LatencyMS + float64(t.pathBytes)/s.link.EffectiveBytesPerS*1000
	n, rho := links.InFlightOpen(s.link, t.pathBytes, t.ratePerS)
	t.util = rho
	if math.IsInf(n, 1) {
		t.meanMS, t.p95MS, t.inFlight = math.Inf(1), math.Inf(1), math.Inf(1)
		return t
	}
	t.stable, t.inFlight = true, n
	t.meanMS = t.aloneMS
	if t.ratePerS > 0 {
		t.meanMS = n / t.ratePerS * 1000
	}
	t.p95MS = t.meanMS
	if s.link.Shared && rho > 0 {
		others := 0.0
		if rho > 0.05 {
			others = math.Ceil(math.Log(0.05)/math.Log(rho)) - 1
		}
		t.p95MS = math.Max(t.meanMS, s.link.LatencyMS+(1+others)*(t.aloneMS-s.link.LatencyMS))
	}
	return t
}
