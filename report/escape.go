package report

import (
	"net/url"
	"path/filepath"
	"strings"

	"github.com/kvplan/kvplan/internal/safetext"
)

// Every value a renderer prints comes from files kvplan was handed (plan
// paths, pool names, rule ids and messages, catalog names), so each format
// escapes it for itself here, control characters included, and cuts long
// values with an ellipsis and their length:
//
//	terminal tables  control characters as visible escapes (\x1b[31m)
//	markdown         those, plus markdown and HTML punctuation
//	GitHub commands  those, plus the workflow-command escapes (%0A ...)
//	JUnit, SARIF     visible escapes; XML and JSON escaping by the encoders
//
// JSON output (-o json) is data: it carries values exactly, escaped only as
// JSON requires.

// Cut lengths of human output, in bytes.
const (
	MaxName = 200  // a path, rule id, pool name, field or figure name
	MaxText = 2000 // a message, why or fix
)

// termName and termText make a value safe for a terminal (newlines stay).
func termName(s string) string { return safetext.Terminal(safetext.Clip(s, MaxName)) }
func termText(s string) string { return safetext.Terminal(safetext.Clip(s, MaxText)) }

// lineName and lineText are termName and termText on one line: a newline
// cannot start a line of its own.
func lineName(s string) string { return safetext.Line(safetext.Clip(s, MaxName)) }
func lineText(s string) string { return safetext.Line(safetext.Clip(s, MaxText)) }

// MarkdownEscape makes text safe inside a markdown table cell: control
// characters as visible escapes, backslashes, pipes, backticks and brackets
// escaped, newlines as <br>, angle brackets and ampersands as entities, so a
// value can neither end its cell nor open a link, image, code span or HTML
// tag. (Emphasis marks stay: they can only change the look of the cell.)
// It does not cut: see mdText and mdName.
func MarkdownEscape(s string) string {
	return cellEscaper.Replace(safetext.Terminal(s))
}

var cellEscaper = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "`", "\\`", "[", `\[`, "]", `\]`,
	"\r", "", "\n", "<br>", "<", "&lt;", ">", "&gt;", "&", "&amp;",
)

func mdText(s string) string { return MarkdownEscape(safetext.Clip(s, MaxText)) }
func mdName(s string) string { return MarkdownEscape(safetext.Clip(s, MaxName)) }

// mdCode writes s as an inline code span inside a table cell: a fence of
// more backticks than any run inside, pipes escaped (GitHub splits cells on
// them even in code), line ends as spaces, control characters visible.
func mdCode(s string) string {
	s = safetext.Line(safetext.Clip(s, MaxName))
	s = strings.ReplaceAll(s, "|", `\|`)
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

// mdFence returns a code fence longer than any backtick run in s, for a
// fenced block of s.
func mdFence(s string) string { return strings.Repeat("`", max(3, longestRun(s, '`')+1)) }

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// ghData escapes a workflow command's message as GitHub's toolkit does
// (@actions/core escapeData): % CR LF as %25 %0D %0A, which the runner
// shows as a line break in the annotation, never as a new command; every
// other control character as a visible escape.
func ghData(s string) string {
	return ghEscape(safetext.Clip(s, MaxText), ghDataEscaper)
}

var ghDataEscaper = strings.NewReplacer("%", "%25")

// ghProperty escapes a workflow command's property value (file, title) as
// the toolkit's escapeProperty: % CR LF : and , as %25 %0D %0A %3A %2C.
func ghProperty(s string) string {
	return ghEscape(safetext.Clip(s, MaxName), ghPropertyEscaper)
}

var ghPropertyEscaper = strings.NewReplacer("%", "%25", ":", "%3A", ",", "%2C")

// ghEscape writes CR and LF as %0D and %0A, and each stretch between them
// with its other control characters visible and then esc applied (the
// visible escapes hold none of % : ,).
func ghEscape(s string, esc *strings.Replacer) string {
	var b strings.Builder
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			b.WriteString(esc.Replace(safetext.Terminal(s)))
			return b.String()
		}
		b.WriteString(esc.Replace(safetext.Terminal(s[:i])))
		if s[i] == '\r' {
			b.WriteString("%0D")
		} else {
			b.WriteString("%0A")
		}
		s = s[i+1:]
	}
}

// sarifURI turns a plan path into a URI reference, as SARIF requires:
// "my plans/x#1.toml" is "my%20plans/x%231.toml". On a system whose paths
// use slashes, leading slashes name the root however many there are, but
// a reference that starts with two names a host ("//a/x.toml" is host a,
// path /x.toml), so they become one (FuzzRenderers found it: such a path's
// bytes made a host no URI parser accepts).
func sarifURI(path string) string {
	p := filepath.ToSlash(path)
	if filepath.Separator == '/' && strings.HasPrefix(p, "//") {
		p = "/" + strings.TrimLeft(p, "/")
	}
	u := url.URL{Path: p}
	return u.String()
}
