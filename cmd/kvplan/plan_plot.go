package main

import (
	"bytes"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/report"
)

// paretoPlot lays the search's Pareto points out as a chart: every
// candidate's points per mode, and each mode's front as a line.
func paretoPlot(res *capacity.Result, pts []capacity.ParetoPoint) report.Plot {
	p := report.Plot{
		Title:  fmt.Sprintf("%s, %d in / %d out: output tokens/s per GPU vs per user", res.Model, res.InputTokens, res.OutputTokens),
		XLabel: "output tokens/s per user (1000 / mean ITL)",
		YLabel: "output tokens/s per GPU",
	}
	for _, mode := range []string{capacity.ModeAggregated, capacity.ModeDisaggregated} {
		all := report.PlotSeries{Name: mode}
		front := report.PlotSeries{Name: mode + " Pareto front", Line: true}
		for _, pt := range pts {
			if pt.Mode != mode {
				continue
			}
			xy := report.PlotPoint{X: pt.TokensPerSPerUser, Y: pt.TokensPerSPerGPU, Label: fmt.Sprintf("%s at %.4g/s", pt.Candidate, pt.RatePerS)}
			all.Points = append(all.Points, xy)
			if pt.OnFront {
				front.Points = append(front.Points, xy)
			}
		}
		if len(all.Points) > 0 {
			p.Series = append(p.Series, all, front)
		}
	}
	return p
}

// writePlot writes --plot: the SVG of the Pareto front. With no candidate
// meeting the SLO there is nothing to plot: a note says so, and the run
// exits 1 with the closest candidate shown.
func writePlot(c *cli.Context, path string, res *capacity.Result, q *capacity.Query) error {
	p := paretoPlot(res, q.Pareto(res))
	if len(p.Series) == 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("no plot was written to %s: no candidate meets the SLO", path))
		return nil
	}
	var b bytes.Buffer
	if err := report.WritePlotSVG(&b, p); err != nil {
		return internalError{err}
	}
	return writeOutput(c, "plot", path, b.Bytes())
}
