package fit

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/optimize"

	"github.com/kvplan/kvplan/models"
)

// The simple baseline: a deliberately plain fitted model to hold the
// physical engine model to (issue 22: "if the simple model wins on a
// segment, the physical model has a wrong mechanism there"). Per engine,
// eleven constants k₀…k₁₀ ≥ 0 (fitted as their logarithms), over
// roofline times of one case (ms; B = min(C, max_num_seqs) running
// sequences, C clients):
//
//	mem     = (weights read a step + B × KV of a request at ISL + OSL/2) / bandwidth   per rank
//	          (MoE: the routed experts a step reads are min(1, B × k/E) of them)
//	dflops  = B × 2 × matmul params / (peak(dtype) × tp)
//	pflops  = prefill weight FLOPs(ISL) / (peak(dtype) × tp)
//	pattn   = prefill attention FLOPs(ISL) / (peak(bf16) × tp)
//
//	decode step  t_d = k₀ + k₁ mem + k₂ dflops + k₃ log₂ tp
//	prefill      t_p = k₄ + k₅ pflops + k₆ pattn
//	TPOT             = t_d + k₇ × B × t_p / OSL        (each running client's prefill once per OSL steps)
//	TTFT             = k₈ + t_p × (1 + k₉ (B − 1)) + k₁₀ t_d + queue
//	queue            = max(0, C / B − 1) × (TTFT before queue + (OSL − 1) × TPOT)
//
// k₉ is the first-wave term: clients that start together put up to B
// prefills in front of one another, and the harness counts those requests.
// The queue is the closed loop's: C − B clients wait a request's time per
// B admitted. No schedule, no KV admission, no efficiencies per GPU: the
// same constants for every GPU, model and dtype of an engine.
const simpleConstants = 11

// simpleFeatures are the roofline times of a case (ms) and its counts.
type simpleFeatures struct {
	mem, dflops, pflops, pattn, log2tp float64
	b, c, osl                          float64
	ok                                 bool
}

func featuresOf(c *Case) simpleFeatures {
	var f simpleFeatures
	w, err := models.NewWeights(c.Model, c.TP)
	kv, err2 := models.NewKV(c.Model, models.KVOptions{KVDtype: c.KVDtype, TP: c.TP})
	if err != nil || err2 != nil || c.GPU.MemoryBandwidthBytes <= 0 {
		return f
	}
	peak := c.GPU.BF16TFLOPS
	switch c.Dtype {
	case "fp8":
		if c.GPU.FP8TFLOPS > 0 {
			peak = c.GPU.FP8TFLOPS
		}
	case "nvfp4", "mxfp4":
		if c.GPU.FP4TFLOPS > 0 {
			peak = c.GPU.FP4TFLOPS
		} else if c.GPU.FP8TFLOPS > 0 {
			peak = c.GPU.FP8TFLOPS
		}
	}
	tp := float64(max(c.TP, 1))
	b := float64(min(c.Load.Concurrency, max(c.Limits.MaxNumSeqs, 1)))
	weights := float64(w.PerRankBytes)
	if total, active := models.RoutedExpertParams(c.Model); total > 0 && c.Model.ParamsTotal > 0 {
		routed := float64(total) / float64(c.Model.ParamsTotal) // share of the weights in routed experts
		touched := math.Min(1, b*float64(active)/float64(total))
		weights *= 1 - routed + routed*touched
	}
	f.mem = (weights + b*float64(kv.RequestBytes(c.Load.InputTokens+c.Load.OutputTokens/2))) / c.GPU.MemoryBandwidthBytes * 1000
	f.dflops = b * 2 * float64(models.MatmulParams(c.Model)) / (peak * 1e12 * tp) * 1000
	wf, af := models.PrefillFLOPs(c.Model, c.Load.InputTokens)
	f.pflops = wf / (peak * 1e12 * tp) * 1000
	f.pattn = af / (c.GPU.BF16TFLOPS * 1e12 * tp) * 1000
	f.log2tp = math.Log2(tp)
	f.b, f.c, f.osl = b, float64(c.Load.Concurrency), float64(max(c.Load.OutputTokens, 1))
	f.ok = f.mem > 0 && f.pflops > 0
	return f
}

// simplePredict is the baseline's TTFT and TPOT (ms) of features f under
// constants k.
func simplePredict(f simpleFeatures, k []float64) (ttft, tpot float64) {
	td := k[0] + k[1]*f.mem + k[2]*f.dflops + k[3]*f.log2tp
	tpre := k[4] + k[5]*f.pflops + k[6]*f.pattn
	tpot = td + k[7]*f.b*tpre/f.osl
	ttft = k[8] + tpre*(1+k[9]*(f.b-1)) + k[10]*td
	if f.c > f.b {
		ttft += (f.c/f.b - 1) * (ttft + (f.osl-1)*tpot)
	}
	return ttft, tpot
}

// simpleInitial is where every fit starts: a step of 1 ms plus the
// roofline at 1/0.8 of it, prefill at 1/0.6 of its FLOPs, 20 ms of
// frontend, a fifth of the other prefills in front of each.
var simpleInitial = []float64{1, 1.25, 1.25, 0.3, 5, 1.6, 2, 1, 20, 0.2, 1}

// SimpleFit is one engine's fitted constants.
type SimpleFit struct {
	Engine string
	K      []float64
	Rows   int
}

// FitSimple fits the baseline's constants per engine on cases (L-BFGS on
// forward differences, the physical fit's loss: a soft-L1 of the log
// errors of TTFT and TPOT, rows weighted 1/√(rows of their model)).
func FitSimple(cases []*Case, iterations int) map[string]SimpleFit {
	byEngine := map[string][]*Case{}
	for _, c := range cases {
		byEngine[c.Engine] = append(byEngine[c.Engine], c)
	}
	var engines []string
	for e := range byEngine {
		engines = append(engines, e)
	}
	sort.Strings(engines)
	out := map[string]SimpleFit{}
	for _, e := range engines {
		out[e] = fitSimpleEngine(e, byEngine[e], iterations)
	}
	return out
}

func fitSimpleEngine(engine string, cases []*Case, iterations int) SimpleFit {
	type row struct {
		f          simpleFeatures
		ttft, tpot float64
		w          float64
	}
	count := map[string]int{}
	for _, c := range cases {
		count[c.Group]++
	}
	var rows []row
	for _, c := range cases {
		f := featuresOf(c)
		if !f.ok {
			continue
		}
		rows = append(rows, row{f, c.TTFTMS, c.TPOTMS, 1 / math.Sqrt(float64(count[c.Group]))})
	}
	const s = 0.2
	rho := func(r float64) float64 { return 2 * s * s * (math.Sqrt(1+(r/s)*(r/s)) - 1) }
	k := make([]float64, simpleConstants)
	loss := func(x []float64) float64 {
		for i := range k {
			k[i] = math.Exp(x[i])
		}
		var sum, wsum float64
		for _, r := range rows {
			ttft, tpot := simplePredict(r.f, k)
			sum += r.w * (rho(math.Log(ttft/r.ttft)) + rho(math.Log(tpot/r.tpot)))
			wsum += r.w
		}
		if wsum == 0 {
			return 0
		}
		return sum / wsum
	}
	x0 := make([]float64, simpleConstants)
	for i, v := range simpleInitial {
		x0[i] = math.Log(v)
	}
	grad := func(g, x []float64) { fd.Gradient(g, loss, x, &fd.Settings{Formula: fd.Forward, Step: 1e-4}) }
	res, err := optimize.Minimize(optimize.Problem{Func: loss, Grad: grad}, x0,
		&optimize.Settings{MajorIterations: iterations, GradientThreshold: 1e-7}, &optimize.LBFGS{})
	x := x0
	if res != nil && err == nil || res != nil && len(res.X) == len(x0) {
		x = res.X
	}
	out := SimpleFit{Engine: engine, K: make([]float64, simpleConstants), Rows: len(rows)}
	for i := range out.K {
		out.K[i] = math.Exp(x[i])
	}
	return out
}

// PredictSimple predicts cases with fits (by engine); an engine without a
// fit, or a case without features, is an error.
func PredictSimple(cases []*Case, fits map[string]SimpleFit) []Prediction {
	out := make([]Prediction, len(cases))
	for i, c := range cases {
		out[i].Case = c
		f := featuresOf(c)
		fit, ok := fits[c.Engine]
		if !f.ok || !ok {
			out[i].Err = fmt.Errorf("simple baseline: no fit or no roofline for %s", c.ID)
			continue
		}
		out[i].TTFTMS, out[i].TPOTMS = simplePredict(f, fit.K)
	}
	return out
}

// HoldOutSimple fits the baseline once per value of key on the other
// values' cases and predicts the held-out ones, as the physical model's
// hold-out does.
func HoldOutSimple(cases []*Case, key func(*Case) string, iterations int) []Prediction {
	return HoldOut(cases, key, func(_ string, train, test []*Case) []Prediction {
		return PredictSimple(test, FitSimple(train, iterations))
	})
}

// HoldOut splits cases by key, in the order the values first appear, and
// for each value calls fold with the other values' cases (train) and its own
// (test); the predictions of every fold, together.
func HoldOut(cases []*Case, key func(*Case) string, fold func(g string, train, test []*Case) []Prediction) []Prediction {
	var order []string
	seen := map[string]bool{}
	for _, c := range cases {
		if k := key(c); !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	var held []Prediction
	for _, g := range order {
		var train, test []*Case
		for _, c := range cases {
			if key(c) == g {
				test = append(test, c)
			} else {
				train = append(train, c)
			}
		}
		held = append(held, fold(g, train, test)...)
	}
	return held
}
