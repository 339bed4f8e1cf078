package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kvplan/kvplan/rules"
)

// hostileResult carries, in every field a renderer prints, what issue 13
// found reaching the output: a plan path with a newline and a workflow
// command, ANSI escapes, markdown and HTML, invalid UTF-8, a 1 MB message.
func hostileResult(path, id, pool, msg, fix, field string, line int) *CheckResult {
	f := rules.Finding{RuleID: id, Severity: rules.Deny, Pool: pool, Message: msg, Why: msg, Fix: fix, Field: field, Line: line}
	w := rules.Finding{RuleID: id + "-w", Severity: rules.Warn, Message: fix, Line: line}
	r := NewCheckResult(path, nil, []rules.Finding{f, w}, []CheckFigure{{Name: field, Value: 3, Unit: pool}}, rules.Deny)
	r.Rules = []CheckRule{{ID: id, Severity: rules.Deny, Why: msg, Fix: fix, File: path, Line: line}}
	return r
}

const (
	hostileMsg = "needs \x1b[2J\x1b[H 4 GiB <script>alert(1)</script> | cell ``` fence \u202eevil \xff\xfe [img](http://x) ![i](http://t/p.gif)"
	hostileFix = "set `memory_limit`\n::warning::fake\n%0A::error::encoded"
)

var hostile = hostileResult(
	"plans/a\n::error file=x::pwned\r\n##[error]also.toml",
	"team/rule`|[x](javascript:alert(1))",
	"pool\x1b[31m|red",
	hostileMsg+strings.Repeat("x", 1<<20),
	hostileFix,
	"pools.p\x1b]0;title\x07.memory_limit",
	36,
)

func render(t *testing.T, format string, r *CheckResult) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteCheck(&b, format, r); err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return b.String()
}

// TestGitHubCommandsCannotBeInjected: every output line is one of ours: an
// annotation per finding and the summary, which starts with "kvplan check".
func TestGitHubCommandsCannotBeInjected(t *testing.T) {
	out := render(t, "github", hostile)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 2 annotations and the summary:\n%.2000s", len(lines), out)
	}
	if !strings.HasPrefix(lines[0], "::error file=plans/a%0A%3A%3Aerror file=x%3A%3Apwned%0D%0A##[error]also.toml,line=36,title=") ||
		!strings.HasPrefix(lines[1], "::warning ") ||
		!strings.HasPrefix(lines[2], `kvplan check plans/a\n::error file=x::pwned\r\n##[error]also.toml: fail: `) {
		t.Errorf("lines:\n%.300s\n%.300s\n%.300s", lines[0], lines[1], lines[2])
	}
	for _, l := range lines {
		if strings.ContainsAny(l, "\r\x1b\x07") {
			t.Errorf("control character in %.200q", l)
		}
	}
	// The message (with "\nFix: " and the fix) is cut, with its length.
	full := len(hostileMsg) + 1<<20 + len("\nFix: ") + len(hostileFix)
	if !strings.Contains(lines[0], fmt.Sprintf("… (%d bytes)", full)) || len(lines[0]) > 6*MaxText {
		t.Errorf("message not cut: %d bytes", len(lines[0]))
	}
}

func TestTerminalTableHasNoEscapes(t *testing.T) {
	out := render(t, "table", hostile)
	if strings.ContainsAny(out, "\x1b\x07\r\u202e") || !utf8.ValidString(out) {
		t.Errorf("control characters reach the terminal:\n%.600q", out)
	}
	if !strings.Contains(out, `\x1b[2J`) || !strings.Contains(out, `kvplan check plans/a\n::error`) {
		t.Errorf("escapes not visible:\n%.600s", out)
	}
}

func TestMarkdownStaysInItsCells(t *testing.T) {
	out := render(t, "markdown", hostile)
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| 🛑") || strings.HasPrefix(l, "| ⚠️") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2 {
		t.Fatalf("%d finding rows, want 2:\n%.3000s", len(rows), out)
	}
	for _, r := range rows {
		// Unescaped pipes delimit cells: 5 cells have 6.
		if n := strings.Count(r, "|") - strings.Count(r, `\|`); n != 6 {
			t.Errorf("%d cell delimiters in %.300q", n, r)
		}
		// Outside code spans no link or image may open.
		text := r[strings.LastIndex(r, "``")+2:]
		unescaped := strings.ReplaceAll(text, `\]`, "")
		for _, bad := range []string{"<script", "](", "\x1b", "\u202e", "\x07"} {
			if strings.Contains(unescaped, bad) {
				t.Errorf("%q reaches the markdown: %.300q", bad, text)
			}
		}
		for _, bad := range []string{"\x1b", "\x07"} {
			if strings.Contains(r, bad) {
				t.Errorf("%q reaches the markdown: %.300q", bad, r)
			}
		}
	}
	if !strings.Contains(out, "**kvplan check** `plans/a\\n::error file=x::pwned\\r\\n##[error]also.toml`") {
		t.Errorf("summary:\n%.400s", out)
	}
	if !strings.Contains(out, "| ``team/rule`\\|[x](javascript:alert(1)) (pool\\x1b[31m\\|red)`` |") {
		t.Errorf("rule id code span:\n%.1000s", out)
	}
}

func TestJUnitAndSARIFAreValid(t *testing.T) {
	junit := render(t, "junit", hostile)
	dec := xml.NewDecoder(strings.NewReader(junit))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("JUnit is not well-formed XML: %v", err)
		}
	}
	var suites junitSuites
	if err := xml.Unmarshal([]byte(junit), &suites); err != nil {
		t.Fatal(err)
	}
	if suites.Failures != 1 || !strings.Contains(suites.Suites[0].Cases[0].Failure.Text, `needs \x1b[2J`) {
		t.Errorf("junit content: %+v", suites.Suites[0].Cases[0].Failure)
	}
	sarif := render(t, "sarif", hostile)
	var log sarifLog
	if err := json.Unmarshal([]byte(sarif), &log); err != nil {
		t.Fatalf("SARIF is not JSON: %v", err)
	}
	if got := log.Runs[0].Artifacts[0].Location.URI; got != "plans/a%0A::error%20file=x::pwned%0D%0A%23%23%5Berror%5Dalso.toml" {
		t.Errorf("artifact URI %q", got)
	}
	if !strings.Contains(log.Runs[0].Results[0].Message.Text, `needs \x1b[2J`) {
		t.Errorf("sarif message %.100q", log.Runs[0].Results[0].Message.Text)
	}
	// JSON is data: exact values, valid JSON.
	var back CheckResult
	if err := json.Unmarshal([]byte(render(t, "json", hostile)), &back); err != nil {
		t.Fatal(err)
	}
	if back.PlanFile != hostile.PlanFile || back.Findings[0].Pool != hostile.Findings[0].Pool {
		t.Errorf("json changed values: %q %q", back.PlanFile, back.Findings[0].Pool)
	}
}

func TestDocRenderersEscape(t *testing.T) {
	doc := &Doc{
		Title:    "model \x1b[31mred",
		Sections: []Section{{Title: "t|", Header: []string{"NAME", "VALUE"}, Rows: [][]string{{"a|b\x1b[0m", "`x`"}}}},
		Notes:    []string{"note [link](http://x)"},
		Explain:  "kv = ``` fence\x1b[2J\n",
	}
	var tb, md bytes.Buffer
	if err := Render(&tb, FormatTable, doc); err != nil {
		t.Fatal(err)
	}
	if err := Render(&md, FormatMarkdown, doc); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"table": tb.String(), "markdown": md.String()} {
		if strings.Contains(out, "\x1b") {
			t.Errorf("%s keeps ESC:\n%q", name, out)
		}
	}
	if !strings.Contains(md.String(), "| a\\|b\\\\x1b\\[0m | \\`x\\` |") || !strings.Contains(md.String(), "````\nkv = ``` fence") ||
		!strings.Contains(md.String(), `- note \[link\](http://x)`) {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// TestGitHubEscapesAsTheToolkit: CR and LF in a message and in a property
// are %0D and %0A, as GitHub's toolkit writes them (@actions/core
// command.ts: escapeData replaces % CR LF with %25 %0D %0A; escapeProperty
// also : and , with %3A %2C); a CR was printed as \r and a newline in a
// title as \n. Other control characters stay visible escapes.
func TestGitHubEscapesAsTheToolkit(t *testing.T) {
	for _, c := range []struct{ in, data, prop string }{
		{"a\rb\nc%d", "a%0Db%0Ac%25d", "a%0Db%0Ac%25d"},
		{"t\ni:t,l\r", "t%0Ai:t,l%0D", "t%0Ai%3At%2Cl%0D"},
		{"x\x1b[31m\r\n", `x\x1b[31m%0D%0A`, `x\x1b[31m%0D%0A`},
	} {
		if got := ghData(c.in); got != c.data {
			t.Errorf("ghData(%q) = %q, want %q", c.in, got, c.data)
		}
		if got := ghProperty(c.in); got != c.prop {
			t.Errorf("ghProperty(%q) = %q, want %q", c.in, got, c.prop)
		}
	}
}
