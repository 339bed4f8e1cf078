package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The same figure in two commands comes from one function (issue 23, item
// 1): these tests walk every pair of commands that can describe the same
// worker or deployment and compare what they print, on the real engine
// model. The expected value of each comparison is the other command's
// output, so neither side is trusted more than the other; what is checked
// is that they agree (within 1% where a search's bisection rounds).

// runJSON runs kvplan with -o json and decodes what it prints.
func runJSON(t *testing.T, want int, args ...string) map[string]any {
	t.Helper()
	out, errs, code := kvplan(t, append(args, "-o", "json")...)
	if code != want {
		t.Fatalf("kvplan %v: exit %d, want %d: %s%s", args, code, want, errs, out)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("kvplan %v: %v\n%s", args, err, out)
	}
	return v
}

// numAt reads a number at a path of keys and array indexes ("best", "pools", "0", "tp").
func numAt(t *testing.T, v any, path ...string) float64 {
	t.Helper()
	for _, k := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(x) {
				t.Fatalf("%v: no element %q", path, k)
			}
			v = x[i]
		default:
			t.Fatalf("%v: %q of a %T", path, k, v)
		}
	}
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("%v: %v is not a number", path, v)
	}
	return f
}

// checkFigures maps check -o json's figures[] by name.
func checkFigures(t *testing.T, res map[string]any) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	list, _ := res["figures"].([]any)
	for _, f := range list {
		m := f.(map[string]any)
		if v, ok := m["value"].(float64); ok { // null: unknown or unbounded
			out[m["name"].(string)] = v
		}
	}
	return out
}

func within(got, want, rel float64) bool {
	if want == 0 {
		return math.Abs(got) < 1e-9
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// samePlanCases are searches whose best is aggregated, and disaggregated.
var samePlanCases = []struct {
	name string
	args []string
	mode string
}{
	{"aggregated llama-3.1-70b", []string{"--model", "llama-3.1-70b", "--isl", "4000", "--osl", "512", "--rate", "20",
		"--ttft-p95", "1000ms", "--itl-p95", "50ms", "--gpu", "h100-sxm"}, "aggregated"},
	{"disaggregated deepseek-v3 fp8 KV", []string{"--model", "deepseek-v3", "--kv-cache-dtype", "fp8", "--isl", "8000", "--osl", "1000",
		"--rate", "1.5", "--ttft-p95", "2s", "--itl-p95", "50ms", "--gpu", "h200", "--link", "ib-ndr"}, "disaggregated"},
	// Issue 27: one worker of tp 1 × dp 16 with the experts over all 16
	// ranks, on two H100 nodes joined by ib-ndr.
	{"aggregated deepseek-v3 tp1 dp16 ep16", []string{"--model", "deepseek-v3", "--isl", "2000", "--osl", "500", "--gpus", "16",
		"--ttft-p95", "2s", "--itl-p95", "50ms", "--gpu", "h100-sxm", "--link", "ib-ndr"}, "aggregated"},
}

// TestCheckReproducesPlan: check on plan's written best reports plan's
// figures, under plan's names, within 1%.
func TestCheckReproducesPlan(t *testing.T) {
	for _, tc := range samePlanCases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "best.toml")
			res := runJSON(t, 0, append(append([]string{"plan"}, tc.args...), "--verify", "0", "--write-plan", path)...)
			best := res["best"].(map[string]any)
			if best["mode"] != tc.mode {
				t.Fatalf("best is %v, want %s (the case no longer covers its mode)", best["mode"], tc.mode)
			}
			chk := runJSON(t, 0, "check", path)
			figs := checkFigures(t, chk)
			for _, name := range []string{"ttft_p95_ms", "itl_p95_ms", "tpot_mean_ms", "transfer_ms", "requests_per_s_capacity", "usd_per_hour", "gpus"} {
				want := numAt(t, best, name)
				got, ok := figs[name]
				if !ok && want == 0 && name == "transfer_ms" {
					continue // aggregated: nothing crosses a link, and check prints no transfer
				}
				if !ok {
					t.Errorf("check's figures lack %s (plan's best: %g)", name, want)
					continue
				}
				if !within(got, want, 0.01) {
					t.Errorf("%s: check %g, plan %g (more than 1%% apart)", name, got, want)
				}
			}
			// Each pool: plan's slots and memory fraction are check's.
			pools := best["pools"].([]any)
			for i := range pools {
				role := pools[i].(map[string]any)["role"].(string)
				name := "workers"
				if role != "aggregated" {
					name = role
				}
				if got, want := figs[name+".kv_slots_tokens"], numAt(t, pools, strconv.Itoa(i), "kv_slots_per_worker"); got != want {
					t.Errorf("pool %s: check %g KV slots, plan %g", name, got, want)
				}
			}
		})
	}
}

// TestPlanPoolsAreMemoryWorkers: each pool plan prints is, for kvplan
// memory given the same worker, the same memory fraction and KV slots (the
// engine's default fraction for its version in both).
func TestPlanPoolsAreMemoryWorkers(t *testing.T) {
	for _, tc := range samePlanCases {
		t.Run(tc.name, func(t *testing.T) {
			res := runJSON(t, 0, append(append([]string{"plan"}, tc.args...), "--verify", "0")...)
			kvArgs := []string{}
			for i, a := range tc.args {
				if a == "--kv-cache-dtype" {
					kvArgs = append(kvArgs, a, tc.args[i+1])
				}
			}
			for _, key := range []string{"best_aggregated", "best_disaggregated"} {
				c, ok := res[key].(map[string]any)
				if !ok {
					continue
				}
				for i, p := range c["pools"].([]any) {
					pool := p.(map[string]any)
					at := []string{key, "pools", strconv.Itoa(i)}
					args := append([]string{"memory", "--model", tc.args[1], "--gpu", pool["gpu"].(string),
						"--tp", fmt.Sprint(numAt(t, res, append(at, "tp")...)),
						"--max-model-len", fmt.Sprint(numAt(t, res, append(at, "max_model_len")...)),
						"--max-num-batched-tokens", fmt.Sprint(numAt(t, res, append(at, "max_num_batched_tokens")...)),
						"--max-num-seqs", fmt.Sprint(numAt(t, res, append(at, "max_num_seqs")...))}, kvArgs...)
					// The worker's layout beyond tp, as memory's flags name it.
					dp := numAt(t, res, append(at, "parallel", "data_parallel_size")...)
					args = append(args, "--data-parallel-size", fmt.Sprint(dp),
						"--expert-parallel-size", fmt.Sprint(numAt(t, res, append(at, "parallel", "expert_parallel_size")...)),
						"--pipeline-parallel-size", fmt.Sprint(numAt(t, res, append(at, "parallel", "pipeline_parallel_size")...)))
					mem := runJSON(t, 0, args...)
					slots := "kv_slots_tokens"
					if dp > 1 {
						slots = "worker_kv_slots_tokens" // memory's figures are one rank's; plan's slots the worker's
					}
					if got, want := numAt(t, res, append(at, "gpu_memory_utilization")...), numAt(t, mem, "gpu_util"); got != want {
						t.Errorf("%s pool %d: plan's gpu_memory_utilization %g, memory's %g", key, i, got, want)
					}
					if got, want := numAt(t, res, append(at, "kv_slots_per_worker")...), numAt(t, mem, slots); got != want {
						t.Errorf("%s pool %d: plan's kv_slots_per_worker %g, memory's %g", key, i, got, want)
					}
				}
			}
		})
	}
}

// TestCheckPoolsAreMemoryWorkers: a plan file that leaves the memory
// fraction to the engine gets the engine's default in check, as in memory.
func TestCheckPoolsAreMemoryWorkers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.toml")
	plan := `[model]
name = "llama-3.1-70b"
tp = 4

[workload]
input_tokens = 4000
output_tokens = 512
concurrency = 8

[pools.workers]
role = "aggregated"
workers = 2
gpu = "h100-sxm"
max_model_len = 5120
`
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	figs := checkFigures(t, runJSON(t, 0, "check", path))
	mem := runJSON(t, 0, "memory", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--tp", "4", "--max-model-len", "5120")
	if got, want := figs["workers.kv_slots_tokens"], numAt(t, mem, "kv_slots_tokens"); got != want {
		t.Errorf("check %g KV slots, memory %g", got, want)
	}
}

// TestSlotFlagsAreMemoryWorkers: route's --model/--gpu slots are memory's.
func TestSlotFlagsAreMemoryWorkers(t *testing.T) {
	route := runJSON(t, 0, "route", "--workers", "2", "--model", "qwen3-0.6b", "--gpu", "l4", "--prefixes", "12", "--prefix-tokens", "1500")
	mem := runJSON(t, 0, "memory", "--model", "qwen3-0.6b", "--gpu", "l4")
	if got, want := numAt(t, route, "slots_per_worker"), numAt(t, mem, "kv_slots_tokens"); got != want {
		t.Errorf("route %g slots per worker, memory %g", got, want)
	}
}

// TestDisaggAtRateIsPlan: disagg --rate sizes the split and the aggregated
// pools on its GPUs as plan does, so its figures are those of plan's
// candidate of the same shape.
func TestDisaggAtRateIsPlan(t *testing.T) {
	slo := []string{"--ttft-p95", "2s", "--itl-p95", "50ms"}
	res := runJSON(t, 0, append([]string{"plan", "--model", "deepseek-v3", "--kv-cache-dtype", "fp8", "--isl", "8000", "--osl", "1000",
		"--rate", "1.5", "--gpu", "h200", "--link", "ib-ndr", "--verify", "0"}, slo...)...)
	dis := runJSON(t, 0, append([]string{"disagg", "--model", "deepseek-v3", "--kv-cache-dtype", "fp8", "--tp", "8", "--isl", "8000", "--osl", "1000",
		"--rate", "1.5", "--prefill-gpu", "h200", "--link", "ib-ndr"}, slo...)...)
	find := func(mode string) map[string]any {
		for _, c := range res["candidates"].([]any) {
			m := c.(map[string]any)
			if m["mode"] != mode {
				continue
			}
			ok := true
			for _, p := range m["pools"].([]any) {
				pool := p.(map[string]any)
				ok = ok && pool["tp"].(float64) == 8 && pool["max_num_batched_tokens"].(float64) == 8192
			}
			if ok {
				return m
			}
		}
		t.Fatalf("plan has no %s candidate at tp 8", mode)
		return nil
	}
	for _, side := range []struct{ key, mode string }{{"split", "disaggregated"}, {"aggregated", "aggregated"}} {
		want := find(side.mode)
		for _, name := range []string{"gpus", "ttft_p95_ms", "itl_p95_ms", "tpot_mean_ms", "transfer_ms", "usd_per_hour"} {
			if got, w := numAt(t, dis, "at_load", side.key, name), numAt(t, want, name); !within(got, w, 0.01) {
				t.Errorf("%s %s: disagg %g, plan %g", side.key, name, got, w)
			}
		}
	}
}
