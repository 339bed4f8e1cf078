package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kvplan/kvplan/rules"
)

// WriteCheckMarkdown writes a pull-request comment: a one-line verdict, a
// findings table (severity, rule, where, finding, fix), and the key figures
// in a table inside <details>.
func WriteCheckMarkdown(w io.Writer, r *CheckResult) error {
	var b strings.Builder
	mark := "✅"
	if r.Verdict == VerdictFail {
		mark = "❌"
	}
	fmt.Fprintf(&b, "%s **kvplan check** %s: **%s**\n\n", mark, mdCode(r.PlanFile), r.summary())
	if len(r.Findings) == 0 {
		fmt.Fprintf(&b, "No rule fired (%d rules evaluated).\n", len(r.Rules))
	} else {
		b.WriteString("| Severity | Rule | Where | Finding | Fix |\n|---|---|---|---|---|\n")
		for _, f := range r.Findings {
			where := mdName(r.where(f))
			if f.Field != "" {
				where += " " + mdCode(f.Field)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdSeverity(f.Severity), mdCode(ruleLabel(f)), where, mdText(f.Message), mdText(f.Fix))
		}
	}
	if len(r.Figures) > 0 {
		b.WriteString("\n<details><summary>Key figures</summary>\n\n| Figure | Value |\n|---|---|\n")
		for _, fg := range r.Figures {
			fmt.Fprintf(&b, "| %s | %s |\n", mdName(fg.Name), mdName(FormatFigure(fg)))
		}
		b.WriteString("\n</details>\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n<details><summary>Notes (what kvplan assumed, skipped or does not model)</summary>\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", mdText(n.String()))
		}
		b.WriteString("\n</details>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdSeverity(s rules.Severity) string {
	switch s {
	case rules.Deny:
		return "🛑 deny"
	case rules.Warn:
		return "⚠️ warn"
	}
	return "ℹ️ " + mdName(string(s))
}
