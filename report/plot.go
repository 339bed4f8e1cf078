package report

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/kvplan/kvplan/internal/plotfonts"
)

// Plot is a chart of one or more series of points: what an SVG shows, and
// what its golden test compares (the data, not the pixels).
type Plot struct {
	Title  string       `json:"title"`
	XLabel string       `json:"x_label"`
	YLabel string       `json:"y_label"`
	Series []PlotSeries `json:"series"`
	// LegendLeft puts the legend at the top left (where a plot rising to
	// the right leaves room).
	LegendLeft bool `json:"legend_left,omitempty"`
}

// PlotSeries is one named set of points, drawn as markers; Line joins them
// in order (a curve or a Pareto front).
type PlotSeries struct {
	Name   string      `json:"name"`
	Line   bool        `json:"line"`
	Points []PlotPoint `json:"points"`
}

// PlotPoint is one point with what it stands for.
type PlotPoint struct {
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Label string  `json:"label,omitempty"`
}

// palette is the series colours, in order (Okabe–Ito, readable for colour-blind readers).
var palette = []color.RGBA{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{86, 180, 233, 255}, {230, 159, 0, 255}, {0, 0, 0, 255},
}

// WritePlotSVG draws p as an SVG with gonum.org/v1/plot.
func WritePlotSVG(w io.Writer, p Plot) error {
	pl, err := newPlot(p)
	if err != nil {
		return err
	}
	// The SVG canvas directly, not pl.WriterTo(…, "svg"): that looks the
	// format up among the backends the root package registers (EPS, PNG,
	// PDF, TeX as well), which a build with the "minimal" tag leaves out.
	c := vgsvg.New(8*vg.Inch, 5*vg.Inch)
	pl.Draw(draw.New(c))
	_, err = c.WriteTo(w)
	return err
}

// WritePlotsSVG draws plots one above the other in one SVG, each 4 inches
// high.
func WritePlotsSVG(w io.Writer, ps []Plot) error {
	if len(ps) == 0 {
		return fmt.Errorf("no plot to draw")
	}
	var pls []*plot.Plot
	for _, p := range ps {
		pl, err := newPlot(p)
		if err != nil {
			return err
		}
		pls = append(pls, pl)
	}
	c := vgsvg.New(8*vg.Inch, vg.Length(len(ps))*4*vg.Inch)
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: len(pls), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadY: vg.Points(18)}
	for i, pl := range pls {
		pl.Draw(tiles.At(dc, 0, i))
	}
	_, err := c.WriteTo(w)
	return err
}

// newPlot builds p's gonum plot.
func newPlot(p Plot) (*plot.Plot, error) {
	plotfonts.Load()
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.Add(plotter.NewGrid())
	pl.Legend.Top = true
	pl.Legend.Left = p.LegendLeft
	drawn := 0
	for i, s := range p.Series {
		var xys plotter.XYs
		for _, pt := range s.Points {
			if math.IsNaN(pt.X) || math.IsNaN(pt.Y) || math.IsInf(pt.X, 0) || math.IsInf(pt.Y, 0) {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.X, Y: pt.Y})
		}
		if len(xys) == 0 {
			continue
		}
		col := palette[i%len(palette)]
		if s.Line {
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, fmt.Errorf("plot %s: %w", s.Name, err)
			}
			l.Color, pts.Color = col, col
			l.Width = vg.Points(1.5)
			pts.Shape = draw.CircleGlyph{}
			pl.Add(l, pts)
			pl.Legend.Add(s.Name, l, pts)
		} else {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, fmt.Errorf("plot %s: %w", s.Name, err)
			}
			sc.Color = col
			sc.Shape = draw.CircleGlyph{}
			sc.Radius = vg.Points(2)
			pl.Add(sc)
			pl.Legend.Add(s.Name, sc)
		}
		drawn++
	}
	if drawn == 0 {
		return nil, fmt.Errorf("plot %q: no point to draw", p.Title)
	}
	return pl, nil
}
