package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const diffBase, diffHead = "../../testdata/plans/diff/base.toml", "../../testdata/plans/diff/head.toml"

// TestDiffGolden fixes each format of kvplan diff on the stand-in engine
// model, so the figures stay put while the fitted model changes.
func TestDiffGolden(t *testing.T) {
	withStandIn(t)
	for _, format := range []string{"table", "markdown", "json"} {
		out, errs, code := kvplan(t, "diff", diffBase, diffHead, "-o", format)
		if code != ExitFindings {
			t.Fatalf("-o %s: exit %d, want 1 (head adds a deny): %s", format, code, errs)
		}
		golden(t, "diff."+map[string]string{"table": "table", "markdown": "md", "json": "json"}[format], out)
	}
}

// TestDiffIsCheck: each side of a diff is what check says of that file —
// the same figures, the same findings — and the change is head − base.
func TestDiffIsCheck(t *testing.T) {
	withStandIn(t)
	var d struct {
		Verdict string `json:"verdict"`
		Figures []struct {
			Name               string
			Base, Head, Change *float64
		} `json:"figures"`
		Findings struct {
			Added, Resolved []struct {
				RuleID string `json:"rule_id"`
			}
		} `json:"findings"`
	}
	out, _, _ := kvplan(t, "diff", diffBase, diffHead, "-o", "json")
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	base := checkFigures(t, runJSON(t, 1, "check", diffBase))
	head := checkFigures(t, runJSON(t, 1, "check", diffHead))
	for _, f := range d.Figures {
		if f.Base != nil && *f.Base != base[f.Name] || f.Head != nil && *f.Head != head[f.Name] {
			t.Errorf("%s: diff %v → %v, check %v → %v", f.Name, f.Base, f.Head, base[f.Name], head[f.Name])
		}
		if f.Base != nil && f.Head != nil && (f.Change == nil || *f.Change != *f.Head-*f.Base) && f.Name != "usd_per_hour" {
			t.Errorf("%s: change %v, want %g", f.Name, f.Change, *f.Head-*f.Base)
		}
	}
	// By hand: 12 → 6 workers of tp 4 is 48 → 24 GPUs, and as whole
	// aws/p5.48xlarge (8 GPUs at $55.04, instances.toml) 6 → 3 instances:
	// $330.24 → $165.12.
	for _, f := range d.Figures {
		switch f.Name {
		case "gpus":
			if *f.Base != 48 || *f.Head != 24 || *f.Change != -24 {
				t.Errorf("gpus %v → %v (%v), want 48 → 24 (−24)", *f.Base, *f.Head, *f.Change)
			}
		case "usd_per_hour":
			if *f.Base != 330.24 || *f.Head != 165.12 || *f.Change != -165.12 {
				t.Errorf("$/h %v → %v (%v), want 330.24 → 165.12 (−165.12)", *f.Base, *f.Head, *f.Change)
			}
		}
	}
	ids := func(fs []struct {
		RuleID string `json:"rule_id"`
	}) string {
		var out []string
		for _, f := range fs {
			out = append(out, f.RuleID)
		}
		return strings.Join(out, " ")
	}
	// Half the workers cannot carry the rate; KV events resolve the
	// router's finding (the two files differ in nothing else).
	if !strings.Contains(ids(d.Findings.Added), "pool-capacity-exceeded") || !strings.Contains(ids(d.Findings.Resolved), "kv-router-without-events") ||
		strings.Contains(ids(d.Findings.Added), "kv-router-without-events") || d.Verdict != "fail" {
		t.Errorf("added %s, resolved %s, verdict %s", ids(d.Findings.Added), ids(d.Findings.Resolved), d.Verdict)
	}
}

// TestDiffExitCodes: 1 only when HEAD adds a finding at --fail-on or
// worse; a finding both sides have does not fail; 2 on input errors.
func TestDiffExitCodes(t *testing.T) {
	withStandIn(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"adds a deny", []string{diffBase, diffHead}, ExitFindings, "head adds 1 failing finding"},
		// Reversed, head (base.toml) adds kv-router-without-events, a deny.
		{"reversed", []string{diffHead, diffBase}, ExitFindings, "kv-router-without-events"},
		{"same file", []string{diffBase, diffBase}, ExitOK, "1 unchanged"},
		{"added deny disabled", []string{diffBase, diffHead, "--disable", "pool-capacity-exceeded"}, ExitOK, "0 finding(s) added, 1 resolved"},
		{"missing head", []string{diffBase, "nosuch.toml"}, ExitUsage, ""},
		{"one file", []string{diffBase}, ExitUsage, ""},
		{"both stdin", []string{"-", "-"}, ExitUsage, ""},
		{"bad format", []string{diffBase, diffHead, "-o", "sarif"}, ExitUsage, ""},
		{"bad fail-on", []string{diffBase, diffHead, "--fail-on", "sometimes"}, ExitUsage, ""},
	} {
		out, errs, code := kvplan(t, append([]string{"diff"}, tc.args...)...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d (want %d), output lacks %q:\n%s%s", tc.name, code, tc.code, tc.want, out, errs)
		}
	}
}

// TestDiffStdin: one side may come from stdin, read as check reads it.
func TestDiffStdin(t *testing.T) {
	withStandIn(t)
	data := []byte(strings.Join([]string{"[model]", `name = "llama-3.1-70b"`, "tp = 4", "[workload]", "input_tokens = 4000", "output_tokens = 512",
		"request_rate = 20.0", "[pools.workers]", `role = "aggregated"`, "workers = 12", `gpu = "h100-sxm"`, "max_model_len = 5120",
		"max_num_batched_tokens = 512", "[router]", `mode = "kv"`, "kv_events = false", "[slo]", "ttft_ms = 1000.0", "itl_ms = 50.0"}, "\n"))
	out, errs, code := kvplanIn(t, data, "diff", "-", diffHead)
	if code != ExitFindings || !strings.Contains(out, "kvplan diff <stdin> → ") {
		t.Errorf("exit %d: %s%s", code, out, errs)
	}
}

// TestDiffManifests: manifests on both sides, completed by the same flags,
// as check completes each.
func TestDiffManifests(t *testing.T) {
	withStandIn(t)
	agg, dis := "../../testdata/manifests/dynamo/vllm_agg_router.yaml", "../../testdata/manifests/dynamo/vllm_disagg_router.yaml"
	flags := []string{"--gpu", "h100-sxm", "--rate", "2", "--ttft-p95", "1s", "--itl-p95", "50ms"}
	out, errs, code := kvplan(t, append([]string{"diff", agg, dis, "-o", "json"}, flags...)...)
	if code == ExitUsage {
		t.Fatalf("exit 2: %s", errs)
	}
	var d struct {
		Figures []struct {
			Name       string
			Base, Head *float64
		}
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	base := checkFigures(t, runJSON(t, code0(t, append([]string{"check", agg}, flags...)), append([]string{"check", agg}, flags...)...))
	head := checkFigures(t, runJSON(t, code0(t, append([]string{"check", dis}, flags...)), append([]string{"check", dis}, flags...)...))
	for _, f := range d.Figures {
		if f.Base != nil && *f.Base != base[f.Name] || f.Head != nil && *f.Head != head[f.Name] {
			t.Errorf("%s: diff %v → %v, check %v → %v", f.Name, f.Base, f.Head, base[f.Name], head[f.Name])
		}
	}
}

// code0 is the exit code check gives args (0 or 1), for runJSON.
func code0(t *testing.T, args []string) int {
	_, _, code := kvplan(t, args...)
	return code
}
