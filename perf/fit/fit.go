package fit

import (
	"math"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/optimize"

	"github.com/kvplan/kvplan/catalog"
)

// Problem is a fit: the parameter space, the cases and the loss settings.
//
// The loss is the weighted mean over cases of ρ(ln(predicted / measured
// TTFT)) + ρ(ln(predicted / measured TPOT)), with ρ the soft-L1 loss
// ρ(r) = 2 s² (√(1 + (r/s)²) − 1) (quadratic near 0, linear beyond s, so a
// few wild rows do not drag the fit), each case weighted by 1/√(rows of its
// model) so that the models with most rows do not decide alone, plus
// Ridge × Σ offsets².
type Problem struct {
	Space Space
	Cases []*Case
	Scale float64 // s, on log errors; 0 = 0.2
	Ridge float64 // 0 = 0.02
}

// failedPenalty is the loss of a case the model cannot predict (the request
// does not fit the KV cache under the candidate efficiencies, and so on).
const failedPenalty = 4

// Loss is the fit loss of x.
func (p *Problem) Loss(x []float64) float64 {
	s, ridge := p.Scale, p.Ridge
	if s == 0 {
		s = 0.2
	}
	if ridge == 0 {
		ridge = 0.02
	}
	rho := func(r float64) float64 { return 2 * s * s * (math.Sqrt(1+(r/s)*(r/s)) - 1) }
	var sum, wsum float64
	for _, c := range p.Cases {
		eff := p.Space.Efficiency(x, c.g, c.e, c.d)
		w := 1 / math.Sqrt(float64(c.rowsInGroup))
		wsum += w
		r, err := c.Predict(&eff)
		if err != nil || !(r.TTFTMS > 0) || !(r.TPOTMS > 0) {
			sum += w * failedPenalty
			continue
		}
		sum += w * (rho(math.Log(r.TTFTMS/c.TTFTMS)) + rho(math.Log(r.TPOTMS/c.TPOTMS)))
	}
	loss := sum / wsum
	for _, i := range p.Space.Offsets() {
		loss += ridge * x[i] * x[i]
	}
	return loss
}

// Minimize fits x from x0 with L-BFGS (gonum's optimize.LBFGS) on
// forward-difference gradients (gonum's diff/fd, step 0.01 in the bounded
// parameters): the loss is smooth at that scale, though iterations are
// discrete. It stops after iterations major iterations at most.
func (p *Problem) Minimize(x0 []float64, iterations int) ([]float64, float64, error) {
	grad := func(g, x []float64) {
		fd.Gradient(g, p.Loss, x, &fd.Settings{Formula: fd.Forward, Step: 0.01, Concurrent: true})
	}
	prob := optimize.Problem{Func: p.Loss, Grad: grad}
	settings := &optimize.Settings{MajorIterations: iterations, GradientThreshold: 1e-5}
	res, err := optimize.Minimize(prob, x0, settings, &optimize.LBFGS{})
	if res == nil {
		return x0, p.Loss(x0), err
	}
	return res.X, res.F, nil
}

// Prediction is one case's predicted figures.
type Prediction struct {
	Case       *Case
	TTFTMS     float64
	TPOTMS     float64
	Efficiency catalog.Efficiency
	Err        error
}

// Predict predicts every case with the efficiencies effFor gives it.
func Predict(cases []*Case, effFor func(*Case) (catalog.Efficiency, error)) []Prediction {
	out := make([]Prediction, len(cases))
	for i, c := range cases {
		out[i].Case = c
		eff, err := effFor(c)
		if err != nil {
			out[i].Err = err
			continue
		}
		out[i].Efficiency = eff
		r, err := c.Predict(&eff)
		out[i].TTFTMS, out[i].TPOTMS, out[i].Err = r.TTFTMS, r.TPOTMS, err
	}
	return out
}

// FromSpace returns effFor over the space at x.
func FromSpace(sp Space, x []float64) func(*Case) (catalog.Efficiency, error) {
	return func(c *Case) (catalog.Efficiency, error) { return sp.Efficiency(x, c.g, c.e, c.d), nil }
}

// FromCatalog returns effFor looking the efficiencies up in cat, as
// `kvplan perf` does.
func FromCatalog(cat *catalog.Catalog) func(*Case) (catalog.Efficiency, error) {
	return func(c *Case) (catalog.Efficiency, error) {
		m, err := cat.EfficiencyFor(c.GPU.Name, c.Engine, c.Dtype)
		if err != nil {
			return catalog.Efficiency{}, err
		}
		return *m.Efficiency, nil
	}
}
