package report

import (
	"fmt"
	"io"

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
		if _, err := fmt.Fprintf(w, "kvplan note: %s\n", lineText(n.String())); err != nil {
			return err
		}
	}
	// Not commands: paths and notes are escaped onto their one line, so a
	// path holding a newline and "::error" cannot start a command of its own.
	_, err := fmt.Fprintf(w, "kvplan check %s: %s\n", lineName(r.PlanFile), r.summary())
	return err
}
