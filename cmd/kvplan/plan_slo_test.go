package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/planner/capacity/capacitytest"
	"github.com/kvplan/kvplan/workload"
)

// smallSLO is the golden question of TestPlanGolden with every kind of target.
var smallSLO = []string{"plan", "--model", "llama-3.1-8b", "--isl", "2000", "--osl", "256", "--rate", "8",
	"--ttft-p95", "500ms", "--ttft-p99", "800ms", "--itl-p99", "40ms", "--tpot", "25ms", "--tpot-p99", "30ms", "--e2e-p95", "8s", "--goodput", "0.9",
	"--gpu", "h100-sxm,l40s", "--verify", "2", "--sim-requests", "400"}

func TestPlanSLOGolden(t *testing.T) {
	withStandIn(t)
	lengths := []string{"plan", "--model", "llama-3.1-8b", "--lengths", "../../testdata/sim/conversation_excerpt.jsonl", "--rate", "2",
		"--ttft-p95", "5s", "--tpot", "50ms", "--gpu", "h100-sxm", "--verify", "1", "--sim-requests", "400", "--top", "2"}
	day := []string{"plan", "--model", "llama-3.1-70b", "--isl", "4000", "--osl", "512", "--rate-profile", "../../testdata/plan/day-profile.csv",
		"--ttft-p95", "1s", "--itl-p95", "50ms", "--tpot", "45ms", "--gpu", "h100-sxm", "--verify", "1", "--sim-requests", "400", "--top", "2"}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"plan-slo.table", smallSLO},
		{"plan-slo.json", append(append([]string{}, smallSLO...), "-o", "json")},
		{"plan-lengths.table", lengths},
		{"plan-day.table", day},
		{"plan-day.json", append(append([]string{}, day...), "-o", "json")},
		{"plan-bursty.table", append(append([]string{}, smallSLO[:len(smallSLO)-4]...), "--burstiness", "0.25", "--verify", "0")},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := kvplan(t, c.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, c.name, out)
		})
	}
}

// TestPlanSLOJSON: best and best.simulated carry every figure the issue
// names, and the workload its length percentiles.
func TestPlanSLOJSON(t *testing.T) {
	withStandIn(t)
	out, errs, code := kvplan(t, append(append([]string{}, smallSLO...), "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Best     map[string]any `json:"best"`
		Workload map[string]any `json:"workload"`
		SLO      map[string]any `json:"slo"`
		Figures  []map[string]string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	keys := []string{"tpot_mean_ms", "tpot_p99_ms", "ttft_p50_ms", "ttft_p90_ms", "ttft_p95_ms", "ttft_p99_ms",
		"itl_p50_ms", "itl_p90_ms", "itl_p95_ms", "itl_p99_ms", "e2e_p95_ms", "goodput"}
	sim, _ := res.Best["simulated"].(map[string]any)
	for _, k := range keys {
		if _, ok := res.Best[k]; !ok {
			t.Errorf("best lacks %s", k)
		}
		if _, ok := sim[k]; !ok {
			t.Errorf("best.simulated lacks %s", k)
		}
	}
	if sim["meets_slo"] != true {
		t.Errorf("best.simulated: meets_slo %v, misses %v", sim["meets_slo"], sim["misses"])
	}
	for _, k := range []string{"mean", "p50", "p95", "p99", "max"} {
		if _, ok := res.Workload["input_tokens"].(map[string]any)[k]; !ok {
			t.Errorf("workload.input_tokens lacks %s", k)
		}
	}
	if res.SLO["tpot_mean_ms"] != 25.0 || res.SLO["goodput"] != 0.9 || len(res.Figures) < 12 {
		t.Errorf("slo %v, %d figures", res.SLO, len(res.Figures))
	}
}

func TestPlanSLOBadInput(t *testing.T) {
	withStandIn(t)
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "none.csv")
	os.WriteFile(empty, []byte("input,output\n0,0\n"), 0o644)
	base := []string{"plan", "--model", "llama-3.1-8b", "--isl", "2000", "--osl", "256", "--gpu", "h100-sxm", "--verify", "0"}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown percentile", []string{"--rate", "8", "--ttft-p97", "500ms"}, 2, "unknown flag --ttft-p97; did you mean --ttft-p9"},
		{"unknown slo name", []string{"--rate", "8", "--tpt", "40ms"}, 2, "did you mean --tpot?"},
		{"no slo", []string{"--rate", "8"}, 2, "no SLO given: set at least one target"},
		{"goodput 0", []string{"--rate", "8", "--ttft-p95", "500ms", "--goodput", "0"}, 2, "--goodput 0: want a share of requests in (0, 1]"},
		{"goodput above 1", []string{"--rate", "8", "--ttft-p95", "500ms", "--goodput", "1.5"}, 2, "--goodput 1.5: want a share of requests in (0, 1]"},
		{"goodput alone", []string{"--rate", "8", "--itl-p95", "40ms", "--goodput", "0.9"}, 2, "give a TTFT, TPOT or E2E target with it"},
		{"bad tpot", []string{"--rate", "8", "--tpot", "-3ms"}, 2, "--tpot: duration \"-3ms\" is negative"},
		{"lengths with isl", []string{"--rate", "8", "--ttft-p95", "1s", "--lengths", "../../testdata/workload/lengths.csv"}, 2, "give --lengths or --isl and --osl"},
		{"no usable rows", []string{"--isl", "", "--rate", "8", "--ttft-p95", "1s", "--lengths", empty}, 2, "no usable rows: looked for rows under the header's input_tokens and output_tokens"},
		{"range ratio 1", []string{"--rate", "8", "--ttft-p95", "1s", "--isl-range-ratio", "1"}, 2, "--isl-range-ratio 1: want a ratio in [0, 1)"},
		{"burstiness 0", []string{"--rate", "8", "--ttft-p95", "1s", "--burstiness", "0"}, 2, "--burstiness 0: want a gamma shape above 0"},
		{"trace arrivals without trace", []string{"--rate", "8", "--ttft-p95", "1s", "--arrivals", "trace"}, 2, "arrivals from a trace need a lengths file with timestamps"},
		{"bad arrivals", []string{"--rate", "8", "--ttft-p95", "1s", "--arrivals", "possion"}, 2, "did you mean poisson"},
		{"kv routing without hashes", []string{"--rate", "8", "--ttft-p95", "1s", "--prefix-routing", "kv"}, 2, "the workload has no prefix hashes"},
		{"profile negative", []string{"--ttft-p95", "1s", "--rate-profile", "../../testdata/plan/bad-negative.csv"}, 2, "bad-negative.csv:3: time \"-1\": negative"},
		{"profile order", []string{"--ttft-p95", "1s", "--rate-profile", "../../testdata/plan/bad-order.csv"}, 2, "bad-order.csv:4: time 01:00 is not after the previous row's 02:00"},
		{"profile and rate", []string{"--rate", "8", "--ttft-p95", "1s", "--rate-profile", "../../testdata/plan/day-profile.csv"}, 2, "give --rate-profile, --rate or --gpus"},
		{"storage link without profile", []string{"--rate", "8", "--ttft-p95", "1s", "--storage-link", "100gbe"}, 2, "go with --rate-profile"},
		{"unknown storage link", []string{"--ttft-p95", "1s", "--rate-profile", "../../testdata/plan/day-profile.csv", "--storage-link", "100gb"}, 2, "did you mean"},
		{"peak unmet", []string{"--ttft-p95", "5ms", "--rate-profile", "../../testdata/plan/day-profile.csv"}, 1, "the peak period, 12:00 at 42 requests/s, has no deployment that meets the SLO"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{}, base...), c.args...)
			if c.args[0] == "--isl" { // no lengths from the flags
				args = append([]string{"plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--verify", "0"}, c.args[2:]...)
			}
			out, errs, code := kvplan(t, args...)
			if code != c.code || !strings.Contains(out+errs, c.want) {
				t.Errorf("exit %d, %q; want %d and %q", code, out+errs, c.code, c.want)
			}
		})
	}
}

// TestPlanDeterministic: the same flags and seed give the same bytes, with
// a length distribution drawn, bursty arrivals and a day profile.
func TestPlanDeterministic(t *testing.T) {
	withStandIn(t)
	args := []string{"plan", "--model", "llama-3.1-8b", "--isl", "2000", "--isl-range-ratio", "0.5", "--osl", "256", "--burstiness", "0.5",
		"--rate-profile", "../../testdata/plan/day-profile.csv", "--ttft-p95", "800ms", "--tpot", "30ms", "--gpu", "h100-sxm", "--verify", "1",
		"--sim-requests", "300", "-o", "json"}
	a, _, ca := kvplan(t, args...)
	b, _, cb := kvplan(t, args...)
	if ca != 0 || a != b {
		t.Errorf("two runs differ (exit %d)", ca)
	}
	_ = cb
}

// TestPlanPlotData golden-tests the data of the day and latency plots.
func TestPlanPlotData(t *testing.T) {
	withStandIn(t)
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := cat.Model("llama-3.1-70b")
	g, _ := cat.GPU("h100-sxm")
	e, _ := cat.Engine("vllm")
	q := capacity.Query{Model: m, Engine: e, InputTokens: 4000, OutputTokens: 512, TTFTP95MS: 1000, ITLP95MS: 50,
		GPUOptions: []*catalog.GPU{g}, Path: perf.Frontend(13), Timers: capacitytest.Timers}
	q.SLO.TPOTMeanMS = 45
	p, err := workload.ReadProfile("../../testdata/plan/day-profile.csv")
	if err != nil {
		t.Fatal(err)
	}
	res, err := capacity.PlanDay(q, p)
	if err != nil || res.DayPlan == nil {
		t.Fatal(err)
	}
	q.RatePerS = p.Periods[p.Peak()].RatePerS
	if err := q.Check(); err != nil {
		t.Fatal(err)
	}
	if err := q.Verify(res, 1, 300, 1); err != nil {
		t.Fatal(err)
	}
	plots := append(dayPlots(res.Model, res.DayPlan), latencyPlots(res.Best, q.SLO)...)
	data, err := json.MarshalIndent(plots, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "plan-day-plot.json", string(data)+"\n")
	svg := filepath.Join(t.TempDir(), "day.svg")
	if _, errs, code := kvplan(t, "plan", "--model", "llama-3.1-70b", "--isl", "4000", "--osl", "512", "--rate-profile", "../../testdata/plan/day-profile.csv",
		"--ttft-p95", "1s", "--tpot", "45ms", "--gpu", "h100-sxm", "--verify", "0", "--plot", svg); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, _ := os.ReadFile(svg)
	if !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "GPUs planned") || !strings.Contains(string(b), "TTFT by percentile") {
		t.Errorf("--plot wrote no day SVG:\n%.300s", b)
	}
}

// TestCheckSLOKeys: a plan file's [slo] takes every target, and check holds
// the pools to them through the same evaluation as plan.
func TestCheckSLOKeys(t *testing.T) {
	withStandIn(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.toml")
	args := append(append([]string{}, exampleArgs...), "--tpot", "38ms", "--verify", "0", "--write-plan", path)
	if _, errs, code := kvplan(t, args...); code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "tpot_mean_ms = 38.0") {
		t.Fatalf("the written plan lacks the TPOT target:\n%s", data)
	}
	if out, errs, code := kvplan(t, "check", path); code != 0 {
		t.Fatalf("check of the written plan: exit %d\n%s%s", code, out, errs)
	}
	// A tighter mean TPOT than the pools give: pool-capacity-exceeded, saying the target.
	tight := strings.Replace(string(data), "tpot_mean_ms = 38.0", "tpot_mean_ms = 20.0", 1)
	os.WriteFile(path, []byte(tight), 0o644)
	out, _, code := kvplan(t, "check", path, "-o", "json")
	if code != 1 || !strings.Contains(out, "pool-capacity-exceeded") || !strings.Contains(out, "TPOT mean ≤ 20 ms") {
		t.Errorf("check with TPOT mean ≤ 20 ms: exit %d:\n%s", code, out)
	}
	for _, c := range []struct{ slo, want string }{
		{"ttft_ms = 500\nttft_p95_ms = 400\n", "slo.ttft_p95_ms: 400 and ttft_ms = 500 name the same target (the 95th percentile): give one"},
		{"ttft_p97_ms = 500\n", "slo.ttft_p97_ms: unknown SLO key; did you mean"},
		{"goodput = 1.5\nttft_ms = 500\n", "slo.goodput: 1.5: want a share of requests in (0, 1]"},
	} {
		bad := strings.SplitN(string(data), "[slo]", 2)[0] + "[slo]\n" + c.slo
		os.WriteFile(path, []byte(bad), 0o644)
		_, errs, code := kvplan(t, "check", path)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("[slo] %q: exit %d, %q; want 2 and %q", c.slo, code, errs, c.want)
		}
	}
}

// TestMaxRateBacksOffToTheSimulation: issue 27's question, the highest rate
// DeepSeek-V3 sustains on two 8-GPU H100 nodes. At the analytic highest rate
// ITL p95 meets 50 ms because fewer than 5% of the gaps carry a prefill
// chunk (~213 ms); the simulation sees a few more and misses. The answer is
// the same deployment at a rate both meet, said in a note.
func TestMaxRateBacksOffToTheSimulation(t *testing.T) {
	out, errOut, code := kvplan(t, "plan", "--model", "deepseek-v3", "--isl", "2000", "--osl", "500", "--gpus", "16", "--gpu", "h100-sxm",
		"--link", "ib-ndr", "--ttft-p95", "2s", "--itl-p95", "50ms", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Best struct {
			RatePerS float64 `json:"requests_per_s"`
			Capacity float64 `json:"requests_per_s_capacity"` // the analytic highest rate
			Pools    []struct {
				Layout string `json:"layout"`
			} `json:"pools"`
			Simulated struct {
				MeetsSLO bool    `json:"meets_slo"`
				ITLP95MS float64 `json:"itl_p95_ms"`
			} `json:"simulated"`
		} `json:"best"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	b := res.Best
	if len(b.Pools) != 1 || b.Pools[0].Layout != "tp1 dp16 ep16" {
		t.Fatalf("best pools %+v, want one tp1 dp16 ep16 worker", b.Pools)
	}
	if !b.Simulated.MeetsSLO || b.Simulated.ITLP95MS > 50*(1+capacity.SimulatedWithin) {
		t.Errorf("best's simulation misses: %+v", b.Simulated)
	}
	var note string
	for _, n := range res.Notes {
		if strings.Contains(n, "the rate given is the highest the simulation verifies") {
			note = n
		}
	}
	if note == "" {
		t.Fatalf("no back-off note in %q", res.Notes)
	}
	if b.RatePerS < b.Capacity/2 || b.RatePerS >= b.Capacity {
		t.Errorf("rate %g: want below the analytic highest rate %g requests/s, and not below half of it", b.RatePerS, b.Capacity)
	}
}
