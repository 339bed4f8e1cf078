package report

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// checkTableWidth bounds the findings table so long messages wrap.
const checkTableWidth = 120

// WriteCheckTable writes the verdict, the findings (severity, rule, place,
// message and fix), then the key figures, as text tables.
func WriteCheckTable(w io.Writer, r *CheckResult) error {
	if _, err := fmt.Fprintf(w, "kvplan check %s: %s\n", lineName(r.PlanFile), r.summary()); err != nil {
		return err
	}
	if len(r.Findings) == 0 {
		if _, err := fmt.Fprintf(w, "No rule fired (%d rules evaluated).\n", len(r.Rules)); err != nil {
			return err
		}
	} else {
		rows := make([][]string, 0, len(r.Findings))
		for _, f := range r.Findings {
			line := lineName(r.shortWhere(f))
			text := termText(f.Message)
			if f.Fix != "" {
				text += "\nFix: " + termText(f.Fix)
			}
			rows = append(rows, []string{termName(string(f.Severity)), termName(ruleLabel(f)), line, text})
		}
		if err := findingTables.write(w, []string{"SEVERITY", "RULE", "WHERE", "FINDING"}, rows); err != nil {
			return err
		}
	}
	if len(r.Figures) > 0 {
		if _, err := fmt.Fprintln(w, "\nKey figures:"); err != nil {
			return err
		}
		rows := make([][]string, 0, len(r.Figures))
		for _, fg := range r.Figures {
			rows = append(rows, []string{termName(fg.Name), termName(FormatFigure(fg))})
		}
		if err := writeTable(w, []string{"FIGURE", "VALUE"}, rows); err != nil {
			return err
		}
	}
	return writeNotes(w, r.Notes)
}

// writeNotes lists the assumptions, one a line.
func writeNotes(w io.Writer, notes []CheckNote) error {
	if len(notes) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w, "\nNotes (what kvplan assumed, skipped or does not model):"); err != nil {
		return err
	}
	for _, n := range notes {
		if _, err := fmt.Fprintf(w, "  - %s\n", lineText(n.String())); err != nil {
			return err
		}
	}
	return nil
}

// findingColumnWidths give the finding text most of the width.
var findingColumnWidths = tw.NewMapper[int, int]().Set(0, 10).Set(1, 36).Set(2, 10).Set(3, 64)

// findingTables are the findings tables of `kvplan check`: wrapped to
// checkTableWidth, with findingColumnWidths.
var findingTables = newTablePool(tablewriter.WithMaxWidth(checkTableWidth), tablewriter.WithRowAutoWrap(tw.WrapNormal),
	tablewriter.WithColumnWidths(findingColumnWidths))
