package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/kvplan/kvplan/planfile"
	"github.com/kvplan/kvplan/rules"
	"github.com/kvplan/kvplan/units"
)

// Verdict of a check.
type Verdict string

// Verdicts.
const (
	VerdictPass Verdict = "pass" // no finding at or above --fail-on
	VerdictFail Verdict = "fail" // at least one
)

// CheckResult is what `kvplan check` reports: the plan file, every rule
// evaluated, the findings (with plan-file lines resolved), key figures and
// the verdict.
type CheckResult struct {
	PlanFile string          `json:"plan_file"`
	Verdict  Verdict         `json:"verdict"`
	FailOn   rules.Severity  `json:"fail_on"`
	Counts   CheckCounts     `json:"counts"`
	Findings []rules.Finding `json:"findings"`
	Rules    []CheckRule     `json:"rules"`
	Figures  []CheckFigure   `json:"figures"`
	// Notes are what kvplan assumed because the input did not say it (a
	// manifest names no GPU, no workload; an engine default), what it
	// skipped, and what it read but does not model, each at the place it
	// concerns when there is one; and which engine-model efficiencies the
	// figures rest on (the shipped fit, or the user's calibration).
	Notes []CheckNote `json:"notes,omitempty"`
}

// CheckNote is one note (an assumption, a skipped document, a setting not
// modelled), at the place it concerns.
type CheckNote struct {
	Message string `json:"message"`
	planfile.Pos
}

// String renders a note as "file:line:col: message", or the message alone.
func (n CheckNote) String() string {
	if n.Pos.IsZero() {
		return n.Message
	}
	return n.Pos.String() + ": " + n.Message
}

// CheckCounts counts findings by severity.
type CheckCounts struct {
	Deny int `json:"deny"`
	Warn int `json:"warn"`
	Info int `json:"info"`
}

// CheckRule is the metadata of one rule evaluated.
type CheckRule struct {
	ID       string         `json:"id"`
	Severity rules.Severity `json:"severity"`
	Why      string         `json:"why,omitempty"`
	Fix      string         `json:"fix,omitempty"` // the template, unrendered
	File     string         `json:"file"`          // pack file that defined it
	Line     int            `json:"line"`
}

// CheckFigure is one key figure of the plan, shown after the findings.
type CheckFigure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"` // B, B/s, ms, tokens, ratio, or free text
	// Unknown: kvplan could not determine the figure (a GPU without a
	// price). Every format prints "unknown"; JSON writes "value": null.
	Unknown bool `json:"-"`
	// Unbounded: no steady state (the pools cannot carry the rate); every
	// format prints "unbounded", JSON "value": null and "unbounded": true.
	Unbounded bool `json:"-"`
}

// MarshalJSON writes an unknown figure's value as null, with
// "unknown": true, so that no reader takes it for 0.
func (f CheckFigure) MarshalJSON() ([]byte, error) {
	type plain struct {
		Name      string   `json:"name"`
		Value     *float64 `json:"value"`
		Unit      string   `json:"unit"`
		Unknown   bool     `json:"unknown,omitempty"`
		Unbounded bool     `json:"unbounded,omitempty"`
	}
	p := plain{Name: f.Name, Unit: f.Unit, Unknown: f.Unknown, Unbounded: f.Unbounded}
	if !f.Unknown && !f.Unbounded {
		p.Value = &f.Value
	}
	return json.Marshal(p)
}

// NewCheckResult assembles a result: the rules of set, the findings (their
// places already set, see rules.Locate), the figures, and the
// verdict for failOn ("" means deny).
func NewCheckResult(planFile string, set *rules.Set, findings []rules.Finding, figures []CheckFigure, failOn rules.Severity) *CheckResult {
	if failOn == "" {
		failOn = rules.Deny
	}
	r := &CheckResult{PlanFile: planFile, Verdict: VerdictPass, FailOn: failOn, Findings: findings, Figures: figures}
	if r.Findings == nil {
		r.Findings = []rules.Finding{}
	}
	if r.Figures == nil {
		r.Figures = []CheckFigure{}
	}
	for i, f := range r.Figures {
		if isMoney(f.Unit) {
			r.Figures[i].Value = units.Cents(f.Value) // cents in every format, JSON too
		}
	}
	if set != nil {
		for _, x := range set.Rules {
			r.Rules = append(r.Rules, CheckRule{ID: x.ID, Severity: x.Severity, Why: x.Why, Fix: x.Fix, File: x.File, Line: x.Line})
		}
	}
	for _, f := range findings {
		switch f.Severity {
		case rules.Deny:
			r.Counts.Deny++
		case rules.Warn:
			r.Counts.Warn++
		case rules.Info:
			r.Counts.Info++
		}
		if rules.Failing(f, failOn) {
			r.Verdict = VerdictFail
		}
	}
	return r
}

// WriteCheck renders r in one of CheckFormats.
func WriteCheck(w io.Writer, format string, r *CheckResult) error {
	switch format {
	case "table", "":
		return WriteCheckTable(w, r)
	case "json":
		return WriteCheckJSON(w, r)
	case "markdown":
		return WriteCheckMarkdown(w, r)
	case "junit":
		return WriteCheckJUnit(w, r)
	case "sarif":
		return WriteCheckSARIF(w, r)
	case "github":
		return WriteCheckGitHub(w, r)
	}
	return fmt.Errorf("output format %q is not one of %s", format, strings.Join(CheckFormats(), ", "))
}

// WriteChecks renders the results of several inputs checked together:
// SARIF as one run and JUnit as one document with a suite per input (what
// CI uploads once); JSON as {"verdict", "fail_on", "counts", "results": [one
// object per input, as for one]}; table, markdown and github as each
// input's report in turn. One result is written exactly as WriteCheck.
func WriteChecks(w io.Writer, format string, rs []*CheckResult) error {
	if len(rs) == 1 {
		return WriteCheck(w, format, rs[0])
	}
	switch format {
	case "sarif":
		return WriteChecksSARIF(w, rs)
	case "junit":
		return WriteChecksJUnit(w, rs)
	case "json":
		all := ChecksSummary(rs)
		doc := struct {
			Verdict Verdict        `json:"verdict"`
			FailOn  rules.Severity `json:"fail_on"`
			Counts  CheckCounts    `json:"counts"`
			Results []*CheckResult `json:"results"`
		}{all.Verdict, all.FailOn, all.Counts, rs}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	for i, r := range rs {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := WriteCheck(w, format, r); err != nil {
			return err
		}
	}
	return nil
}

// ChecksSummary is the verdict and counts of several inputs together: fail
// when any fails.
func ChecksSummary(rs []*CheckResult) CheckResult {
	var all CheckResult
	all.Verdict = VerdictPass
	for _, r := range rs {
		all.FailOn = r.FailOn
		all.Counts.Deny += r.Counts.Deny
		all.Counts.Warn += r.Counts.Warn
		all.Counts.Info += r.Counts.Info
		if r.Verdict == VerdictFail {
			all.Verdict = VerdictFail
		}
	}
	return all
}

// CheckFormats lists the formats of `kvplan check -o`.
func CheckFormats() []string {
	return []string{"table", "json", "markdown", "junit", "sarif", "github"}
}

// summary is the one-line verdict: "fail: 2 deny, 1 warn, 0 info (fail on warn)".
func (r *CheckResult) summary() string {
	return fmt.Sprintf("%s: %d deny, %d warn, %d info (fails on %s or worse)", r.Verdict, r.Counts.Deny, r.Counts.Warn, r.Counts.Info, r.FailOn)
}

// where names a finding's place: "plan.toml:36", "deploy.yaml:23:15".
func (r *CheckResult) where(f rules.Finding) string {
	at := f.Pos()
	if at.File == "" {
		at.File = r.PlanFile
	}
	return at.String()
}

// file is the file a finding points into: its own, or the checked file.
func (r *CheckResult) file(f rules.Finding) string {
	if f.File != "" {
		return f.File
	}
	return r.PlanFile
}

// shortWhere is where without the file when it is the checked file:
// "36", "23:15", or "plan.toml:12" for a second file.
func (r *CheckResult) shortWhere(f rules.Finding) string {
	if f.Line == 0 {
		return ""
	}
	at := f.Pos()
	if at.File == "" || at.File == r.PlanFile {
		at.File = ""
		return strings.TrimPrefix(at.String(), ":")
	}
	return at.String()
}

func ruleLabel(f rules.Finding) string {
	if f.Pool != "" {
		return f.RuleID + " (" + f.Pool + ")"
	}
	return f.RuleID
}

// FormatFigure renders a figure's value with its unit: bytes in binary
// units, rates in SI units, milliseconds, token counts, ratios as percent.
func FormatFigure(f CheckFigure) string {
	if f.Unknown {
		return units.Unknown
	}
	if f.Unbounded {
		return "unbounded"
	}
	if isMoney(f.Unit) {
		return units.USD(f.Value) + strings.TrimPrefix(f.Unit, "$") // $91.20/h
	}
	switch f.Unit {
	case "B":
		return units.Bytes(int64(math.Round(f.Value)))
	case "B/s":
		return units.Rate(f.Value)
	case "ms":
		return units.MS(f.Value)
	case "ratio":
		return strconv.FormatFloat(f.Value*100, 'f', 1, 64) + "%"
	case "tokens":
		return groupThousands(f.Value) + " tokens"
	case "":
		return strconv.FormatFloat(f.Value, 'f', -1, 64)
	case "req/s": // rates: four significant digits, as kvplan plan prints them
		return strconv.FormatFloat(f.Value, 'g', 4, 64) + " req/s"
	case "transfers", "requests": // mean counts: three significant digits
		return strconv.FormatFloat(f.Value, 'g', 3, 64) + " " + f.Unit
	}
	return strconv.FormatFloat(f.Value, 'f', -1, 64) + " " + f.Unit
}

// isMoney reports whether a figure's unit is an amount of US dollars:
// "$", "$/h", "$/Mtok".
func isMoney(unit string) bool { return strings.HasPrefix(unit, "$") }

func groupThousands(v float64) string {
	s := strconv.FormatInt(int64(math.Round(math.Abs(v))), 10)
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
