package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/manifest"
	"github.com/kvplan/kvplan/planner/capacity"
)

// emitTarget is one --emit FORMAT=FILE.
type emitTarget struct{ format, path string }

// emitFlags reads --emit FORMAT=FILE (repeatable), before the search: an
// unknown format, a missing file or a file named twice is an input error.
func emitFlags(c *cli.Context) ([]emitTarget, error) {
	var out []emitTarget
	seen := map[string]bool{c.String("write-plan"): c.String("write-plan") != ""}
	for _, v := range c.StringSlice("emit") {
		f, path, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(path) == "" {
			return nil, fmt.Errorf("--emit %q: want FORMAT=FILE, e.g. --emit dynamo=deploy.yaml (formats: %s)", v, strings.Join(manifest.EmitFormats, ", "))
		}
		format, err := manifest.ParseEmitFormat(f)
		if err != nil {
			return nil, fmt.Errorf("--emit %s: %w", v, err)
		}
		if seen[path] {
			return nil, fmt.Errorf("--emit %s: %s is written twice", v, path)
		}
		seen[path] = true
		out = append(out, emitTarget{format, path})
	}
	if c.IsSet("candidate") && len(out) == 0 && c.String("write-plan") == "" {
		return nil, fmt.Errorf("--candidate picks the deployment --write-plan and --emit write: give one of them")
	}
	return out, nil
}

// writeDeployment writes the chosen candidate as a plan file (--write-plan)
// and in each --emit format, every file atomically.
func writeDeployment(c *cli.Context, cat *catalog.Catalog, q *capacity.Query, res *capacity.Result, emits []emitTarget) error {
	path := c.String("write-plan")
	if path == "" && len(emits) == 0 {
		return nil
	}
	if res.Best == nil && c.Int("candidate") == 0 {
		// Nothing meets the SLO: the closest is shown and the run exits 1,
		// as without the files; the notes say what was not written.
		if path != "" {
			res.Notes = append(res.Notes, fmt.Sprintf("no plan was written to %s: nothing meets the SLO", path))
		}
		for _, e := range emits {
			res.Notes = append(res.Notes, fmt.Sprintf("no %s manifest was written to %s: nothing meets the SLO", e.format, e.path))
		}
		return nil
	}
	cand, err := res.Pick(c.Int("candidate"))
	if err != nil {
		what := "--emit"
		if path != "" {
			what = "--write-plan " + path
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	if path != "" {
		data, err := q.PlanFile(cand)
		if err != nil {
			return internalError{err}
		}
		if err := writeOutput(c, "write-plan", path, data); err != nil {
			return err
		}
	}
	if len(emits) == 0 {
		return nil
	}
	plan, err := q.DeploymentPlan(cat, cand)
	if err != nil {
		return internalError{err}
	}
	model := q.Model.HFID
	if model == "" {
		model = q.Model.Name
	}
	opts := manifest.EmitOptions{Model: model, EngineVersion: q.Engine.Newest(), Header: append(q.Summary(cand), capacity.PriceLine(cand)),
		DefaultKVDtype: q.Model.KVDtype, DefaultBlockSize: q.Engine.DefaultBlockSize, NodeGPUs: capacity.NodeGPUs(cand),
		GPUProducts: capacity.GPUProducts(cat, plan)}
	for _, e := range emits {
		opts.FileName = filepath.Base(e.path)
		data, err := manifest.Emit(e.format, plan, opts)
		if err != nil {
			return fmt.Errorf("--emit %s=%s: %w", e.format, e.path, err)
		}
		if err := writeOutput(c, "emit "+e.format, e.path, data); err != nil {
			return err
		}
	}
	return nil
}
