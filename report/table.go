package report

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/kvplan/kvplan/internal/plaintable"
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

// writeTable renders one bordered table, left-aligned, header as given:
// through tablewriter's renderer directly when internal/plaintable can
// draw it, else through a pooled Table. A table with other options (widths,
// wrapping) has a tablePool of its own.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	if ok, err := plaintable.Write(w, header, rows); ok {
		return err
	}
	return plainTables.write(w, header, rows)
}

// tablePool reuses tablewriter tables of one configuration. Each
// tablewriter.NewTable allocates a 10,240-entry stringer cache (440 KB,
// about 0.25 ms): a command that prints three tables paid for three.
// Pooled tables get a cache that holds nothing (kvplan gives tablewriter
// strings, so there is nothing to cache), are Reset after each use, and
// write to their own buffer, which is copied to the caller's writer.
type tablePool struct {
	opts []tablewriter.Option
	pool sync.Pool
}

type pooledTable struct {
	t   *tablewriter.Table
	buf bytes.Buffer
}

func newTablePool(extra ...tablewriter.Option) *tablePool {
	p := &tablePool{opts: append([]tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithStringerCacheCustom(noCache{}),
		tablewriter.WithLogger(plaintable.QuietLogger()),
	}, extra...)}
	p.pool.New = func() any {
		pt := &pooledTable{}
		pt.t = tablewriter.NewTable(&pt.buf, p.opts...)
		return pt
	}
	return p
}

// plainTables are the tables of renderTable.
var plainTables = newTablePool()

func (p *tablePool) write(w io.Writer, header []string, rows [][]string) error {
	pt := p.pool.Get().(*pooledTable)
	defer func() {
		pt.t.Reset()
		pt.buf.Reset()
		p.pool.Put(pt)
	}()
	if len(header) > 0 {
		pt.t.Header(header)
	}
	for _, r := range rows {
		if err := pt.t.Append(r); err != nil {
			return err
		}
	}
	if err := pt.t.Render(); err != nil {
		return err
	}
	_, err := w.Write(pt.buf.Bytes())
	return err
}

// noCache is a tablewriter stringer cache that keeps nothing.
type noCache struct{}

func (noCache) Add(reflect.Type, reflect.Value) bool   { return false }
func (noCache) Get(reflect.Type) (reflect.Value, bool) { return reflect.Value{}, false }
func (noCache) Purge()                                 {}
