package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/kvplan/kvplan/rules"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Cases     []junitCase `xml:"testcase"`
	SystemOut string      `xml:"system-out,omitempty"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteCheckJUnit writes one test case per rule evaluated. A rule fails
// when one of its findings is at or above --fail-on; its findings below that
// go to system-out. A rule that errored at run time is an <error>.
func WriteCheckJUnit(w io.Writer, r *CheckResult) error {
	return WriteChecksJUnit(w, []*CheckResult{r})
}

// WriteChecksJUnit writes one test suite per input checked, named for its
// file, each with one test case per rule.
func WriteChecksJUnit(w io.Writer, rs []*CheckResult) error {
	doc := junitSuites{Name: "kvplan check"}
	for _, r := range rs {
		s := junitSuiteOf(r)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Suites = append(doc.Suites, s)
	}
	return writeJUnit(w, doc)
}

// junitSuiteOf is the test suite of one input: a test case per rule.
func junitSuiteOf(r *CheckResult) junitSuite {
	byRule := map[string][]rules.Finding{}
	for _, f := range r.Findings {
		byRule[f.RuleID] = append(byRule[f.RuleID], f)
	}
	suite := junitSuite{Name: termName(r.PlanFile)}
	ruleList := append([]CheckRule(nil), r.Rules...)
	known := map[string]bool{}
	for _, x := range r.Rules {
		known[x.ID] = true
	}
	for _, f := range r.Findings { // findings of no rule: a manifest reader's
		if !known[f.RuleID] && !strings.HasPrefix(f.RuleID, rules.RuntimeErrorPrefix) {
			known[f.RuleID] = true
			ruleList = append(ruleList, CheckRule{ID: f.RuleID, Severity: f.Severity})
		}
	}
	for _, rule := range ruleList {
		c := junitCase{Name: termName(rule.ID), Classname: "kvplan.check"}
		var failing, other []string
		worst := rules.Severity("")
		for _, f := range byRule[rule.ID] {
			text := junitText(r, f)
			if rules.Failing(f, r.FailOn) {
				failing = append(failing, text)
				if f.Severity.Rank() > worst.Rank() {
					worst = f.Severity
				}
			} else {
				other = append(other, text)
			}
		}
		if len(failing) > 0 {
			c.Failure = &junitProblem{Type: termName(string(worst)), Message: firstLine(failing[0]), Text: strings.Join(failing, "\n\n")}
			suite.Failures++
		}
		if errs := byRule[rules.RuntimeErrorPrefix+rule.ID]; len(errs) > 0 {
			var texts []string
			for _, f := range errs {
				texts = append(texts, junitText(r, f))
			}
			c.Error = &junitProblem{Type: "rule-error", Message: firstLine(termText(errs[0].Message)), Text: strings.Join(texts, "\n\n")}
			suite.Errors++
		}
		c.SystemOut = strings.Join(other, "\n\n")
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	if len(r.Notes) > 0 {
		var notes []string
		for _, n := range r.Notes {
			notes = append(notes, "note: "+lineText(n.String()))
		}
		suite.SystemOut = strings.Join(notes, "\n")
	}
	return suite
}

// writeJUnit writes doc as an indented JUnit XML document.
func writeJUnit(w io.Writer, doc junitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

func junitText(r *CheckResult, f rules.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s: %s", lineName(r.where(f)), termName(string(f.Severity)), termText(f.Message))
	if f.Pool != "" {
		fmt.Fprintf(&b, "\npool: %s", lineName(f.Pool))
	}
	if f.Why != "" {
		fmt.Fprintf(&b, "\nwhy: %s", termText(f.Why))
	}
	if f.Fix != "" {
		fmt.Fprintf(&b, "\nfix: %s", termText(f.Fix))
	}
	return b.String()
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }
