package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/report"
)

// TestGitHubAction validates action.yml: a composite action whose run steps
// all name a shell, whose ${{ inputs.X }} all name a declared input, whose
// scripts read inputs only through env (never ${{ }} in a script: an input
// is text, not shell), and whose kvplan calls use flags and formats check
// has. Then actionlint lints docs/github-action.md's example workflow with
// `uses: ./` against this action.yml, which checks the inputs it passes and
// the outputs it reads.
func TestGitHubAction(t *testing.T) {
	src, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Name   string `yaml:"name"`
		Inputs map[string]struct {
			Required bool    `yaml:"required"`
			Default  *string `yaml:"default"`
		} `yaml:"inputs"`
		Runs struct {
			Using string `yaml:"using"`
			Steps []struct {
				Name  string            `yaml:"name"`
				Uses  string            `yaml:"uses"`
				Run   string            `yaml:"run"`
				Shell string            `yaml:"shell"`
				Env   map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(src, &action); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if action.Runs.Using != "composite" || action.Name == "" {
		t.Fatalf("action.yml: runs.using %q, name %q: want a named composite action", action.Runs.Using, action.Name)
	}
	for name, in := range action.Inputs {
		if !in.Required && in.Default == nil {
			t.Errorf("input %s is optional without a default", name)
		}
	}
	ref := regexp.MustCompile(`\$\{\{[^}]*\binputs\.([a-z-]+)`)
	for _, m := range ref.FindAllStringSubmatch(string(src), -1) {
		if _, ok := action.Inputs[m[1]]; !ok {
			t.Errorf("action.yml uses inputs.%s, which it does not declare", m[1])
		}
	}
	app := newApp(nil, nil)
	check := findCommand(app.Commands, "check")
	checkFlags := map[string]bool{}
	for _, f := range check.Flags {
		for _, n := range f.Names() {
			checkFlags[n] = true
		}
	}
	installs, checks := 0, 0
	for _, s := range action.Runs.Steps {
		if s.Run == "" {
			continue
		}
		if s.Shell == "" {
			t.Errorf("step %q runs a script without a shell (composite steps must name one)", s.Name)
		}
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %q expands ${{ }} inside its script; pass it through env", s.Name)
		}
		installs += strings.Count(s.Run, "go install -tags urfave_cli_no_docs,osusergo,minimal ./cmd/kvplan")
		for _, l := range strings.Split(s.Run, "\n") {
			i := strings.Index(l, "kvplan check ")
			if i < 0 {
				continue
			}
			checks++
			for _, m := range regexp.MustCompile(`(?:^| )--?([a-z][a-z-]*)`).FindAllStringSubmatch(l[i:], -1) {
				if !checkFlags[m[1]] {
					t.Errorf("step %q: kvplan check has no flag --%s", s.Name, m[1])
				}
			}
			for _, m := range regexp.MustCompile(`-o ([a-z]+)`).FindAllStringSubmatch(l[i:], -1) {
				if !strings.Contains(strings.Join(report.CheckFormats(), " "), m[1]) {
					t.Errorf("step %q: -o %s is not a check format", s.Name, m[1])
				}
			}
		}
	}
	if installs != 1 || checks != 2 {
		t.Errorf("action.yml installs kvplan %d times and runs check %d times; want 1 and 2 (annotations, SARIF)", installs, checks)
	}

	// The docs' example workflow, pointed at this checkout's action.
	doc := readDoc(t, "docs/github-action.md")
	m := regexp.MustCompile("(?s)```yaml\n(name: kvplan\n.*?)```").FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("docs/github-action.md has no example workflow")
	}
	workflow := strings.Replace(m[1], "uses: kvplan/kvplan@main", "uses: ./", 1)
	root := t.TempDir()
	for _, d := range []string{".git", ".github/workflows"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "action.yml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(root, ".github", "workflows", "kvplan.yml")
	if err := os.WriteFile(wf, []byte(workflow), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	l, err := actionlint.NewLinter(&log, &actionlint.LinterOptions{WorkingDir: root})
	if err != nil {
		t.Fatal(err)
	}
	proj, err := actionlint.NewProject(root)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFile(wf, proj)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("actionlint: %s", e.Error())
	}
}

// TestGitHubActionRuns runs action.yml's check and verdict scripts with
// bash, as the runner would, on two examples (one passes, one has a deny):
// the annotations go to stdout, the SARIF file is one run over both, the
// step outputs say fail, and the verdict step exits 1. The kvplan on PATH
// is this test binary (TestMain runs the command when KVPLAN_TEST_MAIN=1).
func TestGitHubActionRuns(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	src, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Runs struct {
			Steps []struct {
				Name string `yaml:"name"`
				Run  string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(src, &action); err != nil {
		t.Fatal(err)
	}
	script := map[string]string{}
	for _, s := range action.Runs.Steps {
		script[s.Name] = s.Run
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	shim := "#!/bin/sh\nKVPLAN_TEST_MAIN=1 exec '" + self + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "kvplan"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	outputs, envFile, sarif := filepath.Join(dir, "out"), filepath.Join(dir, "env"), filepath.Join(dir, "kvplan.sarif")
	step := func(name string, env ...string) (string, int) {
		cmd := exec.Command(bash, "-c", script[name])
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), append([]string{"PATH=" + dir + ":" + os.Getenv("PATH"), "GITHUB_OUTPUT=" + outputs, "GITHUB_ENV=" + envFile}, env...)...)
		out, err := cmd.CombinedOutput()
		code := 0
		if e, ok := err.(*exec.ExitError); ok {
			code = e.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	out, code := step("Check", "KVPLAN_PATHS=examples/clean.toml\nexamples/tp-not-*.toml", "KVPLAN_ARGS=", "KVPLAN_FAIL_ON=deny",
		"KVPLAN_ANNOTATIONS=true", "KVPLAN_SARIF=true", "KVPLAN_SARIF_FILE="+sarif)
	if code != 0 {
		t.Fatalf("the check step exits %d (it records kvplan's code for the verdict step): %s", code, out)
	}
	if !strings.Contains(out, "::error file=examples/tp-not-divisible.toml,line=29,") {
		t.Errorf("no annotation for the tp-not-divisible deny:\n%s", out)
	}
	got, _ := os.ReadFile(outputs)
	if !strings.Contains(string(got), "verdict=fail\n") || !strings.Contains(string(got), "sarif-file="+sarif+"\n") {
		t.Errorf("step outputs %q", got)
	}
	env, _ := os.ReadFile(envFile)
	if strings.TrimSpace(string(env)) != "KVPLAN_EXIT=1" {
		t.Errorf("GITHUB_ENV %q, want KVPLAN_EXIT=1", env)
	}
	s, err := os.ReadFile(sarif)
	if err != nil || strings.Count(string(s), `"tool"`) != 1 || !strings.Contains(string(s), `"uri": "examples/clean.toml"`) {
		t.Errorf("SARIF file (err %v) is not one run over both inputs:\n%.300s", err, s)
	}
	if _, code := step("Verdict", "KVPLAN_EXIT=1"); code != 1 {
		t.Errorf("verdict step on a finding exits %d, want 1", code)
	}
	if _, code := step("Verdict", "KVPLAN_EXIT=0"); code != 0 {
		t.Errorf("verdict step on a pass exits %d, want 0", code)
	}
	if out, code := step("Check", "KVPLAN_PATHS=nosuch/*.toml", "KVPLAN_ARGS=", "KVPLAN_FAIL_ON=deny", "KVPLAN_ANNOTATIONS=true", "KVPLAN_SARIF=false", "KVPLAN_SARIF_FILE="); code != 2 || !strings.Contains(out, "::error title=kvplan::no file matches nosuch/*.toml") {
		t.Errorf("a pattern that matches nothing: exit %d, %s", code, out)
	}
}
