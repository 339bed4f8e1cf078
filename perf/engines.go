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
}

// Schedules are the engines the engine model knows, from their sources.
var Schedules = map[string]Schedule{
	"vllm": {false, true, "vLLM V1: decodes and prefill chunks share iterations (chunked prefill, max_num_batched_tokens per iteration); " +
		"piecewise CUDA graphs cover iterations of up to 512 tokens (max_cudagraph_capture_size), prefill included"},
	"sglang": {true, false, "SGLang: prefill batches run alone and decoding waits (the default, without --enable-mixed-chunk), " +
		"chunked_prefill_size tokens per prefill batch; CUDA graphs for decode batches only"},
	"trtllm": {false, false, "TensorRT-LLM (PyTorch backend): in-flight batching of context and generation requests, " +
		"max_num_tokens per iteration; CUDA graphs for generation-only iterations"},
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
