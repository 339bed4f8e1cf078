package sim

import (
	"math"
	"testing"
)

// TestLatencySketch: exact nearest-rank percentiles while the values fit,
// within 0.1% past that, exact means throughout.
func TestLatencySketch(t *testing.T) {
	var s latencySketch
	for _, v := range []float64{50, 83, 0, 20, 10} {
		s.add(v)
	}
	// Sorted: 0 10 20 50 83. p50 is rank ceil(2.5) = 3: 20; p90 rank
	// ceil(4.5) = 5: 83; mean 163/5.
	if got := s.summary(); got != (Latency{P50: 20, P90: 83, P99: 83, Mean: 32.6}) {
		t.Errorf("small: %+v", got)
	}
	// 1 to 100,000 ms, each once: past the exact limit. p50 is 50,000,
	// p90 90,000, p99 99,000; the mean is 50,000.5.
	var b latencySketch
	for i := 100000; i >= 1; i-- {
		b.add(float64(i))
	}
	got := b.summary()
	for _, c := range []struct{ got, want float64 }{{got.P50, 50000}, {got.P90, 90000}, {got.P99, 99000}} {
		if math.Abs(c.got-c.want) > 1e-3*c.want {
			t.Errorf("binned: %v, want %v within 0.1%%", c.got, c.want)
		}
	}
	if got.Mean != 50000.5 || !b.binned || len(b.counts) > 12000 {
		t.Errorf("binned: mean %v binned %v buckets %d", got.Mean, b.binned, len(b.counts))
	}
	// Equal values come out exact even binned (clamped to min and max).
	var e latencySketch
	for range latencyExactMax + 10 {
		e.add(7.25)
	}
	if got := e.summary(); got != (Latency{P50: 7.25, P90: 7.25, P99: 7.25, Mean: 7.25}) {
		t.Errorf("equal values: %+v", got)
	}
	var z latencySketch
	if z.summary() != (Latency{}) {
		t.Error("empty sketch is not zero")
	}
}
