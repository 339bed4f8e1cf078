package planner

import (
	"fmt"
	"math"
)

// FigureError is a derived figure that came out NaN or infinite: an input
// slipped through validation (a zero bandwidth, a NaN peak) or a formula
// divides by zero. It names the figure with its formula and values, so the
// user sees which input to fix.
type FigureError struct {
	Figure Figure
}

func (e *FigureError) Error() string {
	f := e.Figure
	return fmt.Sprintf("figure %s is %g, not a finite number: %s = %s; check the inputs it is derived from", f.Name, f.Value, f.Formula, f.Values)
}

// Check returns a *FigureError for the first figure that is NaN or ±Inf,
// or nil. Call it on every Derivation before its figures are rendered:
// JSON cannot encode NaN (it made -o json exit 3) and tables printed
// "NaN ms".
func (d Derivation) Check() error {
	for _, f := range d {
		if math.IsNaN(f.Value) || math.IsInf(f.Value, 0) {
			return &FigureError{Figure: f}
		}
	}
	return nil
}
