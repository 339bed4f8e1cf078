package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// checkTableWidth bounds the findings table so long messages wrap.
const checkTableWidth = 120

// WriteCheckTable writes the verdict, the findings (severity, rule, line,
// message and fix), then the key figures, as text tables.
func WriteCheckTable(w io.Writer, r *CheckResult) error {
	if _, err := fmt.Fprintf(w, "kvplan check %s: %s\n", r.PlanFile, r.summary()); err != nil {
		return err
	}
	if len(r.Findings) == 0 {
		if _, err := fmt.Fprintf(w, "No rule fired (%d rules evaluated).\n", len(r.Rules)); err != nil {
			return err
		}
	} else {
		rows := make([][]string, 0, len(r.Findings))
		for _, f := range r.Findings {
			line := ""
			if f.Line > 0 {
				line = strconv.Itoa(f.Line)
			}
			text := f.Message
			if f.Fix != "" {
				text += "\nFix: " + f.Fix
			}
			rows = append(rows, []string{string(f.Severity), ruleLabel(f), line, text})
		}
		if err := writeCheckTable(w, []string{"SEVERITY", "RULE", "LINE", "FINDING"}, rows, checkTableWidth, findingColumnWidths); err != nil {
			return err
		}
	}
	if len(r.Figures) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w, "\nKey figures:"); err != nil {
		return err
	}
	rows := make([][]string, 0, len(r.Figures))
	for _, fg := range r.Figures {
		rows = append(rows, []string{fg.Name, FormatFigure(fg)})
	}
	return writeCheckTable(w, []string{"FIGURE", "VALUE"}, rows, 0, nil)
}

// findingColumnWidths give the finding text most of the width.
var findingColumnWidths = tw.NewMapper[int, int]().Set(0, 10).Set(1, 40).Set(2, 6).Set(3, 64)

func writeCheckTable(w io.Writer, header []string, rows [][]string, maxWidth int, widths tw.Mapper[int, int]) error {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	}
	if maxWidth > 0 {
		opts = append(opts, tablewriter.WithMaxWidth(maxWidth), tablewriter.WithRowAutoWrap(tw.WrapNormal))
	}
	if widths != nil {
		opts = append(opts, tablewriter.WithColumnWidths(widths))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(header)
	for _, row := range rows {
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}
