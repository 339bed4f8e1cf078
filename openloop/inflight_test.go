package openloop

import (
	"math"
	"testing"
)

// TestInFlightPoissonByHand: Poisson arrivals at 1.667 requests/s to a
// worker whose prefill iterations take 212.6 ms. The wait is
// (212.6 − G)⁺ with G exponential, λ = 0.0016667/ms:
//
//	P(W > 0) = 1 − e^(−λ 212.6) = 1 − e^(−0.35433) = 0.2984
//	p95: 1 − e^(−λ x) = 0.05 → x = −ln 0.95 / λ = 30.78 ms → 212.6 − 30.78 = 181.82 ms
//	mean = 212.6 − 0.2984 / λ = 212.6 − 179.05 = 33.55 ms
//	p50: 0.2984 < 0.5 → 0
func TestInFlightPoissonByHand(t *testing.T) {
	f := InFlight{RatePerS: 1000.0 / 600, IterMS: 212.6} // λ = 1/600 per ms
	lam := 1.0 / 600
	if got, want := f.gapCDF(212.6), 1-math.Exp(-lam*212.6); math.Abs(got-want) > 1e-12 || math.Abs(want-0.2984) > 5e-4 {
		t.Errorf("P(W > 0) %v, want %v ≈ 0.2984", got, want)
	}
	if got := f.Quantile(0.95); math.Abs(got-(212.6+math.Log(0.95)*600)) > 1e-6 || math.Abs(got-181.82) > 0.01 {
		t.Errorf("p95 %v, want 181.82", got)
	}
	if got := f.MeanMS(); math.Abs(got-(212.6-(1-math.Exp(-lam*212.6))*600)) > 1e-6 || math.Abs(got-33.55) > 0.05 {
		t.Errorf("mean %v, want 33.55", got)
	}
	if got := f.Quantile(0.5); got != 0 {
		t.Errorf("p50 %v, want 0", got)
	}
}

// TestInFlightErlangByHand: the same iteration behind round-robin over 3
// workers at 4 requests/s: each sees Erlang-3 gaps of mean 750 ms
// (GapCV2 = 1/3), F(x) = 1 − e^(−y)(1 + y + y²/2), y = 3x/750:
//
//	P(W > 0) = F(212.6), y = 0.8504: 1 − 0.42724 × 2.21199 = 0.05495
//
// just above 5%, so p95 is a few ms: F(212.6 − p95) = 0.05.
func TestInFlightErlangByHand(t *testing.T) {
	f := InFlight{RatePerS: 4.0 / 3, GapCV2: 1.0 / 3, IterMS: 212.6}
	erlang3 := func(x float64) float64 {
		y := 3 * x / 750
		return 1 - math.Exp(-y)*(1+y+y*y/2)
	}
	if got := f.gapCDF(212.6); math.Abs(got-erlang3(212.6)) > 1e-12 || math.Abs(got-0.05495) > 5e-5 {
		t.Errorf("P(W > 0) %v, want 0.05495", got)
	}
	p95 := f.Quantile(0.95)
	if p95 <= 0 || p95 > 20 || math.Abs(erlang3(212.6-p95)-0.05) > 1e-9 {
		t.Errorf("p95 %v: F(212.6 − p95) = %v, want 0.05", p95, erlang3(212.6-p95))
	}
	// Far past the iteration the CDF uses the continued fraction: Erlang-3
	// at y = 9 (x = 2,250 ms) is 1 − e^(−9)(1 + 9 + 40.5) = 0.993768.
	if got := f.gapCDF(2250); math.Abs(got-erlang3(2250)) > 1e-12 {
		t.Errorf("F(2250) %v, want %v", got, erlang3(2250))
	}
}
