// Package planner turns a Scenario (what the user plans) into a Plan (every
// derived figure, each with its derivation). It is the only package that
// combines models, links, GPUs and engines.
package planner

import (
	"fmt"
	"strings"
)

// Figure is one derived number and how it was obtained, for --explain.
type Figure struct {
	Name    string  `json:"name"`    // snake_case, matches the JSON field it explains
	Value   float64 `json:"value"`   // in Unit
	Unit    string  `json:"unit"`    // "B", "B/s", "ms", "tokens", "ratio", "" ...
	Formula string  `json:"formula"` // symbolic: "latency + bytes / throughput"
	Values  string  `json:"values"`  // the same with numbers: "0.2 ms + 344064000 B / 104000000 B/s"
	Source  string  `json:"source,omitempty"`
}

// Derivation is an ordered list of figures.
type Derivation []Figure

// Add appends a figure and returns its value, so arithmetic and its
// explanation are written once, side by side.
func (d *Derivation) Add(name string, value float64, unit, formula, values string, args ...any) float64 {
	if len(args) > 0 {
		values = fmt.Sprintf(values, args...)
	}
	*d = append(*d, Figure{Name: name, Value: value, Unit: unit, Formula: formula, Values: values})
	return value
}

// Note attaches a source or assumption to the last figure added.
func (d *Derivation) Note(source string) {
	if n := len(*d); n > 0 {
		(*d)[n-1].Source = source
	}
}

// String renders the derivation as "name = formula = values = value unit" lines.
func (d Derivation) String() string {
	var b strings.Builder
	for _, f := range d {
		fmt.Fprintf(&b, "%s = %s\n    = %s\n    = %s %s\n", f.Name, f.Formula, f.Values, trimFloat(f.Value), f.Unit)
		if f.Source != "" {
			fmt.Fprintf(&b, "    (%s)\n", f.Source)
		}
	}
	return b.String()
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.6f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
