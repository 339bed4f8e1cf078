package links

import (
	"math"

	"github.com/kvplan/kvplan/catalog"
)

// InFlightClosed is the mean number of transfers in flight on link when
// clients requests are kept in flight (a closed loop: each client sends its
// next request when the last one ends), by Little's law: each client spends
// T of every otherMS + T in a transfer, so
//
//	N = clients × T / (otherMS + T)
//
// where otherMS is the rest of a request's life (prefill and decode) and T
// the time of one transfer. On a shared link T = latency + max(1, N) × s,
// s = bytes / effective throughput: N transfers share it, and one alone
// takes s. While N ≤ 1 this is N = clients × (latency + s) / (otherMS +
// latency + s); above, N is the positive root of
//
//	s N² + (otherMS + latency − clients × s) N − clients × latency = 0
//
// On a link that is not shared, T = latency + s whatever N. The result is in
// [0, clients]. It is a mean-field estimate: transfers are taken as spread
// evenly over a request's life.
func InFlightClosed(link *catalog.Link, bytes int64, clients, otherMS float64) float64 {
	c := clients
	a := link.LatencyMS
	s := float64(bytes) / link.EffectiveBytesPerS * 1000
	if otherMS+a+s <= 0 {
		return c
	}
	alone := c * (a + s) / (otherMS + a + s)
	if !link.Shared || alone <= 1 || s == 0 {
		return math.Min(alone, c)
	}
	b := otherMS + a - c*s
	disc := math.Sqrt(b*b + 4*s*c*a)
	var n float64
	if b > 0 {
		n = 2 * c * a / (b + disc) // the same root, without cancellation
	} else {
		n = (-b + disc) / (2 * s)
	}
	return math.Min(math.Max(n, 1), c)
}

// InFlightOpen is the mean number of transfers in flight on link when
// requests arrive at ratePerS per second (an open loop), by Little's law
// N = λ × T. On a shared link the transfers divide its throughput
// (processor sharing, FACTS.md §3), whose mean time with Poisson arrivals is
//
//	T = latency + s / (1 − ρ),   ρ = λ × s   (s = bytes / effective throughput)
//
// (Kleinrock's M/G/1-PS result). It holds while the utilization ρ < 1; at
// ρ ≥ 1 the link cannot carry the load, the queue grows without bound and N
// is +Inf. On a link that is not shared, T = latency + s.
func InFlightOpen(link *catalog.Link, bytes int64, ratePerS float64) (n, utilization float64) {
	a := link.LatencyMS / 1000
	s := float64(bytes) / link.EffectiveBytesPerS
	utilization = ratePerS * s
	if !link.Shared {
		return ratePerS * (a + s), utilization
	}
	if utilization >= 1 {
		return math.Inf(1), utilization
	}
	return ratePerS * (a + s/(1-utilization)), utilization
}
