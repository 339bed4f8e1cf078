package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/shell"

	"github.com/kvplan/kvplan/manifest"
)

// emitCases are plan's answers on the engine model for each engine and
// mode (the modes are what the search picks for these questions), and the
// formats each is written in.
var emitCases = []struct {
	name    string
	args    []string
	mode    string
	formats []string
}{
	{"vllm aggregated", []string{"--rate", "20", "--itl-p95", "50ms"}, "aggregated", []string{"dynamo", "llm-d", "kserve", "vllm"}},
	{"vllm disaggregated", []string{"--rate", "40", "--itl-p95", "35ms", "--link", "ib-ndr"}, "disaggregated", []string{"dynamo", "llm-d", "kserve", "vllm"}},
	{"sglang aggregated", []string{"--rate", "20", "--itl-p95", "50ms", "--engine", "sglang"}, "aggregated", []string{"dynamo", "sglang"}},
	{"sglang disaggregated", []string{"--rate", "20", "--itl-p95", "50ms", "--engine", "sglang", "--link", "ib-ndr"}, "disaggregated", []string{"dynamo", "sglang"}},
	{"trtllm aggregated", []string{"--rate", "20", "--itl-p95", "50ms", "--engine", "trtllm"}, "aggregated", []string{"dynamo", "trtllm"}},
	{"trtllm disaggregated", []string{"--rate", "20", "--itl-p95", "50ms", "--engine", "trtllm", "--link", "ib-ndr"}, "disaggregated", []string{"dynamo", "trtllm"}},
}

var emitBase = []string{"plan", "--model", "llama-3.1-70b", "--isl", "4000", "--osl", "512", "--ttft-p95", "1s", "--gpu", "h100-sxm", "--verify", "0"}

// planValue reads `key = value` from a written plan file.
func planValue(t *testing.T, plan []byte, key string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*` + key + ` = "?([^"\n]+)"?$`).FindSubmatch(plan)
	if m == nil {
		t.Fatalf("no %s in the plan file:\n%s", key, plan)
	}
	return string(m[1])
}

// TestPlanEmitRoundTrip: what plan --emit writes, kvplan check passes at
// the planned load (the plan file's rate and concurrency, the SLO, and the
// link the manifest cannot say) with no --gpu: the pods' node selector
// names the GPU. Every vllm serve line of the
// script is read by kvplan memory; SGLang's and TensorRT-LLM's lines are
// read by the reader's grammar of their entry point with no finding.
func TestPlanEmitRoundTrip(t *testing.T) {
	for _, tc := range emitCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append(append([]string{}, emitBase...), tc.args...)
			planPath := filepath.Join(dir, "plan.toml")
			args = append(args, "--write-plan", planPath)
			files := map[string]string{}
			for _, f := range tc.formats {
				ext := ".yaml"
				if f == "vllm" || f == "sglang" || f == "trtllm" {
					ext = ".sh"
				}
				files[f] = filepath.Join(dir, f+ext)
				args = append(args, "--emit", f+"="+files[f])
			}
			if _, errs, code := kvplan(t, args...); code != 0 {
				t.Fatalf("plan: exit %d: %s", code, errs)
			}
			plan, err := os.ReadFile(planPath)
			if err != nil {
				t.Fatal(err)
			}
			if tc.mode == "disaggregated" != strings.Contains(string(plan), `role = "prefill"`) {
				t.Fatalf("want a %s plan:\n%s", tc.mode, plan)
			}
			load := []string{"--link", "ib-ndr", "--isl", "4000", "--osl", "512",
				"--rate", planValue(t, plan, "request_rate"), "--concurrency", planValue(t, plan, "concurrency"),
				"--ttft-p95", "1s", "--itl-p95", planValue(t, plan, "itl_ms") + "ms"}
			for _, f := range tc.formats {
				data, err := os.ReadFile(files[f])
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(files[f], ".yaml") {
					if !strings.Contains(string(data), "nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3") {
						t.Errorf("%s: no node selector of the H100's label:\n%s", f, data)
					}
					out, errs, code := kvplan(t, append([]string{"check", files[f]}, load...)...)
					if code != 0 {
						t.Errorf("check %s at the planned load: exit %d\n%s\n%s\n%s", f, code, data, out, errs)
					}
					// Without the selector the manifest names no GPU: the pass
					// above read it from there.
					bare := filepath.Join(dir, "bare-"+f+".yaml")
					sel := regexp.MustCompile(`(?m)^\s*nodeSelector:\n\s*nvidia\.com/gpu\.product: .*\n`)
					if err := os.WriteFile(bare, sel.ReplaceAll(data, nil), 0o644); err != nil {
						t.Fatal(err)
					}
					if _, errs, code := kvplan(t, append([]string{"check", bare}, load...)...); code != 2 || !strings.Contains(errs, "no GPU for pool(s)") {
						t.Errorf("check %s without its node selector: exit %d, want 2 and no GPU: %s", f, code, errs)
					}
					continue
				}
				lines := regexp.MustCompile(`(?m)^  CUDA_VISIBLE_DEVICES=.*? ((?:vllm serve|python3 -m|trtllm-serve) .*) &$`).FindAllStringSubmatch(string(data), -1)
				if len(lines) == 0 {
					t.Fatalf("%s: no engine lines:\n%s", f, data)
				}
				for i, m := range lines {
					words, err := shell.Fields(m[1], nil)
					if err != nil {
						t.Fatalf("%s line %d: %v", f, i+1, err)
					}
					if f == "vllm" {
						if out, errs, code := kvplan(t, append([]string{"memory", "--gpu", "h100-sxm", "--"}, words...)...); code != 0 {
							t.Errorf("memory -- %s: exit %d\n%s\n%s", m[1], code, out, errs)
						}
						continue
					}
					mf, err := manifest.ReadCommandLine(f, words)
					if err != nil {
						t.Fatalf("%s line %d: %v", f, i+1, err)
					}
					for _, fd := range mf.Findings {
						t.Errorf("%s line %d: %s: %s", f, i+1, fd.ID, fd.Message)
					}
				}
			}
		})
	}
}

// TestPlanEmitRefuses: bad --emit and --candidate values are input errors
// (exit 2) before or instead of writing anything; an existing file or a
// symbolic link is replaced only with --force.
func TestPlanEmitRefuses(t *testing.T) {
	dir := t.TempDir()
	base := append(append([]string{}, emitBase...), "--rate", "20", "--itl-p95", "50ms")
	out := filepath.Join(dir, "deploy.yaml")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown format", []string{"--emit", "helm=" + out}, `unknown format "helm"`},
		{"did you mean", []string{"--emit", "dynamoo=" + out}, "did you mean dynamo?"},
		{"no file", []string{"--emit", "dynamo"}, "want FORMAT=FILE"},
		{"twice", []string{"--emit", "dynamo=" + out, "--emit", "kserve=" + out}, "written twice"},
		{"candidate alone", []string{"--candidate", "2"}, "give one of them"},
		{"candidate past the list", []string{"--candidate", "100000", "--emit", "dynamo=" + out}, "candidates (1 to"},
		{"engine mismatch", []string{"--emit", "sglang=" + filepath.Join(dir, "s.sh")}, "but the plan runs vllm"},
		{"no directory", []string{"--emit", "dynamo=" + filepath.Join(dir, "none", "d.yaml")}, "--emit dynamo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := kvplan(t, append(append([]string{}, base...), tc.args...)...)
			if code != 2 || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, tc.want)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("a refused run wrote %s", out)
	}
	// An existing file, and a symbolic link, are replaced only with --force.
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(out, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	for _, p := range []string{out, link} {
		if _, errs, code := kvplan(t, append(append([]string{}, base...), "--emit", "dynamo="+p)...); code != 2 || !strings.Contains(errs, "--force") {
			t.Errorf("%s without --force: exit %d, %s", p, code, errs)
		}
	}
	if data, _ := os.ReadFile(out); string(data) != "old" {
		t.Errorf("the existing file was changed without --force")
	}
	if _, errs, code := kvplan(t, append(append([]string{}, base...), "--emit", "dynamo="+out, "--force")...); code != 0 {
		t.Errorf("--force: exit %d, %s", code, errs)
	}
	if data, _ := os.ReadFile(out); !strings.Contains(string(data), "kind: DynamoGraphDeployment") {
		t.Errorf("--force did not write the manifest:\n%s", data)
	}
}

// TestPlanEmitCandidate: --candidate N writes the table's #N, the same
// pools -o json lists as candidates[N-1].
func TestPlanEmitCandidate(t *testing.T) {
	dir := t.TempDir()
	base := append(append([]string{}, emitBase...), "--rate", "20", "--itl-p95", "50ms", "--link", "ib-ndr")
	plan2 := filepath.Join(dir, "p2.toml")
	if _, errs, code := kvplan(t, append(append([]string{}, base...), "--candidate", "2", "--write-plan", plan2, "--emit", "dynamo="+filepath.Join(dir, "d.yaml"))...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	best := filepath.Join(dir, "p1.toml")
	if _, errs, code := kvplan(t, append(append([]string{}, base...), "--write-plan", best)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	a, _ := os.ReadFile(plan2)
	b, _ := os.ReadFile(best)
	if string(a) == string(b) {
		t.Errorf("--candidate 2 wrote the best candidate")
	}
	if !strings.Contains(string(a), "# Written by kvplan plan") {
		t.Errorf("no plan file:\n%s", a)
	}
}
