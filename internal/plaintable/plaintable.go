// Package plaintable draws kvplan's plain tables (bordered, left-aligned,
// one header row) through tablewriter's renderer without a tablewriter.Table.
// It depends on tablewriter alone, so that BenchmarkStartup's floor
// (cmd/kvplan/testdata/floor) draws its tables the way kvplan does.
package plaintable

import (
	"bytes"
	"io"
	"strings"
	"sync"

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
	// The renderer reads the maps during a call and keeps none, so a table
	// fills six maps in place rather than making three per row: each holds
	// n CellContexts of 180 bytes, and they were half of a disagg run's
	// allocations.
	fill := func(m map[int]tw.CellContext, cells []string, isFull, withWidth bool) map[int]tw.CellContext {
		clear(m)
		for i, c := range cells {
			cc := tw.CellContext{Data: c}
			if isFull {
				cc.Align, cc.Padding = tw.AlignLeft, tw.PaddingDefault
			}
			if isFull || withWidth {
				cc.Width = widths[i]
			}
			m[i] = cc
		}
		return m
	}
	newMap := func() map[int]tw.CellContext { return make(map[int]tw.CellContext, n) }
	// bare rows in a ring: at row i, slot(i-1) holds row i-1 (the header
	// for row 0), slot(i) row i, and slot(i+1) is filled with row i+1.
	ring := [3]map[int]tw.CellContext{newMap(), newMap(), newMap()}
	slot := func(i int) map[int]tw.CellContext { return ring[(i+3)%3] }

	// Into w itself when it is a buffer (a bytes.Buffer's writes cannot
	// fail, so nothing is left half written), else into one of its own.
	buf, ok := w.(*bytes.Buffer)
	if !ok {
		buf = new(bytes.Buffer)
	}
	buf.Grow(size(widths, n, len(rows)))
	f := renderer.NewBlueprint()
	f.Logger(quiet())
	if err := f.Start(buf); err != nil {
		return true, err
	}
	f.Line(tw.Formatting{Row: tw.RowContext{Widths: widths, Next: fill(newMap(), header, false, false), Position: tw.Header,
		Location: tw.LocationFirst}, Level: tw.LevelHeader})
	headerCells := fill(newMap(), header, true, true)
	f.Header([][]string{header}, tw.Formatting{Row: tw.RowContext{Widths: widths, Current: headerCells,
		Next: fill(slot(0), rows[0], false, true), Position: tw.Header, Location: tw.LocationFirst}, Level: tw.LevelHeader,
		NormalizedWidths: widths})
	cur := fill(newMap(), rows[0], true, true)
	f.Line(tw.Formatting{Row: tw.RowContext{Widths: widths, Current: headerCells, Next: cur, Position: tw.Header,
		Location: tw.LocationMiddle}, Level: tw.LevelBody})
	fill(slot(-1), header, false, true)
	for i, r := range rows {
		if i > 0 {
			fill(cur, r, true, true)
		}
		var next map[int]tw.CellContext
		loc := tw.LocationMiddle
		if i+1 < len(rows) {
			next = fill(slot(i+1), rows[i+1], false, true)
		} else {
			loc = tw.LocationEnd
		}
		f.Row(r, tw.Formatting{Row: tw.RowContext{Widths: widths, Current: cur, Previous: slot(i - 1), Next: next,
			Position: tw.Row, Location: loc}, Level: tw.LevelBody, NormalizedWidths: widths})
	}
	f.Line(tw.Formatting{Row: tw.RowContext{Widths: widths, Current: cur, Previous: slot(len(rows) - 2), Position: tw.Row,
		Location: tw.LocationEnd}, Level: tw.LevelFooter})
	if err := f.Close(); err != nil {
		return true, err
	}
	if ok {
		return true, nil
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

// size is what Write grows its buffer to, once: the bytes of a table of n
// columns of widths (padding included) and the given number of rows, whose
// lines (top and bottom borders, header, separator, rows) take at most
// four bytes a column, a border character (three bytes) and its padding
// each side, and the newline. Box drawing takes three bytes a column, a
// wide rune four for two; only combining marks take more, and then the
// buffer grows as it would have anyway.
func size(widths tw.Mapper[int, int], n, rows int) int {
	line := 4*(n+1) + 1
	for i := range n {
		line += 4 * widths[i]
	}
	return line * (rows + 4)
}

// quiet is one suspended logger for every table: each of the renderer's
// calls on it returns at the suspended flag, an atomic.
var quiet = sync.OnceValue(QuietLogger)

// QuietLogger is a tablewriter logger that is suspended, not only
// disabled: ll's Debugf formats its message (tablewriter passes width maps
// and cell contexts) before a disabled logger drops it, and returns at once
// when suspended. Table and its renderer log on every line they draw.
func QuietLogger() *ll.Logger { return ll.New("kvplan").Disable().Suspend() }
