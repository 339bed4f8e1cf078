package main

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/report"
)

// TestNonFiniteFigureStopsOutput checks that a derivation with a NaN or
// infinite figure reaches no format, with or without --explain, and is an
// input error (exit 2: no *internalError).
func TestNonFiniteFigureStopsOutput(t *testing.T) {
	for _, explain := range []bool{false, true} {
		for _, format := range []string{"table", "json", "markdown"} {
			var out bytes.Buffer
			app := newApp(&out, &out)
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.String("output", format, "")
			fs.Bool("explain", explain, "")
			c := cli.NewContext(app, fs, nil)
			d := planner.Derivation{{Name: "itl_ms", Value: math.Inf(1), Unit: "ms", Formula: "bytes / bandwidth", Values: "1e9 / 0"}}
			doc := &report.Doc{Title: "t", JSON: jsonWithExplain(c, struct{ ITL float64 }{math.Inf(1)}, &d)}
			err := emit(c, doc, d)
			var fe *planner.FigureError
			if !errors.As(err, &fe) || fe.Figure.Name != "itl_ms" {
				t.Errorf("%s explain=%v: error %v, want the figure error of itl_ms", format, explain, err)
			}
			var ie internalError
			if errors.As(err, &ie) || out.Len() > 0 {
				t.Errorf("%s explain=%v: internal error or output %q", format, explain, out.String())
			}
		}
	}
}
