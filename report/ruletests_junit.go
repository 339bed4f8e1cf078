package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kvplan/kvplan/rules"
)

// WriteRuleTestsJUnit writes one JUnit test case per rule test (an
// .expect.toml file) of `kvplan rules test -o junit`: a failed expectation
// is a <failure> listing every unmet expectation, and the findings that
// fired go to system-out.
func WriteRuleTestsJUnit(w io.Writer, results []rules.TestResult) error {
	suite := junitSuite{Name: "kvplan rules test"}
	for _, r := range results {
		c := junitCase{Name: r.Name, Classname: "kvplan.rules.test"}
		var fired []string
		for _, f := range r.Findings {
			name := f.RuleID
			if f.Pool != "" {
				name += "@" + f.Pool
			}
			fired = append(fired, fmt.Sprintf("%s (%s): %s", name, f.Severity, f.Message))
		}
		if r.Plan != "" {
			c.SystemOut = "plan: " + r.Plan + "\n"
		}
		if len(fired) > 0 {
			c.SystemOut += "fired:\n" + strings.Join(fired, "\n")
		} else {
			c.SystemOut += "fired: nothing"
		}
		if !r.Passed() {
			c.Failure = &junitProblem{Type: "expectation", Message: r.Failures[0], Text: strings.Join(r.Failures, "\n")}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	return writeJUnit(w, junitSuites{Name: "kvplan rules test", Tests: suite.Tests, Failures: suite.Failures, Suites: []junitSuite{suite}})
}
