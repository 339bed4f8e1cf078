package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestPerfGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"perf.table", []string{"perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--isl", "1024", "--osl", "1024", "--concurrency", "64"}},
		{"perf.json", []string{"perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--tp", "1", "--isl", "1024", "--osl", "1024", "--concurrency", "64", "-o", "json"}},
		{"perf-explain.table", []string{"perf", "--model", "qwen3-32b", "--gpu", "h100-sxm", "--tp", "2", "--engine", "trtllm", "--weight-dtype", "fp8", "--isl", "2048", "--osl", "256", "--concurrency", "32", "--explain"}},
		{"perf-explain.json", []string{"perf", "--model", "qwen3-235b-a22b", "--gpu", "h200", "--tp", "4", "--weight-dtype", "fp8", "--engine", "sglang", "--isl", "1024", "--osl", "1024", "--concurrency", "16", "--explain", "-o", "json"}},
		{"perf-sweep.table", []string{"perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--isl", "1024", "--osl", "1024", "--sweep", "concurrency=1,4,16,64,256"}},
		{"perf-sweep.json", []string{"perf", "--model", "qwen3-8b", "--gpu", "l40s", "--isl", "4096", "--osl", "512", "--sweep", "concurrency=1,8,64", "-o", "json"}},
		{"perf-kv-limited.md", []string{"perf", "--model", "qwen3-32b", "--gpu", "h100-sxm", "--tp", "2", "--isl", "4096", "--osl", "1024", "--concurrency", "128", "-o", "markdown"}},
		{"perf-fallback.table", []string{"perf", "--model", "qwen3-0.6b", "--gpu", "rtx4090", "--isl", "1500", "--osl", "128"}},
		// Issue 27: attention data parallelism + expert parallelism, the command.
		{"perf-dp-ep.json", []string{"perf", "--model", "deepseek-v3", "--gpu", "h200", "--tp", "1", "--data-parallel-size", "8", "--expert-parallel-size", "8",
			"--weight-dtype", "fp8", "--engine", "trtllm", "--isl", "1024", "--osl", "2048", "--concurrency", "1024", "-o", "json"}},
		{"perf-dp-ep-explain.table", []string{"perf", "--model", "deepseek-v3", "--gpu", "h100-sxm", "--tp", "1", "--data-parallel-size", "16", "--expert-parallel-size", "16",
			"--link", "ib-ndr", "--weight-dtype", "fp8", "--engine", "sglang", "--isl", "2000", "--osl", "500", "--concurrency", "256", "--eplb", "--explain"}},
		{"perf-pp-mtp-explain.table", []string{"perf", "--model", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--pipeline-parallel-size", "2", "--link", "ib-ndr",
			"--speculative-tokens", "2", "--acceptance-length", "2.4", "--weight-dtype", "fp8", "--engine", "sglang", "--isl", "1024", "--osl", "512", "--concurrency", "64", "--explain"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := kvplan(t, c.args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, c.name, out)
		})
	}
}

// The acceptance command prints every field it names.
func TestPerfDoneWhen(t *testing.T) {
	out, errOut, code := kvplan(t, "perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--tp", "1", "--isl", "1024", "--osl", "1024", "--concurrency", "64", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ttft_ms", "tpot_ms", "itl_ms_p50", "requests_per_s", "output_tokens_per_s",
		"output_tokens_per_s_per_gpu", "running_sequences", "kv_limited", "waiting_ms", "gpus"} {
		v, ok := p[f]
		if !ok {
			t.Errorf("no %q in %s", f, out)
			continue
		}
		if x, isNum := v.(float64); isNum && (math.IsNaN(x) || math.IsInf(x, 0) || x < 0) {
			t.Errorf("%s = %v", f, x)
		}
	}
	// Little's law ties the figures together: C / (TTFT + (OSL − 1) × TPOT).
	c, ttft, tpot, rps := 64.0, p["ttft_ms"].(float64), p["tpot_ms"].(float64), p["requests_per_s"].(float64)
	if want := c / (ttft + 1023*tpot) * 1000; math.Abs(rps/want-1) > 0.02 {
		t.Errorf("requests_per_s %.3f, Little's law gives %.3f", rps, want)
	}
	if p["step_terms"] != nil || p["derivation"] != nil {
		t.Error("step_terms and derivation appear only with --explain")
	}
}

// FACTS.md §5: ~1,500 tokens of Qwen3-0.6B reach their first token in ~80 ms
// on the 8 GB laptop GPU and ~44 ms on the 24 GB consumer GPU, at concurrency
// 1 through Dynamo's frontend (13 ms measured, FACTS.md §5). kvplan's
// aggregated TTFT is that frontend plus the engine model's prefill on an idle
// worker; the engine model is fitted on datacenter GPUs only and must land
// within 25% of both.
func TestPrefillFieldMeasurements(t *testing.T) {
	for _, tc := range []struct {
		gpu  string
		want float64
	}{{"rtx4060-laptop", 80}, {"rtx4090", 44}} {
		out, errOut, code := kvplan(t, "disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--prefill-gpu", tc.gpu, "--input-tokens", "1500", "-o", "json")
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", tc.gpu, code, errOut)
		}
		var p struct {
			TTFT    float64 `json:"ttft_agg_ms"`
			Prefill float64 `json:"prefill_ms"`
		}
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		if math.Abs(p.TTFT/tc.want-1) > 0.25 {
			t.Errorf("%s: TTFT %.1f ms (13 ms frontend + %.1f ms prefill); FACTS.md §5 measured ~%.0f ms (25%% allowed)", tc.gpu, p.TTFT, p.Prefill, tc.want)
		}
	}
}

// FACTS.md §5's frontend measurement, direct to the engine (no frontend):
// Qwen3-0.6B, 512 tokens in and 128 out, median TTFT 30 ms at concurrency 1
// and 1,507 output tokens/s at 32. FACTS does not name the GPU; the figures
// are the laptop GPU's: kvplan perf puts the 24 GB consumer GPU at 4,090
// tokens/s at 32 clients (2.7× the measurement) and 13 ms of TTFT, the laptop
// within 10% of both. Neither GPU is in the fit (datacenter GPUs only), so
// this checks the engine model, request overhead and batching included, on a
// GPU it never saw; 25% allowed, as for the prefill checks.
func TestFrontendMeasurementLaptop(t *testing.T) {
	for _, tc := range []struct {
		concurrency string
		field       string
		want        float64
	}{{"1", "ttft_ms", 30}, {"32", "output_tokens_per_s", 1507}} {
		out, errOut, code := kvplan(t, "perf", "--model", "qwen3-0.6b", "--gpu", "rtx4060-laptop", "--isl", "512", "--osl", "128", "--concurrency", tc.concurrency, "-o", "json")
		if code != ExitOK {
			t.Fatalf("concurrency %s: exit %d: %s", tc.concurrency, code, errOut)
		}
		var p map[string]any
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		got, _ := p[tc.field].(float64)
		if math.Abs(got/tc.want-1) > 0.25 {
			t.Errorf("concurrency %s: %s %.1f; FACTS.md §5 measured %.0f (25%% allowed)", tc.concurrency, tc.field, got, tc.want)
		}
	}
}

func TestPerfBadInput(t *testing.T) {
	base := []string{"perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--isl", "1024", "--osl", "128"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no isl", []string{"perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--osl", "128"}, "--isl and --osl (--input-tokens, --output-tokens) are required"},
		{"no gpu", []string{"perf", "--model", "llama-3.1-8b", "--isl", "1", "--osl", "1"}, "perf: --gpu is required"},
		{"unknown gpu", []string{"perf", "--model", "llama-3.1-8b", "--gpu", "h10", "--isl", "1", "--osl", "1"}, `unknown gpu "h10"; did you mean`},
		{"unknown engine", append(base, "--engine", "ollama"), `--engine: "ollama" is not accepted: want one of "sglang", "trtllm", "vllm"`},
		{"bad weight dtype", append(base, "--weight-dtype", "fp3"), `--weight-dtype: "fp3" is not accepted: want one of "fp4",`},
		{"tp does not divide heads", append(base, "--tp", "3"), "32 attention heads are not divisible by tp 3"},
		{"zero concurrency", append(base, "--concurrency", "0"), "perf: --concurrency 0 is out of range: want 1 to 100,000 clients"},
		{"NaN concurrency", append(base, "--concurrency", "NaN"), `perf: --concurrency NaN: count "NaN" is not a finite number`},
		// It said "kvplan accepts up to 100,000,000", then refused 100,001.
		{"absurd concurrency", append(base, "--concurrency", "1e9"), "perf: --concurrency 1000000000 is out of range: want 1 to 100,000 clients"},
		{"NaN gpu util", append(base, "--gpu-util", "NaN"), `--gpu-util NaN: number "NaN" is not a finite number`},
		{"weights do not fit at tp 8", []string{"perf", "--model", "deepseek-v3", "--gpu", "l4", "--tp", "8", "--isl", "1024", "--osl", "128"}, "does not fit"},
		{"unknown kv dtype", append(base, "--kv-cache-dtype", "fp9"), "did you mean fp8"},
		{"bad sweep axis", append(base, "--sweep", "isl=1,2"), "concurrency is the one axis swept"},
		{"bad sweep value", append(base, "--sweep", "concurrency=1,x"), `each concurrency must be from 1 to 100,000, not "x"`},
		{"weights do not fit", []string{"perf", "--model", "llama-3.1-70b", "--gpu", "l4", "--isl", "1024", "--osl", "128"}, "does not fit"},
		{"past context", []string{"perf", "--model", "qwen3-0.6b", "--gpu", "l4", "--isl", "40000", "--osl", "1024"}, "past qwen3-0.6b's max context"},
		{"bad gpu util", append(base, "--gpu-util", "2"), "--gpu-memory-utilization 2: must be in (0, 1]"},
		{"negative graph batch", append(base, "--cuda-graph-max-batch", "-1"), "--cuda-graph-max-batch -1 is out of range: want 0 to 100,000,000"},
		{"graphs and eager", append(base, "--cuda-graph-max-batch", "1024", "--enforce-eager"), "perf: --cuda-graph-max-batch sizes the CUDA graphs that --enforce-eager turns off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := kvplan(t, c.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, ExitUsage, out, errOut)
			}
			if !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Errorf("stderr %q, want one line containing %q", errOut, c.want)
			}
		})
	}
}

// Impossible layouts exit 2 with the counts and what is accepted.
func TestPerfLayoutErrors(t *testing.T) {
	base := []string{"perf", "--model", "deepseek-v3", "--gpu", "h200", "--weight-dtype", "fp8", "--isl", "1024", "--osl", "256"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--expert-parallel-size", "3"}, "must divide tp × dp = 1 × 1 = 1"},
		{[]string{"--data-parallel-size", "6", "--expert-parallel-size", "6"}, "2 redundant experts (EPLB) would make it 258"},
		{[]string{"--data-parallel-size", "6", "--expert-parallel-size", "6", "--redundant-experts", "1"}, "1 redundant experts of deepseek-v3; 2 redundant experts would make it 258"},
		{[]string{"--data-parallel-size", "16", "--expert-parallel-size", "16"}, "spans 2 nodes of 8 h200 GPUs (its NVLink domain): give --link"},
		{[]string{"--data-parallel-size", "16", "--expert-parallel-size", "16", "--link", "nvlink4"}, "joins GPUs inside one NVLink domain only"},
		{[]string{"--speculative-tokens", "2"}, "needs --acceptance-length"},
		{[]string{"--speculative-tokens", "2", "--acceptance-length", "3.5"}, "between 1 and speculative-tokens + 1 = 3"},
		{[]string{"--link", "no-such-link", "--tp", "8"}, "no-such-link"},
		{[]string{"--data-parallel-size", "0"}, "want 1 to 1,024"},
		{[]string{"--two-batch-overlap", "--tp", "8", "--expert-parallel-size", "8"}, "with dp 1 there is none"},
	} {
		_, errOut, code := kvplan(t, append(append([]string(nil), base...), c.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 with %q", c.args, code, errOut, c.want)
		}
	}
	_, errOut, code := kvplan(t, "perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--isl", "1024", "--osl", "256", "--speculative-tokens", "1", "--acceptance-length", "1.5")
	if code != ExitUsage || !strings.Contains(errOut, "needs the model's MTP heads") {
		t.Errorf("MTP on a model without MTP heads: exit %d, %q", code, errOut)
	}
	_, errOut, code = kvplan(t, "perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--isl", "1024", "--osl", "256", "--expert-parallel-size", "2", "--data-parallel-size", "2")
	if code != ExitUsage || !strings.Contains(errOut, "needs a mixture-of-experts model") {
		t.Errorf("EP on a dense model: exit %d, %q", code, errOut)
	}
}

// MTP in the timed simulator: the same load with one MTP token accepted at
// 1.8 per step decodes faster, by less than 1.8 (the draft and the
// verification of two tokens cost); a model without MTP heads exits 2.
func TestSimulateMTP(t *testing.T) {
	base := []string{"simulate", "--model", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--synthetic", "8x1000x2", "--concurrency", "4",
		"--output-tokens", "128", "--workers", "1", "--policy", "round-robin", "-o", "json"}
	tpot := func(args ...string) float64 {
		out, errOut, code := kvplan(t, append(append([]string(nil), base...), args...)...)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var d struct {
			Policies []struct {
				TPOT struct {
					Mean float64 `json:"mean"`
				} `json:"tpot_ms"`
			} `json:"policies"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Policies) == 0 {
			t.Fatalf("%v: %s", err, out)
		}
		return d.Policies[0].TPOT.Mean
	}
	plain, mtp := tpot(), tpot("--speculative-tokens", "1", "--acceptance-length", "1.8")
	if r := plain / mtp; !(r > 1.1 && r < 1.8) {
		t.Errorf("TPOT %.3f ms without MTP, %.3f with: speed-up %.2f, want within (1.1, 1.8)", plain, mtp, r)
	}
	_, errOut, code := kvplan(t, "simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--synthetic", "8x1000x2", "--speculative-tokens", "1", "--acceptance-length", "1.5")
	if code != ExitUsage || !strings.Contains(errOut, "needs the model's MTP heads") {
		t.Errorf("MTP without heads: exit %d, %q", code, errOut)
	}
}

// FACTS.md §5's third prefill figure: ~1,500 tokens reach their first token
// in ~15 ms when the prefix is already cached. That bounds what a request
// pays besides its prefill on an idle worker (request handling, one small
// iteration), whatever the GPU: a fitted request_ms of 50 ms, which the
// refits that lower held-out TTFT ask for, cannot meet it. The router
// experiment ran through Dynamo's frontend and KV router, so this is
// simulate's default frontend path; FACTS does not name the GPU, so this is
// two RTX 4090 workers under CUDA graphs (kvplan: 17.5 ms = the frontend's
// 13 ms + one iteration of the 36 uncached tokens over 1,488 cached ones,
// 4.4 ms; direct to the engine it would be 13.9 ms, its fitted 5.0 ms +
// 1,524 × 2.94 µs in place of the 13). Not fitted; 25% allowed, as for the
// other §5 checks.
func TestCachedPrefixMeasurement(t *testing.T) {
	out, errOut, code := kvplan(t, "simulate", "--synthetic", "12x1500x6", "--tail-tokens", "24", "--workers", "2", "--model", "qwen3-0.6b",
		"--gpu", "rtx4090", "--max-model-len", "4096", "--concurrency", "1", "--policy", "kv-aware", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s simulateJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Policies) != 1 {
		t.Fatalf("want the kv-aware policy alone, got %d policies", len(s.Policies))
	}
	p := s.Policies[0]
	if p.HitRequests != 60 || p.Timing == nil {
		t.Fatalf("kv-aware: %d hits (want 60), timing %v: the median TTFT would not be a hit's", p.HitRequests, p.Timing)
	}
	// 60 of the 72 requests hit, so the median request is a hit.
	if got := p.Timing.TTFTMS.P50; math.Abs(got/15-1) > 0.25 {
		t.Errorf("cached-prefix TTFT (median of 60 hits in 72) %.1f ms; FACTS.md §5 measured ~15 ms (25%% allowed)", got)
	}
}

// --cuda-graph-max-batch moves where a decode-only iteration leaves CUDA
// graphs. Qwen3-32B (64 layers) on TensorRT-LLM at 1,024 clients: by
// default (512) its decode iterations run eager and pay step_ms + 64 ×
// eager_layer_us; under graphs up to 2,048 they pay step_ms + 64 ×
// layer_us. From the shipped * × trtllm × fp8 entry (step_ms 0.9868,
// layer_us 6.403, eager_layer_us 625.3): 0.9868 + 64 × 0.6253 = 41.0060 ms
// and 0.9868 + 64 × 0.006403 = 1.3966 ms. The other terms do not move.
func TestPerfCUDAGraphMaxBatch(t *testing.T) {
	args := []string{"perf", "--model", "qwen3-32b", "--gpu", "h100-sxm", "--tp", "2", "--engine", "trtllm", "--weight-dtype", "fp8",
		"--isl", "128", "--osl", "256", "--concurrency", "1024", "--explain"}
	eff := runJSON(t, ExitOK, args...)
	if e := eff["efficiency"].(map[string]any); e["step_ms"].(float64) != 0.9868 || e["layer_us"].(float64) != 6.403 || e["eager_layer_us"].(float64) != 625.3 {
		t.Fatalf("the catalog's trtllm fp8 entry moved (%v): redo the hand calculation", e)
	}
	graphed := runJSON(t, ExitOK, append(args, "--cuda-graph-max-batch", "2048")...)
	for _, c := range []struct {
		v    map[string]any
		want float64
		cuda bool
	}{{eff, 41.0060, false}, {graphed, 1.3966, true}} {
		if got := numAt(t, c.v, "step_terms", "decode", "fixed_ms"); math.Abs(got-c.want) > 1e-3 {
			t.Errorf("decode fixed_ms %.4f, want %.4f", got, c.want)
		}
		if got := c.v["step_terms"].(map[string]any)["decode"].(map[string]any)["cuda_graph"]; got != c.cuda {
			t.Errorf("decode cuda_graph %v, want %v", got, c.cuda)
		}
	}
	if numAt(t, graphed, "step_terms", "decode", "dense_ms") != numAt(t, eff, "step_terms", "decode", "dense_ms") {
		t.Error("the GEMM term moved with the CUDA-graph batch")
	}
	if graphed["cuda_graph_max_batch"] != 2048.0 || eff["cuda_graph_max_batch"] != nil {
		t.Errorf("cuda_graph_max_batch: %v given, %v not given", graphed["cuda_graph_max_batch"], eff["cuda_graph_max_batch"])
	}
	if numAt(t, graphed, "tpot_ms") >= numAt(t, eff, "tpot_ms") {
		t.Errorf("TPOT %.2f ms under graphs, %.2f eager", numAt(t, graphed, "tpot_ms"), numAt(t, eff, "tpot_ms"))
	}
}
