package report

import (
	"fmt"
	"io"

	"github.com/kvplan/kvplan/rules"
)

// WriteCheckGitHub writes GitHub Actions workflow commands, one annotation
// per finding: ::error for deny, ::warning for warn, ::notice for info,
// located at the plan file's line for the field involved:
//
//	::error file=plan.toml,line=52,title=kv-router-without-events::router.mode is kv but ...
//
// and a final line with the verdict.
func WriteCheckGitHub(w io.Writer, r *CheckResult) error {
	for _, f := range r.Findings {
		cmd := map[rules.Severity]string{rules.Deny: "error", rules.Warn: "warning", rules.Info: "notice"}[f.Severity]
		if cmd == "" {
			cmd = "notice"
		}
		props := "file=" + ghProperty(r.PlanFile)
		if f.Line > 0 {
			props += fmt.Sprintf(",line=%d", f.Line)
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
	// Not a command: the path is escaped onto this one line, so a path
	// holding a newline and "::error" cannot start a command of its own.
	_, err := fmt.Fprintf(w, "kvplan check %s: %s\n", lineName(r.PlanFile), r.summary())
	return err
}
