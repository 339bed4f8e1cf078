package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const excerpt = "../../testdata/sim/conversation_excerpt.jsonl"

func TestSimulateGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		// The router experiment of FACTS §5 (the simulate issue's acceptance command).
		{"simulate-synthetic.json", []string{"simulate", "--synthetic", "12x1500x6", "--tail-tokens", "24", "--workers", "2", "--kv-slots", "14816", "--policy", "all", "-o", "json"}},
		{"simulate-synthetic.table", []string{"simulate", "--synthetic", "12x1500x6", "--workers", "2", "--kv-slots", "14816"}},
		// An open loop: Poisson arrivals at 2/s, each request 2.6 s of service, so about 5 in flight.
		{"simulate-rate.table", []string{"simulate", "--synthetic", "12x1500x6", "--workers", "2", "--kv-slots", "14816", "--rate", "2"}},
		{"simulate-trace.md", []string{"simulate", "--trace", excerpt, "--workers", "4", "--kv-slots", "200000", "--policy", "kv-aware,round-robin", "-o", "markdown"}},
		// Timed: the router experiment on the measured laptop GPU at 4 clients, all policies.
		{"simulate-gpu.table", []string{"simulate", "--synthetic", "12x1500x6", "--workers", "2", "--model", "qwen3-0.6b", "--gpu", "rtx4060-laptop", "--gpu-util", "0.38", "--enforce-eager", "--max-model-len", "4096", "--concurrency", "4"}},
		// The timed issue's acceptance command: disaggregated over 1 GbE, four transfers sharing it.
		{"simulate-disagg.json", []string{"simulate", "--model", "qwen3-0.6b", "--gpu", "rtx4090", "--synthetic", "40x3000x1", "--concurrency", "4", "--prefill-workers", "1", "--decode-workers", "1", "--link", "1gbe", "--output-tokens", "64", "--policy", "round-robin", "-o", "json"}},
		{"simulate-disagg.md", []string{"simulate", "--model", "qwen3-0.6b", "--gpu", "rtx4090", "--synthetic", "40x3000x1", "--concurrency", "4", "--prefill-workers", "1", "--decode-workers", "1", "--link", "1gbe", "--output-tokens", "64", "--policy", "round-robin", "-o", "markdown", "--explain"}},
		// Timed at the trace's timestamps, on the excerpt.
		{"simulate-timed-trace.table", []string{"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--trace", excerpt, "--workers", "4", "--policy", "kv-aware,round-robin"}},
		{"route.table", []string{"route", "--workers", "2", "--kv-slots", "14816", "--prefixes", "12", "--prefix-tokens", "1500", "--repeats", "6", "--simulate"}},
		{"route.json", []string{"route", "--workers", "2", "--kv-slots", "14816", "--prefixes", "40", "--prefix-tokens", "1500", "--repeats", "6", "-o", "json", "--explain"}},
		{"route.md", []string{"route", "--workers", "4", "--model", "qwen3-8b", "--gpu", "l4", "--prefixes", "40", "--prefix-tokens", "2000", "--repeats", "4", "-o", "markdown"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := kvplan(t, c.args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, c.name, out)
		})
	}
}

// TestSimulateRouterExperiment checks the shape FACTS §5 describes: with 12
// prefixes of ~1,500 tokens on 2 workers of 14,816 slots, KV-aware routing
// keeps every repeat cached, while load balancing (and a KV router without
// events) loses a large share of repeats to LRU eviction.
func TestSimulateRouterExperiment(t *testing.T) {
	out, errOut, code := kvplan(t, "simulate", "--synthetic", "12x1500x6", "--tail-tokens", "24", "--workers", "2", "--kv-slots", "14816", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s simulateJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	rate := map[string]float64{}
	for _, p := range s.Policies {
		if p.Requests != 72 || p.RepeatRequests != 60 { // 12 × 6 sends, 12 × 5 repeats
			t.Errorf("%s: %d requests, %d repeats; want 72, 60", p.Name, p.Requests, p.RepeatRequests)
		}
		rate[p.Name] = p.HitRate
	}
	if rate["kv-aware"] != 1 {
		t.Errorf("kv-aware hit rate %.3f, want 1: 6 prefixes × 94 blocks fit each worker's 926", rate["kv-aware"])
	}
	for _, p := range []string{"round-robin", "random", "kv-aware-no-events"} {
		if rate[p] > 0.9 || rate[p] < 0.4 {
			t.Errorf("%s hit rate %.3f: expected eviction to lose a large share (working set 1,128 blocks > 926)", p, rate[p])
		}
	}
	if rate["kv-aware-no-events"] != rate["least-loaded"] {
		t.Errorf("kv-aware-no-events %.3f should route exactly like least-loaded %.3f", rate["kv-aware-no-events"], rate["least-loaded"])
	}
	if s.CapacityBlocks != 926 { // floor(14,816 / 16)
		t.Errorf("capacity %d blocks, want 926", s.CapacityBlocks)
	}
}

// TestRouteAgreesWithSimulator: on clear-cut cases the analytic verdict and
// the simulator agree.
func TestRouteAgreesWithSimulator(t *testing.T) {
	cases := []struct {
		name     string
		prefixes string
		fitsOne  bool
	}{
		{"fits one worker", "6", true},    // 6 × 1,504 = 9,024 ≤ 14,816
		{"needs kv routing", "12", false}, // 18,048 > 14,816, 9,024 per worker under kv
	}
	for _, c := range cases {
		out, errOut, code := kvplan(t, "route", "--workers", "2", "--kv-slots", "14816", "--prefixes", c.prefixes, "--prefix-tokens", "1500", "--repeats", "6", "--simulate", "-o", "json")
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", c.name, code, errOut)
		}
		var r struct {
			FitsOneWorker bool `json:"fits_one_worker"`
			Simulated     []struct {
				Name      string `json:"name"`
				Evictions int64  `json:"evictions"`
			} `json:"simulated"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if r.FitsOneWorker != c.fitsOne {
			t.Errorf("%s: fits one worker %v, want %v", c.name, r.FitsOneWorker, c.fitsOne)
		}
		for _, s := range r.Simulated {
			evicts := s.Evictions > 0
			// Analytic "fits" means no eviction; for round-robin the working set
			// must fit one worker, for kv-aware one worker's share.
			wantEvict := !c.fitsOne && s.Name != "kv-aware"
			if evicts != wantEvict {
				t.Errorf("%s: %s evicted %d blocks; analytic verdict says eviction %v", c.name, s.Name, s.Evictions, wantEvict)
			}
		}
	}
}

func TestSimulateBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no workload", []string{"simulate", "--workers", "2", "--kv-slots", "100"}, "give one workload"},
		{"two workloads", []string{"simulate", "--synthetic", "1x16x1", "--trace", excerpt, "--kv-slots", "100"}, "give one workload"},
		{"bad spec", []string{"simulate", "--synthetic", "12x1500", "--kv-slots", "14816"}, "--synthetic"},
		{"unknown policy", []string{"simulate", "--synthetic", "12x1500x6", "--kv-slots", "14816", "--policy", "kv-awre"}, "kv-aware"},
		{"no slots", []string{"simulate", "--synthetic", "12x1500x6"}, "give the KV slots of a worker"},
		{"malformed line", []string{"simulate", "--trace", "../../testdata/sim/bad_lines.jsonl", "--kv-slots", "100000"}, "bad_lines.jsonl:"},
		{"missing trace", []string{"simulate", "--trace", "/nonexistent.jsonl", "--kv-slots", "100000"}, "--trace"},
		{"zero workers", []string{"route", "--workers", "0", "--kv-slots", "100"}, "--workers 0 is out of range: want 1 to 1,024 workers"},
		{"timed zero workers", []string{"simulate", "--synthetic", "2x64x2", "--model", "qwen3-0.6b", "--gpu", "l4", "--workers", "0"}, "--workers 0 is out of range: want 1 to 1,024 workers"},
		{"zero prefill workers", []string{"simulate", "--synthetic", "2x64x2", "--model", "qwen3-0.6b", "--gpu", "l4", "--prefill-workers", "0", "--decode-workers", "1", "--link", "1gbe"}, "--prefill-workers 0 is out of range: want 1 to 1,024 workers"},
		{"negative decode workers", []string{"simulate", "--synthetic", "2x64x2", "--model", "qwen3-0.6b", "--gpu", "l4", "--prefill-workers", "1", "--decode-workers", "-2", "--link", "1gbe"}, "--decode-workers -2 is out of range: want 1 to 1,024 workers"},
		{"no link", []string{"simulate", "--synthetic", "2x64x2", "--model", "qwen3-0.6b", "--gpu", "l4", "--prefill-workers", "1", "--decode-workers", "1"}, "needs --link"},
		{"unknown link", []string{"simulate", "--synthetic", "2x64x2", "--model", "qwen3-0.6b", "--gpu", "l4", "--prefill-workers", "1", "--decode-workers", "1", "--link", "1gbee"}, "1gbe"},
		{"workers and prefill workers", []string{"simulate", "--synthetic", "2x64x2", "--model", "qwen3-0.6b", "--gpu", "l4", "--workers", "2", "--prefill-workers", "1", "--decode-workers", "1", "--link", "1gbe"}, "leave --workers out"},
		{"model does not fit", []string{"simulate", "--synthetic", "2x64x2", "--model", "llama-3.1-70b", "--gpu", "l4", "--max-model-len", "4096"}, "leaves no room for a KV cache"},
		{"timed rate NaN", []string{"simulate", "--synthetic", "2x64x2", "--model", "qwen3-0.6b", "--gpu", "l4", "--rate", "NaN"}, "--rate NaN"},
		{"model without gpu", []string{"simulate", "--synthetic", "2x64x2", "--model", "qwen3-0.6b"}, "needs both --model and --gpu"},
		{"disagg without model", []string{"simulate", "--synthetic", "2x64x2", "--kv-slots", "1000", "--prefill-workers", "1"}, "give --model and --gpu too"},
		{"kv-slots with model", []string{"simulate", "--synthetic", "2x64x2", "--kv-slots", "1000", "--model", "qwen3-0.6b", "--gpu", "l4"}, "leave --kv-slots out"},
		{"simulate zero workers", []string{"simulate", "--synthetic", "2x64x2", "--workers", "0", "--kv-slots", "100"}, "--workers 0 is out of range: want 1 to 1,024 workers"},
		{"zero concurrency", []string{"simulate", "--synthetic", "2x64x2", "--kv-slots", "100", "--concurrency", "0"}, "--concurrency 0 is out of range: want 1 to 100,000 clients"},
		{"negative concurrency", []string{"simulate", "--synthetic", "2x64x2", "--kv-slots", "100", "--concurrency", "-3"}, "--concurrency -3 is out of range: want 1 to 100,000 clients"},
		{"zero rate", []string{"simulate", "--synthetic", "2x64x2", "--kv-slots", "100", "--rate", "0"}, "--rate 0: want a finite number of requests/s above 0"},
		{"NaN rate", []string{"simulate", "--synthetic", "2x64x2", "--kv-slots", "100", "--rate", "NaN"}, "--rate NaN"},
		{"negative rate", []string{"simulate", "--synthetic", "2x64x2", "--kv-slots", "100", "--rate", "-1"}, "--rate -1"},
		{"rate and concurrency", []string{"simulate", "--synthetic", "2x64x2", "--kv-slots", "100", "--rate", "2", "--concurrency", "2"}, "give one load"},
		{"slots and gpu", []string{"route", "--kv-slots", "100", "--gpu", "l4"}, "not both"},
		{"NaN workers", []string{"simulate", "--synthetic", "2x64x2", "--kv-slots", "100", "--workers", "NaN"}, `simulate: --workers NaN: count "NaN" is not a finite number`},
		{"NaN concurrency", []string{"simulate", "--synthetic", "2x64x2", "--kv-slots", "100", "--concurrency", "NaN"}, `simulate: --concurrency NaN: count "NaN" is not a finite number`},
		{"NaN decode workers", []string{"simulate", "--synthetic", "2x64x2", "--model", "qwen3-0.6b", "--gpu", "l4", "--prefill-workers", "1", "--decode-workers", "NaN", "--link", "1gbe"}, `--decode-workers NaN: count "NaN" is not a finite number`},
		{"negative workers", []string{"simulate", "--synthetic", "2x64x2", "--kv-slots", "100", "--workers", "-1"}, "--workers -1 is out of range: want 1 to 1,024 workers"},
		{"inf rate", []string{"simulate", "--synthetic", "2x64x2", "--kv-slots", "100", "--rate", "Inf"}, `--rate Inf: number "Inf" is not a finite number`},
		{"model does not fit at its tp", []string{"simulate", "--synthetic", "2x64x2", "--model", "deepseek-v3", "--gpu", "l4", "--tp", "8"}, "leaves no room for a KV cache"},
		{"unknown model", []string{"simulate", "--synthetic", "2x64x2", "--model", "qwen3-0.5b", "--gpu", "l4"}, "did you mean qwen3-0.6b"},
		{"unknown gpu", []string{"simulate", "--synthetic", "2x64x2", "--model", "qwen3-0.6b", "--gpu", "l5"}, "did you mean l4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := kvplan(t, c.args...)
			if code != ExitUsage || out != "" || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, c.want)
			}
		})
	}
	// --skip-bad-lines goes on and counts them.
	out, errOut, code := kvplan(t, "simulate", "--trace", "../../testdata/sim/bad_lines.jsonl", "--kv-slots", "100000", "--skip-bad-lines", "-o", "json")
	if code != ExitOK || !strings.Contains(out, `"skipped_lines":`) || strings.Contains(out, `"skipped_lines": 0`) {
		t.Fatalf("skip-bad-lines: exit %d %s %s", code, out, errOut)
	}
}

func TestSimulateDeterministic(t *testing.T) {
	args := []string{"simulate", "--synthetic", "20x700x5", "--workers", "3", "--kv-slots", "9000", "--seed", "7", "-o", "json"}
	a, _, _ := kvplan(t, args...)
	b, _, _ := kvplan(t, args...)
	if a == "" || a != b {
		t.Fatal("same inputs and seed gave different output")
	}
	c, _, _ := kvplan(t, append(args[:len(args)-4], "--seed", "8", "-o", "json")...)
	if c == a {
		t.Error("a different seed gave identical output; is the seed used?")
	}
}

// TestSimulateTimedRouterExperiment: the router experiment of FACTS §5 run
// with timing, one request at a time on the measured laptop GPU, still gives
// kv-aware all 60 repeats; and the disaggregated acceptance run shows the
// field measurement of FACTS §3, four 3,000-token transfers sharing 1 GbE
// taking about 13 s each.
func TestSimulateTimedRouterExperiment(t *testing.T) {
	out, errOut, code := kvplan(t, "simulate", "--synthetic", "12x1500x6", "--tail-tokens", "24", "--workers", "2", "--model", "qwen3-0.6b",
		"--gpu", "rtx4060-laptop", "--gpu-util", "0.38", "--enforce-eager", "--max-model-len", "4096", "--concurrency", "1", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s simulateJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Policies {
		if p.Name == "kv-aware" && (p.HitRequests != 60 || p.RepeatRequests != 60) {
			t.Errorf("timed kv-aware at concurrency 1: %d hits of %d repeats, want 60 of 60", p.HitRequests, p.RepeatRequests)
		}
		if p.Timing == nil || p.Timing.Completed != 72 {
			t.Errorf("%s: no timing or not 72 completed: %+v", p.Name, p.Timing)
		}
	}
	out, errOut, code = kvplan(t, "simulate", "--model", "qwen3-0.6b", "--gpu", "rtx4090", "--synthetic", "40x3000x1", "--concurrency", "4",
		"--prefill-workers", "1", "--decode-workers", "1", "--link", "1gbe", "--output-tokens", "64", "--policy", "round-robin", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s = simulateJSON{}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	// 3,000 tokens × 114,688 B = 344,064,000 B at 104 MB/s = 3.31 s alone;
	// four sharing: 13.2 s. The median transfer is in flight with three
	// others almost all the time.
	x := s.Policies[0].Timing.TransferMS.P50
	if x < 12000 || x > 13300 {
		t.Errorf("median transfer %v ms, want about 13,000 (4 × 3,308)", x)
	}
}
