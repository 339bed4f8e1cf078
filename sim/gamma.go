package sim

import (
	"math"
	"math/rand/v2"
)

// gammaVariate draws from the gamma distribution of shape k and scale 1
// (mean k, variance k) by Marsaglia and Tsang's method ("A simple method
// for generating gamma variables", ACM TOMS 26(3), 2000): for k ≥ 1, with
// d = k − 1/3 and c = 1/√(9d), take x normal and v = (1 + c x)³, and accept
// d v when ln u < x²/2 + d − d v + d ln v; for k < 1, a draw of shape k + 1
// times u^(1/k).
func gammaVariate(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		return gammaVariate(rng, k+1) * math.Pow(rng.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u <= 0 {
			continue
		}
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}
