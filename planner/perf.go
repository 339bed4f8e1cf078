package planner

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/perf"
)

// PerfEngines lists the engines `kvplan perf` models.
func PerfEngines() []string { return perf.Engines() }

// PerfScenario is one replica serving a closed-loop benchmark: Concurrency
// clients, each sending its next request when the last one finished.
type PerfScenario struct {
	Catalog       *catalog.Catalog // efficiencies and engine profiles
	Model         *catalog.Model
	GPU           *catalog.GPU
	Engine        string // vllm, sglang, trtllm
	EngineVersion string // the memory profile's version; "" = the catalog's newest (the efficiencies are not per version)
	TP            int
	WeightDtype   string // "" = the model's
	KVDtype       string // "" = the model's

	InputTokens, OutputTokens, Concurrency int

	GPUUtil             float64 // the engine's memory fraction; 0 = the engine's default
	MaxNumSeqs          int     // 0 = the engine's default
	MaxNumBatchedTokens int     // 0 = the engine's default
	EnforceEager        bool
	// CUDAGraphMaxBatch is the largest iteration (tokens) the engine runs
	// under a CUDA graph; 0 = the engine model's default (perf.Spec.GraphMax).
	CUDAGraphMaxBatch int

	// Parallel is the worker's layout beyond TP (its TP, when set, must
	// equal TP): attention data parallelism, expert parallelism, pipeline
	// stages, MTP. The limits above (max_num_seqs, max_num_batched_tokens)
	// are per data-parallel rank, as each rank's scheduler has its own.
	Parallel         models.Parallelism
	Link             *catalog.Link // the network between the worker's nodes, when it spans more than one NVLink domain
	EPLB             bool          // experts rebalanced (lower imbalance)
	RedundantExperts int           // EPLB's redundant experts (implies EPLB)
	TwoBatchOverlap  bool          // the all-to-all overlaps compute (two micro-batches)

	// Path is how requests reach the worker; the zero value is direct to
	// the engine, as benchmarks run (kvplan perf --request-path).
	Path perf.RequestPath
}

// PerfPlan is what the benchmark measures on one replica, and how.
type PerfPlan struct {
	Model         string `json:"model"`
	GPU           string `json:"gpu"`
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version,omitempty"`
	TP            int    `json:"tp"`
	GPUs          int    `json:"gpus"`
	WeightDtype   string `json:"weight_dtype"`
	KVDtype       string `json:"kv_dtype"`
	InputTokens   int    `json:"input_tokens"`
	OutputTokens  int    `json:"output_tokens"`
	Concurrency   int    `json:"concurrency"`

	TTFTMS                 float64 `json:"ttft_ms"`
	TPOTMS                 float64 `json:"tpot_ms"`
	ITLMSP50               float64 `json:"itl_ms_p50"`
	RequestsPerS           float64 `json:"requests_per_s"`
	OutputTokensPerS       float64 `json:"output_tokens_per_s"`
	OutputTokensPerSPerGPU float64 `json:"output_tokens_per_s_per_gpu"`
	RunningSequences       float64 `json:"running_sequences"`
	MaxRunning             int     `json:"max_running"`
	KVLimited              bool    `json:"kv_limited"`
	WaitingMS              float64 `json:"waiting_ms"`
	PrefillMS              float64 `json:"prefill_ms"`
	RequestOverheadMS      float64 `json:"request_overhead_ms"`
	RequestPath            string  `json:"request_path"`
	DecodeStepMS           float64 `json:"decode_step_ms"`
	PrefillStepMS          float64 `json:"prefill_step_ms"`
	PrefillStepShare       float64 `json:"prefill_step_share"`

	KVSlotsTokens int64 `json:"kv_slots_tokens"`
	// The layout beyond tp (absent for tp alone): kv_slots_tokens,
	// max_num_seqs and max_num_batched_tokens are then the worker's, dp × one rank's.
	Layout              string             `json:"layout,omitempty"`
	DP                  int                `json:"dp,omitempty"`
	EP                  int                `json:"ep,omitempty"`
	PP                  int                `json:"pp,omitempty"`
	SpeculativeTokens   int                `json:"speculative_tokens,omitempty"`
	AcceptanceLength    float64            `json:"acceptance_length,omitempty"`
	Parallel            *perf.ParallelDesc `json:"parallel,omitempty"`
	MaxNumSeqs          int                `json:"max_num_seqs"`
	MaxNumBatchedTokens int                `json:"max_num_batched_tokens"`
	SeparatePrefill     bool               `json:"separate_prefill"`
	// CUDAGraphMaxBatch is the largest CUDA-graphed iteration, tokens, when
	// given (absent: 512, the engine model's cap for every engine).
	CUDAGraphMaxBatch int `json:"cuda_graph_max_batch,omitempty"`

	Efficiency         catalog.Efficiency `json:"efficiency"`
	EfficiencyFallback string             `json:"efficiency_fallback"`
	StepTerms          *PerfStepTerms     `json:"step_terms,omitempty"` // with --explain

	Assumptions []string   `json:"assumptions"`
	NotModelled []string   `json:"not_modelled"`
	Derivation  Derivation `json:"derivation,omitempty"`
}

// PerfStepTerms are the terms of a mean prefill and a mean decode iteration.
type PerfStepTerms struct {
	Prefill perf.Terms `json:"prefill"`
	Decode  perf.Terms `json:"decode"`
}

var perfNotModelled = []string{
	"speculative decoding with a draft model (MTP heads are modelled: --speculative-tokens)",
	"prefix caching (the benchmark's prompts share no prefix)",
	"overlap of the all-to-all with compute beyond --two-batch-overlap, and EPLB's rebalancing cost (docs/parallelism.md)",
	"preemption: vLLM and SGLang admit against the KV a request holds on average (prompt and half its output; SGLang a little more) and are never preempted, TensorRT-LLM reserves all of it",
	"sparse attention (DeepSeek-V3.2/GLM-5 indexers): attention is counted dense",
	"CPU-side limits: tokenization and detokenization throughput beyond the fitted per-request overhead",
}

// PlanPerf predicts what a closed-loop benchmark measures on one replica:
// the KV slots and engine limits come from the memory model (PlanMemory),
// the iteration times from the engine model (package perf) with the
// catalog's efficiencies for GPU × engine × weight dtype, and the benchmark
// is replayed iteration by iteration (perf.Model.Steady).
func PlanPerf(sc PerfScenario) (*PerfPlan, error) {
	rig, err := NewPerfRig(sc)
	if err != nil {
		return nil, err
	}
	p := rig.plan
	p.Assumptions = append([]string(nil), rig.plan.Assumptions...)
	r, model, err := rig.Steady(nil)
	if err != nil {
		return nil, err
	}
	p.Efficiency, p.EfficiencyFallback = model.Efficiency, model.Fallback
	p.Parallel = model.Parallel()
	p.Assumptions = append(p.Assumptions, model.Notes...)
	p.Assumptions = append(p.Assumptions, fmt.Sprintf("the efficiencies are fitted across engine versions, not per version (%s)", model.Efficiency.Key()))
	p.fill(r)
	p.RequestPath = sc.Path.String()
	p.StepTerms = &PerfStepTerms{Prefill: r.PrefillStep, Decode: r.DecodeStep}
	p.derive(r, model, sc.Path, rig.lim)
	return &p, nil
}

// PerfRig is a PerfScenario with its memory model done (KV slots, engine
// limits): what PlanPerf replays, ready to replay at any efficiencies
// without building the derivation. A fit that predicts one benchmark many
// times (kvplan calibrate) builds it once; PlanPerf runs through it, so
// both give the same figures.
type PerfRig struct {
	plan PerfPlan // the figures that do not depend on the efficiencies
	sc   PerfScenario
	m    catalog.Model
	lim  perf.Limits
}

// NewPerfRig checks sc and runs its memory model.
func NewPerfRig(sc PerfScenario) (*PerfRig, error) {
	switch {
	case sc.Model == nil:
		return nil, fmt.Errorf("no model given")
	case sc.GPU == nil:
		return nil, fmt.Errorf("no gpu given")
	case sc.Catalog == nil:
		return nil, fmt.Errorf("no catalog given")
	case sc.InputTokens < 1 || sc.OutputTokens < 1:
		return nil, fmt.Errorf("input and output tokens must be >= 1 (got %d and %d)", sc.InputTokens, sc.OutputTokens)
	case sc.Concurrency < 1:
		return nil, fmt.Errorf("concurrency must be >= 1 (got %d)", sc.Concurrency)
	case sc.CUDAGraphMaxBatch < 0:
		return nil, fmt.Errorf("the CUDA-graph batch must be >= 0 (got %d; 0 = the default)", sc.CUDAGraphMaxBatch)
	}
	eng, ok := perf.Schedules[sc.Engine]
	if !ok {
		return nil, fmt.Errorf("engine %q is not one the engine model knows (%s)", sc.Engine, strings.Join(PerfEngines(), ", "))
	}
	tp := max(sc.TP, 1)
	lay := sc.Parallel
	if lay.TP != 0 && lay.TP != tp {
		return nil, fmt.Errorf("parallel layout %s disagrees with tp %d", lay, tp)
	}
	lay.TP = tp
	if err := perf.CheckLayout(sc.Model, sc.GPU, lay, sc.RedundantExperts, sc.Link); err != nil {
		return nil, err
	}
	n := lay.Norm()
	m := *sc.Model
	if sc.WeightDtype != "" && sc.WeightDtype != m.WeightDtype {
		if _, ok := catalog.DtypeBytes(sc.WeightDtype); !ok {
			return nil, fmt.Errorf("weight dtype %q is not one of bf16, fp16, fp8, int8, int4, mxfp4, nvfp4, fp4", sc.WeightDtype)
		}
		m.WeightDtype, m.WeightsBytes = sc.WeightDtype, 0
	}
	r := &PerfRig{sc: sc, m: m}
	p := &r.plan
	*p = PerfPlan{
		Model: m.Name, GPU: sc.GPU.Name, Engine: sc.Engine, EngineVersion: sc.EngineVersion, TP: tp, GPUs: tp,
		WeightDtype: m.WeightDtype, InputTokens: sc.InputTokens, OutputTokens: sc.OutputTokens,
		Concurrency: sc.Concurrency, SeparatePrefill: eng.SeparatePrefill, NotModelled: perfNotModelled,
	}
	if !n.Plain() || sc.RedundantExperts > 0 || sc.EPLB || sc.TwoBatchOverlap {
		p.Layout, p.DP, p.EP, p.PP = n.String(), n.DP, n.EP, n.PP
		p.SpeculativeTokens, p.AcceptanceLength = n.SpeculativeTokens, n.AcceptanceLength
		p.GPUs = n.GPUs()
	}
	p.Assumptions = append(p.Assumptions, eng.Note)
	if sc.CUDAGraphMaxBatch > 0 {
		p.CUDAGraphMaxBatch = sc.CUDAGraphMaxBatch
		p.Assumptions = append(p.Assumptions, fmt.Sprintf("CUDA graphs cover iterations of up to %d tokens (a decode-only iteration: %d sequences) as given, in place of the cap of 512 above", sc.CUDAGraphMaxBatch, sc.CUDAGraphMaxBatch))
	}
	mp, err := p.memory(sc, &r.m, tp)
	if err != nil {
		return nil, err
	}
	p.KVDtype, p.KVSlotsTokens = mp.KVDtype, mp.KVSlotsTokens
	p.MaxNumSeqs, p.MaxNumBatchedTokens = mp.MaxNumSeqs, mp.MaxNumBatchedTokens
	if n.DP > 1 {
		// Each data-parallel rank holds its own KV and schedules its own
		// batch: the worker holds dp × one rank's.
		p.KVSlotsTokens *= int64(n.DP)
		p.MaxNumSeqs *= n.DP
		p.MaxNumBatchedTokens *= n.DP
		p.Assumptions = append(p.Assumptions, fmt.Sprintf("each of the %d attention data-parallel ranks holds its own KV and batch: KV slots, max_num_seqs and max_num_batched_tokens are %d × one rank's (%d, %d, %d); the replay admits against the worker's total",
			n.DP, n.DP, mp.KVSlotsTokens, mp.MaxNumSeqs, mp.MaxNumBatchedTokens))
	}
	r.lim = perf.Limits{MaxNumSeqs: p.MaxNumSeqs, MaxNumBatchedTokens: p.MaxNumBatchedTokens, KVSlots: p.KVSlotsTokens,
		BlockSize: mp.BlockSize, SeparatePrefill: eng.SeparatePrefill, KVReserveOutput: eng.KVReserveOutput}
	return r, nil
}

// Steady replays the benchmark with efficiencies eff (nil: the catalog's
// entry for the GPU × engine × weight dtype) and returns what it measures
// on one replica, and the engine model it ran.
func (r *PerfRig) Steady(eff *catalog.Efficiency) (perf.Result, *perf.Model, error) {
	sc, p := r.sc, &r.plan
	lay := sc.Parallel
	lay.TP = p.TP
	model, err := perf.New(perf.Spec{Model: &r.m, GPU: sc.GPU, Engine: sc.Engine, TP: p.TP, WeightDtype: r.m.WeightDtype,
		KVDtype: p.KVDtype, EnforceEager: sc.EnforceEager, GraphMax: sc.CUDAGraphMaxBatch, Efficiency: eff, Catalog: sc.Catalog,
		Parallel: lay, Link: sc.Link, EPLB: sc.EPLB, RedundantExperts: sc.RedundantExperts, TwoBatchOverlap: sc.TwoBatchOverlap})
	if err != nil {
		return perf.Result{}, nil, err
	}
	res, err := model.Steady(perf.Load{Concurrency: sc.Concurrency, InputTokens: sc.InputTokens, OutputTokens: sc.OutputTokens, Path: sc.Path}, r.lim)
	if err != nil {
		return perf.Result{}, nil, err
	}
	return res, model, nil
}

// memory runs the memory model (the engine's own profile, for its version)
// for the KV slots and the engine's limits.
func (p *PerfPlan) memory(sc PerfScenario, m *catalog.Model, tp int) (*MemoryPlan, error) {
	e, ver, err := sc.Catalog.EngineVersion(sc.Engine, sc.EngineVersion)
	if err != nil {
		return nil, err
	}
	p.EngineVersion = ver
	mp, err := PlanMemory(MemoryScenario{
		Model: m, KV: models.KVOptions{KVDtype: sc.KVDtype, TP: tp}, GPU: sc.GPU, Engine: e,
		EngineVersion: ver, VersionDefaulted: sc.EngineVersion == "",
		GPUUtil: sc.GPUUtil, EnforceEager: sc.EnforceEager, MaxModelLen: sc.InputTokens + sc.OutputTokens,
		MaxNumBatchedTokens: sc.MaxNumBatchedTokens, MaxNumSeqs: sc.MaxNumSeqs,
		PP: max(1, sc.Parallel.PP), Parallel: models.Parallelism{DP: sc.Parallel.DP, EP: sc.Parallel.EP},
		RedundantExperts: sc.RedundantExperts,
	})
	if err != nil {
		return nil, err
	}
	if !mp.ModelFits || !mp.MaxModelLenFits {
		return nil, fmt.Errorf("%s at tp %d on %s: one request of %d tokens does not fit (weights %d B per rank leave %d B for the KV cache); raise --tp or use a larger GPU",
			m.Name, tp, sc.GPU.Name, sc.InputTokens+sc.OutputTokens, mp.WeightsBytes, mp.KVCacheBytes)
	}
	p.Assumptions = append(p.Assumptions, fmt.Sprintf("KV slots and default limits from kvplan's memory model (%s %s profile, memory fraction %g; kvplan memory)",
		sc.Engine, ver, mp.GPUUtil))
	return mp, nil
}

func (p *PerfPlan) fill(r perf.Result) {
	p.TTFTMS, p.TPOTMS, p.ITLMSP50 = r.TTFTMS, r.TPOTMS, r.ITLP50MS
	p.RequestsPerS, p.OutputTokensPerS = r.RequestsPerS, r.OutputTokensPerS
	p.OutputTokensPerSPerGPU = r.OutputTokensPerS / float64(p.GPUs)
	p.RunningSequences, p.MaxRunning, p.KVLimited = r.Running, r.MaxRunning, r.KVLimited
	p.WaitingMS, p.PrefillMS, p.RequestOverheadMS = r.WaitingMS, r.PrefillMS, r.RequestMS
	p.DecodeStepMS, p.PrefillStepMS, p.PrefillStepShare = r.DecodeStepMS, r.PrefillStepMS, r.PrefillStepShare
}

func (p *PerfPlan) derive(r perf.Result, m *perf.Model, path perf.RequestPath, lim perf.Limits) {
	d := &p.Derivation
	d.Add("kv_slots_tokens", float64(p.KVSlotsTokens), "tokens", "kvplan memory: KV cache bytes / KV bytes per token, in blocks",
		"%d tokens of %s KV per rank", p.KVSlotsTokens, p.KVDtype)
	held, what := lim.HeldTokens(p.InputTokens, p.OutputTokens), "isl + osl"
	switch f := lim.KVReserveOutput; {
	case lim.GrowKV:
		what = "isl + osl / 2, held on average as blocks grow"
	case f > 0 && f < 1:
		what = fmt.Sprintf("isl + %g × osl, as %s admits", f, p.Engine)
	}
	d.Add("max_running", float64(p.MaxRunning), "sequences", "min(concurrency, max_num_seqs, ⌊kv slots / blocks a request holds ("+what+")⌋)",
		"min(%d, %d, ⌊%d / %d⌋)", p.Concurrency, p.MaxNumSeqs, p.KVSlotsTokens, held)
	terms := func(name string, t perf.Terms, what string) {
		names, vals := t.Parts(m.Parallel() != nil)
		sum, values := strings.Join(names, " + "), msSum(vals)
		if m.Parallel() != nil {
			d.Add(name, t.TotalMS, "ms", "("+sum+") / tokens_per_step ("+what+")",
				"(%s) / %.3g (%d tokens, %d sequences)", values, t.TokensPerStep, t.Tokens, t.Sequences)
			return
		}
		d.Add(name, t.TotalMS, "ms", sum+" ("+what+")", "%s (%d tokens, %d sequences)", values, t.Tokens, t.Sequences)
	}
	if r.DecodeStepMS > 0 {
		terms("decode_step_terms_ms", r.DecodeStep, "a mean decode-only iteration")
	}
	if pd := m.Parallel(); pd != nil {
		p.deriveParallel(r, pd)
	}
	if r.PrefillStepMS > 0 {
		terms("prefill_step_terms_ms", r.PrefillStep, "a mean iteration with prefill chunks")
	}
	e := m.Efficiency
	d.Add("efficiency", e.GEMM, "ratio", "gemm, memory, attention, moe, interconnect; step_ms, layer_us, eager_layer_us, allreduce_us, request_ms, request_us_per_token, ramp_ms",
		"%.3f, %.3f, %.3f, %.3f, %.3f; %.3f ms, %.2f µs, %.1f µs, %.2f µs, %.2f ms, %.3f µs, %.0f ms (%s)",
		e.GEMM, e.Memory, e.Attention, e.MoE, e.Interconnect, e.StepMS, e.LayerUS, e.EagerLayerUS, e.AllReduceUS, e.RequestMS, e.RequestUSTok, e.RampMS, e.Key())
	d.Note(e.Source)
	rc := m.RequestCost(path)
	d.Add("request_overhead_ms", p.RequestOverheadMS, "ms", rc.Formula, "%s", rc.Values(float64(p.InputTokens)))
	d.Note(rc.Source)
	d.Add("ttft_ms", p.TTFTMS, "ms", "request_overhead + waiting (slot, iteration in flight) + prefill (mean of the replayed requests)",
		"%.2f + %.2f + %.2f", p.RequestOverheadMS, p.WaitingMS, p.PrefillMS)
	d.Add("tpot_ms", p.TPOTMS, "ms", "mean over requests of (last token − first token) / (osl − 1)",
		"%.0f%% of iterations carry prefill (%.2f ms), the others decode only (%.2f ms)", 100*p.PrefillStepShare, p.PrefillStepMS, p.DecodeStepMS)
	d.Add("requests_per_s", p.RequestsPerS, "1/s", "concurrency / (ttft + (osl − 1) × tpot) (Little's law, FACTS.md §7)",
		"%d / (%.2f + %d × %.3f) ms", p.Concurrency, p.TTFTMS, p.OutputTokens-1, p.TPOTMS)
	d.Add("output_tokens_per_s_per_gpu", p.OutputTokensPerSPerGPU, "tokens/s", "requests_per_s × osl / gpus",
		"%.3f × %d / %d", p.RequestsPerS, p.OutputTokens, p.GPUs)
}

// deriveParallel writes the parallel terms' formulas and values (the
// all-to-all, the expert imbalance, the pipeline, MTP) into the derivation.
func (p *PerfPlan) deriveParallel(r perf.Result, pd *perf.ParallelDesc) {
	d := &p.Derivation
	e := pd.Efficiency
	d.Add("layout", float64(pd.GPUs), "GPUs", "tp × dp × pp GPUs; MoE tp = tp × dp / ep; experts per rank = (experts + redundant) / ep",
		"%s: %d GPUs, MoE tp %d, %.4g experts per rank, NVLink domain %d GPUs%s", pd.Layout, pd.GPUs, pd.MoETP, pd.ExpertsPerRank, pd.NVLinkDomain,
		map[bool]string{true: ", across nodes over " + pd.Link, false: ""}[pd.OverDomain])
	for _, st := range []struct {
		name string
		t    perf.Terms
		kind string
	}{{"decode", r.DecodeStep, "low-latency kernels"}, {"prefill", r.PrefillStep, "normal kernels"}} {
		if st.t.TotalMS == 0 {
			continue
		}
		if pd.AllToAllBytes > 0 && p.EP > 1 {
			lat, gbs, bytes := e.AllToAllUS, pd.AllToAllGBs, pd.AllToAllBytes
			copies := "top-k × (ep − 1)/ep copies (one per routed expert on another rank)"
			if st.name == "prefill" && pd.AllToAllNormal > 0 {
				lat, gbs, bytes = e.AllToAllNormalUS, pd.AllToAllNormalGBs, pd.AllToAllNormal
				copies = "(ep − 1)(1 − C(E − E/ep, k)/C(E, k)) copies (one per other rank its experts are on)"
			}
			d.Add(st.name+"_alltoall_ms", st.t.AllToAllMS, "ms",
				"2 × MoE layers × (latency + rank tokens / tp × hidden × "+copies+" × (dispatch + combine bytes) × imbalance / 2 / (bandwidth × alltoall eff)) ("+st.kind+")",
				"latency %.0f µs, %.0f B per token (dispatch %.4g B, combine 2 B per element), imbalance %.3f, %.1f GB/s per GPU reached (alltoall eff %.2f)",
				lat, bytes, pd.DispatchBytes, st.t.Imbalance, gbs, e.AllToAll)
		} else if pd.AllToAllBytes > 0 {
			d.Add(st.name+"_alltoall_ms", st.t.AllToAllMS, "ms",
				"2 × MoE layers × (latency + worker tokens × 2 (g − 1)/g × hidden × 2 B / 2 / bandwidth): all-gather + reduce-scatter (dp attention, ep 1)",
				"%.0f B per worker token, %.1f GB/s per GPU reached", pd.AllToAllBytes, pd.AllToAllGBs)
		}
		if p.EP > 1 {
			d.Add(st.name+"_ep_imbalance", st.t.Imbalance, "ratio",
				"hottest rank / mean routed tokens = min(ep, (1 + skew) × (1 + √(2 ln ep) × σ/μ)), μ = tokens × k/ep, σ² = tokens × k (1/ep)(1 − 1/ep)(E − k)/(E − 1)",
				"skew %.3f (%s), %d tokens", pd.Skew, map[bool]string{true: "EPLB", false: "no EPLB"}[pd.EPLB], st.t.Tokens)
		}
		if p.PP > 1 {
			d.Add(st.name+"_pipeline_ms", st.t.PipelineMS, "ms",
				"max(m × (stage + lm head), pp × stage + lm head + (pp − 1) × p2p) − m × (stage + lm head), m = min(pp, sequences) micro-batches",
				"%d micro-batches, p2p %.0f µs + tokens × hidden × 2 B / bandwidth", st.t.MicroBatches, e.P2PUS)
		}
		if p.SpeculativeTokens > 0 && st.name == "decode" {
			d.Add("decode_draft_ms", st.t.DraftMS, "ms", "speculative tokens × (MTP layers × a decode layer + lm head)",
				"%d × …", p.SpeculativeTokens)
			d.Add("decode_tokens_per_step", st.t.TokensPerStep, "tokens", "acceptance length: step_ms = iteration_ms / tokens_per_step",
				"%.4g ms / %.3g", st.t.IterationMS, st.t.TokensPerStep)
		}
	}
	d.Note("parallel constants: " + e.Source)
}

// msSum is values in ms joined as a sum: "1.000 + 2.500".
func msSum(vals []float64) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = fmt.Sprintf("%.3f", v)
	}
	return strings.Join(parts, " + ")
}
