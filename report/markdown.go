package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kvplan/kvplan/internal/safetext"
)

func renderMarkdown(w io.Writer, doc *Doc) error {
	if doc.Title != "" {
		fmt.Fprintf(w, "## %s\n\n", mdText(doc.Title))
	}
	for _, s := range doc.Sections {
		if s.Title != "" {
			fmt.Fprintf(w, "### %s\n\n", mdText(s.Title))
		}
		writeMarkdownTable(w, s.Header, s.Rows)
		fmt.Fprintln(w)
	}
	for _, n := range doc.Notes {
		fmt.Fprintf(w, "- %s\n", mdText(n))
	}
	if doc.Explain != "" {
		explain := safetext.Terminal(doc.Explain)
		fence := mdFence(explain)
		fmt.Fprintf(w, "\n<details><summary>How each figure was derived</summary>\n\n%s\n%s%s\n\n</details>\n", fence, explain, fence)
	}
	return nil
}

// writeMarkdownTable writes a GitHub-flavoured pipe table.
func writeMarkdownTable(w io.Writer, header []string, rows [][]string) {
	if len(header) == 0 && len(rows) > 0 {
		header = make([]string, len(rows[0]))
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(escapeAll(header), " | "))
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = "---"
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(sep, " | "))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(escapeAll(r), " | "))
	}
}

func escapeAll(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = mdText(c)
	}
	return out
}
