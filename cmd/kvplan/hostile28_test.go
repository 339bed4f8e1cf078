package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Tests of issue 28's failure classes through the command line: output
// files, exit codes, and inputs that crashed or ran away.

var unmetArgs = []string{"plan", "--model", "llama-3.1-70b", "--isl", "4000", "--osl", "512", "--rate", "20",
	"--ttft-p95", "100ms", "--itl-p95", "50ms", "--gpu", "h100-sxm", "--link", "ib-ndr", "--verify", "0"}

// TestForceWritesThroughLinks: --force on plan --write-plan, plan --plot
// and perf --plot refused a symbolic link with "unless you add --force";
// it now replaces the link's target, as models import --out --force does.
func TestForceWritesThroughLinks(t *testing.T) {
	withStandIn(t)
	perfArgs := []string{"perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--isl", "1024", "--osl", "128", "--sweep", "concurrency=1,8"}
	for _, c := range []struct {
		name string
		args func(path string) []string
		want string // in the file written
	}{
		{"plan --write-plan", func(p string) []string {
			return append(append([]string{}, exampleArgs...), "--verify", "0", "--write-plan", p)
		}, "[pools."},
		{"plan --plot", func(p string) []string {
			return append(append([]string{}, exampleArgs...), "--verify", "0", "--plot", p)
		}, "<svg"},
		{"perf --plot", func(p string) []string { return append(append([]string{}, perfArgs...), "--plot", p) }, "<svg"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			link := filepath.Join(dir, "out")
			if err := os.Symlink("target", link); err != nil {
				t.Skipf("no symlinks: %v", err)
			}
			_, errOut, code := kvplan(t, c.args(link)...)
			if code != ExitUsage || !strings.Contains(errOut, "is a symbolic link to target; kvplan does not write through a link unless you add --force") {
				t.Errorf("without --force: exit %d, %s", code, errOut)
			}
			for _, round := range []string{"dangling link", "existing target"} {
				_, errOut, code = kvplan(t, append(c.args(link), "--force")...)
				if code != ExitOK {
					t.Fatalf("--force, %s: exit %d, %s", round, code, errOut)
				}
				if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("%s: the link was replaced: %v", round, err)
				}
				if data, err := os.ReadFile(filepath.Join(dir, "target")); err != nil || !strings.Contains(string(data), c.want) {
					t.Errorf("%s: target %.80q, %v", round, data, err)
				}
			}
		})
	}
}

// TestUnmetSLOWithOutputFiles: nothing meeting the SLO with --write-plan
// exited 2 and hid the closest candidate; it is exit 1, as without the
// flag, with the closest shown and a note that no plan (or plot) was
// written.
func TestUnmetSLOWithOutputFiles(t *testing.T) {
	withStandIn(t)
	dir := t.TempDir()
	planPath, plotPath := filepath.Join(dir, "plan.toml"), filepath.Join(dir, "pareto.svg")
	out, errOut, code := kvplan(t, append(append([]string{}, unmetArgs...), "--write-plan", planPath, "--plot", plotPath)...)
	if code != ExitFindings || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"closest", "Note: no plan was written to " + planPath + ": nothing meets the SLO.",
		"Note: no plot was written to " + plotPath + ": no candidate meets the SLO."} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, p := range []string{planPath, plotPath} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}

// TestEmptyOutputPaths: `--write-plan ”` exited 0 and wrote nothing.
func TestEmptyOutputPaths(t *testing.T) {
	withStandIn(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(append([]string{}, exampleArgs...), "--write-plan", ""), "plan: --write-plan is empty: give the path of the file to write"},
		{append(append([]string{}, exampleArgs...), "--plot="), "plan: --plot is empty: give the path of the file to write"},
		{[]string{"perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--isl", "1024", "--osl", "128", "--sweep", "concurrency=1,8", "--plot", ""}, "perf: --plot is empty"},
		{[]string{"models", "import", "../../testdata/models/Qwen--Qwen3-0.6B.json", "--out", ""}, "models import: --out is empty"},
	} {
		_, errOut, code := kvplan(t, c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want 2 with %q", c.args, code, errOut, c.want)
		}
	}
}

// TestHostileCommandLines: the reproducers through the commands
// that read them, each one line, exit 2, in under 2 s.
func TestHostileCommandLines(t *testing.T) {
	dir := t.TempDir()
	n := 0
	pod := func(script string) string {
		n++
		p := filepath.Join(dir, fmt.Sprintf("pod%d.yaml", n))
		data := "kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - command: [sh, -c, '" + script + "']\n"
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"memory", "--gpu", "l4", "--vllm-args", "vllm serve Qwen/Qwen3-0.6B <(x)"},
			`memory: worker: vllm serve argument "<(x)" is a process substitution (<(...) or >(...)), which kvplan never runs, so its value is unknown; kvplan memory stops`},
		{[]string{"memory", "--gpu", "l4", "--vllm-args", "vllm serve Qwen/Qwen3-0.6B --max-model-len \"4096"},
			"memory: --vllm-args:1:44: worker: the shell command does not parse: reached EOF without closing quote `\"`"},
		// The script starts at column 26 of line 6; its quote is byte 43.
		{[]string{"check", pod("vllm serve Qwen/Qwen3-0.6B --max-model-len \"4096"), "--gpu", "h100-sxm"},
			":6:69: p: the shell command does not parse: reached EOF without closing quote `\"`; no serving worker is left to review"},
		{[]string{"check", pod("A=x; " + strings.Repeat("A=$A$A; ", 29) + "vllm serve Qwen/Qwen3-0.6B --served-model-name $A"), "--gpu", "h100-sxm"},
			"$A of the shell command could expand to 131,072 bytes, more than the 64 KiB kvplan expands a word"},
	} {
		_, errOut, code := kvplanWithin(t, 2*time.Second, c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want 2 with %q", c.args[:2], code, errOut, c.want)
		}
	}
	// A process substitution in a manifest is a finding, not exit 3.
	out, errOut, code := kvplanWithin(t, 2*time.Second, "check", pod("vllm serve Qwen/Qwen3-0.6B <(x)"), "--gpu", "h100-sxm", "-o", "json")
	if code == ExitInternal || code == ExitUsage || !strings.Contains(out, `is a process substitution`) {
		t.Errorf("exit %d, %s\n%s", code, errOut, out)
	}
}

// TestZeroSaysTheRange: --gpus 0 and --isl 0 said "required" (or "give a
// rate or a GPU count"), as if they had not been given.
func TestZeroSaysTheRange(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--isl", "0", "--osl", "10"}, "kvplan: --input-tokens 0 is out of range: want 1 to 100,000,000\n"},
		{[]string{"plan", "--model", "llama-3.1-8b", "--isl", "100", "--osl", "10", "--ttft-p95", "1s", "--itl-p95", "50ms", "--gpus", "0"},
			"kvplan: plan: --gpus 0 is out of range: want 1 to 100,000 GPUs\n"},
		// Not given at all: still "required".
		{[]string{"perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--osl", "10"}, "kvplan: perf: --isl and --osl (--input-tokens, --output-tokens) are required (see kvplan perf --help)\n"},
	} {
		if _, errOut, code := kvplan(t, c.args...); code != ExitUsage || errOut != c.want {
			t.Errorf("%v: exit %d, %q, want %q", c.args, code, errOut, c.want)
		}
	}
}

// TestLongValuesAreQuotedShort: a 15,000-value --sweep was echoed whole
// (about 2 KB on one line, cut only by the line cap).
func TestLongValuesAreQuotedShort(t *testing.T) {
	vals := make([]string, 15_000)
	for i := range vals {
		vals[i] = fmt.Sprint(i + 1)
	}
	sweep := "concurrency=" + strings.Join(vals, ",")
	_, errOut, code := kvplan(t, "perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--isl", "100", "--osl", "10", "--sweep", sweep)
	want := fmt.Sprintf("kvplan: --sweep: at most 64 values, not 15,000: %q (%d bytes)\n", sweep[:80]+"…", len(sweep))
	if code != ExitUsage || errOut != want {
		t.Errorf("exit %d, %q, want %q", code, errOut, want)
	}
}

// TestRepeatedErrorsAreCounted: a plan of 20,000 bad pools printed 20,002
// lines; the first 10 errors are printed and the rest counted.
func TestRepeatedErrorsAreCounted(t *testing.T) {
	data, err := os.ReadFile("../../examples/clean.toml")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(data)
	for i := range 200 {
		fmt.Fprintf(&b, "\n[pools.p%d]\nrole = \"aggregated\"\nworkers = -1\ngpu = \"rtx4090\"\n", i)
	}
	plan := filepath.Join(t.TempDir(), "plan.toml")
	if err := os.WriteFile(plan, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := kvplan(t, "check", plan)
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if code != ExitUsage || len(lines) != 11 || lines[10] != "kvplan: … and 190 more errors (the first 10 are listed)" ||
		!strings.HasSuffix(lines[0], "pools.p0.workers: -1 is not accepted: want 1 or more") {
		t.Errorf("exit %d, %d lines:\n%s", code, len(lines), errOut)
	}
}

// TestMemoryReadsEveryPPSpelling: kvplan memory applied vLLM's
// --pipeline-parallel-size from a pasted line but dropped SGLang's
// --pp-size and trtllm-serve's --pp_size, noting them as not modelled.
func TestMemoryReadsEveryPPSpelling(t *testing.T) {
	for _, line := range [][]string{
		{"vllm", "serve", "Qwen/Qwen3-8B", "--pipeline-parallel-size", "2"},
		{"vllm", "serve", "Qwen/Qwen3-8B", "-pp", "2"},
		{"python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--pp-size", "2"},
		{"python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--pp", "2"},
		{"trtllm-serve", "Qwen/Qwen3-8B", "--pp_size", "2"},
		{"python3", "-m", "dynamo.trtllm", "--model-path", "Qwen/Qwen3-8B", "--pipeline-parallel-size", "2"},
	} {
		out, errOut, code := kvplan(t, append([]string{"memory", "--gpu", "h100-sxm", "--"}, line...)...)
		if code != ExitOK || !strings.Contains(out, "tp 1, pp 2 (the limiting stage)") || strings.Contains(errOut, "pipeline parallelism") {
			t.Errorf("%v: exit %d, stderr %q\n%s", line, code, errOut, out)
		}
	}
}
