package perf

import "sort"

// Schedule is how a serving engine batches work into iterations, what the
// engine model needs to know of it beyond the fitted efficiencies.
type Schedule struct {
	// SeparatePrefill: prefill batches run alone and decoding waits;
	// otherwise decodes and prefill chunks share iterations.
	SeparatePrefill bool
	// GraphsCoverPrefill: iterations carrying prefill chunks run under
	// (piecewise) CUDA graphs too, when they have no more tokens than the
	// largest captured size; otherwise only decode-only iterations do.
	GraphsCoverPrefill bool
	Note               string
	// KVReserveOutput is Limits.KVReserveOutput for the engine: the share of
	// a request's output KV its admission counts (1: all of it reserved up
	// front).
	KVReserveOutput float64
}

// Schedules are the engines the engine model knows, from their sources.
var Schedules = map[string]Schedule{
	"vllm": {false, true, "vLLM V1: decodes and prefill chunks share iterations (chunked prefill, max_num_batched_tokens per iteration); " +
		"piecewise CUDA graphs cover iterations of up to 512 tokens (max_cudagraph_capture_size), prefill included; " +
		"KV blocks are allocated as sequences grow (v1/core/kv_cache_manager.py allocate_slots), so admission counts a request's prompt and on average half its output (recompute preemption when blocks run out is modelled, perf.Limits.GrowKV, but off until a refit fits with it)", 0.5},
	"sglang": {true, false, "SGLang: prefill batches run alone and decoding waits (the default, without --enable-mixed-chunk), " +
		"chunked_prefill_size tokens per prefill batch; CUDA graphs for decode batches only, of up to 512 sequences (kvplan's cap for every engine; SGLang's cuda_graph_max_bs is lower on GPUs under 160 GB at tp < 4, 256 on an H100 or H200); " +
		"admission keeps new_token_ratio (0.1 once it has decayed) of the running requests' remaining output in reserve (schedule_policy.py PrefillAdder), so a request counts its prompt and 0.55 of its output on average", 0.55},
	"trtllm": {false, false, "TensorRT-LLM (PyTorch backend): in-flight batching of context and generation requests, " +
		"max_num_tokens per iteration; CUDA graphs for generation-only iterations of up to 512 sequences (kvplan's cap for every engine; TensorRT-LLM's own default cuda_graph_config.max_batch_size is 128, trtllm-bench captures up to its max batch size); " +
		"the capacity scheduler (GUARANTEED_NO_EVICT) reserves a request's whole ISL + OSL when it is admitted", 1},
}

// Engines lists the engines of Schedules, sorted.
func Engines() []string {
	var out []string
	for e := range Schedules {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}
