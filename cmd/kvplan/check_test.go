package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

const examplePlan = "../../examples/disagg-1gbe-no-events.toml"

func TestCheckGolden(t *testing.T) {
	for _, format := range []string{"table", "json", "markdown", "junit", "sarif", "github"} {
		t.Run(format, func(t *testing.T) {
			out, errOut, code := kvplan(t, "check", examplePlan, "-o", format)
			if code != ExitFindings {
				t.Fatalf("exit %d, want %d (failing findings); stderr %s", code, ExitFindings, errOut)
			}
			golden(t, "check."+format, out)
		})
	}
}

// TestCheckDoneWhen: the example that disaggregates Qwen3-0.6B over 1 GbE
// with a KV router and no events fails with annotations at the plan's lines.
func TestCheckDoneWhen(t *testing.T) {
	out, _, code := kvplan(t, "check", examplePlan, "-o", "github")
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, want := range []string{
		"::error file=../../examples/disagg-1gbe-no-events.toml,line=52,title=kv-router-without-events::",
		"line=36,title=host-oom-staged-kv (prefill)::",
		"line=23,title=kv-in-flight-exceeds-slots (prefill)::", // workload.concurrency
		"title=disagg-transfer-exceeds-prefill::",
		"title=ttft-slo::",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("github output lacks %q:\n%s", want, out)
		}
	}
	out, errOut, code := kvplan(t, "check", "../../examples/clean.toml")
	if code != ExitOK || !strings.Contains(out, "pass: 0 deny, 0 warn, 0 info") {
		t.Fatalf("clean plan: exit %d\n%s%s", code, out, errOut)
	}
}

func TestCheckFailOnAndDisable(t *testing.T) {
	// Without the five deny rules only a warn and an info remain: pass on
	// deny, fail on warn.
	args := []string{"check", examplePlan, "--disable", "kv-router-without-events", "--disable", "host-oom-staged-kv",
		"--disable", "disagg-transfer-exceeds-prefill", "--disable", "ttft-slo", "--disable", "kv-in-flight-exceeds-slots"}
	if _, errOut, code := kvplan(t, args...); code != ExitOK {
		t.Fatalf("fail-on deny: exit %d: %s", code, errOut)
	}
	if _, _, code := kvplan(t, append(args, "--fail-on", "warn")...); code != ExitFindings {
		t.Fatalf("fail-on warn: exit %d, want 1", code)
	}
}

func TestRulesCommands(t *testing.T) {
	out, errOut, code := kvplan(t, "rules", "test", "../../testdata/rules/planner")
	if code != ExitOK || !strings.Contains(out, "21 passed, 0 failed") {
		t.Fatalf("rules test: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = kvplan(t, "rules", "test", "../../testdata/plans")
	if code != ExitOK || !strings.Contains(out, "0 failed") {
		t.Fatalf("rules test plans: exit %d\n%s", code, out)
	}
	out, _, code = kvplan(t, "rules", "list", "-o", "json")
	if code != ExitOK || !strings.Contains(out, `"id": "host-oom-staged-kv"`) {
		t.Fatalf("rules list: exit %d\n%s", code, out)
	}
	out, _, code = kvplan(t, "rules", "env")
	if code != ExitOK || !strings.Contains(out, "pool.host_required_bytes") {
		t.Fatalf("rules env: exit %d\n%s", code, out)
	}
	_, errOut, code = kvplan(t, "rules", "show", "host-oom-staged")
	if code != ExitUsage || !strings.Contains(errOut, "did you mean host-oom-staged-kv?") {
		t.Fatalf("rules show unknown: exit %d: %s", code, errOut)
	}
}

// TestRulesTestJUnitFailure: a failed rule test is a JUnit <failure> and exit 1.
func TestRulesTestJUnitFailure(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/slo.expect.toml", []byte("must_fire = [\"ttft-slo\"]\n[env]\nslo.ttft_ms = 500\npredicted.ttft_ms = 400\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := kvplan(t, "rules", "test", dir, "-o", "junit")
	if code != ExitFindings || !strings.Contains(out, `<failure type="expectation" message="ttft-slo did not fire">`) || !strings.Contains(out, `failures="1"`) {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestCheckBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"broken rule file", []string{"check", examplePlan, "--rules", "../../testdata/rules/broken/unknown-variable.toml"},
			"unknown-variable.toml:"},
		{"unknown plan key", []string{"check", "../../testdata/plans/invalid/unknown-key.toml"}, "unknown-key.toml:"},
		{"missing plan", []string{"check", "/nonexistent/plan.toml"}, "/nonexistent/plan.toml"},
		{"bad format", []string{"check", examplePlan, "-o", "xml"}, `-o "xml" is not a format`},
		{"bad fail-on", []string{"check", examplePlan, "--fail-on", "error"}, "--fail-on"},
		{"unknown disable", []string{"check", examplePlan, "--disable", "kv-router-without-event"}, "kv-router-without-event"},
		{"no plan", []string{"check"}, "give a plan file or manifest"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := kvplan(t, c.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want 2; stderr %s", code, errOut)
			}
			if out != "" || !strings.Contains(errOut, c.want) {
				t.Errorf("stdout %q; stderr %q lacks %q", out, errOut, c.want)
			}
		})
	}
}

// TestCheckGateExamples is issue 16's acceptance: each impossible plan of
// examples/ exits 1 with its finding at the plan key marked "the line the
// finding points at" in the file (found here by reading the file, not from
// kvplan's index), and the Llama-3.1-70B tp 8 disaggregation over ib-ndr
// exits 0 with no finding.
func TestCheckGateExamples(t *testing.T) {
	cases := []struct{ file, rule string }{
		{"kv-in-flight-exceeds-slots.toml", "kv-in-flight-exceeds-slots (workers)"},
		{"weights-do-not-fit.toml", "weights-do-not-fit (workers)"},
		{"prompt-exceeds-max-model-len.toml", "prompt-exceeds-max-model-len (workers)"},
		{"tp-not-divisible.toml", "tp-not-divisible (decode)"},
		{"pool-capacity-exceeded.toml", "pool-capacity-exceeded (workers)"},
		{"link-saturated.toml", "link-saturated"},
		{"ep-not-dividing-experts.toml", "ep-not-dividing-experts (workers)"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := "../../examples/" + c.file
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			line := 0
			for i, l := range strings.Split(string(data), "\n") {
				if !strings.HasPrefix(l, "#") && strings.Contains(l, "the line the finding points at") {
					line = i + 1
				}
			}
			if line == 0 {
				t.Fatalf("%s marks no line", c.file)
			}
			out, errOut, code := kvplan(t, "check", path, "-o", "github")
			if code != ExitFindings {
				t.Fatalf("exit %d, want 1: %s", code, errOut)
			}
			want := fmt.Sprintf("::error file=%s,line=%d,title=%s::", path, line, c.rule)
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %s:\n%s", want, out)
			}
		})
	}
	out, errOut, code := kvplan(t, "check", "../../examples/disagg-70b-ib-ndr.toml", "-o", "json")
	if code != ExitOK || !strings.Contains(out, `"verdict": "pass"`) || !strings.Contains(out, `"findings": []`) {
		t.Fatalf("70B tp 8 over ib-ndr: exit %d\n%s%s", code, out, errOut)
	}
}

// TestCalculatorsShareTheTPCheck: kv, disagg and memory refuse a tp that the
// model's heads do not divide, with the message of the tp-not-divisible rule.
func TestCalculatorsShareTheTPCheck(t *testing.T) {
	const msg = "tp 3 does not fit llama-3.1-70b: 64 attention heads are not divisible by tp 3"
	for _, args := range [][]string{
		{"kv", "--model", "llama-3.1-70b", "--tp", "3"},
		{"disagg", "--model", "llama-3.1-70b", "--tp", "3", "--link", "ib-ndr"},
		{"disagg", "--model", "llama-3.1-70b", "--tp", "4", "--decode-tp", "3", "--link", "ib-ndr"},
		{"memory", "--model", "llama-3.1-70b", "--tp", "3", "--gpu", "h100-sxm"},
	} {
		out, errOut, code := kvplan(t, args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 with %q", args, code, out, errOut, msg)
		}
	}
	out, _, _ := kvplan(t, "check", "../../examples/tp-not-divisible.toml", "-o", "json")
	if !strings.Contains(out, "tp 6 does not fit llama-3.1-70b: 64 attention heads are not divisible by tp 6") {
		t.Errorf("check: the finding lacks the calculators' message:\n%s", out)
	}
}
