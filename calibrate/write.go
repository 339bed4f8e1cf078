package calibrate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kvplan/kvplan/catalog"
)

// CatalogFile is the user catalog file of a calibration: one
// [[efficiency]] entry for the runs' GPU × engine × weight dtype, which
// --catalog merges over the embedded catalog (replacing an embedded entry
// of the same key), with the fit's account in comments.
func CatalogFile(res *Result) []byte {
	var b strings.Builder
	e := res.Fitted
	fmt.Fprintf(&b, "# Engine-model efficiencies calibrated by kvplan calibrate on %s.\n", e.CalibratedAt)
	fmt.Fprintf(&b, "# Use it with --catalog (kvplan perf, plan, check, simulate); plan and check then say\n")
	fmt.Fprintf(&b, "# that their figures rest on it.\n#\n")
	fmt.Fprintf(&b, "# Runs: %d of %s (%s).\n", len(res.Runs), e.CalibratedFrom, res.Model)
	fmt.Fprintf(&b, "# Before: %s.\n#\n", oneLineComment(res.ShippedNote))
	b.WriteString("# parameter              shipped      fitted   change  constrained by the runs\n")
	for _, p := range res.Params {
		by := "no: kept as shipped"
		if p.Constrained {
			by = "yes (" + strings.Join(p.By, ", ") + ")"
			if p.AtBound != "" {
				by += ", at its " + p.AtBound + " bound"
			}
		}
		fmt.Fprintf(&b, "#   %-20s %10s  %10s  %+6.1f%%  %s\n", p.Name, num(p.Shipped), num(p.Fitted), 100*p.Change, by)
	}
	b.WriteString("#\n# median |predicted / measured − 1| over the runs:\n")
	for _, s := range res.Summary {
		held := ""
		if s.HeldOut != nil {
			held = fmt.Sprintf(", left out of the fit %.1f%%", 100**s.HeldOut)
		}
		fmt.Fprintf(&b, "#   %-20s %d runs: before %.1f%%, after %.1f%%%s\n", s.Metric, s.Runs, 100*s.Before, 100*s.After, held)
	}
	b.WriteString("\n[[efficiency]]\n")
	kv := func(k string, v any) {
		switch v := v.(type) {
		case string:
			fmt.Fprintf(&b, "%s = %s\n", k, strconv.Quote(v))
		case float64:
			fmt.Fprintf(&b, "%s = %s\n", k, num(v))
		case int:
			fmt.Fprintf(&b, "%s = %d\n", k, v)
		}
	}
	kv("gpu", e.GPU)
	kv("engine", e.Engine)
	kv("dtype", e.Dtype)
	for _, p := range Params {
		kv(p.Name, p.Get(&e))
	}
	kv("rows", e.Rows)
	kv("source", e.Source)
	kv("calibrated_from", e.CalibratedFrom)
	kv("calibrated_at", e.CalibratedAt)
	return []byte(b.String())
}

// num writes a value the way TOML reads it back exactly: the shortest
// decimal, with a point so that it stays a float.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") && !math.IsInf(v, 0) {
		s += ".0"
	}
	return s
}

func oneLineComment(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// CheckCatalogFile loads data back as --catalog would (merged over the
// embedded catalog) and checks that the entry for the result's key is the
// fitted one, value for value.
func CheckCatalogFile(name string, data []byte, res *Result) error {
	c, err := catalog.Parse(name, data)
	if err != nil {
		return fmt.Errorf("the calibration file does not load back: %w", err)
	}
	if len(c.Efficiencies) != 1 {
		return fmt.Errorf("the calibration file holds %d efficiency entries, want 1", len(c.Efficiencies))
	}
	got := c.Efficiencies[0]
	want := res.Fitted
	if got.Key() != want.Key() {
		return fmt.Errorf("the calibration file's entry is %s, want %s", got.Key(), want.Key())
	}
	for _, p := range Params {
		if p.Get(got) != p.Get(&want) {
			return fmt.Errorf("the calibration file's %s reads back as %v, want %v", p.Name, p.Get(got), p.Get(&want))
		}
	}
	if got.CalibratedFrom != want.CalibratedFrom || got.CalibratedAt != want.CalibratedAt {
		return fmt.Errorf("the calibration file's provenance reads back as %q, %q", got.CalibratedFrom, got.CalibratedAt)
	}
	return nil
}
