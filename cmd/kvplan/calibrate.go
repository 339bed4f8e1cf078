package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/calibrate"
	"github.com/kvplan/kvplan/internal/safefile"
	"github.com/kvplan/kvplan/report"
)

func calibrateCommand() *cli.Command {
	return &cli.Command{
		Name:      "calibrate",
		Usage:     "fit the engine model's efficiencies to your own benchmark result files, and write a catalog file",
		ArgsUsage: "FILE...",
		UsageText: `kvplan calibrate rate10.json rate30.json rate-inf.json --gpu h100-sxm --tp 8 --out calib.toml
   kvplan calibrate sweep.jsonl --out calib.toml --force -o json
   kvplan calibrate profile_export_aiperf.csv --model qwen3-32b --gpu h200 --tp 2 --concurrency 4 --out calib.toml`,
		Description: `Reads benchmark result files (vLLM bench serve, SGLang bench_serving,
AIPerf/genai-perf, guidellm, inference-perf, trtllm-bench; told by content),
predicts each run as kvplan perf --against does, and fits the efficiencies
the runs constrain for their GPU × engine × weight dtype: Levenberg–Marquardt
on ln(efficiency), minimising the soft-L1 loss of ln(predicted/measured) / 0.1
over each run's TTFT, decode speed (TPOT, else end-to-end latency) and
throughput, plus (ln(efficiency/shipped) / ln 2)², so an efficiency the runs
do not constrain stays as shipped (docs/calibrate.md). It prints, per run, the error before and after and, with
three runs or more, the error of a fit on the other runs (leave one out):
the accuracy to expect at your next load point. The files must agree on the
model, GPU, engine and weight dtype.

--out writes a user catalog file with one [[efficiency]] entry
(calibrated_from, calibrated_at) that perf, plan, check and simulate take
with --catalog; it is loaded back and checked before kvplan exits.
--force replaces an existing file.`,
		Flags: withCommon(append(append(modelFlags(),
			&cli.StringFlag{Name: "gpu", Aliases: []string{"g"}, Usage: "GPU of each rank, when the files do not say (kvplan gpus list)"},
			&cli.StringFlag{Name: "engine", Usage: "serving engine, when the files do not say: vllm, sglang or trtllm (default: vllm)"},
			&cli.StringFlag{Name: "engine-version", Usage: "engine version, when the files do not say (the memory profile)"},
			&cli.StringFlag{Name: "weight-dtype", Usage: "matmul weights, when the files do not say: bf16, fp8, fp4, mxfp4, nvfp4, int4 (default: the model's)"},
			inputTokensFlag(0, "input tokens per request, when a file does not say", "isl"),
			outputTokensFlag(0, "output tokens per request, when a file does not say", "osl"),
			&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Usage: "clients of a closed loop, when a file does not state its load"},
			maxNumSeqsFlag("sequences running at once (default: the file's, else the engine's for this GPU)"),
			maxNumBatchedTokensFlag("tokens per iteration (default: the file's, else the engine's for this GPU)"),
			gpuUtilFlag(0, "the engine's memory fraction, in (0, 1] (default: the engine's)"),
			enforceEagerFlag("no CUDA graphs"),
			&cli.StringFlag{Name: "out", Usage: "the catalog file to write (required)"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing --out file"},
			&cli.StringFlag{Name: "calibrated-at", Usage: "the date recorded in the file, YYYY-MM-DD (default: today, UTC)"},
			&cli.BoolFlag{Name: "no-held-out", Usage: "skip the leave-one-out fits (one fit per run; the slow part on many runs)"},
		), benchFlags()...)...),
		Action: runCalibrate,
	}
}

func runCalibrate(c *cli.Context) error {
	paths := c.Args().Slice()
	if len(paths) == 0 {
		return fmt.Errorf("calibrate: give one or more benchmark result files (see kvplan calibrate --help)")
	}
	out := c.String("out")
	if out == "" {
		return fmt.Errorf("calibrate: --out is required: the catalog file to write (e.g. --out calib.toml)")
	}
	date := c.String("calibrated-at")
	if date == "" {
		date = time.Now().UTC().Format(time.DateOnly)
	} else if _, err := time.Parse(time.DateOnly, date); err != nil {
		return fmt.Errorf("calibrate: --calibrated-at %q: want a date such as 2026-01-31", date)
	}
	if _, err := outputFormat(c); err != nil {
		return err
	}
	g, err := givenFlags(c)
	if err != nil {
		return err
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return err
	}
	files, err := readResults(paths)
	if err != nil {
		return err
	}
	var cases []calibrate.Case
	for _, f := range files {
		cs, err := calibrate.Resolve(cat, f, g)
		if err != nil {
			return err
		}
		cases = append(cases, cs...)
	}
	res, err := calibrate.Calibrate(cases, calibrate.Options{Files: paths, Date: date, NoHeldOut: c.Bool("no-held-out")})
	if err != nil {
		return err
	}
	data := calibrate.CatalogFile(res)
	if err := calibrate.CheckCatalogFile(out, data, res); err != nil {
		return internalError{err}
	}
	force := c.Bool("force")
	if err := safefile.WriteAtomic(out, data, safefile.WriteOptions{Overwrite: force, FollowSymlink: force}); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("calibrate: %s exists; add --force to replace it, or choose another --out", out)
		}
		return fmt.Errorf("calibrate: %w", err)
	}
	written, err := safefile.ReadFile(out, safefile.Catalog)
	if err != nil {
		return fmt.Errorf("calibrate: read back %s: %w", out, err)
	}
	if err := calibrate.CheckCatalogFile(out, written, res); err != nil {
		return err
	}
	return emit(c, calibrateDoc(res, out), nil)
}

// calibrateJSON is calibrate's JSON.
type calibrateJSON struct {
	Out string `json:"out"`
	*calibrate.Result
}

func calibrateDoc(res *calibrate.Result, out string) *report.Doc {
	doc := &report.Doc{Title: fmt.Sprintf("Calibrated %s for %s on %d run(s): wrote %s", res.Key, res.Model, len(res.Runs), out),
		JSON: calibrateJSON{out, res}}
	var prow [][]string
	for _, p := range res.Params {
		by := "no: kept as shipped"
		if p.Constrained {
			by = strings.Join(p.By, ", ")
			if p.AtBound != "" {
				by += " (at its " + p.AtBound + " bound)"
			}
		}
		prow = append(prow, []string{p.Name, figure(p.Shipped), figure(p.Fitted), signedPct(p.Change), fmt.Sprintf("%.3f", p.Elasticity), by})
	}
	doc.Sections = append(doc.Sections, report.Section{Title: "Efficiencies",
		Header: []string{"parameter", "shipped", "fitted", "change", "elasticity", "constrained by"}, Rows: prow})
	header := []string{"run", "figure", "measured", "before", "after"}
	if res.HeldOut {
		header = append(header, "left out")
	}
	var rrows [][]string
	for _, r := range res.Runs {
		name := fmt.Sprintf("%s #%d: %s", r.File, r.Run, r.Label)
		for _, key := range r.Targets {
			m := metricNamed(key)
			row := []string{name, key, figure(*r.Measured.Get(m)), errCell(r.ErrBefore.Get(m)), errCell(r.ErrAfter.Get(m))}
			if r.ErrHeld != nil {
				row = append(row, errCell(r.ErrHeld.Get(m)))
			}
			rrows = append(rrows, row)
			name = ""
		}
	}
	doc.Sections = append(doc.Sections, report.Section{Title: "Runs: predicted / measured − 1 on the fitted figures", Header: header, Rows: rrows})
	sh := []string{"figure", "runs", "before", "after"}
	if res.HeldOut {
		sh = append(sh, "left out")
	}
	var srows [][]string
	for _, s := range res.Summary {
		row := []string{s.Metric, fmt.Sprint(s.Runs), pct(s.Before), pct(s.After)}
		if res.HeldOut {
			row = append(row, "")
			if s.HeldOut != nil {
				row[4] = pct(*s.HeldOut)
			}
		}
		srows = append(srows, row)
	}
	doc.Sections = append(doc.Sections, report.Section{Title: "Median |error| over the runs, every figure measured", Header: sh, Rows: srows})
	doc.Notes = append(doc.Notes, "Before: "+res.ShippedNote+".")
	if !res.HeldOut {
		doc.Notes = append(doc.Notes, "No leave-one-out error: it needs three runs or more (and no --no-held-out); the after error is in-sample.")
	} else {
		doc.Notes = append(doc.Notes, "Left out: each run predicted by a fit on the other runs only, the honest accuracy at a new load point.")
	}
	doc.Notes = append(doc.Notes, fmt.Sprintf("The fit predicted the runs %d times; use the file with --catalog %s.", res.Evaluations, out))
	return doc
}

func metricNamed(key string) calibrate.Metric {
	for _, m := range calibrate.Metrics {
		if m.Key == key {
			return m
		}
	}
	return calibrate.Metrics[0]
}

func errCell(e *float64) string {
	if e == nil {
		return "not predicted"
	}
	return signedPct(*e)
}
