package main

import (
	"bytes"
	"fmt"
	"math"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/slo"
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

// writePlot writes --plot: the Pareto front (or, with --rate-profile, the
// day's rate, GPUs and $/hour) above the best's latency percentiles beside
// its targets.
func writePlot(c *cli.Context, path string, res *capacity.Result, q *capacity.Query) error {
	var plots []report.Plot
	if d := res.DayPlan; d != nil {
		plots = dayPlots(res.Model, d)
	} else {
		p := paretoPlot(res, q.Pareto(res))
		if len(p.Series) == 0 {
			// Nothing meets the SLO: a note says so, and the run exits 1
			// with the closest candidate shown.
			res.Notes = append(res.Notes, fmt.Sprintf("no plot was written to %s: no candidate meets the SLO", path))
			return nil
		}
		plots = []report.Plot{p}
	}
	if res.Best != nil {
		plots = append(plots, latencyPlots(res.Best, q.SLO)...)
	}
	var b bytes.Buffer
	if err := report.WritePlotsSVG(&b, plots); err != nil {
		return internalError{err}
	}
	return writeOutput(c, "plot", path, b.Bytes())
}

// dayPlots are the day's traffic and what serves it, against the hour:
// the rate, the GPUs and the dollars per hour of each period (a point at its
// start and one at its end, so each period is a flat step).
func dayPlots(model string, d *capacity.DayPlan) []report.Plot {
	step := func(name string, f func(capacity.SchedulePeriod) float64) report.PlotSeries {
		s := report.PlotSeries{Name: name, Line: true}
		t := 0.0
		for i, p := range d.Schedule {
			if i == 0 {
				t = hoursOf(p.Start)
			}
			v := f(p)
			s.Points = append(s.Points, report.PlotPoint{X: t, Y: v, Label: p.Start}, report.PlotPoint{X: t + p.LengthS/3600, Y: v})
			t += p.LengthS / 3600
		}
		return s
	}
	cost := func(p capacity.SchedulePeriod) float64 {
		if p.USDPerHour == nil {
			return math.NaN()
		}
		return *p.USDPerHour
	}
	static := report.PlotSeries{Name: "the peak's deployment all day", Line: true}
	if d.USDPerDayStaticPeak != nil && len(d.Schedule) > 0 {
		first := hoursOf(d.Schedule[0].Start)
		static.Points = []report.PlotPoint{{X: first, Y: *d.USDPerDayStaticPeak / 24}, {X: first + 24, Y: *d.USDPerDayStaticPeak / 24}}
	}
	dollars := report.Plot{Title: fmt.Sprintf("%s: $ per hour (%s a day against %s all day at the peak's size)", model, usdOrUnknown(d.USDPerDay), usdOrUnknown(d.USDPerDayStaticPeak)),
		XLabel: "hour of the day", YLabel: "$ per hour", Series: []report.PlotSeries{step("following the traffic", cost)}}
	if len(static.Points) > 0 {
		dollars.Series = append(dollars.Series, static)
	}
	return []report.Plot{
		{Title: fmt.Sprintf("%s: the day's traffic (%s)", model, d.Profile), XLabel: "hour of the day", YLabel: "requests/s",
			Series: []report.PlotSeries{step("requests/s", func(p capacity.SchedulePeriod) float64 { return p.RatePerS })}},
		{Title: fmt.Sprintf("GPUs planned, %.0f s ahead of each scale-up", d.LeadTime.S), XLabel: "hour of the day", YLabel: "GPUs",
			Series: []report.PlotSeries{step("GPUs", func(p capacity.SchedulePeriod) float64 { return float64(p.GPUs) })}},
		dollars,
	}
}

func hoursOf(clock string) float64 {
	var h, m, s int
	fmt.Sscanf(clock, "%d:%d:%d", &h, &m, &s)
	return float64(h) + float64(m)/60 + float64(s)/3600
}

func usdOrUnknown(v *float64) string { return usd(v) }

// latencyPlots are the best candidate's latency percentiles, analytic and
// simulated, against the percentile, with the SLO's targets as points: one
// panel for TTFT, one for the gaps between tokens (ITL, TPOT).
func latencyPlots(c *capacity.Candidate, target slo.SLO) []report.Plot {
	pcts := []float64{50, 90, 95, 99}
	curve := func(name string, vs ...float64) report.PlotSeries {
		s := report.PlotSeries{Name: name, Line: true}
		for i, v := range vs {
			if v > 0 {
				s.Points = append(s.Points, report.PlotPoint{X: pcts[i], Y: v})
			}
		}
		return s
	}
	ttft := report.Plot{Title: "TTFT by percentile: " + c.Describe(), XLabel: "percentile of requests", YLabel: "ms", LegendLeft: true,
		Series: []report.PlotSeries{curve("TTFT analytic", c.TTFTP50MS, c.TTFTP90MS, c.TTFTP95MS, c.TTFTP99MS)}}
	tok := report.Plot{Title: "Gaps between tokens by percentile", XLabel: "percentile (ITL: of gaps; TPOT: of requests)", YLabel: "ms", LegendLeft: true,
		Series: []report.PlotSeries{curve("ITL analytic", c.ITLP50MS, c.ITLP90MS, c.ITLP95MS, c.ITLP99MS),
			{Name: "TPOT analytic (mean at 50, p99 at 99)", Points: []report.PlotPoint{{X: 50, Y: c.TPOTMeanMS, Label: "mean"}, {X: 99, Y: c.TPOTP99MS, Label: "p99"}}}}}
	if s := c.Simulated; s != nil {
		ttft.Series = append(ttft.Series, curve("TTFT simulated", s.TTFTP50MS, s.TTFTP90MS, s.TTFTP95MS, s.TTFTP99MS))
		tok.Series = append(tok.Series, curve("ITL simulated", s.ITLP50MS, s.ITLP90MS, s.ITLP95MS, s.ITLP99MS),
			report.PlotSeries{Name: "TPOT simulated (mean at 50, p99 at 99)", Points: []report.PlotPoint{{X: 50, Y: s.TPOTMeanMS, Label: "mean"}, {X: 99, Y: s.TPOTP99MS, Label: "p99"}}})
	}
	var ttftT, tokT report.PlotSeries
	ttftT.Name, tokT.Name = "TTFT targets", "ITL and TPOT targets"
	for _, g := range target.Given() {
		x := g.Q * 100
		if g.Stat == "mean" {
			x = 50
		}
		pt := report.PlotPoint{X: x, Y: g.Value, Label: g.Label() + " target"}
		switch g.Metric {
		case slo.TTFT:
			ttftT.Points = append(ttftT.Points, pt)
		case slo.ITL, slo.TPOT:
			tokT.Points = append(tokT.Points, pt)
		}
	}
	if len(ttftT.Points) > 0 {
		ttft.Series = append(ttft.Series, ttftT)
	}
	if len(tokT.Points) > 0 {
		tok.Series = append(tok.Series, tokT)
	}
	return []report.Plot{ttft, tok}
}
