package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/internal/goldenfile"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

// kvplan runs the CLI in-process and returns stdout, stderr and exit code.
func kvplan(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"kvplan"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("..", "..", "testdata", "golden", name), []byte(got), *update, "go test ./cmd/kvplan -update", false)
}

func TestGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"kv.table", []string{"kv", "--model", "qwen3-0.6b", "--tokens", "3000"}},
		{"kv.json", []string{"kv", "--model", "qwen3-0.6b", "--tokens", "3000", "-o", "json"}},
		{"kv.md", []string{"kv", "--model", "qwen3-0.6b", "--tokens", "3000", "-o", "markdown"}},
		{"kv-sliding-tp.table", []string{"kv", "--model", "gpt-oss-120b", "--tokens", "8000", "--tp", "4", "--kv-dtype", "fp8", "--explain"}},
		{"disagg.table", []string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe"}},
		{"disagg.json", []string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--input-tokens", "3000", "-o", "json"}},
		{"disagg.md", []string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--concurrency", "4", "-o", "markdown"}},
		{"disagg-explain.table", []string{"disagg", "--model", "llama-3.1-70b", "--tp", "4", "--link", "ib-ndr", "--concurrency", "8", "--explain"}},
		{"disagg-explain.json", []string{"disagg", "--model", "qwen3-0.6b", "--same-gpu", "--prefill-ms", "80", "--explain", "-o", "json"}},
		{"disagg-custom-link.json", []string{"disagg", "--model", "qwen3-0.6b", "--throughput", "25GB/s", "--latency", "20us", "--input-tokens", "3000", "-o", "json"}},
		{"models.table", []string{"models", "list"}},
		{"links.json", []string{"links", "list", "-o", "json"}},
		{"gpus.md", []string{"gpus", "list", "-o", "markdown"}},
		{"model-show.table", []string{"models", "show", "Qwen/Qwen3-0.6B"}},
		// The OOM-killed prefill worker of FACTS §4: a deny-level finding, exit 1 like check.
		{"memory.table", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "rtx4060-laptop", "--gpu-util", "0.38", "--enforce-eager", "--max-model-len", "4096", "--limit", "3584Mi", "--kv-buffer", "cpu", "--concurrency", "4", "--input-tokens", "2371"}},
		{"memory.json", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "rtx4060-laptop", "--gpu-util", "0.38", "--enforce-eager", "--max-model-len", "4096", "-o", "json"}},
		{"rules-test.junit", []string{"rules", "test", "../../testdata/rules/tests", "-o", "junit"}},
		{"memory.md", []string{"memory", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--tp", "4", "--max-model-len", "32768", "-o", "markdown", "--explain"}},
		{"memory-pp-int4.json", []string{"memory", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--pp", "2", "--quantization", "int4", "--engine-version", "0.19.0", "--max-model-len", "8192", "-o", "json", "--explain"}},
		{"memory-sglang.table", []string{"memory", "--model", "qwen3-32b", "--gpu", "h200", "--engine", "sglang", "--max-model-len", "32768", "--cpu-offload-cache", "20Gi", "--limit", "24Gi"}},
		{"memory-dp-ep.json", []string{"memory", "--model", "deepseek-v3", "--gpu", "h200", "--tp", "1", "--data-parallel-size", "8", "--expert-parallel-size", "8", "--redundant-experts", "32", "--engine", "trtllm", "--max-model-len", "4096", "-o", "json", "--explain"}},
		{"memory-trtllm.md", []string{"memory", "--model", "llama-3.1-70b", "--gpu", "b200", "--engine", "trtllm", "--tp", "2", "--max-model-len", "32768", "-o", "markdown", "--explain"}},
	}
	wantCode := map[string]int{"memory.table": ExitFindings} // the others exit 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := kvplan(t, c.args...)
			if want := wantCode[c.name]; code != want {
				t.Fatalf("exit %d, want %d; stderr: %s", code, want, errOut)
			}
			golden(t, c.name, out)
		})
	}
}

// TestDoneWhen is the core issue's acceptance command.
func TestDoneWhen(t *testing.T) {
	out, errOut, code := kvplan(t, "disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--input-tokens", "3000", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`"kv_bytes_per_token": 114688`,                                                                          // 28 × 2 × 8 × 128 × 2 (FACTS §2)
		`"kv_bytes_per_request": 344064000`,                                                                     // 3000 × 114688
		`"link": "1gbe"`, `"effective_bytes_per_s": 104000000`, `"transfer_alone_ms":`, `"transfer_ms_shared":`, // transfer_ms was renamed: plan's transfer_ms is the mean at a rate (issue 23)
		`"concurrency": 1`, `"prefill_ms":`, `"prefill_source": "estimated"`, `"ttft_agg_ms":`, `"ttft_disagg_ms":`, `"ttft_ratio":`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}

// TestFieldMeasurement reproduces FACTS §5/§3: on the 8 GB laptop GPU, whose
// TTFT for ~1,500 tokens is ~80 ms, moving 1,500 tokens of Qwen3-0.6B KV
// (172,032,000 B) over 1 GbE at ~104 MB/s takes ~1,654 ms, so TTFT becomes
// about (80 + 1,654) / 80 ≈ 21.7 times worse: the field saw 20×. The
// aggregated TTFT comes from the engine model and must land within 25% of
// the measured ~80 ms (TestPrefillFieldMeasurements); at its 95 ms kvplan
// prints about 18.4×, inside the 18–25× checked here.
func TestFieldMeasurement(t *testing.T) {
	out, errOut, code := kvplan(t, "disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--prefill-gpu", "rtx4060-laptop", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var p struct {
		TTFTAgg   float64 `json:"ttft_agg_ms"`
		Transfer  float64 `json:"transfer_alone_ms"`
		TTFTRatio float64 `json:"ttft_ratio"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if p.TTFTAgg < 60 || p.TTFTAgg > 100 {
		t.Errorf("aggregated TTFT %.1f ms; the measurement is ~80 ms (25%% allowed)", p.TTFTAgg)
	}
	if math.Abs(p.Transfer-1654.35) > 0.1 { // 0.2 ms + 172,032,000 / 104e6 s
		t.Errorf("transfer %.2f ms, want 1654.35", p.Transfer)
	}
	if p.TTFTRatio < 18 || p.TTFTRatio > 25 {
		t.Errorf("TTFT ratio %.1f; the field measured ~20×", p.TTFTRatio)
	}
}

// TestMemoryDoneWhen is the memory issue's acceptance: the calibration case
// (FACTS §4: 14,816 slots) within 1%, and the OOM-killed prefill worker.
func TestMemoryDoneWhen(t *testing.T) {
	out, errOut, code := kvplan(t, "memory", "--model", "qwen3-0.6b", "--gpu", "rtx4060-laptop", "--gpu-util", "0.38",
		"--enforce-eager", "--max-model-len", "4096", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var m struct {
		Slots int64 `json:"kv_slots_tokens"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(float64(m.Slots)-14816) / 14816; d > 0.01 {
		t.Errorf("kv_slots_tokens %d is %.2f%% from the measured 14,816", m.Slots, d*100)
	}
	out, errOut, code = kvplan(t, "memory", "--model", "qwen3-0.6b", "--gpu", "rtx4060-laptop", "--gpu-util", "0.38",
		"--enforce-eager", "--max-model-len", "4096", "--limit", "3584Mi", "--kv-buffer", "cpu", "--concurrency", "4", "--input-tokens", "2371", "-o", "json")
	if code != ExitFindings { // an OOM-killed worker is a deny, as in check
		t.Fatalf("exit %d, want %d: %s", code, ExitFindings, errOut)
	}
	var h struct {
		Required int64 `json:"host_required_bytes"`
		Limit    int64 `json:"host_limit_bytes"`
		Headroom int64 `json:"host_headroom_bytes"`
		MaxSafe  int64 `json:"max_safe_concurrency"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatal(err)
	}
	// 3584 Mi = 3,758,096,384 B; four staged requests of 2,371 × 114,688 B
	// = 271,925,248 B each do not fit beside the engine's baseline.
	if h.Limit != 3_758_096_384 || h.Required <= h.Limit || h.Headroom >= 0 || h.MaxSafe >= 4 {
		t.Errorf("OOM case not flagged: %+v", h)
	}
}

func TestDeterministic(t *testing.T) {
	a, _, _ := kvplan(t, "disagg", "--model", "qwen3-8b", "--link", "10gbe", "-o", "json", "--explain")
	b, _, _ := kvplan(t, "disagg", "--model", "qwen3-8b", "--link", "10gbe", "-o", "json", "--explain")
	if a != b || a == "" {
		t.Error("two identical runs gave different output")
	}
}

// TestBadInput checks that each class of bad input exits 2 with one line
// that says what to change, and never a stack trace.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string // a part of the one-line message
	}{
		{"unknown model", []string{"kv", "--model", "qwen3-06b"}, `unknown model "qwen3-06b"; did you mean qwen3-0.6b`},
		{"unknown link", []string{"disagg", "--model", "qwen3-0.6b", "--link", "nvlnk4"}, `unknown link "nvlnk4"; did you mean nvlink4`},
		{"unknown gpu", []string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--prefill-gpu", "h1000"}, `unknown gpu "h1000"; did you mean`},
		{"zero tokens", []string{"kv", "--model", "qwen3-0.6b", "--tokens", "0"}, "--input-tokens 0 is out of range: want 1 to 100,000,000"},
		{"negative concurrency", []string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--concurrency", "-2"}, "--concurrency -2 is out of range: want 1 to 100,000,000"},
		{"absurd tokens", []string{"kv", "--model", "qwen3-0.6b", "--tokens", "999999999999"}, "--input-tokens 999999999999 is out of range: want 1 to 100,000,000"},
		{"not a number", []string{"kv", "--model", "qwen3-0.6b", "--tokens", "many"}, `kv: --tokens many: count "many" does not start with a number: want a count such as 8000, 1.5k, 2M or 1e6`},
		{"negative prefill", []string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--prefill-ms", "-5"}, "--prefill-ms -5"},
		{"bad throughput", []string{"disagg", "--model", "qwen3-0.6b", "--throughput", "fast"}, `--throughput: rate "fast" does not start with a number`},
		{"link and throughput", []string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--throughput", "1Gbps"}, "not both"},
		{"negative latency", []string{"disagg", "--model", "qwen3-0.6b", "--throughput", "1Gbps", "--latency", "-1ms"}, `--latency: duration "-1ms" is negative`},
		{"bad dtype", []string{"kv", "--model", "qwen3-0.6b", "--kv-dtype", "fp4"}, `--kv-cache-dtype: "fp4" is not accepted: want one of "bf16", "fp16", "fp8", "int8", "fp32"; did you mean fp8?`},
		{"bad tp", []string{"kv", "--model", "qwen3-0.6b", "--tp", "0"}, "--tensor-parallel-size 0: must be between 1 and 1024"},
		{"bad format", []string{"kv", "--model", "qwen3-0.6b", "-o", "yaml"}, `-o "yaml" is not a format`},
		{"missing model flag", []string{"kv"}, "kv: --model is required"},
		{"unknown flag", []string{"kv", "--model", "qwen3-0.6b", "--bogus"}, "unknown flag --bogus"},
		{"unknown catalog key", []string{"kv", "--model", "qwen3-0.6b", "--catalog", "../../testdata/catalog/cli-bad/unknown-key"}, "unknown-key/models.toml:4: model.layerz: unknown key"},
		{"malformed catalog", []string{"kv", "--model", "qwen3-0.6b", "--catalog", "../../testdata/catalog/cli-bad/syntax"}, "syntax/links.toml:3: TOML syntax"},
		{"impossible value", []string{"kv", "--model", "qwen3-0.6b", "--catalog", "../../testdata/catalog/cli-bad/zero-layers"}, `zero-layers/models.toml:5: model "tiny": layers: must be > 0 (got 0)`},
		{"missing catalog dir", []string{"kv", "--model", "qwen3-0.6b", "--catalog", "/nonexistent/kvplan"}, "catalog directory /nonexistent/kvplan"},
		{"import missing file", []string{"models", "import", "/nonexistent/config.json"}, "models import: open /nonexistent/config.json"},
		{"gpu util above 1", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--gpu-util", "1.5"}, "--gpu-memory-utilization 1.5: must be in (0, 1]"},
		{"gpu util zero", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--gpu-util", "0"}, "--gpu-memory-utilization 0: must be in (0, 1]"},
		{"negative limit", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--limit", "-1Gi"}, `--memory-limit: memory quantity "-1Gi" is negative`},
		{"limit in milli", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--limit", "100m"}, `"m" is milli`},
		{"unknown engine", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--engine", "vlm"}, `unknown engine "vlm"; did you mean vllm`},
		{"unknown engine version", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--engine-version", "0.8.5"}, "vllm 0.8.5: the catalog has no profile for this version"},
		{"bad engine version", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--engine-version", "newest"}, `engine version "newest" is not a version`},
		{"pp zero", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--pp", "0"}, "--pipeline-parallel-size 0 is out of range: want 1 to 100,000,000"},
		{"bad dtype", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--dtype", "fp64"}, `dtype "fp64" is not one of fp32, fp16, bf16`},
		{"bad quantization", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--quantization", "q4_k"}, `quantization "q4_k" is not one of`},
		{"bad offload cache", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--cpu-offload-cache", "lots"}, "--cpu-offload-cache: memory quantity"},
		{"bad kv buffer", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--kv-buffer", "disk"}, `--kv-buffer-device: "disk" is not accepted: want one of "cpu", "gpu"`},
		{"memory without gpu", []string{"memory", "--model", "qwen3-0.6b"}, "memory: --gpu is required"},
		{"import malformed json", []string{"models", "import", "../../testdata/catalog/cli-bad/broken-config.json"}, "broken-config.json:3"},
		// A stray positional argument is not silently ignored.
		{"stray argument", []string{"kv", "--model", "qwen3-8b", "8000"}, `kv: unexpected argument "8000": this command takes flags only`},
		{"stray argument after flags", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "extra"}, `memory: unexpected argument "extra"`},
		{"stray argument, subcommand", []string{"gpus", "list", "h100"}, `gpus list: unexpected argument "h100"`},
		// Token counts past the model's context name it (or need --beyond-context).
		{"kv past context", []string{"kv", "--model", "qwen3-8b", "--tokens", "50000"}, "kv: --input-tokens: 50000 tokens are past qwen3-8b's max context of 40960 tokens (max_position_embeddings); add --beyond-context"},
		{"disagg past context", []string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--input-tokens", "40900", "--output-tokens", "128"}, "disagg: --input-tokens + --output-tokens: 41028 tokens are past qwen3-0.6b's max context of 40960"},
		{"memory past context", []string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--input-tokens", "50000"}, "memory: --input-tokens: 50000 tokens are past qwen3-0.6b's max context"},
		{"bad decode tp", []string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--decode-tp", "0"}, "--decode-tp 0: must be between 1 and 1024"},
		{"rules test format", []string{"rules", "test", "../../testdata/rules/tests", "-o", "xml"}, `rules test: -o "xml" is not a format; use one of table, junit`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := kvplan(t, c.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d; stderr: %s", code, ExitUsage, errOut)
			}
			if out != "" {
				t.Errorf("stdout should be empty, got %q", out)
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("stderr %q lacks %q", errOut, c.want)
			}
			if n := strings.Count(strings.TrimSpace(errOut), "\n"); n > 0 {
				t.Errorf("stderr has %d lines, want one: %q", n+1, errOut)
			}
			if strings.Contains(errOut, "goroutine") || strings.Contains(errOut, "panic") {
				t.Errorf("stderr shows a stack trace: %s", errOut)
			}
		})
	}
}

// TestBeyondContext: --beyond-context computes what the context check refuses.
func TestBeyondContext(t *testing.T) {
	out, errOut, code := kvplan(t, "kv", "--model", "qwen3-8b", "--tokens", "50000", "--beyond-context", "-o", "json")
	// 50,000 × 147,456 B (FACTS §2) = 7,372,800,000 B.
	if code != ExitOK || !strings.Contains(out, `"kv_bytes": 7372800000`) {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
}

func TestImportRefusesOverwrite(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "m.toml")
	if err := os.WriteFile(dest, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := "../../testdata/models/Qwen--Qwen3-0.6B.json"
	_, errOut, code := kvplan(t, "models", "import", cfg, "--out", dest)
	if code != ExitUsage || !strings.Contains(errOut, "exists; add --force") {
		t.Fatalf("exit %d, stderr %q; want refusal", code, errOut)
	}
	if _, errOut, code = kvplan(t, "models", "import", cfg, "--out", dest, "--force"); code != ExitOK {
		t.Fatalf("--force: exit %d: %s", code, errOut)
	}
	// The written entry is a working user catalog.
	out, errOut, code := kvplan(t, "kv", "--model", "qwen3-0.6b", "--tokens", "3000", "--catalog", dir, "-o", "json")
	if code != ExitOK || !strings.Contains(out, `"kv_bytes": 344064000`) {
		t.Fatalf("imported catalog: exit %d, %s %s", code, out, errOut)
	}
}
