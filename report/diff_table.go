package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/kvplan/kvplan/rules"
)

// writeDiffTable writes the verdict, the figures side by side with their
// change, and the findings added and resolved.
func writeDiffTable(w io.Writer, d *DiffResult) error {
	if _, err := fmt.Fprintf(w, "kvplan diff %s → %s: %s\n", lineName(d.Base), lineName(d.Head), d.summary()); err != nil {
		return err
	}
	if len(d.Figures) > 0 {
		rows := make([][]string, 0, len(d.Figures))
		for _, f := range d.Figures {
			rows = append(rows, []string{termName(f.Label), termName(f.value(f.Base, f.BaseState)), termName(f.value(f.Head, f.HeadState)), termName(f.change())})
		}
		if _, err := fmt.Fprintln(w, "\nFigures:"); err != nil {
			return err
		}
		if err := writeTable(w, []string{"FIGURE", "BASE", "HEAD", "CHANGE"}, rows); err != nil {
			return err
		}
	}
	var rows [][]string
	add := func(change string, fs []rules.Finding, file string) {
		for _, f := range fs {
			text := termText(f.Message)
			if f.Fix != "" && change == "added" {
				text += "\nFix: " + termText(f.Fix)
			}
			rows = append(rows, []string{change, termName(string(f.Severity)), termName(ruleLabel(f)), lineName(diffWhere(f, file)), text})
		}
	}
	add("added", d.Findings.Added, d.Head)
	add("resolved", d.Findings.Resolved, d.Base)
	if len(rows) == 0 {
		_, err := fmt.Fprintf(w, "\nNo finding added or resolved (%d unchanged).\n", d.Findings.Unchanged)
		return err
	}
	if _, err := fmt.Fprintln(w, "\nFindings:"); err != nil {
		return err
	}
	return diffFindingTables.write(w, []string{"CHANGE", "SEVERITY", "RULE", "WHERE", "FINDING"}, rows)
}

// diffWhere is a finding's place: "line" in its side's file, or
// "file:line" in another file; "" without a place.
func diffWhere(f rules.Finding, side string) string {
	if f.Line == 0 {
		return ""
	}
	at := f.Pos()
	if at.File == "" || at.File == side {
		at.File = ""
		return strings.TrimPrefix(at.String(), ":")
	}
	return at.String()
}

var diffFindingTables = newTablePool(tablewriter.WithMaxWidth(checkTableWidth), tablewriter.WithRowAutoWrap(tw.WrapNormal),
	tablewriter.WithColumnWidths(tw.NewMapper[int, int]().Set(0, 10).Set(1, 10).Set(2, 30).Set(3, 7).Set(4, 55)))
