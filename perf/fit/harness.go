package fit

import "slices"

// HarnessSetting is how a benchmark script deployed the engine for a run:
// the KV-cache dtype and the memory fraction it passed (vLLM
// --gpu-memory-utilization, SGLang --mem-fraction-static, TensorRT-LLM
// kv_cache_config.free_gpu_memory_fraction), and the script version they
// were read from.
type HarnessSetting struct {
	KVDtype     string
	MemFraction float64
	Script      string // the script's file name in SemiAnalysisAI/InferenceX
	Commit      string // the version read (the newest committed on or before the run's day)
	// Recv and Recv16 are SGLang's --scheduler-recv-interval below 16
	// clients and from 16 on (the scripts' SCHEDULER_RECV_INTERVAL: 10 and
	// 30); 0 = not passed (1, the default).
	Recv, Recv16 int
	// Budget is the tokens an iteration may prefill: SGLang's
	// min(--chunked-prefill-size, --max-prefill-tokens) (the latter 16384
	// unless passed), vLLM's --max-num-batched-tokens; 0 = the engine's
	// default, BudgetTwiceISL = 2 × ISL (the vLLM scripts' "$((ISL * 2))"),
	// BudgetTRTLLM = TensorRT-LLM's max_num_tokens in the scripts:
	// max(8192, ⌈(clients + ISL + 64) / 64⌉ × 64).
	Budget int
}

// The scripts' token budgets that follow the run.
const (
	BudgetTwiceISL = -1
	BudgetTRTLLM   = -2
)

// TokenBudget is the tokens an iteration may prefill in a run of isl
// (the stated ISL, as the scripts read it) and clients; 0 = the engine's
// default.
func (h HarnessSetting) TokenBudget(isl, clients int) int {
	switch h.Budget {
	case BudgetTwiceISL:
		return 2 * isl
	case BudgetTRTLLM:
		return max(8192, (clients+isl+64+63)/64*64)
	}
	return h.Budget
}

// sameLaunch reports whether h and o launch the engine alike (every
// setting but the script and version they were read from).
func (h HarnessSetting) sameLaunch(o HarnessSetting) bool {
	h.Script, h.Commit, o.Script, o.Commit = "", "", "", ""
	return h == o
}

// RecvInterval is the scheduler-recv-interval a run of the given clients
// used.
func (h HarnessSetting) RecvInterval(clients int) int {
	if clients >= 16 {
		return h.Recv16
	}
	return h.Recv
}

// harnessEntry is one InferenceX script version's settings for the rows of
// an engine, catalog model, checkpoint dtype and GPUs, measured from a day
// on (until a later entry for the same rows); tp, isl and osl select rows
// where the script sets the fraction by them (0 = any).
type harnessEntry struct {
	engine, group, dtype string
	systems              []string
	from                 string
	tp, isl, osl         int
	HarnessSetting
}

// inferenceX is read from the benchmark scripts of SemiAnalysisAI/InferenceX
// (benchmarks/, benchmarks/single_node/ and their _docker/_slurm variants;
// every branch, the version committed last on or before the run's day). The
// shared rows do not say how the engines were launched; the scripts do, and
// they differ from each engine's defaults and from one another: SGLang ran
// an fp8 KV cache on Blackwell (DeepSeek, GLM-5 fp8, Qwen3.5) and bf16 on
// H200 for DeepSeek and GLM-5; vLLM ran MiniMax-M2.5 fp8 with a bf16 KV on
// Hopper and on B200 until 2026-03-28, and the nvfp4 checkpoints with an
// fp8 KV; TensorRT-LLM ran fp8 KV at 0.75–0.8 of free memory. Runs
// measured before a script's first version (GLM-5 nvfp4 on B200 2026-03-29,
// the first B300 runs of 2026-04-03) take its first version.
var inferenceX = []harnessEntry{
	// SGLang
	{engine: "sglang", group: "deepseek-v3", dtype: "nvfp4", systems: []string{"b200_sxm", "b300_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.85, "dsr1_fp4_b200_docker.sh / dsr1_fp4_b200.sh / dsr1_fp4_b300.sh", "4b860b78e", 10, 30, 16384}},
	{engine: "sglang", group: "deepseek-v3", dtype: "fp8", systems: []string{"b200_sxm", "b300_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.82, "dsr1_fp8_b200_docker.sh / dsr1_fp8_b200.sh / dsr1_fp8_b300.sh", "d8fe8f73e", 10, 30, 32768}},
	{engine: "sglang", group: "deepseek-v3", dtype: "fp8", systems: []string{"b200_sxm", "b300_sxm"}, from: "2025-12-22", tp: 4,
		HarnessSetting: HarnessSetting{"fp8", 0.95, "dsr1_fp8_b200.sh (TP 4)", "38b80a859", 10, 10, 8192}},
	{engine: "sglang", group: "deepseek-v3", dtype: "fp8", systems: []string{"h200_sxm"},
		HarnessSetting: HarnessSetting{"bf16", 0.82, "dsr1_fp8_h200.sh", "38b80a859", 0, 0, 32768}},
	{engine: "sglang", group: "glm-5", dtype: "fp8", systems: []string{"b200_sxm", "b300_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.85, "glm5_fp8_b200.sh / glm5_fp8_b300.sh", "b9551f6e5", 0, 0, 32768}},
	{engine: "sglang", group: "glm-5", dtype: "nvfp4", systems: []string{"b200_sxm"},
		HarnessSetting: HarnessSetting{"bf16", 0.80, "glm5_fp4_b200.sh", "800f57aaf", 0, 0, 16384}},
	{engine: "sglang", group: "glm-5", dtype: "nvfp4", systems: []string{"b200_sxm"}, from: "2026-04-09",
		HarnessSetting: HarnessSetting{"fp8", 0.90, "glm5_fp4_b200.sh", "475cc1dbc", 0, 0, 32768}},
	{engine: "sglang", group: "glm-5", dtype: "fp8", systems: []string{"h200_sxm"},
		HarnessSetting: HarnessSetting{"bf16", 0.85, "glm5_fp8_h200.sh", "ebb48d4bc", 0, 0, 0}},
	{engine: "sglang", group: "qwen3.5-397b-a17b", dtype: "bf16", systems: []string{"b200_sxm", "b300_sxm"},
		HarnessSetting: HarnessSetting{"bf16", 0.82, "qwen3.5_bf16_b200.sh / qwen3.5_bf16_b300.sh", "9dc87a68c", 10, 30, 32768}},
	{engine: "sglang", group: "qwen3.5-397b-a17b", dtype: "nvfp4", systems: []string{"b200_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.85, "qwen3.5_fp4_b200.sh", "48d35c480", 10, 30, 32768}},
	{engine: "sglang", group: "qwen3.5-397b-a17b", dtype: "nvfp4", systems: []string{"b300_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.80, "qwen3.5_fp4_b300.sh", "8acbd08b7", 10, 30, 32768}},
	{engine: "sglang", group: "qwen3.5-397b-a17b", dtype: "fp8", systems: []string{"b200_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.82, "qwen3.5_fp8_b200.sh", "efd49e50b", 10, 30, 32768}},
	{engine: "sglang", group: "qwen3.5-397b-a17b", dtype: "fp8", systems: []string{"b300_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.80, "qwen3.5_fp8_b300.sh", "c0f62a2ef", 10, 10, 16384}},
	{engine: "sglang", group: "qwen3.5-397b-a17b", dtype: "fp8", systems: []string{"h200_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.80, "qwen3.5_fp8_h200.sh", "f65d6b4b1", 0, 0, 16384}},
	// vLLM
	{engine: "vllm", group: "minimax-m2.5", dtype: "fp8", systems: []string{"b200_sxm"},
		HarnessSetting: HarnessSetting{"bf16", 0.95, "minimaxm2.5_fp8_b200.sh", "64c20b6b5", 0, 0, 0}},
	{engine: "vllm", group: "minimax-m2.5", dtype: "fp8", systems: []string{"b200_sxm"}, from: "2026-03-28",
		HarnessSetting: HarnessSetting{"fp8", 0.95, "minimaxm2.5_fp8_b200.sh", "f12f56d7c", 0, 0, 0}},
	{engine: "vllm", group: "minimax-m2.5", dtype: "fp8", systems: []string{"b200_sxm"}, from: "2026-04-03",
		HarnessSetting: HarnessSetting{"fp8", 0.90, "minimaxm2.5_fp8_b200.sh", "bddbf4031", 0, 0, BudgetTwiceISL}},
	{engine: "vllm", group: "minimax-m2.5", dtype: "nvfp4", systems: []string{"b200_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.95, "minimaxm2.5_fp4_b200.sh", "08bcde8f1", 0, 0, 0}},
	{engine: "vllm", group: "minimax-m2.5", dtype: "nvfp4", systems: []string{"b200_sxm"}, from: "2026-04-08",
		HarnessSetting: HarnessSetting{"fp8", 0.90, "minimaxm2.5_fp4_b200.sh", "79bd988e9", 0, 0, BudgetTwiceISL}},
	{engine: "vllm", group: "minimax-m2.5", dtype: "nvfp4", systems: []string{"b300_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.90, "minimaxm2.5_fp4_b300.sh", "b0308eda6", 0, 0, BudgetTwiceISL}},
	{engine: "vllm", group: "minimax-m2.5", dtype: "fp8", systems: []string{"b300_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.90, "minimaxm2.5_fp8_b300.sh", "b4860089b", 0, 0, BudgetTwiceISL}},
	{engine: "vllm", group: "minimax-m2.5", dtype: "fp8", systems: []string{"h100_sxm"},
		HarnessSetting: HarnessSetting{"bf16", 0.90, "minimaxm2.5_fp8_h100.sh", "626932a11", 0, 0, 0}},
	{engine: "vllm", group: "minimax-m2.5", dtype: "fp8", systems: []string{"h200_sxm"},
		HarnessSetting: HarnessSetting{"bf16", 0.95, "minimaxm2.5_fp8_h200.sh", "2981563c4", 0, 0, 0}},
	// The Kimi scripts passed no --kv-cache-dtype before 2026-04-20, but
	// nvidia/Kimi-K2.5-NVFP4 is a ModelOpt checkpoint with an 8-bit float
	// kv_cache_scheme (its config.json: ../shared/facts/models/more), and
	// vLLM resolves "auto" to the checkpoint's KV quantization
	// (vllm/utils/torch_utils.py resolve_kv_cache_dtype_string); with a
	// bf16 KV the 64-client 8k/1k runs (TTFT 1.3 s) could not have held
	// their requests.
	{engine: "vllm", group: "kimi-k2", dtype: "nvfp4", systems: []string{"b200_sxm", "b300_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.90, "kimik2.5_fp4_b200.sh / kimik2.5_fp4_b300.sh (KV: the checkpoint's)", "64c20b6b5", 0, 0, 0}},
	{engine: "vllm", group: "kimi-k2", dtype: "nvfp4", systems: []string{"b200_sxm"}, from: "2026-04-20",
		HarnessSetting: HarnessSetting{"fp8", 0.90, "kimik2.5_fp4_b200.sh", "6c3acebfa", 0, 0, BudgetTwiceISL}},
	{engine: "vllm", group: "kimi-k2", dtype: "int4", systems: []string{"b200_sxm", "h200_sxm"},
		HarnessSetting: HarnessSetting{"bf16", 0.95, "kimik2.5_int4_b200.sh / kimik2.5_int4_h200.sh", "79ea3651a", 0, 0, 0}},
	// TensorRT-LLM
	{engine: "trtllm", group: "deepseek-v3", dtype: "nvfp4", systems: []string{"b200_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.80, "dsr1_fp4_b200_trt_slurm.sh / dsr1_fp4_b200_trt.sh", "ec90f3fe7", 0, 0, BudgetTRTLLM}},
	{engine: "trtllm", group: "deepseek-v3", dtype: "fp8", systems: []string{"b200_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.80, "dsr1_fp8_b200_trt_slurm.sh / dsr1_fp8_b200_trt.sh", "ec90f3fe7", 0, 0, BudgetTRTLLM}},
	{engine: "trtllm", group: "deepseek-v3", dtype: "fp8", systems: []string{"b200_sxm"}, from: "2026-01-29", tp: 4, isl: 8192, osl: 1024,
		HarnessSetting: HarnessSetting{"fp8", 0.75, "dsr1_fp8_b200_trt.sh (TP 4, 8k/1k)", "626932a11", 0, 0, BudgetTRTLLM}},
	{engine: "trtllm", group: "deepseek-v3", dtype: "fp8", systems: []string{"h200_sxm"},
		HarnessSetting: HarnessSetting{"fp8", 0.75, "dsr1_fp8_h200_trt_slurm.sh / dsr1_fp8_h200_trt.sh", "ec90f3fe7", 0, 0, BudgetTRTLLM}},
}

// harnessFor is the InferenceX script setting of a row of model group and
// checkpoint dtype, measured on day (YYYY-MM-DD; "" when the source does not
// say). Of the entries that match the row, the one in effect that day wins
// (the latest from on or before it; a narrower one over a broader one from
// the same day). An undated row gets a setting only when every matching
// entry launches the engine alike. ok is false for a row no script covers.
func harnessFor(r Row, group, dtype, day string) (HarnessSetting, bool) {
	if r.Source != SourceInferenceX {
		return HarnessSetting{}, false
	}
	var match []harnessEntry
	for _, e := range inferenceX {
		if e.engine != r.Engine || e.group != group || e.dtype != dtype || !slices.Contains(e.systems, r.System) {
			continue
		}
		if (e.tp != 0 && e.tp != r.TP) || (e.isl != 0 && e.isl != r.ISL) || (e.osl != 0 && e.osl != r.OSL) {
			continue
		}
		match = append(match, e)
	}
	if len(match) == 0 {
		return HarnessSetting{}, false
	}
	if day == "" {
		for _, e := range match[1:] {
			if !e.sameLaunch(match[0].HarnessSetting) {
				return HarnessSetting{}, false
			}
		}
		return match[0].HarnessSetting, true
	}
	best, found := harnessEntry{}, false
	for _, e := range match {
		if e.from > day {
			continue
		}
		narrower := e.tp+e.isl+e.osl > best.tp+best.isl+best.osl
		if !found || e.from > best.from || (e.from == best.from && narrower) {
			best, found = e, true
		}
	}
	return best.HarnessSetting, found
}

// InferenceXRangeRatio is the benchmark's --random-range-ratio in every
// InferenceX run (.github/workflows/benchmark-tmpl.yml: default '0.8'):
// its benchmark_serving.py (kimbochen/bench_serving, later
// utils/bench_serving) draws each request's input and output lengths
// uniformly from [int(L × 0.8), L], so the rows' ISL and OSL are maxima and
// a request is 0.9 × them on average.
const InferenceXRangeRatio = 0.8

// harnessLengths are the mean input and output lengths of a row's requests
// as its harness drew them: the InferenceX rows' uniform draw, the stated
// lengths otherwise (AIConfigurator's gap-analysis sweeps ask for fixed
// lengths).
func harnessLengths(r Row) (isl, osl int) {
	if r.Source != SourceInferenceX {
		return r.ISL, r.OSL
	}
	mean := func(l int) int { return (int(float64(l)*InferenceXRangeRatio) + l + 1) / 2 }
	return mean(r.ISL), mean(r.OSL)
}
