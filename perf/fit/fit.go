package fit

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

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

// Loss is the fit loss of x. The cases are predicted in parallel and their
// terms summed in order, so the value does not depend on the scheduling.
func (p *Problem) Loss(x []float64) float64 {
	_, terms := p.terms(x)
	return p.total(x, terms)
}

// terms predicts every case at x, in parallel: each case's efficiencies
// and its weighted loss term.
func (p *Problem) terms(x []float64) ([]catalog.Efficiency, []float64) {
	effs := make([]catalog.Efficiency, len(p.Cases))
	terms := make([]float64, len(p.Cases))
	forEach(len(p.Cases), func(i int) {
		c := p.Cases[i]
		effs[i] = p.Space.caseEfficiency(x, c)
		terms[i] = p.term(c, &effs[i])
	})
	return effs, terms
}

// term is case c's weighted loss term under eff (before dividing by the
// sum of the weights).
func (p *Problem) term(c *Case, eff *catalog.Efficiency) float64 {
	s := p.Scale
	if s == 0 {
		s = 0.2
	}
	rho := func(r float64) float64 { return 2 * s * s * (math.Sqrt(1+(r/s)*(r/s)) - 1) }
	w := 1 / math.Sqrt(float64(c.rowsInGroup))
	r, err := c.Predict(eff)
	if err != nil || !(r.TTFTMS > 0) || !(r.TPOTMS > 0) {
		return w * failedPenalty
	}
	return w * (rho(math.Log(r.TTFTMS/c.TTFTMS)) + rho(math.Log(r.TPOTMS/c.TPOTMS)))
}

// total is the loss from the cases' terms at x: their sum in case order
// over the sum of the weights, plus the ridge penalty on the offsets.
func (p *Problem) total(x, terms []float64) float64 {
	ridge := p.Ridge
	if ridge == 0 {
		ridge = 0.02
	}
	var sum, wsum float64
	for i, c := range p.Cases {
		wsum += 1 / math.Sqrt(float64(c.rowsInGroup))
		sum += terms[i]
	}
	loss := sum / wsum
	for _, i := range p.Space.Offsets() {
		loss += ridge * x[i] * x[i]
	}
	return loss
}

// gradStep is the forward-difference step, in the bounded parameters.
const gradStep = 0.01

// Gradient is the forward-difference gradient of Loss at x, into g: what
// gonum's fd.Gradient (Forward, Step 0.01, Concurrent) computes, bit for
// bit (TestGradientIsFiniteDifferences), but cheaper. A parameter moves the
// efficiencies of only some cases (an engine's, a GPU's or a dtype's
// offsets: about 20 of the 50 parameters' worth of cases are predicted
// instead of 50), so a case whose efficiencies the step leaves unchanged
// keeps its term from x instead of being predicted again.
func (p *Problem) Gradient(g, x []float64) {
	n := len(p.Cases)
	effs, terms := p.terms(x)
	f0 := p.total(x, terms)
	forEach(len(x), func(k int) {
		xk := append([]float64(nil), x...)
		xk[k] += gradStep
		tk := make([]float64, n)
		for i, c := range p.Cases {
			eff := p.Space.caseEfficiency(xk, c)
			if eff == effs[i] {
				tk[i] = terms[i]
				continue
			}
			tk[i] = p.term(c, &eff)
		}
		// fd.Gradient adds −f(x) and f(x + h) in either order to 0, then
		// scales by 1/h: (f1 − f0) × (1/h) exactly.
		g[k] = (p.total(xk, tk) - f0) * (1 / gradStep)
	})
}

// forEach calls f(0) … f(n−1) on GOMAXPROCS goroutines. Each call writes
// only its own outputs, so the results do not depend on the order.
func forEach(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}

// Minimize fits x from x0 with L-BFGS (gonum's optimize.LBFGS) on
// forward-difference gradients (Gradient: step 0.01 in the bounded
// parameters): the loss is smooth at that scale, though iterations are
// discrete. It stops after iterations major iterations at most.
func (p *Problem) Minimize(x0 []float64, iterations int) ([]float64, float64, error) {
	prob := optimize.Problem{Func: p.Loss, Grad: p.Gradient}
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
	return func(c *Case) (catalog.Efficiency, error) { return sp.caseEfficiency(x, c), nil }
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
