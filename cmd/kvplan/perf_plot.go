package main

import (
	"bytes"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/report"
)

// sweepPoint is one row of `kvplan perf --sweep`: what the curve needs.
type sweepPoint struct {
	Concurrency            int
	TPOTMS                 float64
	OutputTokensPerSPerGPU float64
}

// sweepPlot lays a sweep out as one configuration's curve: output tokens/s
// per GPU against output tokens/s per user (1000 / TPOT), a point per
// concurrency, named by title and series.
func sweepPlot(title, series string, pts []sweepPoint) report.Plot {
	pl := report.Plot{Title: title, XLabel: "output tokens/s per user (1000 / TPOT)", YLabel: "output tokens/s per GPU"}
	s := report.PlotSeries{Name: series, Line: true}
	for _, p := range pts {
		if p.TPOTMS <= 0 {
			continue
		}
		s.Points = append(s.Points, report.PlotPoint{X: 1000 / p.TPOTMS, Y: p.OutputTokensPerSPerGPU, Label: fmt.Sprintf("concurrency %d", p.Concurrency)})
	}
	pl.Series = append(pl.Series, s)
	return pl
}

// perfSweepPlot is the curve of a sweep's plans.
func perfSweepPlot(plans []*planner.PerfPlan) report.Plot {
	p := plans[0]
	pts := make([]sweepPoint, 0, len(plans))
	for _, q := range plans {
		pts = append(pts, sweepPoint{Concurrency: q.Concurrency, TPOTMS: q.TPOTMS, OutputTokensPerSPerGPU: q.OutputTokensPerSPerGPU})
	}
	return sweepPlot(fmt.Sprintf("%s on %d × %s (%s), %d in / %d out: by concurrency", p.Model, p.GPUs, p.GPU, p.Engine, p.InputTokens, p.OutputTokens),
		fmt.Sprintf("tp%d %s", p.TP, p.WeightDtype), pts)
}

// writeSweepPlot writes `kvplan perf --sweep ... --plot FILE.svg`.
func writeSweepPlot(c *cli.Context, path string, p report.Plot) error {
	var b bytes.Buffer
	if err := report.WritePlotSVG(&b, p); err != nil {
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	return writeOutput(c, "plot", path, b.Bytes())
}
