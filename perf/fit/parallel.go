package fit

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/optimize"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/planner"
)

// ParCase is a measured row with attention data parallelism or expert
// parallelism, read as a worker layout, with the dense efficiencies of the
// catalog (held fixed: only the parallel terms are fitted on these rows).
type ParCase struct {
	*Case
	Layout models.Parallelism
	GPUs   int
	Eff    catalog.Efficiency
	Plain  *Case // the same GPUs as tensor parallelism alone (the baseline); nil when the heads do not divide
}

// LayoutOf reads a row's layout. The rows copy AIConfigurator's encoding of
// InferenceX runs, which multiplies: a run of G GPUs with attention data
// parallelism and EP G is recorded as tp G, attention_dp G, moe_ep G² (vLLM)
// or tp 1, attention_dp G², moe_tp G, moe_ep G (TensorRT-LLM), and tp G, ep
// G as tp G², moe_tp G, moe_ep G (SGLang, TensorRT-LLM). Every such run is
// single-node (G ≤ 8 at concurrency 4–256), so those rows are read as G GPUs
// with MoE tp 1; the others literally (tp × attention_dp GPUs, EP moe_ep).
// ok is false for a row that is neither expert- nor data-parallel.
func LayoutOf(r Row) (lay models.Parallelism, reading string, ok bool) {
	tp, dp := max(r.TP, 1), max(r.AttentionDP, 1)
	mtp, mep := max(r.MoETP, 1), max(r.MoEEP, 1)
	if mep <= 1 && dp <= 1 {
		return lay, "", false
	}
	g := tp * dp
	switch {
	case g > 8 && mtp == mep && mtp*mep == g && dp > 1:
		return models.Parallelism{TP: 1, DP: mep, EP: mep}, "squared", true
	case g > 8 && mtp == mep && mtp*mep == g:
		return models.Parallelism{TP: mep, EP: mep}, "squared", true
	case dp > 1 && tp == dp && mep == tp*dp && mtp == 1:
		return models.Parallelism{TP: 1, DP: tp, EP: tp}, "squared", true
	}
	return models.Parallelism{TP: tp, DP: dp, EP: mep}, "literal", true
}

// PrepareParallel turns the expert- and data-parallel rows into cases.
func PrepareParallel(cat *catalog.Catalog, rows []Row) ([]*ParCase, Exclusion) {
	ex := Exclusion{}
	var out []*ParCase
	engines := map[string]*catalog.Engine{}
	seen, contra := runs{}, contradicted(rows)
	for _, r := range datedTwins(rows) {
		lay, _, ok := LayoutOf(r)
		if !ok {
			continue
		}
		reason, c := prepareParallelRow(cat, r, lay, engines)
		if reason == "" && contra[keyOf(r)] {
			reason = Contradicted
		}
		if reason == "" && seen.again(r) {
			reason = SameRun
		}
		if reason != "" {
			ex[reason]++
			continue
		}
		out = append(out, c)
	}
	count := map[string]int{}
	for _, c := range out {
		count[c.Group]++
	}
	for _, c := range out {
		c.rowsInGroup = count[c.Group]
	}
	return out, ex
}

func prepareParallelRow(cat *catalog.Catalog, r Row, lay models.Parallelism, engines map[string]*catalog.Engine) (string, *ParCase) {
	if r.TTFTMS <= 0 || r.TPOTMS <= 0 {
		return "no TTFT or TPOT", nil
	}
	if r.PP > 1 {
		return "pipeline parallel", nil
	}
	n := lay.Norm()
	name, base, g, why := rowModelGPU(cat, r)
	if why != "" {
		return why, nil
	}
	m := *base
	m.WeightDtype, m.WeightsBytes = dtypeOf(r.GemmQuant), 0
	if _, ok := catalog.DtypeBytes(m.WeightDtype); !ok {
		return "unknown quantization", nil
	}
	if err := perf.CheckLayout(&m, g, n, 0, nil); err != nil {
		return "layout the model does not take", nil
	}
	c := &Case{Row: r, Model: &m, GPU: g, Dtype: m.WeightDtype, Group: name, MoE: base.MoE != nil, Replicas: 1}
	conc := r.Concurrency
	if conc == 0 {
		return "concurrency not stated", nil // as the aggregated rows (cases.go)
	}
	perRank := max(r.BatchSize, 1)
	if n.DP > 1 {
		// One worker: batch_size is a rank's (or the run's over the recorded
		// dp); every client can be in flight at once.
		perRank = max(r.BatchSize, (conc+n.DP-1)/n.DP)
	} else if r.BatchSize > 0 && conc > r.BatchSize && conc%r.BatchSize == 0 {
		c.Replicas, conc = conc/r.BatchSize, r.BatchSize
	}
	if conc < 1 {
		return "no concurrency", nil
	}
	isl, osl := harnessLengths(r)
	c.Load = perf.Load{Concurrency: conc, InputTokens: isl, OutputTokens: osl}
	c.Limits = limitsFor(r.Engine, g, perRank)
	c.deployedAs(&m)
	if n.DP > 1 {
		c.Limits.RecvInterval = 0 // SGLang's recv skipper refuses attention DP (scheduler_recv_skipper.py asserts it off)
	}
	e := rowEngine(cat, engines, r)
	if e == nil {
		return "no engine profile", nil
	}
	mp, err := planner.PlanMemory(planner.MemoryScenario{
		Model: &m, KV: models.KVOptions{KVDtype: c.KVDtype, TP: n.TP}, GPU: g, Engine: e, GPUUtil: c.MemFraction,
		MaxModelLen: r.ISL + r.OSL, MaxNumBatchedTokens: c.Limits.MaxNumBatchedTokens, MaxNumSeqs: c.Limits.MaxNumSeqs,
		Parallel: models.Parallelism{DP: n.DP, EP: n.EP},
	})
	if err != nil {
		return "memory model error", nil
	}
	if mp.KVSlotsTokens < int64(r.ISL+r.OSL) {
		return "weights leave no room for one request (kvplan's memory model)", nil
	}
	if r.Engine == "trtllm" && n.DP > 1 {
		// InferenceX's TensorRT-LLM launch scripts for attention DP set
		// attention_dp_config {enable_balance: true, batching_wait_iters:
		// 0, timeout_iters: 60}.
		c.Limits.BalanceRanks, c.Limits.BalanceTimeoutIters = n.DP, 60
	}
	c.Limits.KVSlots = mp.KVSlotsTokens * int64(n.DP)
	c.Limits.MaxNumSeqs *= n.DP
	c.Limits.MaxNumBatchedTokens *= n.DP
	pc := &ParCase{Case: c, Layout: n, GPUs: n.GPUs()}
	me, err := cat.EfficiencyFor(g.Name, r.Engine, c.Dtype)
	if err != nil {
		return "no efficiencies", nil
	}
	pc.Eff = *me.Efficiency
	// Baseline: the same GPUs as tensor parallelism alone (experts split over tp).
	if models.CheckTP(&m, pc.GPUs) == nil {
		plain := *c
		plain.TP = pc.GPUs
		plain.Limits.BalanceRanks, plain.Limits.BalanceTimeoutIters = 0, 0 // the baseline: kvplan before the layout's terms
		pmp, err := planner.PlanMemory(planner.MemoryScenario{
			Model: &m, KV: models.KVOptions{KVDtype: c.KVDtype, TP: pc.GPUs}, GPU: g, Engine: e, GPUUtil: c.MemFraction,
			MaxModelLen: r.ISL + r.OSL, MaxNumBatchedTokens: c.Limits.MaxNumBatchedTokens, MaxNumSeqs: c.Limits.MaxNumSeqs,
		})
		if err == nil && pmp.KVSlotsTokens >= int64(r.ISL+r.OSL) {
			plain.Limits.KVSlots = pmp.KVSlotsTokens
			pc.Plain = &plain
		}
	}
	return "", pc
}

// PredictParallel runs the engine model of c with the parallel constants pe.
func (c *ParCase) PredictParallel(pe *perf.ParallelEfficiency) (perf.Result, error) {
	m, err := perf.New(perf.Spec{Model: c.Model, GPU: c.GPU, Engine: c.Engine, TP: c.Layout.TP, Parallel: c.Layout,
		WeightDtype: c.Dtype, KVDtype: c.KVDtype, Efficiency: &c.Eff, ParallelEfficiency: pe})
	if err != nil {
		return perf.Result{}, err
	}
	return m.Steady(c.Load, c.Limits)
}

// ParPredict predicts every case with the constants peFor gives its engine.
func ParPredict(cases []*ParCase, peFor func(engine string) perf.ParallelEfficiency) []Prediction {
	out := make([]Prediction, len(cases))
	for i, c := range cases {
		pe := peFor(c.Engine)
		r, err := c.PredictParallel(&pe)
		out[i] = Prediction{Case: c.Case, TTFTMS: r.TTFTMS, TPOTMS: r.TPOTMS, Efficiency: c.Eff, Err: err}
	}
	return out
}

// PlainBaseline predicts every case as tensor parallelism over the same
// GPUs (what kvplan did before the layout's terms), with the catalog's
// efficiencies; a case whose heads do not divide that tp fails.
func PlainBaseline(cases []*ParCase) []Prediction {
	out := make([]Prediction, len(cases))
	for i, c := range cases {
		out[i].Case = c.Case
		if c.Plain == nil {
			out[i].Err = fmt.Errorf("tp %d does not divide the heads", c.GPUs)
			continue
		}
		eff := c.Eff
		r, err := c.Plain.Predict(&eff)
		out[i].TTFTMS, out[i].TPOTMS, out[i].Err = r.TTFTMS, r.TPOTMS, err
	}
	return out
}

// ParallelFitted are the constants fitted per engine: the all-to-all
// efficiency (0.05–1), the routing skew (0–2) and the low-latency kernels'
// per-call latency (1–100 µs); the normal kernels' latency, EPLB's skew and
// the pipeline send stay at the prior (no row has EPLB or pipeline stages).
type ParallelFitted struct {
	Engine string
	Rows   int
	Value  perf.ParallelEfficiency
	Loss   float64
}

// FitParallel fits each engine's all-to-all efficiency, routing skew and latency on
// cases (the dense efficiencies fixed) with Nelder–Mead, minimizing the
// main fit's loss (soft-L1 of the log errors of TTFT and TPOT, each row
// weighted 1/√(rows of its model)).
func FitParallel(cases []*ParCase, prior perf.ParallelEfficiency, iterations int) []ParallelFitted {
	by := map[string][]*ParCase{}
	for _, c := range cases {
		by[c.Engine] = append(by[c.Engine], c)
	}
	var engines []string
	for e := range by {
		engines = append(engines, e)
	}
	sort.Strings(engines)
	var out []ParallelFitted
	for _, e := range engines {
		rows := by[e]
		at := func(x []float64) perf.ParallelEfficiency {
			pe := prior
			pe.AllToAll = 0.05 + 0.95*sigmoid(x[0])
			pe.Imbalance = 2 * sigmoid(x[1])
			pe.AllToAllUS = 1 + 99*sigmoid(x[2])
			return pe
		}
		loss := func(x []float64) float64 { return parLoss(rows, at(x)) }
		x0 := []float64{logit((prior.AllToAll - 0.05) / 0.95), logit(prior.Imbalance / 2), logit((prior.AllToAllUS - 1) / 99)}
		res, err := optimize.Minimize(optimize.Problem{Func: loss}, x0,
			&optimize.Settings{MajorIterations: iterations, FuncEvaluations: iterations * 4, Converger: &optimize.FunctionConverge{Absolute: 1e-4, Iterations: 8}},
			&optimize.NelderMead{InitialVertices: nil, SimplexSize: 1})
		x := x0
		if err == nil && res != nil {
			x = res.X
		}
		pe := at(x)
		pe.Rows = len(rows)
		out = append(out, ParallelFitted{Engine: e, Rows: len(rows), Value: pe, Loss: loss(x)})
	}
	return out
}

func parLoss(cases []*ParCase, pe perf.ParallelEfficiency) float64 {
	const s = 0.2
	rho := func(r float64) float64 { return 2 * s * s * (math.Sqrt(1+(r/s)*(r/s)) - 1) }
	var sum, wsum float64
	for _, c := range cases {
		w := 1 / math.Sqrt(float64(c.rowsInGroup))
		wsum += w
		r, err := c.PredictParallel(&pe)
		if err != nil || !(r.TTFTMS > 0) || !(r.TPOTMS > 0) {
			sum += w * failedPenalty
			continue
		}
		sum += w * (rho(math.Log(r.TTFTMS/c.TTFTMS)) + rho(math.Log(r.TPOTMS/c.TPOTMS)))
	}
	if wsum == 0 {
		return 0
	}
	return sum / wsum
}
