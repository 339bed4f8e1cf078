package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestImportFlags(t *testing.T) {
	cfg := "../../testdata/models/more/jamba-1.5-mini.json"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown engine", []string{"models", "import", cfg, "--engine", "sglan"}, `--engine "sglan": want one of vllm, sglang (the linear-attention and Mamba state convention); did you mean "sglang"?`},
		{"bad weights bytes", []string{"models", "import", cfg, "--weights-bytes", "lots"}, "models import: --weights-bytes:"},
		{"zero weights bytes", []string{"models", "import", cfg, "--weights-bytes", "0"}, "--weights-bytes 0: must be > 0"},
		{"kv unknown engine", []string{"kv", "--model", "qwen3-0.6b", "--engine", "vlm"}, `did you mean "vllm"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := kvplan(t, tc.args...)
			if code != ExitUsage || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, ExitUsage, tc.want)
			}
		})
	}
}

// An imported Mamba model plans under either engine's state convention, and
// the output says which.
func TestImportedMambaUnderEngines(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "jamba.toml")
	_, errOut, code := kvplan(t, "models", "import", "../../testdata/models/more/jamba-1.5-mini.json",
		"--out", dest, "--engine", "sglang", "--weights-bytes", "103GB")
	if code != ExitOK {
		t.Fatalf("import: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"sglang 16056320 B (15 MiB), vllm 8716288 B (8.3 MiB)", "weights_bytes 103000000000"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("import notes lack %q:\n%s", want, errOut)
		}
	}
	// 1,000 tokens: 4 attention layers × 2 × 8 × 128 × 2 × 1,000 = 16,384,000, plus the state:
	// vLLM 28 × (3 × 8,192 × 2 + 131,072 × 2) = 8,716,288; SGLang 28 × (49,152 + 131,072 × 4) = 16,056,320
	for engine, want := range map[string]string{"vllm": `"kv_bytes": 25100288`, "sglang": `"kv_bytes": 32440320`} {
		out, errOut, code := kvplan(t, "kv", "--model", "jamba-1.5-mini", "--tokens", "1000", "--engine", engine, "--catalog", dir, "-o", "json")
		if code != ExitOK || !strings.Contains(out, want) || !strings.Contains(out, `"state_convention": "`+engine+" state convention") {
			t.Errorf("%s: exit %d, want %s and the convention; %s %s", engine, code, want, out, errOut)
		}
	}
	out, _, _ := kvplan(t, "kv", "--model", "jamba-1.5-mini", "--tokens", "1000", "--catalog", dir)
	if !strings.Contains(out, "linear/Mamba state per request (vllm)") || !strings.Contains(out, "State: vllm state convention") {
		t.Errorf("table lacks the state convention:\n%s", out)
	}
}
