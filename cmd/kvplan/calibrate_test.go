package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const benchTD = "../../testdata/benchresults/"

// TestPerfAgainstGolden: perf --against prints, per run, every figure the
// file measured beside the prediction.
func TestPerfAgainstGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"perf-against.table", []string{"perf", "--against", benchTD + "vllm/h200sxm-8x_qwen3-32b_tp8dp1_isl4096-osl128_c100.json", "--gpu", "h200", "--tp", "8"}},
		{"perf-against.json", []string{"perf", "--against", benchTD + "vllm/h200sxm-8x_qwen3-32b_tp8dp1_isl4096-osl128_c100.json", "--gpu", "h200", "--tp", "8", "-o", "json"}},
		{"perf-against-closed.md", []string{"perf", "--against", benchTD + "aiperf/dynamo-profiler-cmp_qwen3-32b_trtllm-disagg-1p-tp1-1d-tp2_conc4.csv",
			"--model", "qwen3-32b", "--gpu", "h100-sxm", "--tp", "2", "--engine", "trtllm", "--concurrency", "4", "-o", "markdown"}},
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

// TestPerfAgainstJSON: the fields, and measured values exactly the
// file's (h200sxm-8x_qwen3-32b…_c100.json: "mean_ttft_ms": 2346.6874921135604,
// "p99_tpot_ms": 41.55569749759643, "output_throughput": 2226.8141050820955).
func TestPerfAgainstJSON(t *testing.T) {
	out, errOut, code := kvplan(t, "perf", "--against", benchTD+"vllm/h200sxm-8x_qwen3-32b_tp8dp1_isl4096-osl128_c100.json", "--gpu", "h200", "--tp", "8", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Against struct {
			Runs []struct {
				Measured, Predicted, Error map[string]float64
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Against.Runs) != 1 {
		t.Fatalf("%d runs", len(doc.Against.Runs))
	}
	r := doc.Against.Runs[0]
	for k, want := range map[string]float64{"ttft_ms": 2346.6874921135604, "tpot_ms_p99": 41.55569749759643, "output_tokens_per_s": 2226.8141050820955} {
		if r.Measured[k] != want {
			t.Errorf("measured %s = %v, want the file's %v", k, r.Measured[k], want)
		}
	}
	for _, k := range []string{"ttft_ms", "ttft_ms_p50", "ttft_ms_p99", "tpot_ms", "itl_ms", "e2e_ms", "requests_per_s", "output_tokens_per_s"} {
		p, ok := r.Predicted[k]
		if !ok || !(p > 0) {
			t.Errorf("predicted %s = %v", k, p)
			continue
		}
		if e := r.Error[k]; e != p/r.Measured[k]-1 {
			t.Errorf("error %s = %v, want predicted / measured − 1 = %v", k, e, p/r.Measured[k]-1)
		}
	}
	if _, ok := r.Predicted["ttft_ms_p95"]; ok {
		t.Error("a figure the file does not measure is predicted")
	}
}

// TestPerfAgainstBadInput: what the file does not state comes from flags;
// a flag contradicting the file names both.
func TestPerfAgainstBadInput(t *testing.T) {
	sgl := benchTD + "sglang/h100sxm-8x_qwen3-8b_tp4dp2_isl1024-osl128_c100_per-request_excerpt.jsonl"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--against", sgl, "--gpu", "h100-sxm", "--tp", "2"}, "--tensor-parallel-size 2 contradicts the file, whose tp is 4"},
		{[]string{"--against", sgl, "--gpu", "h100-sxm", "--model", "llama-3.1-8b"}, `--model llama-3.1-8b contradicts the file, whose model is "/workspace/qwen-3-8b"`},
		{[]string{"--against", sgl, "--gpu", "h100-sxm", "--model", "qwen3-8b", "--engine", "vllm"}, "--engine vllm contradicts the file, whose engine is sglang"},
		{[]string{"--against", sgl, "--gpu", "h100-sxm", "--model", "qwen3-8b", "--concurrency", "8"}, "--concurrency 8 contradicts the file, whose concurrency is 100"},
		{[]string{"--against", sgl, "--gpu", "h100-sxm", "--model", "qwen3-8b", "--isl", "1024"}, "--input-tokens 1024 contradicts the file, whose mean input length is 505.6 tokens"},
		{[]string{"--against", sgl, "--model", "qwen3-8b"}, "the file does not say which GPU ran it: give --gpu"},
		{[]string{"--against", benchTD + "vllm/l40s-4x_llama-3.2-3b-instruct_4x1gpu_isl1000-osl500_rates10-30-inf.jsonl"}, `the file's model: unknown model "meta-llama/Llama-3.2-3B-Instruct"; did you mean llama-3.2-1b`},
		{[]string{"--against", benchTD + "aiperf/dynamo-profiler-cmp_qwen3-32b_trtllm-disagg-1p-tp1-1d-tp2_conc4.csv", "--model", "qwen3-32b", "--gpu", "h100-sxm"},
			"the file does not state the load: give --concurrency N"},
		{[]string{"--against", benchTD + "README.md"}, "not a benchmark result file kvplan reads"},
		{[]string{"--against", benchTD + "vllm/missing.json"}, "no such file"},
		{[]string{"--against", sgl, "--sweep", "concurrency=1,2"}, "--sweep and --against"},
		{[]string{"--model", "qwen3-8b", "--gpu", "l4", "--isl", "10", "--osl", "10", "--workers", "2"}, "--workers describes a benchmark result file: give --against FILE too"},
		{[]string{"--against", sgl, "--gpu", "h100-sxm", "--model", "qwen3-8b", "--workers", "0"}, "--workers 0"},
	} {
		_, errOut, code := kvplan(t, append([]string{"perf"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 with %q", c.args, code, errOut, c.want)
		}
	}
}

// TestCalibrateWritesACatalog: calibrate's file loads with --catalog, and
// perf, plan and check then say their figures rest on it (its files and
// date).
func TestCalibrateWritesACatalog(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "calib.toml")
	file := benchTD + "vllm/h100sxm-8x_qwen3-8b_tp8dp1_isl2048-osl128_c50_per-request_excerpt.json"
	stdout, errOut, code := kvplan(t, "calibrate", file, "--gpu", "h100-sxm", "--tp", "8", "--out", out, "--calibrated-at", "2026-01-31")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(stdout, "Calibrated h100-sxm × vllm × bf16 for qwen3-8b on 1 run(s)") {
		t.Errorf("calibrate printed:\n%s", stdout)
	}
	// Not again without --force.
	if _, errOut, code := kvplan(t, "calibrate", file, "--gpu", "h100-sxm", "--tp", "8", "--out", out); code != ExitUsage || !strings.Contains(errOut, "exists; add --force") {
		t.Errorf("second run: exit %d, %q", code, errOut)
	}
	want := "calibrated by kvplan calibrate on 2026-01-31 from " + file
	perf, errOut, code := kvplan(t, "perf", "--model", "qwen3-8b", "--gpu", "h100-sxm", "--tp", "8", "--isl", "2048", "--osl", "128", "--concurrency", "50", "--catalog", out)
	if code != ExitOK || !strings.Contains(perf, "The figures rest on a calibration: "+want) {
		t.Errorf("perf --catalog (exit %d, %s):\n%s", code, errOut, perf)
	}
	pj, _, _ := kvplan(t, "perf", "--model", "qwen3-8b", "--gpu", "h100-sxm", "--tp", "8", "--isl", "2048", "--osl", "128", "--concurrency", "50", "--catalog", out, "-o", "json")
	if !strings.Contains(pj, `"calibrated_at": "2026-01-31"`) || !strings.Contains(pj, `"calibrated_from": "`+file+`"`) {
		t.Errorf("perf's JSON efficiency lacks the calibration:\n%s", pj)
	}
	plan, errOut, code := kvplan(t, "plan", "--model", "llama-3.1-70b", "--isl", "4000", "--osl", "512", "--rate", "2", "--ttft-p95", "2s", "--itl-p95", "100ms",
		"--gpu", "h100-sxm", "--verify", "0", "--catalog", out)
	if code > ExitFindings || !strings.Contains(plan, "Engine-model efficiencies h100-sxm × vllm × bf16: "+want) {
		t.Errorf("plan --catalog (exit %d, %s):\n%s", code, errOut, plan)
	}
	pjson, _, _ := kvplan(t, "plan", "--model", "llama-3.1-70b", "--isl", "4000", "--osl", "512", "--rate", "2", "--ttft-p95", "2s", "--itl-p95", "100ms",
		"--gpu", "h100-sxm", "--verify", "0", "--catalog", out, "-o", "json", "--explain")
	if !strings.Contains(pjson, `"calibrated": true`) || !strings.Contains(pjson, want) {
		t.Errorf("plan's JSON does not say it rests on the calibration")
	}
	check, errOut, code := kvplan(t, "check", "../../examples/disagg-70b-ib-ndr.toml", "--catalog", out, "--explain")
	if code > ExitFindings || !strings.Contains(check, "engine-model efficiencies h100-sxm × vllm × bf16: "+want) || strings.Count(check, "calibrated by kvplan calibrate") < 2 {
		t.Errorf("check --catalog --explain (exit %d, %s):\n%s", code, errOut, check)
	}
	shipped, _, _ := kvplan(t, "check", "../../examples/disagg-70b-ib-ndr.toml")
	if !strings.Contains(shipped, "engine-model efficiencies h100-sxm × vllm × bf16: the shipped fit") {
		t.Errorf("check without a calibration does not say it rests on the shipped fit:\n%s", shipped)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"[[efficiency]]", `gpu = "h100-sxm"`, `engine = "vllm"`, `dtype = "bf16"`, `calibrated_at = "2026-01-31"`, "rows = 1"} {
		if !strings.Contains(string(data), w) {
			t.Errorf("calib.toml lacks %q:\n%s", w, data)
		}
	}
}

// TestCalibrateGolden: the table and JSON of a calibration on the two
// trtllm-bench lengths (the other length predicted by each fit is in
// calibrate's tests).
func TestCalibrateGolden(t *testing.T) {
	dir := t.TempDir()
	files := []string{benchTD + "trtllm-bench/h100-8x_llama-3.1-70b-instruct_fp8_tp8_trt0.16_isl128-osl128_report-excerpt.txt",
		benchTD + "trtllm-bench/h100-8x_llama-3.1-70b-instruct_fp8_tp8_trt0.16_isl1024-osl1024_report-excerpt.txt"}
	for _, c := range []struct{ name, format string }{{"calibrate.table", "table"}, {"calibrate.json", "json"}} {
		out := filepath.Join(dir, "calib.toml")
		args := append(append([]string{"calibrate"}, files...), "--gpu", "h100-sxm", "--out", out, "--force", "--calibrated-at", "2026-01-31", "-o", c.format)
		stdout, errOut, code := kvplan(t, args...)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		golden(t, c.name, strings.ReplaceAll(stdout, dir, "$TMP"))
		if c.format == "table" {
			data, _ := os.ReadFile(out)
			golden(t, "calibrate.toml", string(data))
		}
	}
}

// TestCalibrateBadInput covers the command's refusals.
func TestCalibrateBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "c.toml")
	trt := benchTD + "trtllm-bench/h100-8x_llama-3.1-70b-instruct_fp8_tp8_trt0.16_isl128-osl128_report-excerpt.txt"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", out}, "give one or more benchmark result files"},
		{[]string{trt, "--gpu", "h100-sxm"}, "--out is required"},
		{[]string{trt, "--gpu", "h100-sxm", "--out", out, "--calibrated-at", "yesterday"}, `--calibrated-at "yesterday": want a date such as 2026-01-31`},
		{[]string{trt, benchTD + "vllm/h200sxm-8x_qwen3-32b_tp8dp1_isl4096-osl128_c100.json", "--gpu", "h100-sxm", "--tp", "8", "--out", out},
			"disagree on the model (llama-3.1-70b, qwen3-32b): one calibration fits one model"},
		{[]string{benchTD + "vllm/l40s-4x_llama-3.2-3b-instruct_4x1gpu_isl1000-osl500_rates10-30-inf.jsonl", "--gpu", "h100-sxm", "--out", out, "--catalog", benchTD + "catalog"},
			`--gpu h100-sxm contradicts the file, whose gpu metadata is "NVIDIA_L40S" (l40s)`},
	} {
		_, errOut, code := kvplan(t, append([]string{"calibrate"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 with %q", c.args, code, errOut, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused calibration wrote its file")
	}
}
