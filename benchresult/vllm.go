package benchresult

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// readVLLM reads one run of `vllm bench serve --save-result` (and the older
// benchmarks/benchmark_serving.py): {mean,median,pNN}_{ttft,tpot,itl,e2el}_ms,
// request_throughput, output_throughput, the workload fields, --metadata
// strings, and per-request input_lens/output_lens/errors when present.
func readVLLM(f *fields, m map[string]any) Run {
	var r Run
	s := &r.Setup
	s.Model = f.str(m, "", "model_id")
	if s.Model == "" {
		s.Model = f.str(m, "", "tokenizer_id")
	}
	if s.Model == "" {
		s.Model = f.str(m, "", "model") // --metadata model=…
	}
	s.Backend = f.str(m, "", "backend")
	s.Date = f.str(m, "", "date")
	// --metadata k=v pairs are merged in as top-level strings.
	if g := f.str(m, "", "gpu"); g != "" {
		s.GPU, s.GPUCount = splitGPUCount(g)
	}
	s.Replicas = f.count(m, "", "decode_replicas", 0)
	s.TP = f.count(m, "", "tensor_parallel_size", f.count(m, "", "tp", 0))
	if p := f.count(m, "", "prefill_replicas", 0); p > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("the file's metadata says %d prefill replicas (disaggregated serving), which the prediction does not model", p))
	}

	w := &r.Workload
	w.Prompts = f.count(m, "", "num_prompts", 0)
	w.Completed = f.count(m, "", "completed", -1)
	w.Failed = f.count(m, "", "failed", 0)
	w.DurationS = f.numOr(m, "", "duration", 0)
	w.Burstiness = f.numOr(m, "", "burstiness", 0)
	w.Dataset = f.str(m, "", "dataset_name")
	loadOf(f, m, w)
	meanLengths(f, m, w)
	if w.Completed < 0 && w.Prompts > 0 {
		w.Completed = w.Prompts - w.Failed
	}
	perRequest(f, m, w)

	mt := &r.Measured
	mt.TTFT = vllmDist(f, m, "ttft")
	mt.TPOT = vllmDist(f, m, "tpot")
	mt.ITL = vllmDist(f, m, "itl")
	mt.E2E = vllmDist(f, m, "e2el")
	mt.RequestsPerS = f.num(m, "", "request_throughput")
	mt.OutputTokensPerS = f.num(m, "", "output_throughput")
	r.Label = runLabel(w, f.str(m, "", "deployment"), f.str(m, "", "label"))
	return r
}

func vllmLayout(m map[string]any) string {
	l := "older layout (request_goodput:)"
	if _, ok := m["endpoint_type"]; ok {
		l = "newer layout (endpoint_type, failed)"
	} else if _, ok := m["failed"]; ok {
		l = "newer layout (failed)"
	}
	if _, ok := m["input_lens"]; ok {
		l += ", per-request arrays"
	}
	return l
}

// vllmDist reads mean_X_ms, median_X_ms (or p50_X_ms) and p90/p95/p99_X_ms.
func vllmDist(f *fields, m map[string]any, x string) Dist {
	d := Dist{Mean: f.num(m, "", "mean_"+x+"_ms"), P50: f.num(m, "", "median_"+x+"_ms"),
		P90: f.num(m, "", "p90_"+x+"_ms"), P95: f.num(m, "", "p95_"+x+"_ms"), P99: f.num(m, "", "p99_"+x+"_ms")}
	if d.P50 == nil {
		d.P50 = f.num(m, "", "p50_"+x+"_ms")
	}
	return d
}

// loadOf reads request_rate and max_concurrency, as vLLM and SGLang write
// them: a concurrency cap with every request sent at once is a closed loop
// of that many clients; without a cap, an infinite rate sends every request
// at once.
func loadOf(f *fields, m map[string]any, w *Workload) {
	rate := f.rate(m, "", "request_rate")
	conc := f.count(m, "", "max_concurrency", 0)
	switch {
	case conc > 0 && (math.IsInf(rate, 1) || rate == 0):
		w.Kind, w.Concurrency = LoadConcurrency, conc
	case conc > 0:
		w.Kind, w.RatePerS, w.Concurrency = LoadRate, rate, conc
	case math.IsInf(rate, 1):
		w.Kind = LoadBurst
	case rate > 0:
		w.Kind, w.RatePerS = LoadRate, rate
	}
}

// meanLengths takes the mean lengths from the totals over the completed
// requests.
func meanLengths(f *fields, m map[string]any, w *Workload) {
	n := f.count(m, "", "completed", -1)
	if n <= 0 {
		return
	}
	if t := f.num(m, "", "total_input_tokens"); t != nil {
		w.InputTokensMean = *t / float64(n)
	}
	if t := f.num(m, "", "total_output_tokens"); t != nil {
		w.OutputTokensMean = *t / float64(n)
	}
}

// perRequest reads input_lens and output_lens (vLLM up to 0.8.3 on every
// --save-result, later with --save-detailed; SGLang with --output-details),
// keeping the requests whose errors entry is empty.
func perRequest(f *fields, m map[string]any, w *Workload) {
	in, out := f.arr(m, "", "input_lens"), f.arr(m, "", "output_lens")
	if in == nil || out == nil {
		return
	}
	if len(in) != len(out) {
		f.fail("output_lens", "has %d entries but input_lens has %d", len(out), len(in))
		return
	}
	ins, outs := f.ints(in, "input_lens"), f.ints(out, "output_lens")
	if ins == nil || outs == nil {
		return
	}
	errs := f.arr(m, "", "errors")
	if errs != nil && len(errs) == len(ins) {
		keepIn, keepOut := ins[:0:0], outs[:0:0]
		for i, e := range errs {
			if s, isStr := e.(string); e == nil || isStr && s == "" {
				keepIn, keepOut = append(keepIn, ins[i]), append(keepOut, outs[i])
			}
		}
		ins, outs = keepIn, keepOut
	}
	w.InputLens, w.OutputLens = ins, outs
}

// splitGPUCount reads "4xNVIDIA_L40S" as 4 and "NVIDIA_L40S".
func splitGPUCount(s string) (string, int) {
	if i := strings.IndexAny(s, "xX×"); i > 0 {
		if n, err := strconv.Atoi(s[:i]); err == nil && n > 0 {
			_, size := firstRune(s[i:])
			return s[i+size:], n
		}
	}
	return s, 0
}

func firstRune(s string) (rune, int) {
	for _, r := range s {
		return r, len(string(r))
	}
	return 0, 0
}

// runLabel describes a run's load, and the labels the file gives it.
func runLabel(w *Workload, labels ...string) string {
	var parts []string
	switch w.Kind {
	case LoadConcurrency:
		parts = append(parts, fmt.Sprintf("concurrency %d", w.Concurrency))
	case LoadRate:
		parts = append(parts, fmt.Sprintf("%s req/s", strconv.FormatFloat(w.RatePerS, 'g', -1, 64)))
		if w.Concurrency > 0 {
			parts = append(parts, fmt.Sprintf("max concurrency %d", w.Concurrency))
		}
	case LoadBurst:
		parts = append(parts, "all at once")
	case LoadOffline:
		parts = append(parts, "offline")
	default:
		parts = append(parts, "load not stated")
	}
	if w.Dataset != "" {
		parts = append(parts, w.Dataset)
	}
	for _, l := range labels {
		if l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, ", ")
}
