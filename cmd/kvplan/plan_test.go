package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/planner/capacity/capacitytest"
)

// withStandIn runs the plan tests on the capacity search's stand-in engine
// model, so their figures stay fixed while the fitted model changes.
func withStandIn(t *testing.T) {
	t.Helper()
	old := planEngine
	planEngine = func(*catalog.Catalog) capacity.EngineModel { return capacity.EngineModel{Timers: capacitytest.Timers} }
	t.Cleanup(func() { planEngine = old })
}

var exampleArgs = []string{"plan", "--model", "llama-3.1-70b", "--isl", "4000", "--osl", "512", "--rate", "20",
	"--ttft-p95", "1000ms", "--itl-p95", "50ms", "--gpu", "h100-sxm", "--link", "ib-ndr", "--verify", "1", "--sim-requests", "300"}

func TestPlanExample(t *testing.T) {
	withStandIn(t)
	out, errs, code := kvplan(t, append(exampleArgs, "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Best       map[string]any   `json:"best"`
		Candidates []map[string]any `json:"candidates"`
		Verdict    string           `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"mode", "meets_slo", "pools", "gpus", "usd_per_hour", "usd_per_million_output_tokens",
		"requests_per_s_capacity", "utilization", "ttft_p95_ms", "itl_p95_ms", "transfer_ms", "limited_by", "simulated"} {
		if _, ok := res.Best[k]; !ok {
			t.Errorf("best lacks %q", k)
		}
	}
	if res.Verdict == "" || len(res.Candidates) < 2 {
		t.Errorf("verdict %q, %d candidates", res.Verdict, len(res.Candidates))
	}
}

func TestPlanNothingMeetsSLO(t *testing.T) {
	withStandIn(t)
	// 1 ms of TTFT is below any prefill of 4,000 tokens: exit 1 with the closest.
	args := []string{"plan", "--model", "llama-3.1-70b", "--isl", "4000", "--osl", "512", "--rate", "20",
		"--ttft-p95", "1ms", "--itl-p95", "50ms", "--gpu", "h100-sxm", "--verify", "0"}
	out, errs, code := kvplan(t, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s %s", code, out, errs)
	}
	if !strings.Contains(out, "nothing meets the SLO") || !strings.Contains(out, "closest") {
		t.Errorf("want the closest candidate and what it misses by:\n%s", out)
	}
}

func TestPlanBadInput(t *testing.T) {
	withStandIn(t)
	base := []string{"plan", "--model", "llama-3.1-70b", "--isl", "4000", "--osl", "512", "--ttft-p95", "1s", "--itl-p95", "50ms"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"zero rate", []string{"--rate", "0"}, "--rate"},
		{"negative rate", []string{"--rate", "-3"}, "--rate"},
		{"NaN rate", []string{"--rate", "NaN"}, "--rate"},
		{"absurd rate", []string{"--rate", "1e12"}, "rate"},
		{"no rate, no gpus", nil, "--gpus"},
		{"unknown gpu", []string{"--rate", "1", "--gpu", "h100-sxn"}, "did you mean"},
		{"unknown link", []string{"--rate", "1", "--link", "ib-nrd"}, "did you mean"},
		{"bad pricing", []string{"--rate", "1", "--pricing", "reserved"}, "pricing"},
		{"bad price", []string{"--rate", "1", "--price", "h100-sxm=free"}, "--price"},
		{"price of unknown gpu", []string{"--rate", "1", "--price", "h100-sxn=2"}, "did you mean"},
		{"cached fraction 1", []string{"--rate", "1", "--cached-fraction", "1"}, "cached fraction"},
		// Found unchecked by the round-2 review: each exited 0 or named no flag.
		{"short gpu name", []string{"--rate", "1", "--gpu", "l5"}, `unknown gpu "l5"; did you mean l4`},
		{"unknown model", []string{"--rate", "1", "--model", "llama-3.1-7b"}, "did you mean llama-3.1-70b"},
		{"NaN ttft", []string{"--rate", "1", "--ttft-p95", "NaN"}, `--ttft-p95: duration "NaN" is not a finite number`},
		{"NaN isl", []string{"--rate", "1", "--isl", "NaN"}, `plan: --isl NaN: count "NaN" is not a finite number`},
		{"absurd isl", []string{"--rate", "1", "--isl", "1e12"}, "--input-tokens 1000000000000 is out of range: want 1 to 100,000,000"},
		{"zero osl", []string{"--rate", "1", "--osl", "0"}, "--output-tokens 0 is out of range: want 1 to 100,000,000"},
		{"absurd rate named", []string{"--rate", "1e12"}, "--rate 1e12: must be above 0 and at most 1,000,000 requests per second"},
		{"negative frontend", []string{"--rate", "1", "--frontend-ms", "-1"}, "plan: --frontend-ms -1 is out of range: want 0 to 3,600,000 ms"},
		{"zero top", []string{"--rate", "1", "--top", "0"}, "plan: --top 0 is out of range: want 1 to 100 candidates"},
		{"absurd verify", []string{"--rate", "1", "--verify", "1e9"}, "plan: --verify 1000000000 is out of range: want 0 to 100 candidates"},
		{"few sim requests", []string{"--rate", "1", "--sim-requests", "10"}, "plan: --sim-requests 10 is out of range: want 100 to 1,000,000 requests"},
		{"bad format", []string{"--rate", "1", "-o", "yml"}, `plan: -o "yml" is not a format; use one of table, json, markdown`},
		{"bad kv dtype", []string{"--rate", "1", "--kv-cache-dtype", "fp9"}, "did you mean fp8"},
		{"bad weight dtype", []string{"--rate", "1", "--weight-dtype", "fp9"}, "--weight-dtype"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := kvplan(t, append(append([]string{}, base...), tc.args...)...)
			if code != 2 || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, flag, val string }{{"zero ttft", "--ttft-p95", "0"}, {"negative itl", "--itl-p95", "-5ms"}, {"zero isl", "--isl", "0"}} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"plan", "--model", "llama-3.1-70b", "--isl", "4000", "--osl", "512", "--ttft-p95", "1s", "--itl-p95", "50ms", "--rate", "1", tc.flag, tc.val}
			if _, errs, code := kvplan(t, args...); code != 2 {
				t.Errorf("exit %d (%s), want 2", code, errs)
			}
		})
	}
}

func TestPlanWritePlanPassesCheck(t *testing.T) {
	withStandIn(t)
	for _, tc := range []struct {
		name string
		args []string
		mode string
	}{
		{"aggregated", exampleArgs, "aggregated"},
		// A tighter ITL at twice the rate: disaggregation wins on the stand-in.
		{"disaggregated", append(append([]string{}, exampleArgs...), "--rate", "40", "--itl-p95", "35ms"), "disaggregated"},
		{"prefixes", append(append([]string{}, exampleArgs...), "--prefixes", "20", "--prefix-tokens", "3000"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "plan.toml")
			_, errs, code := kvplan(t, append(append([]string{}, tc.args...), "--write-plan", path, "--verify", "0")...)
			if code != 0 {
				t.Fatalf("plan: exit %d: %s", code, errs)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if tc.mode != "" && !strings.Contains(string(data), `role = "`+map[string]string{"aggregated": "aggregated", "disaggregated": "prefill"}[tc.mode]+`"`) {
				t.Fatalf("want a %s plan:\n%s", tc.mode, data)
			}
			out, errs, code := kvplan(t, "check", path)
			if code != 0 {
				t.Fatalf("check of the written plan: exit %d\n%s\n%s\n%s", code, data, out, errs)
			}
			// Twice the rate on the same pools: check's capacity figures (the
			// same as plan's) say which pool to grow.
			doubled := regexp.MustCompile(`request_rate = ([0-9.]+)`).ReplaceAllStringFunc(string(data), func(m string) string {
				v, _ := strconv.ParseFloat(strings.TrimPrefix(m, "request_rate = "), 64)
				return "request_rate = " + strconv.FormatFloat(2*v, 'f', -1, 64)
			})
			over := filepath.Join(t.TempDir(), "over.toml")
			if err := os.WriteFile(over, []byte(doubled), 0o644); err != nil {
				t.Fatal(err)
			}
			out, _, code = kvplan(t, "check", over)
			if code != 1 || !strings.Contains(out, "pool-capacity-exceeded") || !strings.Contains(out, "cannot carry workload.request_rate") {
				t.Errorf("check at twice the rate: exit %d, want 1 with pool-capacity-exceeded from the capacity figures:\n%s", code, out)
			}
			// A second write without --force is refused.
			if _, _, code := kvplan(t, append(append([]string{}, tc.args...), "--write-plan", path, "--verify", "0")...); code != 2 {
				t.Errorf("overwrite without --force: exit %d, want 2", code)
			}
		})
	}
}

// TestPlanGolden fixes every output format of kvplan plan (on the stand-in
// engine model, so the goldens change only with the search).
func TestPlanGolden(t *testing.T) {
	withStandIn(t)
	small := []string{"plan", "--model", "llama-3.1-8b", "--isl", "2000", "--osl", "256", "--rate", "8",
		"--ttft-p95", "500ms", "--itl-p95", "30ms", "--gpu", "h100-sxm,l40s", "--link", "ib-ndr", "--verify", "2", "--sim-requests", "400"}
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"plan.table", small, 0},
		{"plan.json", append(append([]string{}, small...), "-o", "json"), 0},
		{"plan.md", append(append([]string{}, small...), "-o", "markdown"), 0},
		{"plan-explain.table", append(append([]string{}, small...), "--explain", "--verify", "0"), 0},
		{"plan-maxrate.table", []string{"plan", "--model", "llama-3.1-70b", "--isl", "4000", "--osl", "512", "--gpus", "16",
			"--ttft-p95", "1s", "--itl-p95", "50ms", "--gpu", "h100-sxm", "--link", "ib-ndr", "--verify", "0"}, 0},
		{"plan-unmet.table", []string{"plan", "--model", "llama-3.1-70b", "--isl", "4000", "--osl", "512", "--rate", "20",
			"--ttft-p95", "100ms", "--itl-p95", "50ms", "--gpu", "h100-sxm", "--link", "ib-ndr", "--verify", "0"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := kvplan(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.code, errOut)
			}
			golden(t, c.name, out)
		})
	}
}

// TestPlanPlot golden-tests the data of the Pareto plot (not its pixels)
// and checks that --plot writes an SVG.
func TestPlanPlot(t *testing.T) {
	withStandIn(t)
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := cat.Model("llama-3.1-8b")
	g, _ := cat.GPU("h100-sxm")
	l, _ := cat.Link("ib-ndr")
	e, _ := cat.Engine("vllm")
	q := capacity.Query{Model: m, Engine: e, InputTokens: 2000, OutputTokens: 256, RatePerS: 8, TTFTP95MS: 500, ITLP95MS: 30,
		GPUOptions: []*catalog.GPU{g}, Links: []*catalog.Link{l}, Path: perf.Frontend(13), Timers: capacitytest.Timers}
	res, err := capacity.Search(q)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(paretoPlot(res, q.Pareto(res)), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "plan-pareto.json", string(data)+"\n")

	path := filepath.Join(t.TempDir(), "pareto.svg")
	args := []string{"plan", "--model", "llama-3.1-8b", "--isl", "2000", "--osl", "256", "--rate", "8", "--ttft-p95", "500ms", "--itl-p95", "30ms",
		"--gpu", "h100-sxm", "--link", "ib-ndr", "--verify", "0", "--plot", path}
	if _, errs, code := kvplan(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), "<svg") || !strings.Contains(string(svg), "disaggregated Pareto front") {
		t.Errorf("--plot wrote no Pareto SVG:\n%.300s", svg)
	}
}
