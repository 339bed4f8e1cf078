package benchresult

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/kvplan/kvplan/internal/tomlpos"
)

// parseTRTLLM reads the report trtllm-bench … throughput prints, found in a
// run's log: the ENGINE DETAILS, WORLD + RUNTIME INFORMATION and
// PERFORMANCE OVERVIEW blocks of "Label:<tabs>value" lines. These are
// offline max-throughput runs: every request is queued at once, the engine
// runs at most its max runtime batch size; no TTFT or TPOT is measured
// (the streaming figures of newer versions are read when present).
func parseTRTLLM(file string, data []byte) (*File, error) {
	kv := map[string]string{}
	lines := map[string]int{}
	section := ""
	rules := 0 // "=====" lines since PERFORMANCE OVERVIEW: the one under its title, and the one that closes it
	for i, raw := range bytes.Split(data, []byte("\n")) {
		line := strings.TrimRight(string(raw), "\r")
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "= ") {
			section = strings.TrimSpace(strings.TrimPrefix(t, "= "))
			continue
		}
		if section == "PERFORMANCE OVERVIEW" && strings.HasPrefix(t, "=====") {
			rules++
		}
		if section == "" || strings.HasPrefix(t, "[") || strings.HasPrefix(t, "=") {
			continue
		}
		k, v, ok := strings.Cut(t, ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if _, dup := kv[k]; !dup {
			kv[k], lines[k] = strings.TrimSpace(v), i+1
		}
	}
	var err error
	num := func(key string) *float64 {
		s, ok := kv[key]
		if !ok {
			return nil
		}
		x, e := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		if e != nil && err == nil {
			err = &tomlpos.Error{File: file, Line: lines[key], Field: key, Msg: fmt.Sprintf("want a number, got %q", s)}
		}
		if e != nil {
			return nil
		}
		return &x
	}
	var r Run
	s := &r.Setup
	s.Engine = "trtllm"
	s.Model = kv["Model"]
	s.EngineVersion = kv["TensorRT-LLM Version"]
	s.WeightDtype = weightDtype(kv["Quantization"], kv["Dtype"])
	s.KVDtype = kvDtype(kv["KV Cache Dtype"])
	intOf := func(key string) int {
		if p := num(key); p != nil {
			return int(*p)
		}
		return 0
	}
	s.TP, s.PP = intOf("TP Size"), intOf("PP Size")
	s.MaxNumSeqs, s.MaxBatchedTok = intOf("Max Runtime Batch Size"), intOf("Max Runtime Tokens")

	w := &r.Workload
	w.Kind, w.Concurrency = LoadOffline, s.MaxNumSeqs
	w.Prompts = intOf("Number of requests")
	w.Completed = w.Prompts
	if p := num("Average Input Length (tokens)"); p != nil {
		w.InputTokensMean = *p
	}
	if p := num("Average Output Length (tokens)"); p != nil {
		w.OutputTokensMean = *p
	}
	if p := num("Total Latency (ms)"); p != nil {
		w.DurationS = *p / 1000
	}
	mt := &r.Measured
	mt.RequestsPerS = num("Request Throughput (req/sec)")
	// Token Throughput is output tokens over the total latency (0.16);
	// newer reports name it Output Throughput.
	mt.OutputTokensPerS = num("Token Throughput (tokens/sec)")
	if mt.OutputTokensPerS == nil {
		mt.OutputTokensPerS = num("Total Output Throughput (tokens/sec)")
	}
	mt.TTFT.Mean = num("Average time-to-first-token [TTFT] (ms)")
	mt.TPOT.Mean = num("Average time-per-output-token [TPOT] (ms)")
	mt.E2E.Mean = num("Average request latency (ms)")
	if err != nil {
		return nil, err
	}
	if _, ok := kv["Number of requests"]; !ok || rules < 2 || (mt.RequestsPerS == nil && mt.OutputTokensPerS == nil) {
		return nil, &tomlpos.Error{File: file, Line: bytes.Count(data, []byte("\n")) + 1,
			Field: "PERFORMANCE OVERVIEW", Msg: "truncated: the report does not close, or lacks Number of requests or its throughputs"}
	}
	r.Label = runLabel(w, fmt.Sprintf("%d requests, %g in / %g out", w.Prompts, w.InputTokensMean, w.OutputTokensMean))
	r.Notes = append(r.Notes, "an offline max-throughput run: every request queued at once, the engine at its max runtime batch size; the report names no GPU")
	return &File{Format: FormatTRTLLMBench, Layout: "text report (trtllm-bench throughput)", Runs: []Run{r}}, nil
}
