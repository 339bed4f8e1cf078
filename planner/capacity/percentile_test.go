package capacity

import (
	"math"
	"testing"

	"github.com/kvplan/kvplan/openloop"
)

func TestSumQuantile(t *testing.T) {
	// Two parts: a constant 100 ms and a normal-like part of mean 50 whose
	// p90 is 80 (excess 30), and a wait of mean 10 whose p90 is 40 (excess
	// 30): 160 + √(30² + 30²) = 202.43 ms. At p50 the parts below their mean
	// add their mean: 160 + 0.
	parts := []part{
		{"constant", 100, 100, nil},
		{"normal", 50, 0, func(q float64) float64 { return map[float64]float64{0.5: 50, 0.9: 80}[q] }},
		{"wait", 10, 0, func(q float64) float64 { return map[float64]float64{0.5: 0, 0.9: 40}[q] }},
	}
	if got, want := sumQuantile(parts, 0.9), 160+30*math.Sqrt2; math.Abs(got-want) > 1e-9 {
		t.Errorf("p90 %g, want %g", got, want)
	}
	if got := sumQuantile(parts, 0.5); got != 160 {
		t.Errorf("p50 %g, want 160", got)
	}
	// At 0.95 each part's p95MS is used as it is.
	parts[1].p95MS, parts[2].p95MS = 90, 50
	if got, want := sumQuantile(parts, 0.95), 160+math.Sqrt(40*40+40*40); math.Abs(got-want) > 1e-9 {
		t.Errorf("p95 %g, want %g", got, want)
	}
	// cdfOf inverts it: with one exponential-tail part of θ = 100 ms and
	// C = 1, P(W ≤ t) = 1 − e^(−t/100), so P(W ≤ 230.26) = 0.9.
	w := openloop.Wait{Stable: true, PWait: 1, ScaleMS: 100, MeanMS: 100}
	exp := []part{{"wait", 100, w.Quantile(0.95), w.Quantile}}
	if got := cdfOf(func(q float64) float64 { return sumQuantile(exp, q) }, 100*math.Log(10)); math.Abs(got-0.9) > 1e-6 {
		t.Errorf("cdf %g, want 0.9", got)
	}
}

func TestPanjer(t *testing.T) {
	// One term of 10 ms at rate 0.5: P(X = 0) = e^−0.5, P(X = 10) = 0.5
	// e^−0.5, P(X = 20) = 0.125 e^−0.5 (Poisson counts).
	cum := panjer(0.5, []float64{10}, []float64{1}, 10)
	e := math.Exp(-0.5)
	if math.Abs(cum[0]-e) > 1e-12 || math.Abs(cum[1]-e*1.5) > 1e-12 || math.Abs(cum[2]-e*1.625) > 1e-12 {
		t.Errorf("cumulative %v, want %g, %g, %g", cum[:3], e, e*1.5, e*1.625)
	}
	// Terms of 10 ms or 20 ms, half and half, at rate 1: P(X = 10) = e^−1 × 0.5,
	// P(X = 20) = e^−1 (0.5 + 0.5²/2) = 0.625 e^−1.
	cum = panjer(1, []float64{10, 20}, []float64{0.5, 0.5}, 10)
	e = math.Exp(-1)
	if math.Abs(cum[1]-cum[0]-0.5*e) > 1e-12 || math.Abs(cum[2]-cum[1]-0.625*e) > 1e-12 {
		t.Errorf("P(X=10) %g, P(X=20) %g; want %g, %g", cum[1]-cum[0], cum[2]-cum[1], 0.5*e, 0.625*e)
	}
}

func TestTPOTQuantile(t *testing.T) {
	// Requests of 100 gaps of 20 ms; during a request, prompts arrive at 0.5
	// on average, each adding 200 ms: TPOT = 20 + X/100, X in 200 ms steps.
	// P(TPOT ≤ 20) = e^−0.5 = 0.607, ≤ 22 adds 0.5 e^−0.5 (0.910), ≤ 24
	// adds 0.125 e^−0.5 (0.986), ≤ 26 (0.998): the p99 is 26 ms.
	d := &decodeDist{sMS: 20, groups: []decodeGroup{{p: 1, n: 100, h: 200, cum: panjer(0.5, []float64{200}, []float64{1}, 200)}}}
	if got := d.tpotCDF(22); math.Abs(got-1.5*math.Exp(-0.5)) > 1e-9 {
		t.Errorf("P(TPOT ≤ 22) = %g, want %g", got, 1.5*math.Exp(-0.5))
	}
	if got := d.tpotQuantile(0.99); math.Abs(got-26) > 1e-6 {
		t.Errorf("p99 %g, want 26", got)
	}
	// The decode time of such a request: 100 × 20 + X; its median is 2,000 ms.
	if got := d.decodeQuantile(0.5, 0); math.Abs(got-2000) > 1e-6 {
		t.Errorf("decode median %g, want 2000", got)
	}
}
