package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kvplan/kvplan/rules"
	"github.com/kvplan/kvplan/units"
)

// DiffResult is what `kvplan diff BASE HEAD` reports: the change of the
// deployment's headline figures from BASE to HEAD (each side's kvplan
// check figures, so kvplan plan's names and values) and the findings HEAD
// adds or resolves. The verdict fails when HEAD adds a finding at or above
// --fail-on.
type DiffResult struct {
	Base     string         `json:"base"`
	Head     string         `json:"head"`
	Verdict  Verdict        `json:"verdict"`
	FailOn   rules.Severity `json:"fail_on"`
	Figures  []DiffFigure   `json:"figures"`
	Findings DiffFindings   `json:"findings"`
	Counts   DiffCounts     `json:"counts"`
}

// DiffFigure is one figure on both sides. A side that lacks the figure
// (no request rate, an aggregated deployment has no transfer) or does not
// know it (a GPU without a price) has a null value, and the change is
// null.
type DiffFigure struct {
	Name   string   `json:"name"`
	Label  string   `json:"label"` // what tables call it: "$/hour", "TTFT p95"
	Unit   string   `json:"unit"`
	Base   *float64 `json:"base"`
	Head   *float64 `json:"head"`
	Change *float64 `json:"change"`       // head − base
	Ratio  *float64 `json:"change_ratio"` // (head − base) / base; null when base is 0 or unknown
	// BaseState and HeadState say why a side that has the figure has no
	// value: "unknown" (a GPU without a price) or "unbounded" (the pools
	// cannot carry the rate); "" otherwise.
	BaseState string `json:"base_state,omitempty"`
	HeadState string `json:"head_state,omitempty"`
}

// DiffFindings are the findings HEAD adds and resolves, by rule and pool.
type DiffFindings struct {
	Added     []rules.Finding `json:"added"`
	Resolved  []rules.Finding `json:"resolved"`
	Unchanged int             `json:"unchanged"` // fire on both sides
}

// DiffCounts are each side's findings by severity, and the failing
// findings HEAD adds.
type DiffCounts struct {
	Base         CheckCounts `json:"base"`
	Head         CheckCounts `json:"head"`
	AddedFailing int         `json:"added_failing"`
}

// diffFigures are the figures a diff compares, in order, with their labels.
var diffFigures = []struct{ name, label string }{
	{"gpus", "GPUs"},
	{"usd_per_hour", "$/hour"},
	{"usd_per_million_output_tokens", "$/M output tokens"},
	{"requests_per_s", "requests/s"},
	{"requests_per_s_capacity", "capacity within SLO"},
	{"utilization", "utilization"},
	{"ttft_p95_ms", "TTFT p95"},
	{"ttft_mean_ms", "TTFT mean"},
	{"itl_p95_ms", "ITL p95"},
	{"tpot_mean_ms", "TPOT mean"},
	{"transfer_ms", "KV transfer mean"},
	{"ttft_one_request_ms", "TTFT of one request"},
	{"itl_at_concurrency_ms", "ITL at the concurrency"},
}

// NewDiff compares two check results: base's and head's figures by name,
// their findings by rule and pool.
func NewDiff(base, head *CheckResult, failOn rules.Severity) *DiffResult {
	if failOn == "" {
		failOn = rules.Deny
	}
	d := &DiffResult{Base: base.PlanFile, Head: head.PlanFile, Verdict: VerdictPass, FailOn: failOn,
		Counts:   DiffCounts{Base: base.Counts, Head: head.Counts},
		Findings: DiffFindings{Added: []rules.Finding{}, Resolved: []rules.Finding{}}, Figures: []DiffFigure{}}
	byName := func(r *CheckResult) map[string]CheckFigure {
		m := map[string]CheckFigure{}
		for _, f := range r.Figures {
			m[f.Name] = f
		}
		return m
	}
	bf, hf := byName(base), byName(head)
	for _, x := range diffFigures {
		b, okB := bf[x.name]
		h, okH := hf[x.name]
		if !okB && !okH {
			continue
		}
		f := DiffFigure{Name: x.name, Label: x.label, Unit: b.Unit, BaseState: state(b), HeadState: state(h)}
		if !okB {
			f.Unit = h.Unit
		}
		if okB && f.BaseState == "" {
			v := b.Value
			f.Base = &v
		}
		if okH && f.HeadState == "" {
			v := h.Value
			f.Head = &v
		}
		if f.Base != nil && f.Head != nil {
			c := *f.Head - *f.Base
			if isMoney(f.Unit) {
				c = units.Cents(c)
			}
			f.Change = &c
			if *f.Base != 0 {
				r := c / *f.Base
				f.Ratio = &r
			}
		}
		d.Figures = append(d.Figures, f)
	}
	key := func(f rules.Finding) string { return f.RuleID + "\x00" + f.Pool }
	seen := func(fs []rules.Finding) map[string]bool {
		m := map[string]bool{}
		for _, f := range fs {
			m[key(f)] = true
		}
		return m
	}
	inBase, inHead := seen(base.Findings), seen(head.Findings)
	for _, f := range head.Findings {
		if !inBase[key(f)] {
			d.Findings.Added = append(d.Findings.Added, f)
			if rules.Failing(f, failOn) {
				d.Counts.AddedFailing++
				d.Verdict = VerdictFail
			}
		} else {
			d.Findings.Unchanged++
		}
	}
	for _, f := range base.Findings {
		if !inHead[key(f)] {
			d.Findings.Resolved = append(d.Findings.Resolved, f)
		}
	}
	return d
}

// state is why a figure has no value: "unknown", "unbounded" or "".
func state(f CheckFigure) string {
	switch {
	case f.Unknown:
		return units.Unknown
	case f.Unbounded:
		return "unbounded"
	}
	return ""
}

// WriteDiff renders d in one of DiffFormats.
func WriteDiff(w io.Writer, format string, d *DiffResult) error {
	switch format {
	case "table", "":
		return writeDiffTable(w, d)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	case "markdown":
		return writeDiffMarkdown(w, d)
	}
	return fmt.Errorf("output format %q is not one of %s", format, strings.Join(DiffFormats(), ", "))
}

// DiffFormats lists the formats of `kvplan diff -o`.
func DiffFormats() []string { return []string{"table", "json", "markdown"} }

// summary is the diff's verdict line.
func (d *DiffResult) summary() string {
	s := fmt.Sprintf("%d finding(s) added, %d resolved, %d unchanged", len(d.Findings.Added), len(d.Findings.Resolved), d.Findings.Unchanged)
	if d.Verdict == VerdictFail {
		return fmt.Sprintf("fail: head adds %d failing finding(s) (fails on %s or worse); %s", d.Counts.AddedFailing, d.FailOn, s)
	}
	return fmt.Sprintf("pass: head adds no finding at %s or worse; %s", d.FailOn, s)
}

// value prints one side of a figure: "-" when the side lacks it, "unknown"
// when it cannot be determined.
func (f DiffFigure) value(v *float64, state string) string {
	switch {
	case state != "":
		return state
	case v == nil:
		return "-"
	}
	return FormatFigure(CheckFigure{Name: f.Name, Value: *v, Unit: f.Unit})
}

// change prints head − base with its sign and its ratio: "+4 GPUs (+10%)",
// "−$27.52/h (−9.1%)", "0", or "-" when a side is missing.
func (f DiffFigure) change() string {
	if f.Change == nil {
		return "-"
	}
	c := *f.Change
	if c == 0 {
		return "0"
	}
	sign := "+"
	if c < 0 {
		sign, c = "−", -c
	}
	if f.Unit == "ratio" { // a change of a share is in percentage points
		return fmt.Sprintf("%s%.1f pts", sign, c*100)
	}
	s := sign + FormatFigure(CheckFigure{Name: f.Name, Value: c, Unit: f.Unit})
	if f.Ratio != nil {
		s += fmt.Sprintf(" (%s%.1f%%)", sign, abs(*f.Ratio)*100)
	}
	return s
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
