package calibrate

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/kvplan/kvplan/catalog"
)

// The fit's statistics, fixed before looking at any result file (they are
// not tuned on the held-out accuracy):
const (
	// MeasurementSigma is the noise taken for a measured figure, as a
	// fraction: repeated runs of one serving benchmark differ by about
	// this much.
	MeasurementSigma = 0.10
	// PriorFactor is how far from the shipped fit an efficiency is taken to
	// lie at one standard deviation, as a factor: the shipped fit's
	// held-out errors are 20–60% (README, engine model accuracy).
	PriorFactor = 2.0
	// MinElasticity is the least effect on some fitted figure, d ln figure
	// / d ln parameter, for a parameter to count as constrained by the
	// runs: below it, doubling the parameter moves no figure by more than
	// 3.5%, which MeasurementSigma cannot tell from noise.
	MinElasticity = 0.05
	// fdStep is the forward-difference step of the Jacobian, in ln units:
	// 5%, well above the timed simulator's event-level granularity.
	fdStep = 0.05
	// maxSteps bounds the Levenberg–Marquardt steps of one fit.
	maxSteps = 20
	// maxRefreshes bounds the Jacobians measured again during one fit.
	maxRefreshes = 3
)

// Target is a figure a run's fit residual is taken on.
type Target struct {
	Metric Metric
	// Measured is the file's value.
	Measured float64
}

// targets picks a run's fit figures among those measured and predicted:
// TTFT (mean, else median), decode speed (TPOT mean, else median, else the
// end-to-end latency), and throughput (output tokens/s, else requests/s).
func targets(measured, predicted Figures) []Target {
	groups := [][]string{
		{"ttft_ms", "ttft_ms_p50"},
		{"tpot_ms", "tpot_ms_p50", "e2e_ms", "e2e_ms_p50"},
		{"output_tokens_per_s", "requests_per_s"},
	}
	var out []Target
	for _, g := range groups {
		for _, key := range g {
			m := metricByKey(key)
			if ms, p := measured.Get(m), predicted.Get(m); ms != nil && p != nil && *ms > 0 {
				out = append(out, Target{Metric: m, Measured: *ms})
				break
			}
		}
	}
	return out
}

func metricByKey(key string) Metric {
	for _, m := range Metrics {
		if m.Key == key {
			return m
		}
	}
	panic("calibrate: no metric " + key)
}

// ParamResult is what the fit did with one efficiency.
type ParamResult struct {
	Name        string   `json:"name"`
	Shipped     float64  `json:"shipped"`
	Fitted      float64  `json:"fitted"`
	Change      float64  `json:"change"`      // fitted / shipped − 1
	Constrained bool     `json:"constrained"` // the runs constrain it (and the fit was free to move it)
	By          []string `json:"constrained_by,omitempty"`
	Elasticity  float64  `json:"elasticity"`         // the largest |d ln figure / d ln parameter| over the fitted figures, at the shipped value
	AtBound     string   `json:"at_bound,omitempty"` // "lower" or "upper" when the fit stopped at the range's end
}

// RunResult is one run before and after the fit.
type RunResult struct {
	Case      *Case    `json:"-"`
	File      string   `json:"file"`
	Run       int      `json:"run"` // 1-based, in the file
	Line      int      `json:"line,omitempty"`
	Label     string   `json:"label"`
	Method    string   `json:"method"`
	How       string   `json:"how"`
	Targets   []string `json:"fitted_on"` // the figures its residuals are taken on
	Measured  Figures  `json:"measured"`
	Before    Figures  `json:"predicted_before"`
	After     Figures  `json:"predicted_after"`
	HeldOut   *Figures `json:"predicted_held_out,omitempty"` // fitted on the other runs only (≥ 3 runs)
	ErrBefore Figures  `json:"error_before"`
	ErrAfter  Figures  `json:"error_after"`
	ErrHeld   *Figures `json:"error_held_out,omitempty"`
}

// Result is a calibration: the fitted entry and how well it does.
type Result struct {
	Key            string             `json:"key"`           // gpu × engine × dtype
	Model          string             `json:"model"`         // the runs' model
	Shipped        catalog.Efficiency `json:"shipped"`       // the entry the runs were predicted with before
	ShippedNote    string             `json:"shipped_note"`  // which entry that was (a fallback, when the key has none)
	Fitted         catalog.Efficiency `json:"fitted"`        // the entry written
	Params         []ParamResult      `json:"params"`        // every fittable efficiency, moved or not
	Runs           []RunResult        `json:"runs"`          // every run, in order
	HeldOut        bool               `json:"leave_one_out"` // each run also predicted by a fit on the others
	Evaluations    int                `json:"evaluations"`   // predictions of the whole set made by the fits
	CostBefore     float64            `json:"cost_before"`   // Σ soft-L1(ln(predicted/measured)/σ) over the fitted figures, at the shipped entry
	CostAfter      float64            `json:"cost_after"`    // the same after, plus the prior's penalty
	Summary        []SummaryRow       `json:"summary"`       // median |error| per figure
	statisticsNote string
}

// SummaryRow is the median |error| of one figure over the runs that
// measured it.
type SummaryRow struct {
	Metric  string   `json:"metric"`
	Runs    int      `json:"runs"`
	Before  float64  `json:"median_abs_error_before"`
	After   float64  `json:"median_abs_error_after"`
	HeldOut *float64 `json:"median_abs_error_held_out,omitempty"`
}

// Options steer Calibrate.
type Options struct {
	Files []string // the result files, as calibrated_from records them
	Date  string   // calibrated_at, YYYY-MM-DD
	// Parallel bounds the predictions run at once; 0 = GOMAXPROCS.
	Parallel int
	// NoHeldOut skips the leave-one-out fits.
	NoHeldOut bool
}

// Calibrate fits the efficiencies the cases constrain, for their GPU ×
// engine × weight dtype, regularised toward the entry they use now:
// minimise Σ_runs Σ_figures ρ(ln(predicted / measured) / MeasurementSigma)
// (ρ the soft-L1 loss, softL1)
// + Σ_params (ln(θ / θ_shipped) / ln PriorFactor)², by Levenberg–Marquardt on
// ln θ within the parameters' ranges, over the parameters whose elasticity
// on some fitted figure reaches MinElasticity; the others stay put. With
// three runs or more each run is also predicted by a fit on the others
// (leave one out).
func Calibrate(cases []Case, opt Options) (*Result, error) {
	if len(cases) == 0 {
		return nil, errors.New("no run to calibrate on")
	}
	if err := sameSetup(cases); err != nil {
		return nil, err
	}
	s := cases[0].Setup
	match, err := s.Catalog.EfficiencyFor(s.GPU.Name, s.Engine, s.WeightDtype)
	if err != nil {
		return nil, err
	}
	shipped := *match.Efficiency
	f := &fitter{cases: cases, prior: shipped, parallel: opt.Parallel}
	if f.parallel <= 0 {
		f.parallel = runtime.GOMAXPROCS(0)
	}
	f.key = catalog.Efficiency{GPU: s.GPU.Name, Engine: s.Engine, Dtype: s.WeightDtype}
	res := &Result{Key: s.Key(), Model: s.Model.Name, Shipped: shipped, ShippedNote: shipped.Key() + ", " + shipped.Provenance()}
	if match.Fallback != "" {
		res.ShippedNote = match.Fallback
	}

	x0 := f.x0()
	before, err := f.predict(x0, nil)
	if err != nil {
		return nil, err
	}
	f.targets = make([][]Target, len(cases))
	for i := range cases {
		f.jumpy = f.jumpy || before[i].Method == MethodClosedLoop
		f.targets[i] = targets(MeasuredFigures(cases[i].Run.Measured), before[i].Figures)
		if len(f.targets[i]) == 0 {
			return nil, fmt.Errorf("%s: the run measures no figure kvplan predicts (TTFT, TPOT, end-to-end latency or a throughput)", cases[i].Name())
		}
	}
	all := allIndexes(len(cases))
	free, elast, by, err := f.constrained(x0, before, all)
	if err != nil {
		return nil, err
	}
	f.elast = elast
	x, cost, err := f.levenberg(x0, free, all)
	if err != nil {
		return nil, err
	}
	res.CostBefore = f.dataCost(before, all)
	res.CostAfter = cost
	// The entry as written (six significant digits) is the one predicted
	// with after the fit, and the one the catalog file holds.
	res.Fitted = roundEfficiency(f.efficiency(x))
	after, err := f.predictWith(res.Fitted, nil)
	if err != nil {
		return nil, err
	}
	res.Fitted.Rows = len(cases)
	res.Fitted.CalibratedFrom = strings.Join(opt.Files, ", ")
	res.Fitted.CalibratedAt = opt.Date
	res.Fitted.Source = fmt.Sprintf("kvplan calibrate on %d benchmark runs of %s (%s, tp %s), regularised toward %s",
		len(cases), res.Fitted.CalibratedFrom, s.Model.Name, tps(cases), shipped.Key())
	res.Fitted.File, res.Fitted.Line = "", 0

	var held []Prediction
	if len(cases) >= 3 && !opt.NoHeldOut {
		res.HeldOut = true
		held = make([]Prediction, len(cases))
		for i := range cases {
			others := without(all, i)
			xi, _, err := f.levenberg(x0, free, others)
			if err != nil {
				return nil, fmt.Errorf("leave-one-out fit without %s: %w", cases[i].Name(), err)
			}
			p, err := f.predictOne(xi, i)
			if err != nil {
				return nil, err
			}
			held[i] = p
		}
	}
	res.Evaluations = f.evals
	for j, p := range Params {
		pr := ParamResult{Name: p.Name, Shipped: p.Get(&shipped), Fitted: p.Get(&res.Fitted), Elasticity: elast[j], By: by[j]}
		pr.Constrained = contains(free, j)
		if pr.Shipped != 0 {
			pr.Change = pr.Fitted/pr.Shipped - 1
		}
		if pr.Constrained {
			switch {
			case x[j] <= math.Log(p.Lo)+1e-9:
				pr.AtBound = "lower"
			case x[j] >= math.Log(p.Hi)-1e-9:
				pr.AtBound = "upper"
			}
		}
		res.Params = append(res.Params, pr)
	}
	for i := range cases {
		c := &cases[i]
		m := MeasuredFigures(c.Run.Measured)
		rr := RunResult{Case: c, File: c.File, Run: c.Run.Index + 1, Line: c.Run.Line, Label: c.Run.Label, Method: after[i].Method, How: after[i].How,
			Measured: m, Before: before[i].Figures.Only(m), After: after[i].Figures.Only(m)}
		for _, t := range f.targets[i] {
			rr.Targets = append(rr.Targets, t.Metric.Key)
		}
		rr.ErrBefore, rr.ErrAfter = rr.Before.ErrorAgainst(m), rr.After.ErrorAgainst(m)
		if held != nil {
			h := held[i].Figures.Only(m)
			e := h.ErrorAgainst(m)
			rr.HeldOut, rr.ErrHeld = &h, &e
		}
		res.Runs = append(res.Runs, rr)
	}
	res.Summary = summarize(res.Runs)
	return res, nil
}

// sameSetup refuses runs that disagree on model, GPU, engine or weight
// dtype: one entry is fitted, for one model's runs.
func sameSetup(cases []Case) error {
	a := cases[0].Setup
	for _, c := range cases[1:] {
		b := c.Setup
		for _, d := range []struct{ what, x, y string }{
			{"model", a.Model.Name, b.Model.Name}, {"GPU", a.GPU.Name, b.GPU.Name},
			{"engine", a.Engine, b.Engine}, {"weight dtype", a.WeightDtype, b.WeightDtype},
		} {
			if d.x != d.y {
				return fmt.Errorf("%s and %s disagree on the %s (%s, %s): one calibration fits one model on one GPU × engine × weight dtype; calibrate them apart",
					cases[0].Name(), c.Name(), d.what, d.x, d.y)
			}
		}
	}
	return nil
}

func tps(cases []Case) string {
	seen := map[int]bool{}
	var out []string
	for _, c := range cases {
		if !seen[c.Setup.TP] {
			seen[c.Setup.TP] = true
			out = append(out, fmt.Sprint(c.Setup.TP))
		}
	}
	return strings.Join(out, ", ")
}

// fitter holds what a fit needs.
type fitter struct {
	cases    []Case
	prior    catalog.Efficiency
	key      catalog.Efficiency // GPU, engine and dtype of the entry fitted
	targets  [][]Target
	parallel int
	mu       sync.Mutex
	evals    int
	// jac is d residual / d ln θ at the shipped entry, every case's rows in
	// order (by forward differences): the Jacobian each fit starts from,
	// measured at the prior, so it carries nothing of the measured values.
	jac   *mat.Dense
	elast []float64 // per parameter, at the shipped entry
	// jumpy: some run is predicted by the closed-loop replay, whose cost has
	// edges (descend); the fit then scans and starts from more points.
	jumpy bool
}

// rows are the residual rows of the cases of idx in f.jac.
func (f *fitter) rows(idx []int) []int {
	start := make([]int, len(f.cases)+1)
	for i := range f.cases {
		start[i+1] = start[i] + len(f.targets[i])
	}
	var out []int
	for _, i := range idx {
		for k := start[i]; k < start[i+1]; k++ {
			out = append(out, k)
		}
	}
	return out
}

// x0 is ln of the shipped values, inside the ranges.
func (f *fitter) x0() []float64 {
	x := make([]float64, len(Params))
	for j, p := range Params {
		v := math.Min(math.Max(p.Get(&f.prior), p.Lo), p.Hi)
		x[j] = math.Log(v)
	}
	return x
}

// efficiency is the entry at x: the shipped one with every parameter set.
func (f *fitter) efficiency(x []float64) catalog.Efficiency {
	e := f.prior
	e.GPU, e.Engine, e.Dtype = f.key.GPU, f.key.Engine, f.key.Dtype
	x0 := f.x0()
	for j, p := range Params {
		if x[j] == x0[j] {
			continue // not moved: the shipped value, bit for bit (even outside the range)
		}
		p.Set(&e, math.Exp(x[j]))
	}
	return e
}

// predict predicts the cases of idx (nil: all) at x, in parallel.
func (f *fitter) predict(x []float64, idx []int) ([]Prediction, error) {
	return f.predictWith(f.efficiency(x), idx)
}

// predictWith predicts the cases of idx (nil: all) with entry e.
func (f *fitter) predictWith(e catalog.Efficiency, idx []int) ([]Prediction, error) {
	if idx == nil {
		idx = allIndexes(len(f.cases))
	}
	f.mu.Lock()
	f.evals++
	f.mu.Unlock()
	out := make([]Prediction, len(f.cases))
	errs := make([]error, len(f.cases))
	sem := make(chan struct{}, f.parallel)
	var wg sync.WaitGroup
	for _, i := range idx {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			ei := e
			out[i], errs[i] = f.cases[i].Predict(&ei)
		}(i)
	}
	wg.Wait()
	for _, i := range idx {
		if errs[i] != nil {
			return nil, fmt.Errorf("%s: %w", f.cases[i].Name(), errs[i])
		}
	}
	return out, nil
}

func (f *fitter) predictOne(x []float64, i int) (Prediction, error) {
	p, err := f.predict(x, []int{i})
	if err != nil {
		return Prediction{}, err
	}
	return p[i], nil
}

// missingResidual stands for a figure the prediction lost (no steady
// state): a factor of 10 off.
var missingResidual = math.Log(10) / MeasurementSigma

// residuals are the data residuals of the cases of idx, in order.
func (f *fitter) residuals(preds []Prediction, idx []int) []float64 {
	r := f.rawResiduals(preds, idx)
	for k, v := range r {
		r[k] = softL1(v)
	}
	return r
}

// rawResiduals are ln(predicted / measured) / MeasurementSigma.
func (f *fitter) rawResiduals(preds []Prediction, idx []int) []float64 {
	var r []float64
	for _, i := range idx {
		for _, t := range f.targets[i] {
			p := preds[i].Figures.Get(t.Metric)
			if p == nil || *p <= 0 {
				r = append(r, missingResidual)
				continue
			}
			r = append(r, math.Log(*p/t.Measured)/MeasurementSigma)
		}
	}
	return r
}

// softL1 is the residual whose square is the soft-L1 loss 2(√(1 + r²) − 1):
// quadratic within one σ, linear beyond, so a run the model cannot
// describe (a router it does not model, an engine that queues otherwise)
// does not drag every other run's fit; the shipped fit uses the same loss
// (perf/fit).
func softL1(r float64) float64 {
	v := math.Sqrt(2 * (math.Sqrt(1+r*r) - 1))
	if r < 0 {
		return -v
	}
	return v
}

func (f *fitter) dataCost(preds []Prediction, idx []int) float64 {
	var c float64
	for _, v := range f.residuals(preds, idx) {
		c += v * v
	}
	return c
}

var priorSigma = math.Log(PriorFactor)

// constrained finds the parameters the runs constrain: those whose
// elasticity on some fitted figure reaches MinElasticity at x0, and not
// pinned at a range's end they would have to pass.
func (f *fitter) constrained(x0 []float64, base []Prediction, idx []int) (free []int, elast []float64, by [][]string, err error) {
	r0 := f.residuals(base, idx)
	raw0 := f.rawResiduals(base, idx)
	f.jac = mat.NewDense(len(r0), len(Params), nil)
	elast = make([]float64, len(Params))
	by = make([][]string, len(Params))
	var labels []string
	for _, i := range idx {
		for _, t := range f.targets[i] {
			labels = append(labels, t.Metric.Key)
		}
	}
	for j, p := range Params {
		if p.Get(&f.prior) == 0 {
			continue
		}
		x := append([]float64(nil), x0...)
		h := fdStep
		if x[j]+h > math.Log(p.Hi) {
			h = -h
		}
		x[j] += h
		preds, err := f.predict(x, idx)
		if err != nil {
			return nil, nil, nil, err
		}
		r, raw := f.residuals(preds, idx), f.rawResiduals(preds, idx)
		seen := map[string]bool{}
		for k := range r {
			f.jac.Set(k, j, (r[k]-r0[k])/h)
			e := math.Abs((raw[k] - raw0[k]) * MeasurementSigma / h)
			elast[j] = math.Max(elast[j], e)
			if e >= MinElasticity && !seen[labels[k]] {
				seen[labels[k]] = true
				by[j] = append(by[j], labels[k])
			}
		}
		sort.Strings(by[j])
		if elast[j] >= MinElasticity {
			free = append(free, j)
		}
	}
	return free, elast, by, nil
}

// levenberg minimises the cost over the free parameters, from the
// shipped entry x0 (where the prior is centred), on the cases of idx:
// Levenberg–Marquardt steps on the Jacobian measured at x0 (f.jac),
// updated after every step by Broyden's rank-one rule, so a step costs one
// prediction of the cases rather than one per parameter. The prior's part
// of the Jacobian is exact (diagonal, 1/σ).
func (f *fitter) levenberg(x0 []float64, free, idx []int) ([]float64, float64, error) {
	best, bestCost, err := f.descend(x0, x0, free, idx, true)
	if err != nil || len(free) == 0 || !f.jumpy {
		return best, bestCost, err
	}
	// More starts: the cost has edges (see descend) that a start on the
	// wrong side of does not cross. startCandidates points, each moving
	// every free parameter by half or one prior σ up or down by a fixed
	// pseudo-random pattern (so the fit is the same on every run), are
	// priced with one prediction each; the extraStarts cheapest are
	// descended from.
	type cand struct {
		x    []float64
		cost float64
	}
	var cands []cand
	for s := 0; s < startCandidates; s++ {
		start := append([]float64(nil), x0...)
		for b, j := range f.byElasticity(free) {
			h := mix(uint64(s)<<8 | uint64(b))
			step := priorSigma
			if h&2 != 0 {
				step /= 2
			}
			if h&1 != 0 {
				step = -step
			}
			start[j] = math.Min(math.Max(x0[j]+step, math.Log(Params[j].Lo)), math.Log(Params[j].Hi))
		}
		c, err := f.cost(start, x0, free, idx)
		if err != nil {
			continue
		}
		cands = append(cands, cand{start, c})
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].cost < cands[b].cost })
	for _, cd := range cands[:min(extraStarts, len(cands))] {
		x, c, err := f.descend(cd.x, x0, free, idx, false)
		if err != nil {
			continue
		}
		if c < bestCost {
			best, bestCost = x, c
		}
	}
	return best, bestCost, nil
}

// Starts beyond the shipped entry: candidates priced, and the cheapest
// descended from.
const (
	startCandidates = 16
	extraStarts     = 3
)

// cost is the fit's cost at x (prior centred on x0).
func (f *fitter) cost(x, x0 []float64, free, idx []int) (float64, error) {
	preds, err := f.predict(x, idx)
	if err != nil {
		return 0, err
	}
	var c float64
	for _, v := range f.residuals(preds, idx) {
		c += v * v
	}
	for _, j := range free {
		d := (x[j] - x0[j]) / priorSigma
		c += d * d
	}
	return c, nil
}

// descend is one Levenberg–Marquardt descent from start, the prior
// centred on x0, after a scan when scan is set (the first start).
func (f *fitter) descend(start, x0 []float64, free, idx []int, scan bool) ([]float64, float64, error) {
	x := append([]float64(nil), start...)
	predsAt := func(x []float64) ([]float64, error) {
		preds, err := f.predict(x, idx)
		if err != nil {
			return nil, err
		}
		return f.residuals(preds, idx), nil
	}
	r, err := predsAt(x)
	if err != nil {
		return nil, 0, err
	}
	k := len(free)
	cost := func(r, x []float64) float64 {
		var c float64
		for _, v := range r {
			c += v * v
		}
		for _, j := range free {
			d := (x[j] - x0[j]) / priorSigma
			c += d * d
		}
		return c
	}
	c0 := cost(r, x)
	if k == 0 {
		return x, c0, nil
	}
	lo, hi := make([]float64, len(Params)), make([]float64, len(Params))
	for j, p := range Params {
		lo[j], hi[j] = math.Log(p.Lo), math.Log(p.Hi)
	}
	// A scan first: the closed-loop replay jumps between regimes (clients in
	// lock-step or out of step change TTFT two- to threefold), so the cost
	// is not smooth and a gradient method stops at the first edge. Each
	// free parameter in turn (the most influential first) is tried at
	// scanFactors times its value, keeping any point that lowers the cost.
	// Only with closed-loop runs: the timed simulator's figures, averaged
	// over hundreds of requests, have no such edges, and it costs 10–100
	// times more a prediction.
	for _, j := range f.byElasticity(free) {
		if !f.jumpy || !scan {
			break
		}
		best := x[j]
		for _, fac := range scanFactors {
			xn := append([]float64(nil), x...)
			xn[j] = math.Min(math.Max(best+math.Log(fac), lo[j]), hi[j])
			if xn[j] == x[j] {
				continue
			}
			rn, err := predsAt(xn)
			if err != nil {
				continue
			}
			if cn := cost(rn, xn); cn < c0 {
				x, r, c0 = xn, rn, cn
			}
		}
	}
	rows := f.rows(idx)
	J := mat.NewDense(len(rows), k, nil)
	for a, row := range rows {
		for b, j := range free {
			J.Set(a, b, f.jac.At(row, j))
		}
	}
	// refresh measures J again by forward differences at x, when Broyden's
	// estimate no longer gives steps that lower the cost.
	refreshes := 0
	refresh := func() error {
		refreshes++
		for b, j := range free {
			xh := append([]float64(nil), x...)
			h := fdStep
			if xh[j]+h > hi[j] {
				h = -h
			}
			xh[j] += h
			rh, err := predsAt(xh)
			if err != nil {
				return err
			}
			for a := range rh {
				J.Set(a, b, (rh[a]-r[a])/h)
			}
		}
		return nil
	}
	mu := 1e-2
	rejected := 0
	for step := 0; step < maxSteps; step++ {
		if rejected == 2 && refreshes < maxRefreshes {
			if err := refresh(); err != nil {
				return nil, 0, err
			}
			mu = 1e-2
		}
		// H = JᵀJ + I/σ², g = Jᵀr + (x − x0)/σ².
		var H mat.Dense
		H.Mul(J.T(), J)
		g := mat.NewVecDense(k, nil)
		g.MulVec(J.T(), mat.NewVecDense(len(r), r))
		for b, j := range free {
			H.Set(b, b, H.At(b, b)+1/(priorSigma*priorSigma))
			g.SetVec(b, g.AtVec(b)+(x[j]-x0[j])/(priorSigma*priorSigma))
		}
		M := mat.NewDense(k, k, nil)
		M.Copy(&H)
		for d := 0; d < k; d++ {
			M.Set(d, d, H.At(d, d)*(1+mu))
		}
		var delta mat.VecDense
		if err := delta.SolveVec(M, g); err != nil {
			mu *= 10
			continue
		}
		xn := append([]float64(nil), x...)
		dx := make([]float64, k)
		moved := 0.0
		for b, j := range free {
			xn[j] = math.Min(math.Max(x[j]-delta.AtVec(b), lo[j]), hi[j])
			dx[b] = xn[j] - x[j]
			moved += dx[b] * dx[b]
		}
		if moved < 1e-12 {
			break
		}
		rn, err := predsAt(xn)
		if err != nil {
			mu *= 10 // a step the model cannot predict at: shorter
			rejected++
			if rejected >= 8 {
				break
			}
			continue
		}
		// Broyden: J += (Δr − J Δx) Δxᵀ / (Δxᵀ Δx).
		for a := range rn {
			pred := 0.0
			for b := range dx {
				pred += J.At(a, b) * dx[b]
			}
			u := (rn[a] - r[a] - pred) / moved
			for b := range dx {
				J.Set(a, b, J.At(a, b)+u*dx[b])
			}
		}
		cn := cost(rn, xn)
		if cn < c0 {
			gain := c0 - cn
			x, r, c0 = xn, rn, cn
			mu = math.Max(mu/3, 1e-7)
			rejected = 0
			if gain < 1e-3*math.Max(c0, 1) {
				break
			}
			continue
		}
		mu *= 4
		rejected++
		if rejected >= 8 {
			break
		}
	}
	return x, c0, nil
}

// roundEfficiency keeps six significant digits of every fitted value.
func roundEfficiency(e catalog.Efficiency) catalog.Efficiency {
	for _, p := range Params {
		p.Set(&e, round6(p.Get(&e)))
	}
	return e
}

func round6(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return r
}

// scanFactors are the values the scan tries, as factors of the current one.
var scanFactors = []float64{0.25, 0.5, 2, 4}

// byElasticity orders free parameters by their elasticity, largest first.
func (f *fitter) byElasticity(free []int) []int {
	out := append([]int(nil), free...)
	sort.SliceStable(out, func(a, b int) bool { return f.elast[out[a]] > f.elast[out[b]] })
	return out
}

func allIndexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func without(idx []int, i int) []int {
	var out []int
	for _, j := range idx {
		if j != i {
			out = append(out, j)
		}
	}
	return out
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// summarize is the median |error| per fitted figure kind.
func summarize(runs []RunResult) []SummaryRow {
	var out []SummaryRow
	for _, m := range Metrics {
		var b, a, h []float64
		for _, r := range runs {
			eb, ea := r.ErrBefore.Get(m), r.ErrAfter.Get(m)
			if eb == nil || ea == nil {
				continue
			}
			b, a = append(b, math.Abs(*eb)), append(a, math.Abs(*ea))
			if r.ErrHeld != nil {
				if eh := r.ErrHeld.Get(m); eh != nil {
					h = append(h, math.Abs(*eh))
				}
			}
		}
		if len(b) == 0 {
			continue
		}
		row := SummaryRow{Metric: m.Key, Runs: len(b), Before: Median(b), After: Median(a)}
		if len(h) == len(b) {
			row.HeldOut = ptr(Median(h))
		}
		out = append(out, row)
	}
	return out
}

// Median is the middle value (the mean of the two middle ones).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
