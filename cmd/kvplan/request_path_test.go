package main

import (
	"math"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

// TestOneRequestOneTTFT: one idle 1,500-token request of Qwen3-0.6B on an
// RTX 4090 costs the same before its worker in kvplan disagg, perf,
// simulate and plan, on either request path, and each command's TTFT is
// that cost plus the same prefill (within 2%: simulate's and plan's
// iteration boundaries differ from perf's by a fraction of a millisecond).
//
// By hand, from the shipped vLLM entry: direct costs request_ms +
// 1,500 × request_us_per_token / 1000 (5.041 + 1,500 × 0.0029358 =
// 9.445 ms today); the frontend path costs --frontend-ms (13 by default,
// FACTS §5), and --frontend-ms 26 moves every TTFT by exactly 13 ms.
func TestOneRequestOneTTFT(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	eff, err := cat.EfficiencyFor("rtx4090", "vllm", "bf16") // the entry the engine model takes
	if err != nil {
		t.Fatal(err)
	}
	direct := eff.RequestMS + 1500*eff.RequestUSTok/1000
	model := []string{"--model", "qwen3-0.6b"}
	for _, tc := range []struct {
		flags []string
		want  float64 // the request's cost before its worker, ms
	}{
		{nil, 13},
		{[]string{"--frontend-ms", "26"}, 26},
		{[]string{"--request-path", "direct"}, direct},
	} {
		name := strings.Join(tc.flags, " ")
		dis := runJSON(t, 0, append(append([]string{"disagg", "--link", "1gbe", "--prefill-gpu", "rtx4090", "--input-tokens", "1500"}, model...), tc.flags...)...)
		prf := runJSON(t, 0, append(append([]string{"perf", "--gpu", "rtx4090", "--isl", "1500", "--osl", "16"}, model...), tc.flags...)...)
		if tc.flags == nil { // perf's default is the direct path, as benchmarks run
			prf = runJSON(t, 0, append([]string{"perf", "--gpu", "rtx4090", "--isl", "1500", "--osl", "16", "--request-path", "frontend"}, model...)...)
		}
		sim := runJSON(t, 0, append(append([]string{"simulate", "--gpu", "rtx4090", "--synthetic", "6x1476x1", "--tail-tokens", "24", "--workers", "1",
			"--policy", "round-robin", "--output-tokens", "16"}, model...), tc.flags...)...)
		plan := runJSON(t, 0, append(append([]string{"plan", "--gpu", "rtx4090", "--isl", "1500", "--osl", "16", "--rate", "0.01", "--ttft-p95", "1s",
			"--itl-p95", "50ms", "--verify", "0", "--explain"}, model...), tc.flags...)...)

		timed := sim["timed"].(map[string]any)
		simReq := timed["frontend_ms"].(float64) + 1500*timed["frontend_ms_per_token"].(float64)
		planReq := math.NaN()
		for _, d := range plan["derivation"].([]any) {
			if d := d.(map[string]any); d["name"] == "request_ms" {
				planReq = d["value"].(float64)
			}
		}
		for cmd, got := range map[string]float64{"disagg request_ms": numAt(t, dis, "request_ms"), "perf request_overhead_ms": numAt(t, prf, "request_overhead_ms"),
			"simulate frontend_ms + 1500 × frontend_ms_per_token": simReq, "plan request_ms": planReq} {
			if math.Abs(got-tc.want) > 0.002 { // perf adds a 1 µs floor to every delay
				t.Errorf("%s: %s %.4f ms, want %.4f", name, cmd, got, tc.want)
			}
		}
		prefill := numAt(t, dis, "prefill_ms")
		ttft := tc.want + prefill
		simTTFT := sim["policies"].([]any)[0].(map[string]any)["ttft_ms"].(map[string]any)["mean"].(float64)
		for cmd, got := range map[string]float64{"disagg ttft_agg_ms": numAt(t, dis, "ttft_agg_ms"), "perf ttft_ms": numAt(t, prf, "ttft_ms"), "simulate mean TTFT": simTTFT} {
			if math.Abs(got/ttft-1) > 0.02 {
				t.Errorf("%s: %s %.3f ms, want the request's %.3f + prefill %.3f = %.3f (2%%)", name, cmd, got, tc.want, prefill, ttft)
			}
		}
		// plan's mean TTFT at 0.01 requests/s: the same, plus what is left
		// of an iteration in flight (a decode step or two at most).
		if got := numAt(t, plan, "best", "ttft_mean_ms"); got < ttft*0.98 || got > ttft+10 {
			t.Errorf("%s: plan ttft_mean_ms %.3f, want %.3f + at most an iteration in flight", name, got, ttft)
		}
	}
}

// TestRequestPathBadInput: a path kvplan does not know, and a frontend's
// cost on the direct path, are usage errors that say what to change.
func TestRequestPathBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"perf", "--model", "qwen3-0.6b", "--gpu", "rtx4090", "--isl", "100", "--osl", "10", "--request-path", "dirct"}, `--request-path "dirct": want frontend or direct; did you mean "direct"?`},
		{[]string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--request-path", "direct", "--frontend-ms", "5"}, "--frontend-ms with --request-path direct"},
		{[]string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--frontend-ms", "-1"}, "--frontend-ms -1 is out of range"},
		{[]string{"simulate", "--synthetic", "2x100x2", "--workers", "1", "--kv-slots", "1000", "--request-path", "direct"}, "--request-path is a setting of the timed simulation"},
	} {
		_, errOut, code := kvplan(t, tc.args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, ExitUsage, tc.want)
		}
	}
}
