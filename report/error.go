package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// ErrorReport is a run that ended in an input or usage error (exit 2) or
// an internal error (exit 3), for the formats a CI pipeline saves: a
// pipeline that runs `kvplan check plan.toml -o junit > report.xml` must
// upload a report that says what went wrong, not an empty file.
type ErrorReport struct {
	Command  string    `json:"command"`   // "kvplan check"
	ExitCode int       `json:"exit_code"` // 2 usage or input, 3 internal
	Problems []Problem `json:"errors"`
}

// Problem is one error, at its place when it has one.
type Problem struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"` // the whole error as kvplan prints it on stderr
}

// ErrorFormats are the -o formats that get an ErrorReport on stdout; the
// table format keeps its error on stderr alone.
func ErrorFormats() []string { return []string{"json", "markdown", "junit", "sarif", "github"} }

// WriteError renders r in format, one of ErrorFormats.
func WriteError(w io.Writer, format string, r ErrorReport) error {
	if len(r.Problems) == 0 {
		r.Problems = []Problem{{Message: "unknown error"}}
	}
	switch format {
	case "json":
		return writeErrorJSON(w, r)
	case "markdown":
		return writeErrorMarkdown(w, r)
	case "junit":
		return writeErrorJUnit(w, r)
	case "sarif":
		return writeErrorSARIF(w, r)
	case "github":
		return writeErrorGitHub(w, r)
	}
	return fmt.Errorf("output format %q has no error report: want one of %s", format, strings.Join(ErrorFormats(), ", "))
}

// kind names the exit code.
func (r ErrorReport) kind() string {
	if r.ExitCode == 3 {
		return "internal error"
	}
	return "input error"
}

// where is "file:line:col", "file", or "".
func (p Problem) where() string {
	if p.File == "" {
		return ""
	}
	s := p.File
	if p.Line > 0 {
		s += fmt.Sprintf(":%d", p.Line)
		if p.Col > 0 {
			s += fmt.Sprintf(":%d", p.Col)
		}
	}
	return s
}

// text is the message without its leading place, for formats that carry
// the place apart (markdown's code span, GitHub's file and line, SARIF's
// location).
func (p Problem) text() string {
	if at := p.where(); at != "" {
		return strings.TrimPrefix(p.Message, at+": ")
	}
	return p.Message
}

// errorJSON is the JSON form: "error" is the first message (what a script
// reads with jq -r .error), "errors" every problem with its place.
type errorJSON struct {
	Error string `json:"error"`
	ErrorReport
}

func writeErrorJSON(w io.Writer, r ErrorReport) error {
	for i := range r.Problems {
		p := &r.Problems[i]
		p.File, p.Field, p.Message = lineName(p.File), lineName(p.Field), lineText(p.Message)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(errorJSON{Error: r.Problems[0].Message, ErrorReport: r})
}

func writeErrorMarkdown(w io.Writer, r ErrorReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "❌ **%s**: %s (exit %d)\n\n", mdName(r.Command), r.kind(), r.ExitCode)
	for _, p := range r.Problems {
		if at := p.where(); at != "" {
			fmt.Fprintf(&b, "- %s: %s\n", mdCode(at), mdText(p.text()))
		} else {
			fmt.Fprintf(&b, "- %s\n", mdText(p.Message))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeErrorJUnit writes one test case, "input", that errored: JUnit's
// <error> is a test that could not run, as opposed to a <failure>.
func writeErrorJUnit(w io.Writer, r ErrorReport) error {
	var texts []string
	for _, p := range r.Problems {
		texts = append(texts, termText(p.Message))
	}
	kind := "input-error"
	if r.ExitCode == 3 {
		kind = "internal-error"
	}
	c := junitCase{Name: "input", Classname: "kvplan." + strings.TrimPrefix(strings.ReplaceAll(termName(r.Command), " ", "."), "kvplan."),
		Error: &junitProblem{Type: kind, Message: firstLine(texts[0]), Text: strings.Join(texts, "\n")}}
	suite := junitSuite{Name: termName(r.Command), Tests: 1, Errors: 1, Cases: []junitCase{c}}
	return writeJUnit(w, junitSuites{Name: termName(r.Command), Tests: 1, Errors: 1, Suites: []junitSuite{suite}})
}

// SARIF: a run whose invocation did not succeed, each problem a
// toolExecutionNotification (at its place when it has one), and no
// results: nothing was checked.
type sarifErrorLog struct {
	Schema  string          `json:"$schema"`
	Version string          `json:"version"`
	Runs    []sarifErrorRun `json:"runs"`
}

type sarifErrorRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ExitCode                   int                 `json:"exitCode"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

func writeErrorSARIF(w io.Writer, r ErrorReport) error {
	inv := sarifInvocation{ExecutionSuccessful: false, ExitCode: r.ExitCode}
	for _, p := range r.Problems {
		n := sarifNotification{Level: "error", Message: sarifText{termText(p.text())}}
		if p.File != "" {
			loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifactLocation{URI: sarifURI(p.File)}}}
			if p.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: p.Line, StartColumn: p.Col}
			}
			n.Locations = []sarifLocation{loc}
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	log := sarifErrorLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifErrorRun{{
		Tool:        sarifTool{Driver: sarifDriver{Name: "kvplan", InformationURI: "https://github.com/kvplan/kvplan", Rules: []sarifRule{}}},
		Invocations: []sarifInvocation{inv},
		Results:     []sarifResult{},
	}}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

// writeErrorGitHub writes one ::error command per problem, at its file and
// line when it has them, then the verdict line.
func writeErrorGitHub(w io.Writer, r ErrorReport) error {
	for _, p := range r.Problems {
		props := "title=" + ghProperty(r.Command+" "+r.kind())
		if p.File != "" {
			props = "file=" + ghProperty(p.File)
			if p.Line > 0 {
				props += fmt.Sprintf(",line=%d", p.Line)
				if p.Col > 0 {
					props += fmt.Sprintf(",col=%d", p.Col)
				}
			}
			props += ",title=" + ghProperty(r.Command+" "+r.kind())
		}
		if _, err := fmt.Fprintf(w, "::error %s::%s\n", props, ghData(p.text())); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%s: %s (exit %d)\n", lineName(r.Command), r.kind(), r.ExitCode)
	return err
}
