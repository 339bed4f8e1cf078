package plaintable

import (
	"bytes"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/tw"
)

// tableRender is what a tablewriter.Table of Write's configuration (the
// options of report's plain tables), new for the call, prints for header
// and rows.
func tableRender(t *testing.T, header []string, rows [][]string) string {
	t.Helper()
	var b bytes.Buffer
	tb := tablewriter.NewTable(&b, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft))
	tb.Header(header)
	for _, r := range rows {
		if err := tb.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestWrite checks that Write prints what a Table prints, byte for byte: on
// fixed tables (disagg's, one row, one column, empty cells, wide and
// combining characters, cells of 500 columns) and on 1,000 random ones; and
// that it declines (writes nothing) the tables it does not draw, which
// report then gives to a Table.
func TestWrite(t *testing.T) {
	fixed := []struct {
		header []string
		rows   [][]string
	}{
		{[]string{"figure", "value", "note"}, [][]string{
			{"on the busiest path", "164 MiB (172032000 B)", "rate per node: every rank's KV crosses one path"},
			{"effective throughput", "104 MB/s", "latency 0.200 ms per transfer"},
			{"transfer alone", "1654.4 ms", ""}}},
		{[]string{"a"}, [][]string{{"b"}}},
		{[]string{"a", "b"}, [][]string{{"", ""}}},
		{[]string{"", ""}, [][]string{{"x", ""}, {"", "y"}}},
		{[]string{"a very long header cell", "b"}, [][]string{{"x", "y"}}},
		{[]string{"ratio", "×"}, [][]string{{"73.02×", "µs — 中文 ✓ 🚀 e\u0301"}}},
		{[]string{"long", "cells"}, [][]string{{strings.Repeat("a long note, ", 40) + "end", strings.Repeat("x", 500)}}},
	}
	for _, c := range fixed {
		compareDirect(t, c.header, c.rows)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"", "a", "KV", "164 MiB", "1,654.4 ms", "×", "µ", "—", "中", "✓", "🚀", "e\u0301", "a b", "x-y", "$0.00/h", "\\x1b[31m"}
	cell := func() string {
		var parts []string
		for range rng.IntN(4) {
			parts = append(parts, words[rng.IntN(len(words))])
		}
		return strings.TrimSpace(strings.Join(parts, " "))
	}
	for range 1000 {
		cols, nrows := 1+rng.IntN(5), 1+rng.IntN(6)
		header := make([]string, cols)
		for i := range header {
			header[i] = cell()
		}
		rows := make([][]string, nrows)
		for i := range rows {
			rows[i] = make([]string, cols)
			for j := range rows[i] {
				rows[i][j] = cell()
			}
		}
		compareDirect(t, header, rows)
		if t.Failed() {
			return
		}
	}
	for _, c := range []struct {
		name   string
		header []string
		rows   [][]string
	}{
		{"no header", nil, [][]string{{"a"}}},
		{"no rows", []string{"a"}, nil},
		{"short row", []string{"a", "b"}, [][]string{{"x"}}},
		{"two lines", []string{"a"}, [][]string{{"x\ny"}}},
		{"tab", []string{"a"}, [][]string{{"x\ty"}}},
		{"untrimmed", []string{"a"}, [][]string{{" x"}}},
	} {
		var b bytes.Buffer
		ok, err := Write(&b, c.header, c.rows)
		if ok || err != nil || b.Len() > 0 {
			t.Errorf("%s: drawn directly (ok %v, err %v, %d bytes); want it left to a Table", c.name, ok, err, b.Len())
		}
	}
}

func compareDirect(t *testing.T, header []string, rows [][]string) {
	t.Helper()
	var b bytes.Buffer
	ok, err := Write(&b, header, rows)
	if err != nil || !ok {
		t.Fatalf("%q %q: not drawn directly (ok %v, err %v)", header, rows, ok, err)
	}
	if want := tableRender(t, header, rows); b.String() != want {
		t.Errorf("%q %q: direct\n%s\nTable\n%s", header, rows, b.String(), want)
	}
	// Into a writer that is not a buffer, through Write's own buffer.
	var other bytes.Buffer
	if ok, err := Write(struct{ io.Writer }{&other}, header, rows); !ok || err != nil || other.String() != b.String() {
		t.Errorf("%q %q: through a plain writer (ok %v, err %v)\n%s\ninto a buffer\n%s", header, rows, ok, err, other.String(), b.String())
	}
	// size holds the table unless a cell has a combining mark (a rune of
	// no width), so that Write grows its buffer once.
	if !strings.ContainsRune(strings.Join(append(append([]string{}, header...), slices.Concat(rows...)...), ""), '\u0301') {
		widths := tw.NewMapper[int, int]()
		for _, r := range append([][]string{header}, rows...) {
			for i, c := range r {
				widths[i] = max(widths[i], twwidth.Width(c)+2)
			}
		}
		if n := size(widths, len(header), len(rows)); b.Len() > n {
			t.Errorf("%q %q: %d bytes drawn, size says at most %d", header, rows, b.Len(), n)
		}
	}
}

// BenchmarkWidth times tablewriter's width of disagg's cells with its LRU
// cache (tablewriter's default) and without (what init sets), which is
// why init turns the cache off.
//
//	go test ./internal/plaintable -run '^$' -bench Width
func BenchmarkWidth(b *testing.B) {
	cells := []string{"figure", "value", "note", "KV per token (all ranks)", "112 KiB (114688 B)",
		"rate per node: every rank's KV crosses one path", "TTFT disaggregated", "1677.3 ms", "73.02×"}
	for _, c := range []struct {
		name     string
		capacity int
	}{{"cache", 8192}, {"no-cache", 0}} {
		b.Run(c.name, func(b *testing.B) {
			twwidth.SetCacheCapacity(c.capacity)
			defer twwidth.SetCacheCapacity(0)
			n := 0
			for b.Loop() {
				for _, s := range cells {
					n += twwidth.Width(s)
				}
			}
			if n == 0 {
				b.Fatal("no width")
			}
		})
	}
}
