package report

import (
	"fmt"
	"io"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

func renderTable(w io.Writer, doc *Doc) error {
	if doc.Title != "" {
		fmt.Fprintln(w, termText(doc.Title))
		fmt.Fprintln(w)
	}
	for _, s := range doc.Sections {
		if s.Title != "" {
			fmt.Fprintln(w, termText(s.Title))
		}
		if err := writeTable(w, termCells(s.Header), termRows(s.Rows)); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	for _, n := range doc.Notes {
		fmt.Fprintln(w, "• "+termText(n))
	}
	if doc.Explain != "" {
		if len(doc.Notes) > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "How each figure was derived:")
		fmt.Fprint(w, safetext.Terminal(doc.Explain))
	}
	return nil
}

func termCells(cells []string) []string {
	if cells == nil {
		return nil
	}
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = termText(c)
	}
	return out
}

func termRows(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = termCells(r)
	}
	return out
}

// writeTable renders one bordered table, left-aligned, header as given;
// extra options (widths, wrapping) come after the defaults.
func writeTable(w io.Writer, header []string, rows [][]string, extra ...tablewriter.Option) error {
	opts := append([]tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	}, extra...)
	t := tablewriter.NewTable(w, opts...)
	if len(header) > 0 {
		t.Header(header)
	}
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}
