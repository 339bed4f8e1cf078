package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kvplan/kvplan/rules"
)

// writeDiffMarkdown writes a pull-request comment in the manner of
// infracost's: the verdict, the cost and SLO figures base → head with their
// change, then the findings the change adds and resolves.
func writeDiffMarkdown(w io.Writer, d *DiffResult) error {
	var b strings.Builder
	mark := "✅"
	if d.Verdict == VerdictFail {
		mark = "❌"
	}
	fmt.Fprintf(&b, "%s **kvplan diff** %s → %s: **%s**\n\n", mark, mdCode(d.Base), mdCode(d.Head), mdText(d.summary()))
	if len(d.Figures) > 0 {
		b.WriteString("| Figure | Base | Head | Change |\n|---|--:|--:|--:|\n")
		for _, f := range d.Figures {
			change := f.change()
			if f.Change != nil && *f.Change != 0 {
				change = "**" + mdName(change) + "**"
			} else {
				change = mdName(change)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdName(f.Label), mdName(f.value(f.Base, f.BaseState)), mdName(f.value(f.Head, f.HeadState)), change)
		}
	}
	if len(d.Findings.Added)+len(d.Findings.Resolved) == 0 {
		fmt.Fprintf(&b, "\nNo finding added or resolved (%d unchanged).\n", d.Findings.Unchanged)
	} else {
		b.WriteString("\n| Change | Severity | Rule | Where | Finding |\n|---|---|---|---|---|\n")
		row := func(change string, fs []rules.Finding, file string) {
			for _, f := range fs {
				at := f.Pos()
				if at.File == "" {
					at.File = file
				}
				where := ""
				if f.Line > 0 {
					where = mdName(at.String())
				}
				msg := mdText(f.Message)
				if f.Fix != "" && change == "🆕 added" {
					msg += "<br>Fix: " + mdText(f.Fix)
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", change, mdSeverity(f.Severity), mdCode(ruleLabel(f)), where, msg)
			}
		}
		row("🆕 added", d.Findings.Added, d.Head)
		row("✔️ resolved", d.Findings.Resolved, d.Base)
	}
	b.WriteString("\n<sub>Figures from `kvplan check` of each side: the planner's, under kvplan plan's names; - = the side has no such figure (no request rate, no link).</sub>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
