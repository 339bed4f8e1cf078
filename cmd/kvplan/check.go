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
		ArgsUsage: "PLAN.toml | MANIFEST.yaml | - ...",
		UsageText: `kvplan check plan.toml
   kvplan check examples/*.toml k8s/*.yaml -o sarif > kvplan.sarif   # several inputs: one SARIF run, one JUnit document
   kvplan check plan.toml -o github            # GitHub Actions annotations
   kvplan check plan.toml -o sarif > kvplan.sarif
   kvplan check plan.toml --rules team-rules/ --disable kv-routing-pays-off --fail-on warn
   kvplan check deploy/disagg.yaml --gpu h100-sxm --link ib-ndr --input-tokens 3000 --concurrency 16
   helm template my-release vllm/vllm-stack -f values.yaml | kvplan check - --gpu l40s`,
		Description: `Reads the plan (see examples/ and the README), or a manifest (.yaml, .yml,
.json: DynamoGraphDeployment, llm-d, KServe LLMInferenceService,
production-stack values, a Deployment running vllm serve); - reads either from
stdin, told apart by its content (a TOML plan starts with a [table] or a
key = value line). It computes every
figure (KV sizes, transfers, memory per pool, routing capacity, TTFT, cost) and
evaluates the default rule pack plus --rules packs. Each finding says why,
with the figures, and what to change, at the plan file's line or the
manifest's line:col. Several inputs are checked in turn with the same flags
and reported together (SARIF: one run; JUnit: a suite per input; JSON:
{"verdict", "counts", "results": [...]}); the exit code is the worst of
them. What a manifest lacks comes from --gpu, --link,
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
	if c.NArg() < 1 {
		return fmt.Errorf("check: give a plan file or manifest (e.g. kvplan check examples/clean.toml), or several")
	}
	if c.NArg() > maxCheckInputs {
		return fmt.Errorf("check: %d inputs: at most %d in one run", c.NArg(), maxCheckInputs)
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
	stdin := 0
	for _, arg := range c.Args().Slice() {
		if arg == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return fmt.Errorf("check: - (stdin) is given %d times; it can be read once", stdin)
	}
	var results []*report.CheckResult
	var deps []*planner.Deployment
	for _, arg := range c.Args().Slice() {
		res, dep, err := checkInput(c, cat, set, manifestOff, arg, failOn)
		if err != nil {
			return err
		}
		results, deps = append(results, res), append(deps, dep)
	}
	var buf bytes.Buffer
	if err := report.WriteChecks(&buf, format, results); err != nil {
		return internalError{err}
	}
	if c.Bool("explain") && (format == "table" || format == "markdown") {
		for i, dep := range deps {
			if len(deps) > 1 {
				fmt.Fprintf(&buf, "\n%s:", safetext.Terminal(results[i].PlanFile))
			}
			fmt.Fprintf(&buf, "\nHow each figure was derived:\n%s", safetext.Terminal(dep.Derivation.String()))
			if a := dep.AtLoad; a != nil && a.Explain != nil {
				fmt.Fprintf(&buf, "\nAt workload.request_rate (kvplan plan's figures of these pools):\n%s", safetext.Terminal(a.Explain().String()))
			}
		}
	}
	if _, err := c.App.Writer.Write(buf.Bytes()); err != nil {
		return err
	}
	if all := report.ChecksSummary(results); all.Verdict == report.VerdictFail {
		return findingsError{all.Counts.Deny + all.Counts.Warn}
	}
	return nil
}

// maxCheckInputs bounds the files one check reads (each is capped in size).
const maxCheckInputs = 1000

// checkInput is what check reports for one plan file or manifest (arg):
// read as check reads it, planned, its rules evaluated, located. kvplan
// diff checks each side with it.
func checkInput(c *cli.Context, cat *catalog.Catalog, set *rules.Set, manifestOff []string, arg string, failOn rules.Severity) (*report.CheckResult, *planner.Deployment, error) {
	rv, err := loadReview(c, cat, arg)
	if err != nil {
		return nil, nil, err
	}
	plan := rv.plan
	dep, err := planDeployment(cat, plan)
	if err != nil {
		return nil, nil, err
	}
	if err := dep.Derivation.Check(); err != nil {
		return nil, nil, err // a NaN or infinite figure: exit 2, never in a report
	}
	findings := mergeFindings(set.Evaluate(rules.FromDeployment(dep)), rv.findings, manifestOff)
	rules.LocateWritten(findings, plan.Has, plan.Pos)
	res := report.NewCheckResult(rv.file, set, findings, keyFigures(dep), failOn)
	res.Notes = rv.notes
	for _, u := range dep.EfficiencyUses() { // the shipped fit, or the user's calibration (its files and date)
		res.Notes = append(res.Notes, report.CheckNote{Message: u.Note()})
	}
	return res, dep, nil
}

// keyFigures are the figures a reviewer reads next to the findings: the
// planner's, under kvplan plan's names (planner.Deployment.KeyFigures).
func keyFigures(dep *planner.Deployment) []report.CheckFigure {
	kf := dep.KeyFigures()
	out := make([]report.CheckFigure, len(kf))
	for i, f := range kf {
		out[i] = report.CheckFigure{Name: f.Name, Value: f.Value, Unit: f.Unit, Unknown: f.Unknown, Unbounded: f.Unbounded}
	}
	return out
}
