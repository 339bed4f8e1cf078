package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kvplan/kvplan/rules"
)

// WriteCheckGitHub writes GitHub Actions workflow commands, one annotation
// per finding: ::error for deny, ::warning for warn, ::notice for info,
// located at the line (and, for a manifest, the column) of the field
// involved:
//
//	::error file=plan.toml,line=52,title=kv-router-without-events::router.mode is kv but ...
//	::error file=deploy.yaml,line=44,col=15,title=host-oom-staged-kv (prefill)::...
//
// then one line per assumption and a final line with the verdict.
func WriteCheckGitHub(w io.Writer, r *CheckResult) error {
	for _, f := range r.Findings {
		cmd := map[rules.Severity]string{rules.Deny: "error", rules.Warn: "warning", rules.Info: "notice"}[f.Severity]
		if cmd == "" {
			cmd = "notice"
		}
		props := "file=" + ghProperty(r.file(f))
		if f.Line > 0 {
			props += fmt.Sprintf(",line=%d", f.Line)
			if f.Col > 0 {
				props += fmt.Sprintf(",col=%d", f.Col)
			}
		}
		props += ",title=" + ghProperty(ruleLabel(f))
		msg := f.Message
		if f.Fix != "" {
			msg += "\nFix: " + f.Fix
		}
		if _, err := fmt.Fprintf(w, "::%s %s::%s\n", cmd, props, ghData(msg)); err != nil {
			return err
		}
	}
	for _, n := range r.Notes {
		if _, err := fmt.Fprintf(w, "kvplan note: %s\n", n); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "kvplan check %s: %s\n", r.PlanFile, r.summary())
	return err
}

// ghData escapes a workflow command's message.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty escapes a workflow command's property value.
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
