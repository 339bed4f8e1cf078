package catalog

import (
	"fmt"
	"strings"
	"time"
)

// Any matches every GPU, engine or dtype in an Efficiency key.
const Any = "*"

// Efficiency holds the fitted constants of kvplan's engine performance model
// (package perf) for one GPU × engine × weight dtype: what fraction of the
// GPU's peak each operator class reaches, and the fixed costs of an engine
// iteration. Any of the three keys may be "*": Lookup picks the most specific
// entry and says when it fell back.
//
// The values are fitted on measured closed-loop serving runs (perf/fit); Rows
// says on how many, and Source names the data and the fit.
type Efficiency struct {
	GPU    string `toml:"gpu" json:"gpu"`       // catalog GPU name, or "*"
	Engine string `toml:"engine" json:"engine"` // vllm, sglang, trtllm, or "*"
	Dtype  string `toml:"dtype" json:"dtype"`   // weight dtype (bf16, fp8, fp4, int4, ...), or "*"

	GEMM         float64 `toml:"gemm" json:"gemm"`                                 // fraction of the dtype's dense peak that large GEMMs reach, (0, 1]
	Memory       float64 `toml:"memory" json:"memory"`                             // fraction of memory bandwidth reached streaming weights and KV, (0, 1]
	Attention    float64 `toml:"attention" json:"attention"`                       // fraction of the bf16 peak that prefill attention reaches, (0, 1]
	MoE          float64 `toml:"moe" json:"moe"`                                   // expert (grouped) GEMMs relative to dense ones, compute and memory, (0, 1]
	Interconnect float64 `toml:"interconnect" json:"interconnect"`                 // fraction of the interconnect bandwidth an all-reduce reaches, (0, 1]
	AllReduceUS  float64 `toml:"allreduce_us" json:"allreduce_us"`                 // fixed latency of one all-reduce, µs
	StepMS       float64 `toml:"step_ms" json:"step_ms"`                           // fixed cost of one engine iteration (scheduler, sampler, launches), ms
	LayerUS      float64 `toml:"layer_us" json:"layer_us"`                         // fixed cost per decoder layer per iteration under CUDA graphs, µs
	EagerLayerUS float64 `toml:"eager_layer_us" json:"eager_layer_us"`             // the same without CUDA graphs (prefill steps, --enforce-eager), µs
	RequestMS    float64 `toml:"request_ms" json:"request_ms"`                     // per request, in TTFT: HTTP, tokenization, detokenization, ms
	RequestUSTok float64 `toml:"request_us_per_token" json:"request_us_per_token"` // per input token, in TTFT: tokenizing and moving the prompt, µs
	RampMS       float64 `toml:"ramp_ms" json:"ramp_ms"`                           // a benchmark's first requests reach the engine spread evenly over ramp_ms, ms
	// SeqUS is the host's cost per sequence of an iteration (scheduling,
	// input preparation, sampling, detokenisation), µs: what makes a large
	// batch's step grow beyond its GPU time. 0 in the shipped entries until
	// a refit sets it (docs/engine-model.md, round 2).
	SeqUS float64 `toml:"seq_us" json:"seq_us,omitempty"`
	// MoEMemory is expert weight streaming relative to dense streaming,
	// apart from MoE (then the expert GEMMs' compute alone); 0: MoE for
	// both, as the shipped entries (docs/engine-model.md, round 2).
	MoEMemory float64 `toml:"moe_memory" json:"moe_memory,omitempty"`
	// CustomAllReduceUS is the latency of an all-reduce of at most
	// 8 MiB (perf.CustomAllReduceBytes) on NVLink GPUs (vLLM's and SGLang's custom
	// all-reduce, TensorRT-LLM's one-shot and two-shot kernels), µs; 0:
	// AllReduceUS at every size, as the shipped entries.
	CustomAllReduceUS float64 `toml:"custom_allreduce_us" json:"custom_allreduce_us,omitempty"`
	// EagerOverlap: on iterations outside CUDA graphs the host's kernel
	// launches (eager_layer_us a layer) overlap the GPU's work, so the
	// iteration takes the smooth maximum of the two rather than their sum.
	EagerOverlap bool `toml:"eager_overlap" json:"eager_overlap,omitempty"`
	// ActivationTraffic: every iteration also streams its tokens'
	// activations through memory-bound kernels (the two residual-add +
	// RMSNorms a layer on the full hidden, which every tensor-parallel rank
	// runs whole; the gated MLP's activation; the MoE combine), at the
	// memory efficiency (perf.ActivationBytesPerToken). Off in the shipped
	// entries (docs/engine-model.md, round 2).
	ActivationTraffic bool `toml:"activation_traffic" json:"activation_traffic,omitempty"`

	Rows   int    `toml:"rows" json:"rows"` // measured rows the values were fitted on (0 = not fitted: a prior)
	Source string `toml:"source" json:"source"`

	// CalibratedFrom and CalibratedAt say that `kvplan calibrate` fitted the
	// entry on the user's own benchmark result files (their paths, comma
	// separated) on that date (YYYY-MM-DD); both empty for the shipped fit.
	CalibratedFrom string `toml:"calibrated_from" json:"calibrated_from,omitempty"`
	CalibratedAt   string `toml:"calibrated_at" json:"calibrated_at,omitempty"`

	File string `toml:"-" json:"-"`
	Line int    `toml:"-" json:"-"`
}

// Key names the entry: "h100-sxm × vllm × fp8".
func (e *Efficiency) Key() string { return e.GPU + " × " + e.Engine + " × " + e.Dtype }

func (e *Efficiency) validate() []fieldErr {
	var errs []fieldErr
	add := func(field, format string, a ...any) { errs = append(errs, fieldErr{field, fmt.Sprintf(format, a...)}) }
	if e.Source == "" {
		add("source", "missing: say which data the values were fitted on")
	}
	for _, k := range []struct{ name, v string }{{"gpu", e.GPU}, {"engine", e.Engine}, {"dtype", e.Dtype}} {
		if strings.TrimSpace(k.v) == "" {
			add(k.name, `missing: a name, or "*" for any`)
		}
	}
	if e.Dtype != Any && e.Dtype != "" {
		if _, ok := dtypeBytes[e.Dtype]; !ok {
			add("dtype", "%q is not a weight dtype (bf16, fp16, fp8, int8, int4, mxfp4, nvfp4, fp4) or \"*\"", e.Dtype)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"gemm", e.GEMM}, {"memory", e.Memory}, {"attention", e.Attention}, {"moe", e.MoE}, {"interconnect", e.Interconnect}} {
		if !(f.v > 0 && f.v <= 1) {
			add(f.name, "must be in (0, 1] (got %g): a fraction of the GPU's peak", f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"allreduce_us", e.AllReduceUS}, {"step_ms", e.StepMS}, {"layer_us", e.LayerUS}, {"eager_layer_us", e.EagerLayerUS}, {"request_ms", e.RequestMS}, {"request_us_per_token", e.RequestUSTok}, {"ramp_ms", e.RampMS}, {"seq_us", e.SeqUS}, {"custom_allreduce_us", e.CustomAllReduceUS}} {
		if !(f.v >= 0 && f.v < 1e6) {
			add(f.name, "must be >= 0 (got %g)", f.v)
		}
	}
	if !(e.MoEMemory >= 0 && e.MoEMemory <= 1) {
		add("moe_memory", "must be in (0, 1], or 0 for moe's value (got %g): expert streaming relative to dense streaming", e.MoEMemory)
	}
	if e.Rows < 0 {
		add("rows", "must be >= 0 (got %d)", e.Rows)
	}
	switch {
	case e.CalibratedFrom != "" && e.CalibratedAt == "":
		add("calibrated_at", "missing: a calibrated entry (calibrated_from) says when it was calibrated, as YYYY-MM-DD")
	case e.CalibratedAt != "" && e.CalibratedFrom == "":
		add("calibrated_from", "missing: a calibrated entry (calibrated_at) names the result files it was fitted on")
	case e.CalibratedAt != "":
		if _, err := time.Parse(time.DateOnly, e.CalibratedAt); err != nil {
			add("calibrated_at", "%q is not a date such as 2026-01-31", e.CalibratedAt)
		}
	}
	return errs
}

// Calibrated reports whether a calibration (kvplan calibrate) fitted the
// entry, rather than the shipped fit.
func (e *Efficiency) Calibrated() bool { return e.CalibratedFrom != "" }

// Provenance says in words where the values come from: "calibrated by
// kvplan calibrate on 2026-01-31 from a.json, b.json" or "the shipped fit
// (fitted on 2265 measured rows)".
func (e *Efficiency) Provenance() string {
	if e.Calibrated() {
		return fmt.Sprintf("calibrated by kvplan calibrate on %s from %s", e.CalibratedAt, e.CalibratedFrom)
	}
	return "the shipped fit (" + fitted(e) + ")"
}

// EfficiencyMatch is the entry Lookup chose and how.
type EfficiencyMatch struct {
	*Efficiency
	Exact    bool   // the entry names this GPU, engine and dtype
	Fallback string // when not exact: what was asked and what was used instead, in words
}

// EfficiencyFor finds the efficiencies of gpu × engine × dtype: the exact
// entry, else the most specific entry whose keys are "*" where they differ
// (a GPU-specific entry beats an engine- or dtype-specific one). It fails
// when no entry matches, naming the entries there are.
func (c *Catalog) EfficiencyFor(gpu, engine, dtype string) (EfficiencyMatch, error) {
	var best *Efficiency
	bestScore := -1
	for _, e := range c.Efficiencies {
		score, ok := 0, true
		for i, k := range []struct{ have, want string }{{e.GPU, gpu}, {e.Engine, engine}, {e.Dtype, dtype}} {
			switch k.have {
			case k.want:
				score += 4 >> i // gpu 4, engine 2, dtype 1
			case Any:
			default:
				ok = false
			}
		}
		if ok && score > bestScore {
			best, bestScore = e, score
		}
	}
	if best == nil {
		var have []string
		for _, e := range c.Efficiencies {
			have = append(have, e.Key())
		}
		return EfficiencyMatch{}, fmt.Errorf("no engine efficiencies for %s × %s × %s in the catalog (entries: %s); add an [[efficiency]] entry in a user catalog",
			gpu, engine, dtype, strings.Join(have, "; "))
	}
	m := EfficiencyMatch{Efficiency: best, Exact: bestScore == 7}
	if !m.Exact {
		m.Fallback = fmt.Sprintf("no efficiencies fitted for %s × %s × %s; using %s (%s)", gpu, engine, dtype, best.Key(), fitted(best))
	}
	return m, nil
}

func fitted(e *Efficiency) string {
	if e.Rows == 0 {
		return "a prior, not fitted"
	}
	return fmt.Sprintf("fitted on %d measured rows", e.Rows)
}
