package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/planfile"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/rules"
	"github.com/kvplan/kvplan/units"
)

func ruleFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "rules", Usage: "rule pack file or directory of *.toml packs, extending the default pack (repeatable; a rule with a default's id replaces it)"},
		&cli.BoolFlag{Name: "no-default-rules", Usage: "leave out the embedded default rule pack"},
		&cli.StringSliceFlag{Name: "disable", Usage: "turn off a rule by id (repeatable)"},
		&cli.StringSliceFlag{Name: "catalog", EnvVars: []string{catalog.EnvVar},
			Usage: "directory (or file) of *.toml catalog entries merged over the embedded catalog; repeatable"},
	}
}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "evaluate a deployment plan file or Kubernetes manifest against the rules; exit 1 when a rule fails it (for CI)",
		ArgsUsage: "PLAN.toml | MANIFEST.yaml | -",
		UsageText: `kvplan check plan.toml
   kvplan check plan.toml -o github            # GitHub Actions annotations
   kvplan check plan.toml -o sarif > kvplan.sarif
   kvplan check plan.toml --rules team-rules/ --disable kv-routing-pays-off --fail-on warn
   kvplan check deploy/disagg.yaml --gpu h100-sxm --link ib-ndr --input-tokens 3000 --concurrency 16
   helm template my-release vllm/vllm-stack -f values.yaml | kvplan check - --gpu l40s`,
		Description: `Reads the plan (see examples/ and the README), or a manifest (.yaml, .yml,
.json or - for stdin: DynamoGraphDeployment, llm-d, KServe LLMInferenceService,
production-stack values, a Deployment running vllm serve), computes every
figure (KV sizes, transfers, memory per pool, routing capacity, TTFT, cost) and
evaluates the default rule pack plus --rules packs. Each finding says why,
with the figures, and what to change, at the plan file's line or the
manifest's line:col. What a manifest lacks comes from --gpu, --link,
--input-tokens, --output-tokens, --rate, --concurrency, --ttft-p95 and
--itl-p95 (they win), or from a
plan file with [deployment] manifest = "..."; what is still missing is
assumed and listed.`,
		Flags: append(append(ruleFlags(), supplementFlags()...),
			outputFlag(report.FormatTable, report.CheckFormats()),
			&cli.StringFlag{Name: "fail-on", Value: "deny", Usage: "lowest severity that fails the check: deny, warn or info"},
			&cli.BoolFlag{Name: "explain", Usage: "also show how each figure was derived (table and markdown)"},
			pathsRootFlag(), allowOutsideFlag(),
		),
		Action: runCheck,
	}
}

func loadRules(c *cli.Context) (*rules.Set, error) {
	return rules.Load(rules.Options{Paths: c.StringSlice("rules"), NoDefault: c.Bool("no-default-rules"), Disable: c.StringSlice("disable")})
}

// planDeployment is the planner's figures of a plan, with each pool's
// capacity at the plan's SLO from the same engine model and search as
// kvplan plan (a pool without an engine model keeps the prefill floor).
func planDeployment(cat *catalog.Catalog, p *planfile.Plan) (*planner.Deployment, error) {
	dep, err := planner.PlanDeployment(cat, p)
	if err != nil {
		return nil, err
	}
	if _, err := capacity.ForDeployment(dep, planEngine(cat)); err != nil {
		return nil, internalError{err}
	}
	return dep, nil
}

// envBuilder turns a plan file into the rules' environment through the planner.
func envBuilder(cat *catalog.Catalog) rules.Builder {
	return func(p *planfile.Plan) (*rules.Env, error) {
		dep, err := planDeployment(cat, p)
		if err != nil {
			return nil, err
		}
		return rules.FromDeployment(dep), nil
	}
}

func runCheck(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("check: give exactly one plan file or manifest (e.g. kvplan check examples/clean.toml)")
	}
	format, err := units.ParseEnum(c.String("output"), report.CheckFormats()) // -o SARIF is sarif
	if err != nil {
		return fmt.Errorf("check: -o %q is not a format; use one of %s", c.String("output"), strings.Join(report.CheckFormats(), ", "))
	}
	failOn, err := rules.ParseSeverity(strings.ToLower(c.String("fail-on")))
	if err != nil {
		return fmt.Errorf("check: --fail-on: %w", err)
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return err
	}
	ruleOff, manifestOff := splitDisable(c.StringSlice("disable"))
	set, err := rules.Load(rules.Options{Paths: c.StringSlice("rules"), NoDefault: c.Bool("no-default-rules"), Disable: ruleOff})
	if err != nil {
		return err
	}
	rv, err := loadReview(c, cat)
	if err != nil {
		return err
	}
	plan := rv.plan
	dep, err := planDeployment(cat, plan)
	if err != nil {
		return err
	}
	if err := dep.Derivation.Check(); err != nil {
		return err // a NaN or infinite figure: exit 2, never in a report
	}
	findings := mergeFindings(set.Evaluate(rules.FromDeployment(dep)), rv.findings, manifestOff)
	rules.LocateWritten(findings, plan.Has, plan.Pos)
	res := report.NewCheckResult(rv.file, set, findings, keyFigures(dep), failOn)
	res.Notes = rv.notes
	for _, u := range dep.EfficiencyUses() { // the shipped fit, or the user's calibration (its files and date)
		res.Notes = append(res.Notes, report.CheckNote{Message: u.Note()})
	}
	var buf bytes.Buffer
	if err := report.WriteCheck(&buf, format, res); err != nil {
		return internalError{err}
	}
	if c.Bool("explain") && (format == "table" || format == "markdown") {
		fmt.Fprintf(&buf, "\nHow each figure was derived:\n%s", safetext.Terminal(dep.Derivation.String()))
	}
	if _, err := c.App.Writer.Write(buf.Bytes()); err != nil {
		return err
	}
	if res.Verdict == report.VerdictFail {
		return findingsError{res.Counts.Deny + res.Counts.Warn}
	}
	return nil
}

// keyFigures are the figures a reviewer reads next to the findings.
func keyFigures(dep *planner.Deployment) []report.CheckFigure {
	f := []report.CheckFigure{
		{Name: "kv_bytes_per_token", Value: float64(dep.KV.KVBytesPerToken * int64(dep.KV.TP)), Unit: "B"},
		{Name: "kv_bytes_per_request", Value: float64(dep.KV.KVBytesAllRanks), Unit: "B"},
	}
	if d := dep.Disagg; d != nil {
		f = append(f,
			report.CheckFigure{Name: "transfer_ms", Value: d.TransferMS, Unit: "ms"},
			report.CheckFigure{Name: "bytes_per_path", Value: float64(d.BytesPerPath), Unit: "B"},
			report.CheckFigure{Name: "transfers_in_flight", Value: d.TransfersInFlight, Unit: "transfers"},
			report.CheckFigure{Name: "transfer_ms_shared", Value: d.TransferMSShared, Unit: "ms"},
			report.CheckFigure{Name: "ttft_agg_ms", Value: d.TTFTAggMS, Unit: "ms"},
			report.CheckFigure{Name: "ttft_disagg_ms", Value: d.TTFTDisaggMS, Unit: "ms"},
		)
	}
	f = append(f,
		report.CheckFigure{Name: "prefill_ms", Value: dep.PrefillMS, Unit: "ms"},
		report.CheckFigure{Name: "predicted_ttft_ms", Value: dep.TTFTMS, Unit: "ms"},
		report.CheckFigure{Name: "predicted_itl_ms", Value: dep.ITLMS, Unit: "ms"},
	)
	for _, pp := range dep.Pools {
		f = append(f,
			report.CheckFigure{Name: pp.Name + ".kv_slots_tokens", Value: float64(pp.Memory.KVSlotsTokens), Unit: "tokens"},
			report.CheckFigure{Name: pp.Name + ".kv_tokens_in_flight", Value: float64(pp.InFlight.TokensNeeded), Unit: "tokens"},
			report.CheckFigure{Name: pp.Name + ".host_required_bytes", Value: float64(pp.Memory.HostRequiredBytes), Unit: "B"},
		)
	}
	if dep.Routing.WorkingSetTokens > 0 {
		f = append(f,
			report.CheckFigure{Name: "working_set_tokens", Value: float64(dep.Routing.WorkingSetTokens), Unit: "tokens"},
			report.CheckFigure{Name: "prefix_capacity_tokens", Value: float64(dep.Routing.CapacityTokens), Unit: "tokens"},
		)
	}
	f = append(f,
		report.CheckFigure{Name: "gpus", Value: float64(dep.GPUs), Unit: "GPUs"},
		report.CheckFigure{Name: "usd_per_hour", Value: dep.USDPerHour, Unit: "$/h"},
	)
	return f
}
