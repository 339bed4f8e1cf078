package planner

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/models"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/planfile"
)

// engineModel builds the engine model (package perf) of model m on tp GPUs
// of kind g under engine (vllm when the engine model does not know it), with
// the catalog's efficiencies for GPU × engine × the model's weight dtype.
func engineModel(cat *catalog.Catalog, engine string, m *catalog.Model, g *catalog.GPU, tp int, eager bool) (*perf.Model, error) {
	return engineModelFor(cat, engine, m, g, WorkerLayout{Parallel: models.Parallelism{TP: max(1, tp)}}, eager)
}

// WorkerLayout is what the engine model needs of a worker's layout beyond
// its GPU: the ranks, EPLB's redundant experts, and the network between its
// NVLink domains when it spans more than one.
type WorkerLayout struct {
	Parallel         models.Parallelism
	RedundantExperts int
	EPLB             bool          // experts rebalanced by load (implied by RedundantExperts)
	TwoBatchOverlap  bool          // the all-to-all under the other micro-batch's compute
	Link             *catalog.Link // nil: the worker fits one NVLink domain
}

// engineModelFor is engineModel of a worker's whole layout (data, expert
// and pipeline ranks, MTP): perf.New refuses what it does not model as
// kvplan's limit.
func engineModelFor(cat *catalog.Catalog, engine string, m *catalog.Model, g *catalog.GPU, lay WorkerLayout, eager bool) (*perf.Model, error) {
	if cat == nil {
		return nil, fmt.Errorf("no catalog to take the engine model's efficiencies from")
	}
	if _, ok := perf.Schedules[engine]; !ok {
		engine = "vllm"
	}
	par := lay.Parallel.Norm()
	return perf.New(perf.Spec{Model: m, GPU: g, Engine: engine, TP: par.TP, Parallel: par, EnforceEager: eager, Catalog: cat,
		Link: lay.Link, RedundantExperts: lay.RedundantExperts, EPLB: lay.EPLB || lay.RedundantExperts > 0, TwoBatchOverlap: lay.TwoBatchOverlap})
}

// prefillBudget is the engine's default tokens per iteration on g (vLLM's
// max_num_batched_tokens, SGLang's chunked_prefill_size, TensorRT-LLM's
// max_num_tokens), from its newest catalog profile; 8192 when the catalog
// has none.
func prefillBudget(cat *catalog.Catalog, engine string, g *catalog.GPU) int {
	e, _, err := cat.EngineVersion(engine, "")
	if err != nil {
		return 8192
	}
	if e.IsLargeGPU(g.Name, g.MemoryBytes) {
		return e.LargeMaxNumBatchedTokens
	}
	return e.DefaultMaxNumBatchedTokens
}

// EstimatePrefillMS is the prefill time of one request of tokens tokens on
// an idle worker of tp GPUs of kind g, from the engine model: the request's
// chunks of at most the engine's default budget run one iteration each
// (fixed costs, GEMMs at the fitted efficiency of the weight dtype, causal
// attention, all-reduces; kvplan perf --explain shows the terms). It adds
// its figures to d.
func EstimatePrefillMS(cat *catalog.Catalog, engine string, m *catalog.Model, g *catalog.GPU, tokens, tp int, d *Derivation) (float64, error) {
	return EstimatePrefillMSFor(cat, engine, m, g, tokens, WorkerLayout{Parallel: models.Parallelism{TP: max(1, tp)}}, d)
}

// EstimatePrefillMSFor is EstimatePrefillMS on a worker of layout par.
func EstimatePrefillMSFor(cat *catalog.Catalog, engine string, m *catalog.Model, g *catalog.GPU, tokens int, lay WorkerLayout, d *Derivation) (float64, error) {
	par := lay.Parallel.Norm()
	em, err := engineModelFor(cat, engine, m, g, lay, false)
	if err != nil {
		return 0, err
	}
	budget := prefillBudget(cat, engine, g)
	ms := em.PrefillMS(tokens, budget)
	first := em.Step([]int{min(tokens, budget)}, nil, nil)
	names, vals := first.Parts(false)
	d.Add("prefill_ms", ms, "ms",
		"Σ over chunks of ≤ max_num_batched_tokens of the engine model's iteration: "+strings.Join(names, " + "),
		"%d tokens in chunks of ≤ %d on %d × %s%s (%s, %s weights); first chunk %s",
		tokens, budget, par.GPUs(), g.Name, layoutSuffix(par), engine, em.WeightDtype, msSum(vals))
	note := "efficiencies " + em.Efficiency.Key() + ": " + em.Efficiency.Source
	if em.Efficiency.Calibrated() {
		note += "; " + em.Efficiency.Provenance()
	}
	if em.Fallback != "" {
		note = em.Fallback + "; " + note
	}
	d.Note(note)
	return ms, nil
}

// RequestMSFor is what a request of tokens prompt tokens pays on path
// before its worker (perf.RequestPath.Cost), written into d: the frontend's
// cost, or the engine model's request_ms + request_us_per_token × tokens
// for engine on g. Every command's TTFT takes its first term from here or
// from the engine model's RequestCost, the same function.
func RequestMSFor(cat *catalog.Catalog, engine string, m *catalog.Model, g *catalog.GPU, lay WorkerLayout, path perf.RequestPath, tokens int, d *Derivation) (float64, error) {
	c := path.Cost(nil)
	if !path.IsFrontend() {
		if g == nil {
			return 0, fmt.Errorf("the direct request path costs what the engine model's efficiencies say, which need a GPU")
		}
		em, err := engineModelFor(cat, engine, m, g, lay, false)
		if err != nil {
			return 0, err
		}
		c = em.RequestCost(path)
	}
	ms := c.MS(float64(tokens))
	d.Add("request_ms", ms, "ms", c.Formula, "%s", c.Values(float64(tokens)))
	d.Note(c.Source)
	return ms, nil
}

// PlanRequestPath is the request path of a plan (router.request_path): a
// frontend at DefaultFrontendMS, or direct to the engine's server.
func PlanRequestPath(p *planfile.Plan) perf.RequestPath {
	if p.Router.RequestPath == planfile.RequestPathDirect {
		return perf.Direct()
	}
	return perf.Frontend(DefaultFrontendMS)
}

// EfficiencyUse says which efficiency entry a figure's engine model rests
// on and where its values come from: the shipped fit, or a calibration on
// the user's benchmark files (kvplan calibrate) with their names and date.
// plan, check and perf show it beside the figures.
type EfficiencyUse struct {
	Key            string `json:"key"`        // the entry used: gpu × engine × dtype, "*" where it falls back
	Wanted         string `json:"wanted"`     // what was asked for: gpu × engine × dtype
	Provenance     string `json:"provenance"` // "the shipped fit (…)" or "calibrated by kvplan calibrate on … from …"
	Calibrated     bool   `json:"calibrated"`
	CalibratedFrom string `json:"calibrated_from,omitempty"`
	CalibratedAt   string `json:"calibrated_at,omitempty"`
}

// UsedEfficiency is the entry the engine model of gpu × engine × weight
// dtype uses (an engine the engine model does not know is taken as vLLM,
// as everywhere in the planner), or false when the catalog has none.
func UsedEfficiency(cat *catalog.Catalog, gpu, engine, dtype string) (EfficiencyUse, bool) {
	if _, ok := perf.Schedules[engine]; !ok {
		engine = "vllm"
	}
	m, err := cat.EfficiencyFor(gpu, engine, dtype)
	if err != nil {
		return EfficiencyUse{}, false
	}
	return EfficiencyUse{Key: m.Key(), Wanted: gpu + " × " + engine + " × " + dtype, Provenance: m.Provenance(),
		Calibrated: m.Calibrated(), CalibratedFrom: m.CalibratedFrom, CalibratedAt: m.CalibratedAt}, true
}

// Note is the use in one sentence: "engine-model efficiencies h100-sxm ×
// vllm × bf16: calibrated by kvplan calibrate on … from …".
func (u EfficiencyUse) Note() string {
	s := "engine-model efficiencies " + u.Key + ": " + u.Provenance
	if u.Key != u.Wanted {
		s = "engine-model efficiencies for " + u.Wanted + ": " + u.Key + ", " + u.Provenance
	}
	return s
}

// EfficiencyUses are the entries the deployment's pools rest on, each once,
// in pool order.
func (d *Deployment) EfficiencyUses() []EfficiencyUse {
	var out []EfficiencyUse
	seen := map[string]bool{}
	for _, pp := range d.Pools {
		if pp.GPU == nil || d.cat == nil {
			continue
		}
		u, ok := UsedEfficiency(d.cat, pp.GPU.Name, d.Engine.Name, d.Model.WeightDtype)
		if ok && !seen[u.Wanted] {
			seen[u.Wanted] = true
			out = append(out, u)
		}
	}
	return out
}

// layoutSuffix is " (tp1 dp8 ep8)" for a layout beyond tensor
// parallelism, "" for tp alone (so the derivations of plain pools read as
// they always have).
func layoutSuffix(par models.Parallelism) string {
	if par.Plain() {
		return ""
	}
	return " (" + par.String() + ")"
}
