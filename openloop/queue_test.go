package openloop

import (
	"math"
	"testing"
)

// Expected values are worked by hand from the textbook formulas.
func TestErlangC(t *testing.T) {
	for _, tc := range []struct {
		c    int
		a    float64
		want float64
		how  string
	}{
		{1, 0.5, 0.5, "M/M/1: P(wait) = ρ"},
		{2, 1, 1.0 / 3, "(a²/2!)/(1−ρ) / (1 + a + (a²/2!)/(1−ρ)) = 1/(1+1+1)"},
		{3, 2, 4.0 / 9, "(8/6)·3 / (1 + 2 + 2 + 4) = 4/9"},
		{4, 0, 0, "no load, no wait"},
		{2, 2, 1, "ρ = 1: every arrival waits"},
	} {
		if got := ErlangC(tc.c, tc.a); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("ErlangC(%d, %g) = %.15g, want %.15g (%s)", tc.c, tc.a, got, tc.want, tc.how)
		}
	}
}

func TestQueueWait(t *testing.T) {
	for _, tc := range []struct {
		name           string
		q              Queue
		mean, p95, rho float64
	}{
		// M/M/1, λ = 0.5/s, service 1 s: Wq = ρ/(μ − λ) = 0.5/0.5 = 1 s;
		// P(W > t) = ρ e^{−(μ−λ)t} = 0.05 → t = 2 ln 10 s.
		{"M/M/1", Queue{RatePerS: 0.5, Servers: 1, ServiceMS: 1000, ServiceCV2: 1}, 1000, 2000 * math.Ln10, 0.5},
		// M/D/1 (Pollaczek–Khinchine): Wq = ρ s / (2(1 − ρ)) = 0.5 × 1 / 1 = 0.5 s;
		// the tail keeps the M/M/1 shape at half the scale: 1 s × ln 10.
		{"M/D/1", Queue{RatePerS: 0.5, Servers: 1, ServiceMS: 1000}, 500, 1000 * math.Ln10, 0.5},
		// M/M/2, λ = 1/s, service 1 s (a = 1): C = 1/3, Wq = C/(2μ − λ) = 1/3 s;
		// p95 = ln((1/3)/0.05) s = ln(20/3) s.
		{"M/M/2", Queue{RatePerS: 1, Servers: 2, ServiceMS: 1000, ServiceCV2: 1}, 1000.0 / 3, 1000 * math.Log(20.0/3), 0.5},
		// A light load waits with probability under 5%: p95 = 0.
		{"light", Queue{RatePerS: 0.01, Servers: 1, ServiceMS: 1000}, 0.01 * 0.5 / 0.99 * 1000, 0, 0.01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.q.Wait()
			if !w.Stable {
				t.Fatal("want a stable queue")
			}
			if math.Abs(w.MeanMS-tc.mean) > 1e-9*max(1, tc.mean) || math.Abs(w.P95MS-tc.p95) > 1e-9*max(1, tc.p95) || math.Abs(w.Utilization-tc.rho) > 1e-12 {
				t.Errorf("wait = %+v, want mean %g p95 %g ρ %g", w, tc.mean, tc.p95, tc.rho)
			}
		})
	}
	if w := (Queue{RatePerS: 2, Servers: 1, ServiceMS: 500}).Wait(); w.Stable || !math.IsInf(w.MeanMS, 1) {
		t.Errorf("ρ = 1 must be unstable with an infinite wait, got %+v", w)
	}
}

func TestPoissonQuantile(t *testing.T) {
	for _, tc := range []struct {
		mean, q float64
		want    int
		how     string
	}{
		{1, 0.95, 3, "CDF(2) = 5e⁻¹ = 0.920, CDF(3) = 0.981"},
		{10, 0.95, 15, "CDF(14) = 0.9165, CDF(15) = 0.9513 (tables)"},
		{0, 0.95, 0, "no load"},
		// Normal approximation: 1000 + 1.6449 × 31.62 − 0.5 = 1051.5 → 1052;
		// the exact quantile (summing the pmf in log space) is also 1052.
		{1000, 0.95, 1052, "normal approximation"},
	} {
		if got := PoissonQuantile(tc.mean, tc.q); got != tc.want {
			t.Errorf("PoissonQuantile(%g, %g) = %d, want %d (%s)", tc.mean, tc.q, got, tc.want, tc.how)
		}
	}
}

func TestPoissonPMF(t *testing.T) {
	pmf := make([]float64, 4)
	PoissonPMF(1, pmf)
	// e⁻¹, e⁻¹, e⁻¹/2, and all of P(N ≥ 3) = 1 − 2.5e⁻¹ in the last entry.
	e := math.Exp(-1)
	want := []float64{e, e, e / 2, 1 - 2.5*e}
	for k := range want {
		if math.Abs(pmf[k]-want[k]) > 1e-12 {
			t.Errorf("pmf[%d] = %g, want %g", k, pmf[k], want[k])
		}
	}
}

// TestErlangCLarge checks the Poisson-term form used past 64 servers
// against Erlang B's recursion run to the end, an independent computation
// of the same quantity.
func TestErlangCLarge(t *testing.T) {
	recursion := func(c int, a float64) float64 {
		b := 1.0
		for k := 1; k <= c; k++ {
			b = a * b / (float64(k) + a*b)
		}
		return b / (1 - a/float64(c)*(1-b))
	}
	for _, tc := range []struct {
		c int
		a float64
	}{{65, 60}, {100, 90}, {100, 99.5}, {1000, 950}, {1000, 700}, {5000, 4990}, {10000, 9000}} {
		want, got := recursion(tc.c, tc.a), ErlangC(tc.c, tc.a)
		if math.Abs(got-want) > 1e-9*math.Max(want, 1e-12) && math.Abs(got-want) > 1e-15 {
			t.Errorf("ErlangC(%d, %g) = %.12g, recursion %.12g", tc.c, tc.a, got, want)
		}
	}
}

func TestMG1Wait(t *testing.T) {
	// Service 100 ms or 1,000 ms (90% / 10%) at 0.4 requests/s: ρ = 0.4 ×
	// 0.19 s = 0.076; P(no wait) = 1 − ρ, and the mean wait is
	// Pollaczek–Khinchine's λ E[S²] / (2 (1 − ρ)) = 0.0004/ms × 109,000 ms² /
	// 1.848 = 23.59 ms.
	d, ok := MG1Wait(0.4, []float64{100, 1000}, []float64{0.9, 0.1}, 1)
	if !ok {
		t.Fatal("no steady state")
	}
	// The first grid step holds no wait and the shortest waits (under h/2).
	if d.cum[0] < 1-0.076 || d.cum[0] > 1-0.076+0.005 {
		t.Errorf("P(W < h/2) = %g, want just above %g", d.cum[0], 1-0.076)
	}
	mean, prev := 0.0, 0.0
	for k, c := range d.cum {
		mean += (c - prev) * float64(k) * d.h
		prev = c
	}
	if want := 0.0004 * 109000 / (2 * (1 - 0.076)); math.Abs(mean-want) > 0.01*want {
		t.Errorf("mean wait %g, want %g", mean, want)
	}
	// ρ < 5%: the 95th percentile is no wait at all, as the exponential tail says too.
	if q := d.Quantile(0.90); q != 0 {
		t.Errorf("p90 %g, want 0 (P(wait) = 7.6%%)", q)
	}
	if _, ok := MG1Wait(10, []float64{100}, []float64{1}, 1); ok {
		t.Error("ρ = 1: want no steady state")
	}
}
