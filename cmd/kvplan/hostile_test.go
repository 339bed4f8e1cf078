package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Tests of issue 13's failure classes through the command line: each used
// to hang, eat memory, inject output or pass silently.

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// kvplanWithin runs kvplan and fails if it takes longer than limit.
func kvplanWithin(t *testing.T, limit time.Duration, args ...string) (string, string, int) {
	t.Helper()
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := kvplan(t, args...)
		done <- result{out, errOut, code}
	}()
	select {
	case r := <-done:
		return r.out, r.errOut, r.code
	case <-time.After(limit):
		t.Fatalf("kvplan %s: still running after %v", strings.Join(args, " "), limit)
		return "", "", 0
	}
}

// TestPlanPathCannotInjectWorkflowCommands: a plan file whose name holds a
// newline and "::error" no longer starts a GitHub workflow command.
func TestPlanPathCannotInjectWorkflowCommands(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan\n::error file=evil.toml,line=1::pwned\n.toml")
	copyFile(t, "../../examples/clean.toml", plan)
	out, errOut, code := kvplan(t, "check", plan, "-o", "github")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasPrefix(l, "::") || strings.HasPrefix(l, "##[") {
			t.Errorf("injected command line %q in\n%s", l, out)
		}
	}
	if !strings.Contains(out, `plan\n::error file=evil.toml,line=1::pwned\n.toml: pass`) {
		t.Errorf("summary line:\n%s", out)
	}
}

func TestSpecialFilesAreRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "plan.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs: %v", err)
	}
	for _, args := range [][]string{
		{"check", fifo},
		{"check", "/dev/zero"},
		{"check", "../../examples/clean.toml", "--rules", "/dev/zero"},
		{"check", "../../examples/clean.toml", "--catalog", "/dev/zero"},
		{"models", "import", "/dev/zero"},
		{"models", "import", fifo},
	} {
		_, errOut, code := kvplanWithin(t, 10*time.Second, args...)
		if code != ExitUsage || !strings.Contains(errOut, "not a regular file") {
			t.Errorf("%v: exit %d, %s", args, code, errOut)
		}
	}
}

// TestHostileRulePackIsBounded: nested all() over 1..300 in a user pack
// used to run forever at 10 GB; now the check fails at once on a finding
// naming the budget.
func TestHostileRulePackIsBounded(t *testing.T) {
	pack := filepath.Join(t.TempDir(), "evil.toml")
	if err := os.WriteFile(pack, []byte(`[[rule]]
id = "evil/nested"
severity = "info"
when = "let r = 1..300; all(r, {all(r, {all(r, {all(r, {# > 0})})})})"
message = "never"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := kvplanWithin(t, 20*time.Second, "check", "../../examples/clean.toml", "--rules", pack, "-o", "json")
	// 300⁴ closure iterations: the step budget stops it, or on a slow host
	// (the race detector, a busy CI machine) the time budget first.
	if code != ExitFindings || !strings.Contains(out, `"rule_id": "rule-error/evil/nested"`) ||
		!strings.Contains(out, "over the step budget (1,000,000 closure iterations per evaluation)") &&
			!strings.Contains(out, "over the time budget (1s per evaluation)") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestOutsidePathsNeedAFlag(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "plans")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, "../../testdata/models/Qwen--Qwen3-0.6B.json", filepath.Join(root, "config.json"))
	plan := filepath.Join(dir, "plan.toml")
	data, err := os.ReadFile("../../examples/clean.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plan, []byte(strings.Replace(string(data), `name = "qwen3-0.6b"`, `config = "../config.json"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := kvplan(t, "check", plan)
	if code != ExitUsage || !strings.Contains(errOut, `model.config: "../config.json" climbs out of `) {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if _, errOut, code := kvplan(t, "check", plan, "--allow-outside-paths"); code != ExitOK && code != ExitFindings {
		t.Errorf("with --allow-outside-paths: exit %d: %s", code, errOut)
	}
}

// TestErrorsAreOneSafeLine: a 10 MB engine name was echoed as one 10 MB
// stderr line, and ANSI escapes in names reached the terminal.
func TestErrorsAreOneSafeLine(t *testing.T) {
	_, errOut, code := kvplan(t, "memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--engine", strings.Repeat("v", 10<<20))
	if code != ExitUsage || len(errOut) > 3*maxErrorLine {
		t.Errorf("exit %d, %d bytes of stderr", code, len(errOut))
	}
	_, errOut, code = kvplan(t, "kv", "--model", "\x1b[2J\x1b[31mqwen\r\nfake: line", "--tokens", "10")
	if code != ExitUsage || strings.ContainsAny(errOut, "\x1b\r") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestOneNumberGrammarInFlags: counts as 1.5k or 1e6, sizes as 4GiB or
// 1.5Gi, formats in any case, and no NaN or Inf.
func TestOneNumberGrammarInFlags(t *testing.T) {
	base, _, code := kvplan(t, "kv", "--model", "qwen3-0.6b", "--tokens", "1500", "-o", "json")
	if code != ExitOK {
		t.Fatal("kv failed")
	}
	for _, tokens := range []string{"1.5k", "1_500", "1.5e3", "--tokens=1.5k"} {
		args := []string{"kv", "--model", "qwen3-0.6b", "-o", "JSON"}
		if strings.HasPrefix(tokens, "--") {
			args = append(args, tokens)
		} else {
			args = append(args, "--tokens", tokens)
		}
		out, errOut, code := kvplan(t, args...)
		if code != ExitOK || out != base {
			t.Errorf("--tokens %s: exit %d %s\n%s", tokens, code, errOut, out)
		}
	}
	for _, limit := range []string{"4GiB", "4 GiB", "1.5Gi", "4Gi"} {
		// Exit 1 is a finding (1.5 GiB may be too little); 2 would be the flag.
		if _, errOut, code := kvplan(t, "memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--limit", limit); code == ExitUsage {
			t.Errorf("--limit %s: exit %d: %s", limit, code, errOut)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"disagg", "--model", "qwen3-0.6b", "--throughput", "1Gbps", "--latency", "Inf"}, `--latency: duration "Inf" is not a finite number`},
		{[]string{"disagg", "--model", "qwen3-0.6b", "--same-gpu", "--prefill-ms", "NaN"}, `disagg: --prefill-ms NaN: number "NaN" is not a finite number`},
		{[]string{"memory", "--model", "qwen3-0.6b", "--gpu", "l4", "--gpu-util", "Inf"}, `--gpu-util Inf: number "Inf" is not a finite number`},
		{[]string{"kv", "--model", "qwen3-0.6b", "--tokens", "1.2345k"}, `kv: --tokens 1.2345k: count "1.2345k" is not a whole number (1234.500)`},
	} {
		_, errOut, code := kvplan(t, c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %s; want %q", c.args, code, errOut, c.want)
		}
	}
}

// TestImportOutIsAtomic: a dangling symbolic link at --out counted as "not
// existing"; now it is refused without --force, and written through with it.
func TestImportOutIsAtomic(t *testing.T) {
	dir := t.TempDir()
	cfg := "../../testdata/models/Qwen--Qwen3-0.6B.json"
	link := filepath.Join(dir, "m.toml")
	if err := os.Symlink("elsewhere.toml", link); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	_, errOut, code := kvplan(t, "models", "import", cfg, "--out", link)
	if code != ExitUsage || !strings.Contains(errOut, "is a symbolic link to elsewhere.toml") {
		t.Errorf("dangling link: exit %d, %s", code, errOut)
	}
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere.toml")); err == nil {
		t.Error("the refused write created the link's target")
	}
	if _, errOut, code := kvplan(t, "models", "import", cfg, "--out", link, "--force"); code != ExitOK {
		t.Fatalf("--force: exit %d, %s", code, errOut)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "elsewhere.toml")); err != nil || !strings.Contains(string(data), "[[model]]") {
		t.Errorf("target: %q, %v", data, err)
	}
	// A failed write to a new path leaves nothing behind.
	missing := filepath.Join(dir, "no-such-dir", "m.toml")
	if _, _, code := kvplan(t, "models", "import", cfg, "--out", missing); code != ExitUsage {
		t.Errorf("write into a missing directory: exit %d", code)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("stray files: %v", entries)
	}
}
