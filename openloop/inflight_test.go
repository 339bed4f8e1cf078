package openloop

import (
	"math"
	"testing"
)

// TestInFlightByHand: a worker whose prefill-carrying iterations take 212 ms
// and fill 30% of its time. An arrival lands in one with probability 0.3
// and waits out a residual uniform on [0, 212]:
//
//	mean = 0.3 × 212 / 2 = 31.8 ms
//	p95: 0.3 × (1 − t/212) = 0.05 → t = 212 × (1 − 0.05/0.3) = 176.67 ms
//	p50: 0.3 < 0.5 → 0 (most arrivals find a decode-only iteration)
func TestInFlightByHand(t *testing.T) {
	f := InFlight{Busy: 0.3, IterMS: 212}
	if got := f.MeanMS(); math.Abs(got-31.8) > 1e-9 {
		t.Errorf("mean %v, want 31.8", got)
	}
	if got := f.Quantile(0.95); math.Abs(got-176.6666667) > 1e-6 {
		t.Errorf("p95 %v, want 176.67", got)
	}
	if got := f.Quantile(0.5); got != 0 {
		t.Errorf("p50 %v, want 0", got)
	}
}
