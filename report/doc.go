// Package report renders kvplan's results. Each output format has its own
// file; every renderer is fed a Doc (or, for `kvplan check`, a CheckResult)
// and knows nothing of how the figures were computed.
package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Formats every command accepts with -o.
const (
	FormatTable    = "table"
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
)

// Section is one table of a Doc.
type Section struct {
	Title  string
	Header []string
	Rows   [][]string
}

// Doc is a command's result: human sections for table and markdown, and a
// value with stable JSON field names for json.
type Doc struct {
	Title    string
	Sections []Section
	Notes    []string // shown under the tables: verdicts, assumptions
	Explain  string   // the derivation, shown with --explain
	JSON     any      // what -o json prints
}

// Render writes doc in format.
func Render(w io.Writer, format string, doc *Doc) error {
	switch format {
	case FormatTable, "":
		return renderTable(w, doc)
	case FormatJSON:
		return renderJSON(w, doc.JSON)
	case FormatMarkdown:
		return renderMarkdown(w, doc)
	}
	return fmt.Errorf("output format %q is not one of %s", format, strings.Join(Formats(), ", "))
}

// Formats lists the formats Render accepts.
func Formats() []string {
	f := []string{FormatTable, FormatJSON, FormatMarkdown}
	sort.Strings(f)
	return f
}
