package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/internal/goldenfile"
)

func TestWritePlotSVG(t *testing.T) {
	p := Plot{Title: "tokens per GPU against tokens per user", XLabel: "per user", YLabel: "per GPU", Series: []PlotSeries{
		{Name: "aggregated", Points: []PlotPoint{{X: 10, Y: 300}, {X: 40, Y: 100}}},
		{Name: "aggregated Pareto front", Line: true, Points: []PlotPoint{{X: 10, Y: 300}, {X: 40, Y: 100}}},
		{Name: "empty"},
	}}
	var a, b bytes.Buffer
	if err := WritePlotSVG(&a, p); err != nil {
		t.Fatal(err)
	}
	if err := WritePlotSVG(&b, p); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two renders of the same plot differ")
	}
	// Well-formed XML with an <svg> root, and the words a reader needs.
	dec := xml.NewDecoder(bytes.NewReader(a.Bytes()))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("root element %q, want svg", root)
	}
	for _, want := range []string{"tokens per GPU against tokens per user", "per user", "per GPU", "aggregated Pareto front"} {
		if !strings.Contains(a.String(), want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	if err := WritePlotSVG(io.Discard, Plot{Title: "nothing"}); err == nil {
		t.Error("a plot with no point must be an error")
	}
}

// TestWritePlotSVGGolden: the SVG of a plot is byte for byte what
// gonum.org/v1/plot wrote when it parsed its fonts at start-up (the golden
// was written before internal/plotfonts deferred that parse): glyph
// advances, text extents and the font names all come from the same fonts.
func TestWritePlotSVGGolden(t *testing.T) {
	p := Plot{Title: "tokens per GPU against tokens per user", XLabel: "tokens/s per user", YLabel: "tokens/s per GPU", Series: []PlotSeries{
		{Name: "aggregated", Points: []PlotPoint{{X: 10, Y: 300}, {X: 25, Y: 180}, {X: 40, Y: 100}}},
		{Name: "disaggregated Pareto front", Line: true, Points: []PlotPoint{{X: 12, Y: 320}, {X: 30, Y: 210}, {X: 45, Y: 90}}},
	}}
	var got bytes.Buffer
	if err := WritePlotSVG(&got, p); err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, filepath.Join("..", "testdata", "plot", "golden.svg"), got.Bytes(), updateGolden(), "go test ./report -run PlotSVGGolden -update", true)
}
