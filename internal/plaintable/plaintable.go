// Package plaintable draws kvplan's plain tables (bordered, left-aligned,
// one header row) through tablewriter's renderer without a tablewriter.Table.
// It depends on tablewriter alone, so that BenchmarkStartup's floor
// (cmd/kvplan/testdata/floor) draws its tables the way kvplan does.
package plaintable

import (
	"bytes"
	"io"
	"strings"

	"github.com/olekukonko/ll"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// init turns tablewriter's width cache off for the whole process (kvplan
// draws every table through tablewriter, here or in report's pooled
// Tables). The cache is an LRU of 8,192 strings behind a mutex: for the
// short cells of kvplan's tables a lookup costs what measuring the cell
// again does (BenchmarkWidth: 0.46 µs with it, 0.42 without, for nine of
// disagg's cells), and on a cold start its code and inserts were 30 µs of
// disagg's 0.47 ms from main to exit. Widths are the same either way
// (TestWrite compares with Table's output).
func init() { twwidth.SetCacheCapacity(0) }

// Write draws a table, bordered and left-aligned with the header as given
// (the configuration of report's plain tables), through
// tablewriter's own renderer (renderer.Blueprint, which draws every border,
// junction and padded cell) with the calls and contexts tablewriter.Table
// makes for it, without a Table. A Table costs what the renderer does
// again: NewTable allocates a 10,240-entry stringer cache (440 KB of fresh
// memory, a quarter of a hello-world run) and Render lays out merges,
// wrapping and captions that a plain table has none of.
//
// It draws only tables in which Table's layout reduces to the widest cell
// of each column: a header and at least one row, every row as wide as the
// header, and cells of one line with no space or tab at either end (Table
// trims those). It reports false, having written nothing, for any other
// table, which the caller then renders with a Table. TestWrite checks the
// output is Table's, byte for byte, on random tables.
func Write(w io.Writer, header []string, rows [][]string) (bool, error) {
	if !fits(header, rows) {
		return false, nil
	}
	n := len(header)
	widths := tw.NewMapper[int, int]()
	measure := func(cells []string) {
		for i, c := range cells {
			if cw := twwidth.Width(c) + 2; cw > widths[i] {
				widths[i] = cw
			}
		}
	}
	measure(header)
	for _, r := range rows {
		measure(r)
	}
	// full cells carry alignment, padding and width, as Table's Current
	// cells do; bare cells only data (and width), as its Previous and Next.
	full := func(cells []string) map[int]tw.CellContext {
		m := make(map[int]tw.CellContext, n)
		for i, c := range cells {
			m[i] = tw.CellContext{Data: c, Align: tw.AlignLeft, Padding: tw.PaddingDefault, Width: widths[i]}
		}
		return m
	}
	bare := func(cells []string, withWidth bool) map[int]tw.CellContext {
		m := make(map[int]tw.CellContext, n)
		for i, c := range cells {
			cc := tw.CellContext{Data: c}
			if withWidth {
				cc.Width = widths[i]
			}
			m[i] = cc
		}
		return m
	}
	var buf bytes.Buffer
	f := renderer.NewBlueprint()
	f.Logger(QuietLogger())
	if err := f.Start(&buf); err != nil {
		return true, err
	}
	f.Line(tw.Formatting{Row: tw.RowContext{Widths: widths, Next: bare(header, false), Position: tw.Header, Location: tw.LocationFirst},
		Level: tw.LevelHeader})
	headerCells := full(header)
	f.Header([][]string{header}, tw.Formatting{Row: tw.RowContext{Widths: widths, Current: headerCells, Next: bare(rows[0], true),
		Position: tw.Header, Location: tw.LocationFirst}, Level: tw.LevelHeader, NormalizedWidths: widths})
	f.Line(tw.Formatting{Row: tw.RowContext{Widths: widths, Current: headerCells, Next: full(rows[0]), Position: tw.Header,
		Location: tw.LocationMiddle}, Level: tw.LevelBody})
	prev := bare(header, true)
	var cur map[int]tw.CellContext
	for i, r := range rows {
		cur = full(r)
		var next map[int]tw.CellContext
		loc := tw.LocationMiddle
		if i+1 < len(rows) {
			next = bare(rows[i+1], true)
		} else {
			loc = tw.LocationEnd
		}
		f.Row(r, tw.Formatting{Row: tw.RowContext{Widths: widths, Current: cur, Previous: prev, Next: next, Position: tw.Row,
			Location: loc}, Level: tw.LevelBody, NormalizedWidths: widths})
		if i+1 < len(rows) {
			prev = bare(r, true)
		}
	}
	f.Line(tw.Formatting{Row: tw.RowContext{Widths: widths, Current: cur, Previous: prev, Position: tw.Row, Location: tw.LocationEnd},
		Level: tw.LevelFooter})
	if err := f.Close(); err != nil {
		return true, err
	}
	_, err := w.Write(buf.Bytes())
	return true, err
}

// fits reports whether Write draws the table as Table would (see there).
func fits(header []string, rows [][]string) bool {
	if len(header) == 0 || len(rows) == 0 {
		return false
	}
	plain := func(cells []string) bool {
		if len(cells) != len(header) {
			return false
		}
		for _, c := range cells {
			if strings.ContainsAny(c, "\n\r\t\v\f") || strings.TrimSpace(c) != c {
				return false
			}
		}
		return true
	}
	if !plain(header) {
		return false
	}
	for _, r := range rows {
		if !plain(r) {
			return false
		}
	}
	return true
}

// QuietLogger is a tablewriter logger that is suspended, not only
// disabled: ll's Debugf formats its message (tablewriter passes width maps
// and cell contexts) before a disabled logger drops it, and returns at once
// when suspended. Table and its renderer log on every line they draw.
func QuietLogger() *ll.Logger { return ll.New("kvplan").Disable().Suspend() }
