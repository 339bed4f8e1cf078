package benchresult

import (
	"math"
	"os"
	"strings"
	"testing"
)

// A vLLM run, written as the tool writes one, to be broken below.
const vllmRun = `{"date": "20250511-224750", "backend": "openai", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": 10, ` +
	`"request_rate": 2.0, "burstiness": 1.0, "max_concurrency": null, "duration": 6.0, "completed": 10, "total_input_tokens": 1000, ` +
	`"total_output_tokens": 500, "request_throughput": 1.6, "output_throughput": 80.0, "mean_ttft_ms": 50.0, "median_ttft_ms": 48.0, ` +
	`"p99_ttft_ms": 90.0, "mean_tpot_ms": 10.0, "mean_itl_ms": 10.0}`

func TestBadInput(t *testing.T) {
	exp7, err := os.ReadFile(td("vllm/llmd-exp7_a100_llama-3.1-8b-instruct_vllm-2x1gpu_isl8000-osl200_rate1.8.json"))
	if err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(td("aiperf/dynamo-profiler-cmp_qwen3-32b_trtllm-disagg-1p-tp1-1d-tp2_conc4.csv"))
	if err != nil {
		t.Fatal(err)
	}
	trt, err := os.ReadFile(td("trtllm-bench/h100-8x_llama-3.1-70b-instruct_fp8_tp8_trt0.16_isl128-osl128_report-excerpt.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Index(string(trt), "Request Throughput")
	cases := []struct {
		name, data string
		want       []string // every one in the error
	}{
		{"empty", "", []string{"x.json: empty file"}},
		{"blank", "  \n\n", []string{"empty file"}},
		{"plain text", "hello, world\n", []string{"not a benchmark result file kvplan reads", "vLLM", "SGLang", "AIPerf", "guidellm", "inference-perf", "trtllm-bench"}},
		{"another JSON", `{"apiVersion": "v1", "kind": "Pod"}`, []string{"not a benchmark result file kvplan reads (a JSON object with keys apiVersion, kind)", "kvplan reads: vLLM"}},
		{"a JSON array", `[1, 2]`, []string{"its top level is not a JSON object", "kvplan reads"}},
		{"a YAML manifest", "apiVersion: v1\nkind: Pod\n", []string{"a YAML mapping with keys apiVersion, kind", "kvplan reads"}},
		{"truncated JSON", string(exp7[:len(exp7)/2]), []string{"x.json:1: truncated: the JSON value that starts on line 1 does not end"}},
		{"truncated JSON lines", vllmRun + "\n" + vllmRun[:60], []string{"x.json:2: truncated: the JSON value that starts on line 2 does not end"}},
		{"malformed line", vllmRun + "\n" + vllmRun + "\n" + `{"backend": "vllm", "model_id": oops}` + "\n", []string{"x.json:3:", "malformed JSON", "invalid character 'o'"}},
		{"bad field", strings.Replace(vllmRun, `"mean_ttft_ms": 50.0`, `"mean_ttft_ms": "fast"`, 1),
			[]string{`x.json: mean_ttft_ms: want a number, got the string "fast"`}},
		{"bad field on a line", vllmRun + "\n" + strings.Replace(vllmRun, `"num_prompts": 10`, `"num_prompts": 2.5`, 1),
			[]string{"x.json:2: num_prompts: want a whole number ≥ 0, got 2.5"}},
		{"bad rate", strings.Replace(vllmRun, `"request_rate": 2.0`, `"request_rate": "soon"`, 1), []string{`request_rate: want a request rate (a number or "inf"), got the string "soon"`}},
		{"bad lengths", strings.Replace(vllmRun, `"mean_itl_ms": 10.0}`, `"mean_itl_ms": 10.0, "input_lens": [10, 20], "output_lens": [5, -1]}`, 1),
			[]string{"output_lens[1]: want a token count, got -1"}},
		{"failed only", strings.Replace(strings.Replace(vllmRun, `"completed": 10`, `"completed": 0, "failed": 10`, 1), `"request_throughput": 1.6`, `"request_throughput": 0.0`, 1),
			[]string{"refused: run 1: every request failed (0 completed, 10 failed): nothing was measured"}},
		{"zero throughput", strings.Replace(vllmRun, `"output_throughput": 80.0`, `"output_throughput": 0.0`, 1),
			[]string{"refused: run 1: zero throughput (0 output tokens/s): nothing was served"}},
		{"nothing measured", `{"backend": "vllm", "model_id": "m", "num_prompts": 4, "completed": 4, "mean_ttft_ms": NaN, "request_throughput": null}`,
			[]string{"refused: run 1: no figure measured (every metric absent or not a finite number)"}},
		{"two formats in JSON lines", vllmRun + "\n" + `{"benchmarks": []}` + "\n", []string{"x.json:2: this line is not a vllm-bench-serve run like line 1"}},
		{"two objects, one format that holds one", `{"benchmarks": []}` + "\n" + `{"benchmarks": []}`, []string{"x.json:2: a guidellm file holds one JSON object"}},
		{"guidellm without benchmarks", `{"benchmarks": []}`, []string{"benchmarks: empty: the report holds no benchmark"}},
		{"guidellm without metrics", `{"benchmarks": [{"config": {"strategy": {"type_": "concurrent", "streams": 4}}}]}`, []string{"benchmarks[0].metrics: missing"}},
		{"guidellm rate without its rate", `{"benchmarks": [{"config": {"strategy": {"type_": "constant"}}, "metrics": {}}]}`, []string{"benchmarks[0].strategy: a constant strategy without its streams or rate"}},
		{"truncated CSV", string(csv[:strings.Index(string(csv), "Request Latency")+40]), []string{"x.json:9: Request Latency (ms): 4 values, but the header on its block has 14 columns (the file was cut short?)"}},
		{"bad CSV number", strings.Replace(string(csv), "Time to First Token (ms),2200.49", "Time to First Token (ms),22oo.49", 1), []string{"x.json:11: Time to First Token.avg: want a number, got the string \"22oo.49\""}},
		{"CSV header only", "Metric,avg,min\n", []string{"an AIPerf CSV header with no metric rows"}},
		{"malformed CSV", "Metric,avg\n\"Time to First Token (ms),1\n", []string{"x.json:2:", "malformed CSV"}},
		{"truncated trtllm-bench report", string(trt[:cut]), []string{"PERFORMANCE OVERVIEW: truncated: the report does not close"}},
		{"trtllm-bench bad number", strings.Replace(string(trt), "112.4203", "lots", 1), []string{"x.json:35: Request Throughput (req/sec): want a number, got \"lots\""}},
		{"malformed YAML", "benchmarks:\n  - type_: x\n   bad: [\n", []string{"malformed YAML"}},
		{"a YAML list", "- a\n- b\n", []string{"not a benchmark result file kvplan reads"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse("x.json", []byte(c.data))
			if err == nil {
				t.Fatalf("read %d runs, want an error with %q", len(f.Runs), c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "NaN") || strings.Contains(err.Error(), "panic") {
				t.Errorf("error %q", err)
			}
		})
	}
}

// TestNonFiniteIsNotMeasured: NaN and Infinity, bare (Python's json) or
// as strings, are "not measured", never a figure; Infinity as a rate is
// every request at once.
func TestNonFiniteIsNotMeasured(t *testing.T) {
	data := strings.NewReplacer(`"mean_ttft_ms": 50.0`, `"mean_ttft_ms": NaN`, `"p99_ttft_ms": 90.0`, `"p99_ttft_ms": Infinity`,
		`"mean_tpot_ms": 10.0`, `"mean_tpot_ms": -Infinity`, `"mean_itl_ms": 10.0`, `"mean_itl_ms": "NaN"`,
		`"request_rate": 2.0`, `"request_rate": Infinity`, `"model_id": "meta-llama/Llama-3.1-8B-Instruct"`, `"model_id": "NaN-Infinity model"`).Replace(vllmRun)
	f, err := Parse("x.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Runs[0]
	m := r.Measured
	if m.TTFT.Mean != nil || m.TTFT.P99 != nil || m.TPOT.Mean != nil || m.ITL.Mean != nil {
		t.Errorf("non-finite values read as figures: %+v", m)
	}
	if m.TTFT.P50 == nil || *m.TTFT.P50 != 48 {
		t.Errorf("median TTFT %v, want the file's 48", show(m.TTFT.P50))
	}
	if r.Workload.Kind != LoadBurst || r.Setup.Model != "NaN-Infinity model" {
		t.Errorf("rate Infinity read as %q (model %q); want every request at once, and strings untouched", r.Workload.Kind, r.Setup.Model)
	}
	for _, x := range []*float64{m.TTFT.P50, m.RequestsPerS, m.OutputTokensPerS} {
		if x != nil && (math.IsNaN(*x) || math.IsInf(*x, 0)) {
			t.Errorf("a non-finite figure: %v", *x)
		}
	}
}

// TestSkippedRuns: a sweep whose overloaded point failed keeps its other
// points and says which one it left out.
func TestSkippedRuns(t *testing.T) {
	bad := strings.Replace(strings.Replace(vllmRun, `"completed": 10`, `"completed": 0, "failed": 10`, 1), `"request_rate": 2.0`, `"request_rate": 40.0`, 1)
	f, err := Parse("x.jsonl", []byte(vllmRun+"\n"+bad+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 1 || len(f.Skipped) != 1 || !strings.Contains(f.Skipped[0], "run 2 (line 2): every request failed") {
		t.Errorf("runs %d, skipped %q", len(f.Runs), f.Skipped)
	}
}

// TestNotARegularFile: a directory or device is refused before reading.
func TestNotARegularFile(t *testing.T) {
	if _, err := Read(td("vllm")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := Read(td("vllm/missing.json")); err == nil {
		t.Error("a missing file read")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(vllmRun))
	f.Add([]byte(vllmRun + "\n" + vllmRun))
	f.Add([]byte("Metric,avg\nTime to First Token (ms),1\n"))
	f.Add([]byte(`{"benchmarks": [{"metrics": {}}]}`))
	f.Add([]byte("= PERFORMANCE OVERVIEW\nNumber of requests: 3\n"))
	f.Add([]byte(`{"load_summary": {}, "successes": {"latency": {}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz", data)
		if err != nil {
			return
		}
		for _, r := range file.Runs {
			for _, d := range []Dist{r.Measured.TTFT, r.Measured.TPOT, r.Measured.ITL, r.Measured.E2E} {
				for _, p := range []*float64{d.Mean, d.P50, d.P90, d.P95, d.P99} {
					if p != nil && (math.IsNaN(*p) || math.IsInf(*p, 0)) {
						t.Fatalf("a non-finite figure %v", *p)
					}
				}
			}
		}
	})
}

// TestQuoteBareNonFinite: bare tokens become strings; the same letters
// inside strings, escaped quotes included, stay as they are.
func TestQuoteBareNonFinite(t *testing.T) {
	in := `{"a": "x\"NaN\\", "b": NaN, "c": -Infinity, "d": [Infinity, "Infinity"], "e": "NaNa"}`
	want := `{"a": "x\"NaN\\", "b": "NaN", "c": "-Infinity", "d": ["Infinity", "Infinity"], "e": "NaNa"}`
	if got := string(quoteBareNonFinite([]byte(in))); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
