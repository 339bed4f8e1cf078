package main

import (
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/benchresult"
	"github.com/kvplan/kvplan/calibrate"
	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/report"
)

// benchFlags are the flags a benchmark result file may leave unstated,
// beyond the engine-model flags perf and calibrate share.
func benchFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "workers", Usage: "replicas behind the benchmark's one endpoint (default: the file's, else 1)"},
		&cli.IntFlag{Name: "data-parallel-size", Aliases: []string{"dp"}, Usage: "data-parallel replicas inside one server, SGLang's --dp-size (default: the file's, else 1)"},
		&cli.Float64Flag{Name: "request-rate", Usage: "the benchmark's request rate, requests/s, when the file does not state its load"},
		&cli.IntFlag{Name: "num-prompts", Usage: "requests the benchmark sent, when the file does not say"},
	}
}

// givenFlags reads what the user stated, for what the files leave out:
// only flags given on the command line count (a default is not a
// statement about the benchmark).
func givenFlags(c *cli.Context) (calibrate.Given, error) {
	var g calibrate.Given
	var err error
	g.Model, g.GPU, g.EngineVersion = c.String("model"), c.String("gpu"), c.String("engine-version")
	if c.IsSet("engine") {
		if g.Engine, err = parseEnumFlag("--engine", c.String("engine"), planner.PerfEngines()); err != nil {
			return g, err
		}
	}
	if w := c.String("weight-dtype"); w != "" {
		if g.WeightDtype, err = weightDtype(w); err != nil {
			return g, err
		}
	}
	if g.KVDtype, err = kvDtype(c); err != nil {
		return g, err
	}
	ints := []struct {
		flag string
		dst  *int
		r    intRange
	}{
		{flagTP, &g.TP, intRange{1, 1024, "ranks"}}, {"data-parallel-size", &g.DataParallel, workersRange}, {"workers", &g.Workers, workersRange},
		{flagMaxNumSeqs, &g.MaxNumSeqs, intRange{1, 1_000_000, "sequences"}}, {flagMaxNumBatchedTokens, &g.MaxNumBatchedTokens, tokensRange},
		{"concurrency", &g.Concurrency, concurrencyRange}, {flagInputTokens, &g.InputTokens, tokensRange},
		{flagOutputTokens, &g.OutputTokens, intRange{1, 1_000_000, "tokens"}}, {"num-prompts", &g.Prompts, intRange{1, 10_000_000, "requests"}},
	}
	for _, x := range ints {
		if !c.IsSet(x.flag) {
			continue
		}
		if *x.dst, err = intIn(c, x.flag, x.r); err != nil {
			return g, err
		}
	}
	if c.IsSet("request-rate") {
		if g.RatePerS, err = floatIn(c, "request-rate", 1e-6, 1e6, "requests/s"); err != nil {
			return g, err
		}
	}
	if c.IsSet(flagGPUUtil) {
		if g.GPUUtil, err = floatIn(c, flagGPUUtil, 0.01, 1, ""); err != nil {
			return g, err
		}
	}
	g.EnforceEager = c.Bool(flagEnforceEager)
	return g, nil
}

// readResults reads result files, each told by its content.
func readResults(paths []string) ([]*benchresult.File, error) {
	var out []*benchresult.File
	for _, p := range paths {
		f, err := benchresult.Read(p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// runPerfAgainst is kvplan perf --against FILE.
func runPerfAgainst(c *cli.Context) error {
	for _, f := range []string{"sweep", "plot"} {
		if c.IsSet(f) {
			return fmt.Errorf("perf: --%s and --against: --against predicts the file's own load points", f)
		}
	}
	g, err := givenFlags(c)
	if err != nil {
		return err
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return err
	}
	files, err := readResults([]string{c.String("against")})
	if err != nil {
		return err
	}
	a, err := calibrate.Compare(cat, files[0], g)
	if err != nil {
		return err
	}
	return emit(c, againstDoc(a), nil)
}

// againstJSON is perf --against's JSON: {"against": {...}}.
type againstJSON struct {
	Against *calibrate.Against `json:"against"`
}

func againstDoc(a *calibrate.Against) *report.Doc {
	doc := &report.Doc{Title: fmt.Sprintf("%s (%s, %s): %d run(s), predicted against measured", a.File, a.Format, a.Layout, len(a.Runs)),
		JSON: againstJSON{a}}
	for _, r := range a.Runs {
		s := r.Setup
		title := fmt.Sprintf("Run %d: %s: %s on %d × %s (tp %d × %d replica(s), %s, %s weights); %s: %s", r.Run, r.Label, s.Model, s.GPUs, s.GPU,
			s.TP, s.Replicas, s.Engine, s.WeightDtype, r.Method, r.How)
		var rows [][]string
		for _, m := range calibrate.Metrics {
			ms := r.Measured.Get(m)
			if ms == nil {
				continue
			}
			row := []string{m.Key, figure(*ms), "not predicted", ""}
			if p := r.Predicted.Get(m); p != nil {
				row[2] = figure(*p)
			}
			if e := r.Error.Get(m); e != nil {
				row[3] = signedPct(*e)
			}
			rows = append(rows, row)
		}
		doc.Sections = append(doc.Sections, report.Section{Title: title, Header: []string{"figure", "measured", "predicted", "error"}, Rows: rows})
	}
	if len(a.Runs) > 0 {
		s := a.Runs[0].Setup
		doc.Notes = append(doc.Notes, fmt.Sprintf("Efficiencies %s: %s.", s.Efficiency, s.Provenance))
		if s.Fallback != "" {
			doc.Notes = append(doc.Notes, "Fallback: "+s.Fallback+".")
		}
	}
	seen := map[string]bool{}
	for _, r := range a.Runs {
		for _, n := range r.Notes {
			if !seen[n] {
				seen[n] = true
				doc.Notes = append(doc.Notes, "Note: "+n+".")
			}
		}
	}
	for _, s := range a.Skipped {
		doc.Notes = append(doc.Notes, "Skipped "+s+".")
	}
	doc.Notes = append(doc.Notes, "Measured figures are the file's own; error is predicted / measured − 1.")
	return doc
}

// figure writes a figure with four significant digits at least.
func figure(v float64) string {
	switch {
	case v >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func signedPct(e float64) string { return fmt.Sprintf("%+.1f%%", 100*e) }

// efficiencyNote says where an efficiency entry's values come from, for
// plan's and check's notes: a calibration's file and date, or the shipped
// fit.
func efficiencyNote(e *catalog.Efficiency) string {
	return "efficiencies " + e.Key() + ": " + e.Provenance()
}
