package benchresult

import (
	"fmt"
	"strings"
)

// readSGLang reads one line of `python -m sglang.bench_serving
// --output-file`: {mean,median,p90,p99}_e2e_latency_ms, {mean,median,p99}_ttft_ms,
// tpot, {mean,median,p95,p99}_itl_ms, throughputs, the workload, and from
// newer files server_info (model_path, tp_size, dp_size, dtype,
// quantization, kv_cache_dtype, version, max_total_num_tokens,
// chunked_prefill_size, max_running_requests).
func readSGLang(f *fields, m map[string]any) Run {
	var r Run
	s := &r.Setup
	s.Backend = f.str(m, "", "backend")
	if strings.HasPrefix(s.Backend, "sglang") {
		s.Engine = "sglang"
	}
	if si := f.obj(m, "", "server_info"); si != nil {
		s.Engine = "sglang"
		s.Model = f.str(si, "server_info", "model_path")
		s.EngineVersion = f.str(si, "server_info", "version")
		s.TP = f.count(si, "server_info", "tp_size", 0)
		s.DP = f.count(si, "server_info", "dp_size", 0)
		s.PP = f.count(si, "server_info", "pp_size", 0)
		s.WeightDtype = weightDtype(f.str(si, "server_info", "quantization"), f.str(si, "server_info", "dtype"))
		s.KVDtype = kvDtype(f.str(si, "server_info", "kv_cache_dtype"))
		s.KVTokens = int64(f.count(si, "server_info", "max_total_num_tokens", 0))
		s.MaxBatchedTok = f.count(si, "server_info", "chunked_prefill_size", 0)
		s.MaxNumSeqs = f.count(si, "server_info", "max_running_requests", 0)
	}

	w := &r.Workload
	w.Dataset = f.str(m, "", "dataset_name")
	w.Completed = f.count(m, "", "completed", -1)
	w.DurationS = f.numOr(m, "", "duration", 0)
	w.NominalInputTokens = f.count(m, "", "random_input_len", 0)
	w.NominalOutputTokens = f.count(m, "", "random_output_len", 0)
	if w.Dataset != "random" {
		w.NominalInputTokens, w.NominalOutputTokens = 0, 0
	}
	loadOf(f, m, w)
	meanLengths(f, m, w)
	perRequest(f, m, w)
	if errs := f.arr(m, "", "errors"); errs != nil {
		for _, e := range errs {
			if s, ok := e.(string); ok && s != "" {
				w.Failed++
			}
		}
	}
	if w.Completed >= 0 {
		w.Prompts = w.Completed + w.Failed
	}
	if w.NominalInputTokens > 0 && f.numOr(m, "", "random_range_ratio", 1) < 1 {
		r.Notes = append(r.Notes, fmt.Sprintf("random_input_len %d with random_range_ratio %g: SGLang draws lengths up to it; the mean is the file's total_input_tokens / completed",
			w.NominalInputTokens, f.numOr(m, "", "random_range_ratio", 1)))
	}

	mt := &r.Measured
	mt.TTFT = sglangDist(f, m, "ttft_ms")
	mt.TPOT = sglangDist(f, m, "tpot_ms")
	mt.ITL = sglangDist(f, m, "itl_ms")
	mt.E2E = sglangDist(f, m, "e2e_latency_ms")
	mt.RequestsPerS = f.num(m, "", "request_throughput")
	mt.OutputTokensPerS = f.num(m, "", "output_throughput")
	r.Label = runLabel(w, f.str(m, "", "tag"))
	return r
}

func sglangLayout(m map[string]any) string {
	l := "older layout (no server_info)"
	if _, ok := m["server_info"]; ok {
		l = "newer layout (server_info)"
	}
	if _, ok := m["input_lens"]; ok {
		l += ", per-request arrays"
	}
	return l
}

func sglangDist(f *fields, m map[string]any, x string) Dist {
	return Dist{Mean: f.num(m, "", "mean_"+x), P50: f.num(m, "", "median_"+x), P90: f.num(m, "", "p90_"+x),
		P95: f.num(m, "", "p95_"+x), P99: f.num(m, "", "p99_"+x)}
}

// weightDtype normalises a quantization method or a torch dtype to the
// catalog's weight dtype names; "" when neither says.
func weightDtype(quant, dtype string) string {
	q := strings.ToLower(strings.TrimSpace(quant))
	switch {
	case q == "" || q == "none" || q == "null":
	case strings.Contains(q, "nvfp4") || q == "modelopt_fp4":
		return "nvfp4"
	case strings.Contains(q, "mxfp4"):
		return "mxfp4"
	case strings.Contains(q, "fp8"):
		return "fp8"
	case strings.Contains(q, "int4") || strings.Contains(q, "awq") || strings.Contains(q, "gptq") || strings.Contains(q, "w4a16"):
		return "int4"
	case strings.Contains(q, "int8") || strings.Contains(q, "w8a8"):
		return "int8"
	}
	switch strings.ToLower(strings.TrimSpace(dtype)) {
	case "bfloat16", "bf16":
		return "bf16"
	case "float16", "fp16", "half":
		return "fp16"
	}
	return ""
}

// kvDtype normalises a KV cache dtype; "" for auto (the model's).
func kvDtype(s string) string {
	k := strings.ToLower(strings.TrimSpace(s))
	switch {
	case k == "" || k == "auto" || k == "none":
		return ""
	case strings.HasPrefix(k, "fp8"):
		return "fp8"
	case k == "bfloat16":
		return "bf16"
	case k == "float16" || k == "half":
		return "fp16"
	}
	return k
}
