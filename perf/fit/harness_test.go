package fit

import (
	"math"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

// TestHarnessFor checks the script settings a row resolves to against the
// InferenceX scripts as read by hand (the commit each came from is in
// harness.go): the version in effect on the run's day, the TP- and
// length-specific fractions, and no guess for an undated row whose script
// changed or for a row of another source.
func TestHarnessFor(t *testing.T) {
	row := func(engine, system string, tp, isl, osl int) Row {
		return Row{Engine: engine, System: system, TP: tp, ISL: isl, OSL: osl, Source: SourceInferenceX}
	}
	cases := []struct {
		name              string
		r                 Row
		group, dtype, day string
		ok                bool
		kv                string
		frac              float64
	}{
		// dsr1_fp4_b200_docker.sh 2025-11: --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.85
		{"sglang dsr1 fp4", row("sglang", "b200_sxm", 4, 1024, 1024), "deepseek-v3", "nvfp4", "2025-11-10", true, "fp8", 0.85},
		// dsr1_fp8_b200.sh 2026-03: MEM_FRAC_STATIC=0.82 at TP 8, 0.95 at TP 4
		{"sglang dsr1 fp8 tp8", row("sglang", "b200_sxm", 8, 8192, 1024), "deepseek-v3", "fp8", "2026-03-25", true, "fp8", 0.82},
		{"sglang dsr1 fp8 tp4", row("sglang", "b200_sxm", 4, 8192, 1024), "deepseek-v3", "fp8", "2026-03-25", true, "fp8", 0.95},
		// dsr1_fp8_h200.sh: no --kv-cache-dtype (bf16), 0.82
		{"sglang dsr1 h200", row("sglang", "h200_sxm", 8, 1024, 1024), "deepseek-v3", "fp8", "2026-03-25", true, "bf16", 0.82},
		// minimaxm2.5_fp8_b200.sh: 0.95 without a KV flag (2026-03-11), fp8 KV
		// from 2026-03-28, 0.90 from 2026-04-03
		{"vllm minimax 03-11", row("vllm", "b200_sxm", 4, 1024, 1024), "minimax-m2.5", "fp8", "2026-03-11", true, "bf16", 0.95},
		{"vllm minimax 03-28", row("vllm", "b200_sxm", 4, 1024, 1024), "minimax-m2.5", "fp8", "2026-03-28", true, "fp8", 0.95},
		{"vllm minimax 04-22", row("vllm", "b200_sxm", 4, 1024, 1024), "minimax-m2.5", "fp8", "2026-04-22", true, "fp8", 0.90},
		{"vllm minimax h100", row("vllm", "h100_sxm", 4, 1024, 1024), "minimax-m2.5", "fp8", "2026-03-27", true, "bf16", 0.90},
		// dsr1_fp8_b200_trt.sh 2026-03: 0.8, 0.75 at TP 4 and 8k/1k
		{"trtllm dsr1 fp8 tp4 8k", row("trtllm", "b200_sxm", 4, 8192, 1024), "deepseek-v3", "fp8", "2026-03-25", true, "fp8", 0.75},
		{"trtllm dsr1 fp8 tp4 1k", row("trtllm", "b200_sxm", 4, 1024, 1024), "deepseek-v3", "fp8", "2026-03-25", true, "fp8", 0.80},
		// an undated row: the script's settings never changed, or they did
		{"undated, constant", row("sglang", "h200_sxm", 8, 1024, 1024), "deepseek-v3", "fp8", "", true, "bf16", 0.82},
		{"undated, changed", row("vllm", "b200_sxm", 4, 1024, 1024), "minimax-m2.5", "fp8", "", false, "", 0},
		// kimik2.5_fp4_b200.sh kept fp8 KV at 0.90 but took a 2 × ISL budget on 2026-04-20
		{"undated, only the budget changed", row("vllm", "b200_sxm", 4, 1024, 1024), "kimi-k2", "nvfp4", "", false, "", 0},
		// no script for the GPU, the model, or the source
		{"no script for the GPU", row("vllm", "h100_sxm", 4, 1024, 1024), "kimi-k2", "int4", "2026-03-02", false, "", 0},
		{"gap analysis", Row{Engine: "sglang", System: "b200_sxm", TP: 8, Source: SourceGapAnalysis}, "deepseek-v3", "nvfp4", "2026-03-02", false, "", 0},
	}
	for _, tc := range cases {
		h, ok := harnessFor(tc.r, tc.group, tc.dtype, tc.day)
		if ok != tc.ok || h.KVDtype != tc.kv || h.MemFraction != tc.frac {
			t.Errorf("%s: got %v %q %g (%s %s), want %v %q %g", tc.name, ok, h.KVDtype, h.MemFraction, h.Script, h.Commit, tc.ok, tc.kv, tc.frac)
		}
	}
	// Per-run settings: --scheduler-recv-interval (dsr1_fp4_b200.sh 10
	// below 16 clients and 30 from 16; dsr1_fp8_b200.sh 10 at TP 4;
	// dsr1_fp8_h200.sh and the GLM-5 scripts none) and the prefill token
	// budget (dsr1_fp8_b200.sh 32768 at TP 8 and 8192 at TP 4,
	// dsr1_fp8_h200.sh 32768; minimaxm2.5_fp8_b200.sh 2 × ISL from
	// 2026-04-03, none before; the TensorRT-LLM scripts' MAX_NUM_TOKENS =
	// (CONC + ISL + 64 + 63) / 64 × 64 at least 8192: (256 + 8192 + 127) /
	// 64 × 64 = 133 × 64 = 8512 at 256 clients of 8k, 8192 at 4 of 1k).
	for _, tc := range []struct {
		name                  string
		r                     Row
		group, dtype, day     string
		clients, recv, budget int
	}{
		{"dsr1 fp4, 8 clients", row("sglang", "b200_sxm", 4, 1024, 1024), "deepseek-v3", "nvfp4", "2026-03-25", 8, 10, 16384},
		{"dsr1 fp4, 16 clients", row("sglang", "b200_sxm", 4, 1024, 1024), "deepseek-v3", "nvfp4", "2026-03-25", 16, 30, 16384},
		{"dsr1 fp8 tp8", row("sglang", "b200_sxm", 8, 1024, 1024), "deepseek-v3", "fp8", "2026-03-25", 64, 30, 32768},
		{"dsr1 fp8 tp4", row("sglang", "b200_sxm", 4, 8192, 1024), "deepseek-v3", "fp8", "2026-03-25", 64, 10, 8192},
		{"dsr1 h200", row("sglang", "h200_sxm", 8, 1024, 1024), "deepseek-v3", "fp8", "2026-03-25", 64, 0, 32768},
		{"glm-5 b200", row("sglang", "b200_sxm", 8, 1024, 1024), "glm-5", "fp8", "2026-03-20", 64, 0, 32768},
		{"vllm minimax 04-22", row("vllm", "b200_sxm", 4, 1024, 1024), "minimax-m2.5", "fp8", "2026-04-22", 64, 0, 2048},
		{"vllm minimax 03-11", row("vllm", "b200_sxm", 4, 1024, 1024), "minimax-m2.5", "fp8", "2026-03-11", 64, 0, 0},
		{"trtllm 8k, 256 clients", row("trtllm", "b200_sxm", 4, 8192, 1024), "deepseek-v3", "nvfp4", "2026-03-25", 256, 0, 8512},
		{"trtllm 1k, 4 clients", row("trtllm", "b200_sxm", 4, 1024, 1024), "deepseek-v3", "nvfp4", "2026-03-25", 4, 0, 8192},
	} {
		h, _ := harnessFor(tc.r, tc.group, tc.dtype, tc.day)
		if recv, budget := h.RecvInterval(tc.clients), h.TokenBudget(tc.r.ISL, tc.clients); recv != tc.recv || budget != tc.budget {
			t.Errorf("%s: recv interval %d, token budget %d; want %d, %d", tc.name, recv, budget, tc.recv, tc.budget)
		}
	}
}

// TestDatedTwins: an undated copy of a run takes its dated twin's day; a
// run with no dated copy stays undated.
func TestDatedTwins(t *testing.T) {
	a := Row{ID: "a", Engine: "vllm", System: "b200_sxm", ISL: 1024, OSL: 1024, Concurrency: 4, TTFTMS: 100.004, TPOTMS: 10, Measured: "2026-03-11"}
	b := a
	b.ID, b.Measured, b.TTFTMS = "b", "", 100.0 // the rounded copy
	c := a
	c.ID, c.Measured, c.TTFTMS = "c", "", 120 // another run
	got := datedTwins([]Row{b, a, c})
	if got[0].Measured != "2026-03-11" || got[2].Measured != "" || b.Measured != "" {
		t.Errorf("days %q %q %q (input b %q), want 2026-03-11, \"\", and the input unchanged", got[0].Measured, got[1].Measured, got[2].Measured, b.Measured)
	}
}

// TestContradicted: config 99's two workflow runs as measured (8k/1k TTFT
// 5,615 and 9,188 ms at 4 and 8 clients on run 124, 2,109 ms at 32 on run
// 103) leave out run 124, its row of another configuration, and a copy of
// it without a run id; a sweep that rises with clients, or a run only 1.9×
// slower, leaves nothing out.
func TestContradicted(t *testing.T) {
	r := func(run string, conc int, ttft float64) Row {
		return Row{Engine: "sglang", System: "b200_sxm", ISL: 8192, OSL: 1024, Concurrency: conc, TTFTMS: ttft, TPOTMS: 12, Run: run}
	}
	bad1, bad2, good := r("99/124", 4, 5614.58), r("99/124", 8, 9188.19), r("99/103", 32, 2109.0)
	sibling := r("88/124", 4, 5503.99)
	copyOf := bad1
	copyOf.Run, copyOf.ID = "", "copy"
	got := contradicted([]Row{bad1, bad2, good, sibling, copyOf})
	for _, x := range []Row{bad1, bad2, sibling, copyOf} {
		if !got[keyOf(x)] {
			t.Errorf("%s c%d %.0f ms not left out", x.Run, x.Concurrency, x.TTFTMS)
		}
	}
	if got[keyOf(good)] {
		t.Error("run 103 left out")
	}
	if n := len(contradicted([]Row{r("1/1", 4, 300), r("1/2", 32, 900), r("1/2", 64, 2000)})); n != 0 {
		t.Errorf("a rising sweep: %d runs left out", n)
	}
	if n := len(contradicted([]Row{r("1/1", 4, 1900), r("1/2", 32, 1000)})); n != 0 {
		t.Errorf("1.9× slower: %d runs left out", n)
	}
}

// TestHarnessRequest checks that the harness_request mechanism gives the
// InferenceX rows their own request cost per engine and leaves the
// gap-analysis rows (and the catalog's entries) the engine's.
func TestHarnessRequest(t *testing.T) {
	if _, err := ParseMechanisms("harness_request,bogus"); err == nil || !strings.Contains(err.Error(), "harness_request") {
		t.Fatalf("an unknown mechanism: got %v, want an error naming the known ones", err)
	}
	m, err := ParseMechanisms("harness_request")
	if err != nil || !m.HarnessRequest {
		t.Fatalf("ParseMechanisms(harness_request) = %+v, %v", m, err)
	}
	sp := Space{Engines: []string{"sglang", "vllm"}, GPUs: []string{"h200"}, Dtypes: []string{"bf16"}}
	x := sp.Initial()
	x[sp.engine(1, eRequest)] = param("request_ms", 20)
	x[sp.engine(1, eHarnessRequest)] = param("request_ms", 40)
	x[sp.engine(1, eHarnessRequestTok)] = param("request_us_per_token", 4)
	ix := &Case{Row: Row{Source: SourceInferenceX}, e: 1}
	gap := &Case{Row: Row{Source: SourceGapAnalysis}, e: 1}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9*b }
	if e := sp.caseEfficiency(x, ix); !near(e.RequestMS, 20) {
		t.Errorf("mechanism off: InferenceX row's request_ms %.6g, want the engine's 20", e.RequestMS)
	}
	sp.Mechanisms = m
	if e := sp.caseEfficiency(x, ix); !near(e.RequestMS, 40) || !near(e.RequestUSTok, 4) {
		t.Errorf("InferenceX row: request %.6g ms + %.6g µs/token, want the harness's 40 + 4", e.RequestMS, e.RequestUSTok)
	}
	if e := sp.caseEfficiency(x, gap); !near(e.RequestMS, 20) || !near(e.RequestUSTok, 2) {
		t.Errorf("gap-analysis row: request %.6g ms + %.6g µs/token, want the engine's 20 + 2", e.RequestMS, e.RequestUSTok)
	}
	if e := sp.Efficiency(x, -1, 1, 0); !near(e.RequestMS, 20) {
		t.Errorf("the catalog's entry: request_ms %.6g, want the engine's 20", e.RequestMS)
	}
}

// TestLinkClass checks that link_class moves the all-reduce latency and
// the interconnect share of the GPUs of one interconnect class only, and
// leaves the catalog's GPU-independent entries the shared values.
func TestLinkClass(t *testing.T) {
	sp := Space{Engines: []string{"vllm"}, GPUs: []string{"b200", "h200"}, Dtypes: []string{"bf16"},
		Links: []string{"nvlink5", "nvlink4"}, LinkClasses: []string{"nvlink4", "nvlink5"}}
	x := sp.Initial()
	if len(x) != sp.Len() || sp.linkIC(1) != sp.Len()-1 {
		t.Fatalf("layout: %d parameters, nvlink5's interconnect offset at %d", sp.Len(), sp.linkIC(1))
	}
	x[pAllReduce], x[pInterconnect] = param("allreduce_us", 20), param("interconnect", 0.5)
	x[sp.linkAR(1)] = param("allreduce_us", 10) - param("allreduce_us", 20)
	x[sp.linkIC(1)] = param("interconnect", 0.8) - param("interconnect", 0.5)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9*b }
	check := func(what string, e catalog.Efficiency, ar, ic float64) {
		t.Helper()
		if !near(e.AllReduceUS, ar) || !near(e.Interconnect, ic) {
			t.Errorf("%s: all-reduce %.6g µs at %.6g of the interconnect, want %g at %g", what, e.AllReduceUS, e.Interconnect, ar, ic)
		}
	}
	check("mechanism off, b200", sp.Efficiency(x, 0, 0, 0), 20, 0.5)
	sp.LinkClass = true
	check("b200 (nvlink5)", sp.Efficiency(x, 0, 0, 0), 10, 0.8)
	check("h200 (nvlink4)", sp.Efficiency(x, 1, 0, 0), 20, 0.5)
	check("the catalog's any-GPU entry", sp.Efficiency(x, -1, 0, 0), 20, 0.5)
	if m, err := ParseMechanisms("link_class"); err != nil || !m.LinkClass {
		t.Errorf("ParseMechanisms(link_class) = %+v, %v", m, err)
	}
}
