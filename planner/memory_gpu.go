package planner

import (
	"fmt"
	"math"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

// gpuSide computes each pipeline stage's KV budget the way the engine
// family does, keeps the stage that holds the fewest tokens (the engines size
// every stage's cache to the smallest), and turns its budget into blocks and
// slots.
func (p *MemoryPlan) gpuSide(sc MemoryScenario, d *Derivation) error {
	e, m := sc.Engine, sc.Model
	w, err := planWeights(m, sc.Dtype, sc.Quantization, sc.QuantGroupSize)
	if err != nil {
		return err
	}
	p.WeightDtype, p.Quantization = w.dtype, w.quant
	src := func(c string) string { return p.constSource(e, c) }

	d.Add("gpu_cuda_memory_bytes", float64(p.GPUCUDAMemoryBytes), "B", "the GPU's total as CUDA reports it (torch.cuda.mem_get_info)",
		"%d", p.GPUCUDAMemoryBytes)
	d.Note(p.GPU + ": " + sc.GPU.Source)
	d.Add("weights_total_bytes", w.totalBytes, "B", w.formula, "%s", w.values)
	if m.TiedEmbeddings {
		d.Note(models.TiedEmbeddingsConvention)
	}

	layers := stageLayers(m.Layers, p.PP)
	if p.PP > 1 {
		d.Add("stage_layers", float64(layers[len(layers)-1]), "layers", "vLLM get_pp_indices: layers / pp per stage, the remainder on the stages before the last",
			"%v", layers)
	}
	best := -1
	var bestTokens int64
	for s, ls := range layers {
		st := p.stage(sc, w, s, ls, d, src)
		p.Stages = append(p.Stages, st)
		if best < 0 || st.EngineKVTokens < bestTokens {
			best, bestTokens = s, st.EngineKVTokens
		}
	}
	st := p.Stages[best]
	p.WeightsBytes, p.ActivationBytes, p.NonTorchBytes, p.CUDAGraphBytes = st.WeightsBytes, st.ActivationBytes, st.NonTorchBytes, st.CUDAGraphBytes
	p.layersEquiv = float64(m.Layers) / float64(st.Layers)
	kvBytes := st.KVCacheBytes
	if p.PP > 1 {
		d.Add("limiting_stage", float64(best), "", "the stage whose KV cache holds the fewest tokens (the engine sizes every stage's cache to it)", "%d", best)
	} else {
		p.Stages = nil
	}
	p.ModelFits = kvBytes > 0
	p.KVCacheBytes = max(kvBytes, 0)
	p.EngineKVTokens = max(bestTokens, 0)
	p.kvCapacity(d)
	if p.DP > 1 {
		p.WorkerKVSlotsTokens = p.KVSlotsTokens * int64(p.DP)
		d.Add("worker_kv_slots_tokens", float64(p.WorkerKVSlotsTokens), "tokens",
			"dp × kv_slots_tokens: each attention data-parallel rank holds its own KV (MLA latents too: they are replicated across tp ranks, not dp ranks)",
			"%d × %d", p.DP, p.KVSlotsTokens)
	}
	return nil
}

// engineNote names the engine entry whose accounting applies.
func (p *MemoryPlan) engineNote(e *catalog.Engine) string {
	return fmt.Sprintf("engine %s %s, the catalog's entry for %s: %s", e.Name, versionText(p.EngineVersion), e.Range(), e.Source)
}

// constSource names a constant's value source with the engine entry it comes
// from, so --explain shows which version's accounting applies.
func (p *MemoryPlan) constSource(e *catalog.Engine, c string) string {
	return fmt.Sprintf("%s %s (%s) %s: %s", e.Name, versionText(p.EngineVersion), e.Range(), c, e.SourceOf(c))
}

// stage computes one pipeline stage's terms. Figure names carry the stage
// number when pp > 1.
func (p *MemoryPlan) stage(sc MemoryScenario, w *weightLayout, s, layers int, d *Derivation, src func(string) string) MemoryStage {
	e, m := sc.Engine, sc.Model
	tp, pp := p.TP, p.PP
	name := func(n string) string {
		if pp > 1 {
			return fmt.Sprintf("stage%d_%s", s, n)
		}
		return n
	}
	st := MemoryStage{Stage: s, Layers: layers}
	if lay := sc.Parallel.Norm(); lay.DP > 1 || lay.EP > 1 || sc.RedundantExperts > 0 {
		p.parallelStageWeights(sc, w, &st, s, d, name)
	} else {
		st.WeightsBytes = w.stageBytes(layers, m.Layers, s, pp, tp)
		d.Add(name("weights_bytes"), float64(st.WeightsBytes), "B", "ceil((decoder layers' share + embedding on the first stage + lm_head on the last) / tp)",
			"ceil((%.0f × %d/%d + %s) / %d)", w.layersBytes, layers, m.Layers, stageEmbText(w, s, pp), tp)
	}

	bpt := float64(p.KVBytesPerToken) * float64(layers) / float64(m.Layers) // this stage's KV bytes per token
	switch e.FamilyOf() {
	case catalog.FamilySGLang:
		p.sglangStage(sc, &st, d, name, src)
	default:
		p.profiledStage(sc, w, &st, s, d, name, src)
	}
	st.EngineKVTokens = p.engineTokens(st.KVCacheBytes, bpt, layers)
	d.Add(name("engine_kv_tokens"), float64(st.EngineKVTokens), "tokens", p.engineTokensFormula(), "%s", p.engineTokensValues(st.KVCacheBytes, bpt, layers))
	return st
}

func stageEmbText(w *weightLayout, s, pp int) string {
	return fmt.Sprintf("%.0f", embedShare(w, s, pp))
}

// profiledStage is vLLM's and TRT-LLM's accounting: a profiling forward
// measures the peak activation; the engine charges it, its non-torch memory
// and (vLLM from 0.21) its CUDA-graph estimate.
func (p *MemoryPlan) profiledStage(sc MemoryScenario, w *weightLayout, st *MemoryStage, s int, d *Derivation, name func(string) string, src func(string) string) {
	e, m := sc.Engine, sc.Model
	tp, pp := p.TP, p.PP
	trt := e.FamilyOf() == catalog.FamilyTRTLLM
	last := s == pp-1

	el := w.actBytes
	T := float64(p.MaxNumBatchedTokens)
	H := float64(m.HiddenSize)
	mlp := models.MLPWidth(m)
	moe := m.ParamsActive > 0 && m.ParamsActive < m.ParamsTotal
	mlpPart := e.ActivationMLPCopies * mlp / float64(tp)
	if moe {
		mlpPart = 0 // the routed experts' intermediates are the fused-MoE workspace below
	}
	forward := T * el * (e.ActivationHiddenCopies*H + mlpPart)
	d.Add(name("forward_activation_bytes"), forward, "B",
		"max_num_batched_tokens × element bytes × (activation_hidden_copies × hidden + activation_mlp_copies × mlp_width / tp (dense only))",
		"%.0f × %g × (%g × %.0f + %g × %.1f / %d)", T, el, e.ActivationHiddenCopies, H, e.ActivationMLPCopies, pick2(moe, 0, mlp), tp)
	d.Note(src("activation_hidden_copies"))

	var sampler float64
	if last {
		seqs := float64(min(p.MaxNumSeqs, p.MaxNumBatchedTokens))
		if trt {
			seqs = math.Ceil(T / float64(max(1, p.MaxModelLen))) // create_dummy_context_requests: max_num_tokens in requests of max_seq_len
		}
		sampler = seqs*float64(m.VocabSize)*(e.SamplerBytesPerLogit+el) + T*el*H*e.ActivationKeptHiddenCopies
		d.Add(name("sampler_activation_bytes"), sampler, "B",
			pick(trt, "ceil(max_num_tokens / max_seq_len) requests", "min(max_num_seqs, max_num_batched_tokens)")+
				" × vocab_size × (sampler_bytes_per_logit + element bytes) + max_num_batched_tokens × hidden × element bytes × activation_kept_hidden_copies",
			"%.0f × %d × (%g + %g) + %.0f × %.0f × %g × %g", seqs, m.VocabSize, e.SamplerBytesPerLogit, el, T, H, el, e.ActivationKeptHiddenCopies)
		d.Note(src("sampler_bytes_per_logit"))
	}
	var ws float64
	if moe {
		ws = T * el * e.MoEWorkspaceCopies * mlp / float64(tp)
		d.Add(name("moe_workspace_bytes"), ws, "B", "max_num_batched_tokens × element bytes × moe_workspace_copies × mlp_width / tp",
			"%.0f × %g × %g × %.1f / %d", T, el, e.MoEWorkspaceCopies, mlp, tp)
		d.Note(src("moe_workspace_copies"))
	}
	var ppBuf float64
	if pp > 1 {
		ppBuf = T * el * H * e.PPBufferHiddenCopies
		d.Add(name("pp_buffer_bytes"), ppBuf, "B", "max_num_batched_tokens × element bytes × hidden × pp_buffer_hidden_copies",
			"%.0f × %g × %.0f × %g", T, el, H, e.PPBufferHiddenCopies)
		d.Note(src("pp_buffer_hidden_copies"))
	}
	st.ActivationBytes = int64(math.Ceil(math.Max(forward, sampler) + ws + ppBuf))
	d.Add(name("activation_bytes"), float64(st.ActivationBytes), "B", "max(forward, sampler) + MoE workspace + pipeline buffers",
		"max(%.0f, %.0f) + %.0f + %.0f", forward, sampler, ws, ppBuf)

	var ntName string
	st.NonTorchBytes, ntName = e.NonTorchFor(tp, pp, sc.EnforceEager)
	d.Add(name("non_torch_bytes"), float64(st.NonTorchBytes), "B", "engine constant "+ntName, "%d", st.NonTorchBytes)
	d.Note(src(baseConst(ntName)))

	var graphs int64
	if !trt {
		if sc.EnforceEager {
			d.Add(name("cuda_graph_estimate_bytes"), 0, "B", "0 with --enforce-eager (no CUDA graphs are captured)", "0")
		} else {
			graphs = e.CUDAGraphBaseBytes + e.CUDAGraphPerLayerBytes*int64(st.Layers)
			d.Add(name("cuda_graph_estimate_bytes"), float64(graphs), "B", "cuda_graph_base + cuda_graph_per_layer × layers",
				"%d + %d × %d", e.CUDAGraphBaseBytes, e.CUDAGraphPerLayerBytes, st.Layers)
			d.Note(src("cuda_graph_base"))
		}
		if s == 0 || graphs > p.CUDAGraphEstimateBytes {
			p.CUDAGraphEstimateBytes = graphs
		}
		if e.CUDAGraphsCharged {
			st.CUDAGraphBytes = graphs
		}
		d.Add(name("cuda_graph_bytes"), float64(st.CUDAGraphBytes), "B", pick(e.CUDAGraphsCharged,
			"the estimate, charged to the KV budget", "0: the estimate is not charged to the KV budget (graphs use what the memory fraction leaves)"),
			"%d", st.CUDAGraphBytes)
		d.Note(src("cuda_graphs_charged"))
	}

	cuda := p.GPUCUDAMemoryBytes
	if trt {
		p.RequestedBytes = cuda
		nonKV := st.WeightsBytes + st.ActivationBytes + st.NonTorchBytes
		st.KVCacheBytes = int64(float64(cuda-nonKV) * p.GPUUtil)
		if s == 0 {
			d.Add("requested_bytes", float64(cuda), "B", "the CUDA total (TRT-LLM takes its fraction of what is free after profiling)", "%d", cuda)
			d.Note(p.engineNote(e))
		}
		d.Add(name("kv_cache_bytes"), float64(st.KVCacheBytes), "B",
			"(CUDA total − weights − activation − non-torch) × free_gpu_memory_fraction",
			"(%d − %d − %d − %d) × %g", cuda, st.WeightsBytes, st.ActivationBytes, st.NonTorchBytes, p.GPUUtil)
		d.Note("tensorrt_llm/_torch/pyexecutor/_util.py _cal_max_tokens: available_kv_mem = (total_gpu_memory − peak_memory) × fraction; fraction: " + p.GPUUtilSource)
		return
	}
	p.RequestedBytes = int64(float64(cuda) * p.GPUUtil)
	if s == 0 {
		d.Add("requested_bytes", float64(p.RequestedBytes), "B", "CUDA total × gpu_memory_utilization", "%d × %g", cuda, p.GPUUtil)
		d.Note("vLLM gpu_worker.py init_device: requested_memory = total_memory × gpu_memory_utilization; utilization: " + p.GPUUtilSource + "; " + p.engineNote(e))
	}
	st.KVCacheBytes = p.RequestedBytes - st.WeightsBytes - st.ActivationBytes - st.NonTorchBytes - st.CUDAGraphBytes
	d.Add(name("kv_cache_bytes"), float64(st.KVCacheBytes), "B",
		"requested_bytes − weights_bytes − activation_bytes − non_torch_bytes − cuda_graph_bytes",
		"%d − %d − %d − %d − %d", p.RequestedBytes, st.WeightsBytes, st.ActivationBytes, st.NonTorchBytes, st.CUDAGraphBytes)
	d.Note("vLLM gpu_worker.py determine_available_memory: requested_memory − non_kv_cache_memory")
}

// sglangStage is SGLang's accounting: the token pool gets mem_fraction_static
// of the memory free after distributed init, less what loading the weights
// took; activations and CUDA graphs live in the rest.
func (p *MemoryPlan) sglangStage(sc MemoryScenario, st *MemoryStage, d *Derivation, name func(string) string, src func(string) string) {
	e := sc.Engine
	cuda := p.GPUCUDAMemoryBytes
	if p.GPUUtil == 0 {
		p.sglangFraction(e, cuda, d, src)
	}
	init, initName := e.InitOverheadBytes, "init_overhead"
	if p.TP > 1 || p.PP > 1 {
		init, initName = e.InitOverheadTPBytes, "init_overhead_tp"
	}
	free := cuda - init
	if st.Stage > 0 {
		p.RequestedBytes = int64(float64(free) * p.GPUUtil)
		st.KVCacheBytes = p.RequestedBytes - st.WeightsBytes
		d.Add(name("kv_cache_bytes"), float64(st.KVCacheBytes), "B", "requested_bytes − weights_bytes", "%d − %d", p.RequestedBytes, st.WeightsBytes)
		return
	}
	d.Add("free_at_start_bytes", float64(free), "B", "CUDA total − "+initName+" (SGLang's total_gpu_memory: free memory after distributed init)",
		"%d − %d", cuda, init)
	d.Note(src(initName))
	p.RequestedBytes = int64(float64(free) * p.GPUUtil)
	d.Add("requested_bytes", float64(p.RequestedBytes), "B", "free_at_start × mem_fraction_static", "%d × %g", free, p.GPUUtil)
	d.Note("sglang model_runner.py profile_max_num_token: rest_memory = available_gpu_memory − total_gpu_memory × (1 − mem_fraction_static); fraction: " + p.GPUUtilSource + "; " + p.engineNote(e))
	st.KVCacheBytes = p.RequestedBytes - st.WeightsBytes
	d.Add(name("kv_cache_bytes"), float64(st.KVCacheBytes), "B",
		"requested_bytes − weights_bytes (activations and CUDA graphs use the (1 − mem_fraction_static) left over)",
		"%d − %d", p.RequestedBytes, st.WeightsBytes)
}

// sglangFraction applies SGLang's heuristic for mem_fraction_static.
func (p *MemoryPlan) sglangFraction(e *catalog.Engine, cuda int64, d *Derivation, src func(string) string) {
	chunk, bs, _ := e.Bucket(cuda, p.TP)
	gpuMiB := float64(cuda) / mib
	reserved := float64(e.ReserveBaseBytes)/mib +
		float64(max(chunk, 2048))*float64(e.ReservePerPrefillTokenBytes)/mib +
		float64(bs)*float64(e.ReservePerGraphBatchBytes)/mib +
		float64(p.TP*p.PP)/8*float64(e.ReservePer8RanksBytes)/mib
	if cuda > e.ReserveFloorAboveBytes {
		reserved = math.Max(reserved, float64(e.ReserveFloorBytes)/mib)
	}
	p.GPUUtil = math.Round((gpuMiB-reserved)/gpuMiB*1000) / 1000
	d.Add("sglang_reserved_mib", reserved, "MiB",
		"reserve_base + max(chunked_prefill_size, 2048) × reserve_per_prefill_token + cuda_graph_max_bs × reserve_per_graph_batch + tp × pp / 8 × reserve_per_8_ranks, at least reserve_floor above reserve_floor_above",
		"%g + max(%d, 2048) × %g + %d × %g + %d / 8 × %g", float64(e.ReserveBaseBytes)/mib, chunk, float64(e.ReservePerPrefillTokenBytes)/mib,
		bs, float64(e.ReservePerGraphBatchBytes)/mib, p.TP*p.PP, float64(e.ReservePer8RanksBytes)/mib)
	d.Note(src("fraction_bucket"))
	d.Add("mem_fraction_static", p.GPUUtil, "", "round((gpu MiB − reserved MiB) / gpu MiB, 3)", "round((%.0f − %.0f) / %.0f, 3)", gpuMiB, reserved, gpuMiB)
	d.Note(src("memory_fraction"))
	p.GPUUtilSource = fmt.Sprintf("SGLang's heuristic for a %.0f MiB GPU (chunked_prefill_size %d, cuda_graph_max_bs %d)", gpuMiB, chunk, bs)
}

// baseConst maps "non_torch_tp[2]" to its TOML name.
func baseConst(n string) string {
	for i := range n {
		if n[i] == '[' {
			return n[:i]
		}
	}
	return n
}

func pick2(c bool, a, b float64) float64 {
	if c {
		return a
	}
	return b
}
