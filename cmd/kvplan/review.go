package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/internal/safefile"
	"github.com/kvplan/kvplan/manifest"
	"github.com/kvplan/kvplan/planfile"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/rules"
	"github.com/kvplan/kvplan/units"
)

// supplementFlags are what a manifest lacks, for check and manifest show.
func supplementFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "gpu", Usage: "GPU of every pool, or POOL=GPU for one (repeatable; kvplan gpus list); wins over a node selector"},
		&cli.StringFlag{Name: "link", Usage: "link between prefill and decode pools (kvplan links list)"},
		inputTokensFlag(0, "prompt tokens per request (workload.input_tokens)", "isl"),
		outputTokensFlag(0, "generated tokens per request (workload.output_tokens)", "osl"),
		&cli.Float64Flag{Name: "rate", Usage: "requests per second"},
		&cli.IntFlag{Name: "concurrency", Usage: "requests in flight across the deployment"},
		&cli.StringFlag{Name: "ttft-p95", Usage: "TTFT objective, e.g. 500ms"},
		&cli.StringFlag{Name: "itl-p95", Usage: "inter-token latency objective, e.g. 50ms"},
	}
}

var supplementNames = []string{"gpu", "link", flagInputTokens, flagOutputTokens, "rate", "concurrency", "ttft-p95", "itl-p95"}

// supplement reads the flags of what a manifest lacks.
func supplement(c *cli.Context, cat *catalog.Catalog) (manifest.Supplement, error) {
	s := manifest.Supplement{Link: c.String("link"), GPU: map[string]string{}}
	for _, g := range c.StringSlice("gpu") {
		pool, name, scoped := strings.Cut(g, "=")
		if !scoped {
			pool, name = "", g
		}
		if strings.TrimSpace(name) == "" {
			return s, fmt.Errorf("--gpu %q: want a GPU name or POOL=GPU", g)
		}
		if _, dup := s.GPU[pool]; dup {
			return s, fmt.Errorf("--gpu %q: that pool's GPU is given twice", g)
		}
		s.GPU[pool] = name
	}
	for _, f := range []struct {
		name string
		dst  *int
	}{{flagInputTokens, &s.InputTokens}, {flagOutputTokens, &s.OutputTokens}, {"concurrency", &s.Concurrency}} {
		if c.IsSet(f.name) {
			v, err := positive(c, f.name, false)
			if err != nil {
				return s, err
			}
			*f.dst = v
		}
	}
	if c.IsSet("rate") {
		if s.RequestRate = c.Float64("rate"); !(s.RequestRate > 0) {
			return s, fmt.Errorf("--rate %g: want requests per second, more than 0", s.RequestRate)
		}
	}
	for _, f := range []struct {
		name string
		dst  *float64
	}{{"ttft-p95", &s.TTFTMS}, {"itl-p95", &s.ITLMS}} {
		if v := c.String(f.name); v != "" {
			ms, err := units.ParseMS(v)
			if err != nil || ms <= 0 {
				return s, fmt.Errorf("--%s %q: want a duration such as 500ms or 2s", f.name, v)
			}
			*f.dst = ms
		}
	}
	if cat != nil {
		s.KnownGPU = func(name string) bool { _, err := cat.GPU(name); return err == nil }
	}
	return s, nil
}

// review is what check reviews: the plan, the file it names in reports, the
// manifest reader's findings and what was assumed.
type review struct {
	plan     *planfile.Plan
	file     string
	findings []rules.Finding
	notes    []report.CheckNote
}

// isManifest tells a manifest from a plan file by its name: - (stdin),
// .yaml, .yml or .json.
func isManifest(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return path == "-"
}

// readInput reads a manifest file (regular, capped: safefile), or stdin
// for "-".
func readInput(c *cli.Context, path string) ([]byte, error) {
	if path == "-" {
		return safefile.ReadFrom(c.App.Reader, "stdin", safefile.Manifest)
	}
	data, err := safefile.ReadFile(path, safefile.Manifest)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	return data, nil
}

// loadManifest reads the manifest a check or show names: the file itself,
// or the one a plan file's [deployment] manifest points at (then the plan
// file supplements it). It returns nil for a plain plan file.
func loadManifest(c *cli.Context, arg string) (*manifest.Manifest, *planfile.Plan, error) {
	var file *planfile.Plan
	path := arg
	var stdin []byte // "-": read once, then told apart by content
	if arg == "-" {
		data, err := readInput(c, "-")
		if err != nil {
			return nil, nil, err
		}
		if planfile.LooksLikePlan(data) {
			return planFromStdin(c, data)
		}
		stdin = data
	}
	if !isManifest(arg) {
		root, err := pathsRoot(c, arg)
		if err != nil {
			return nil, nil, err
		}
		p, err := planfile.LoadWith(arg, planfile.Options{AllowOutsidePaths: c.Bool("allow-outside-paths"), PathsRoot: root})
		if err != nil {
			return nil, nil, err
		}
		if p.Deployment.Manifest == "" {
			return nil, p, nil
		}
		file, path = p, p.ManifestPath()
	}
	var data []byte
	var err error
	switch {
	case stdin != nil:
		data = stdin
	case file != nil && path != "-":
		data, err = file.ReadManifest() // a regular file, capped
	default:
		data, err = readInput(c, path)
	}
	if err != nil {
		if file != nil && path == "-" {
			return nil, nil, file.FieldError("deployment.manifest", err)
		}
		return nil, nil, err
	}
	name := path
	if path == "-" {
		name = stdinName
	}
	m, err := manifest.Read(name, data)
	if err != nil {
		return nil, nil, err
	}
	return m, file, nil
}

// planFromStdin reads a plan file given on stdin (kvplan check - <
// plan.toml): named <stdin> in findings, its relative paths against the
// working directory (the paths root). A [deployment] manifest it names is
// read from that file; stdin is spent.
func planFromStdin(c *cli.Context, data []byte) (*manifest.Manifest, *planfile.Plan, error) {
	root, err := pathsRoot(c, "-")
	if err != nil {
		return nil, nil, err
	}
	p, err := planfile.ParseWith(stdinName, data, planfile.Options{AllowOutsidePaths: c.Bool("allow-outside-paths"), PathsRoot: root})
	if err != nil {
		return nil, nil, err
	}
	switch m := p.Deployment.Manifest; {
	case m == "":
		return nil, p, nil
	case m == "-":
		return nil, nil, p.FieldError("deployment.manifest", fmt.Errorf("\"-\" (stdin) holds the plan itself: name the manifest's file"))
	}
	mdata, err := p.ReadManifest()
	if err != nil {
		return nil, nil, err
	}
	mf, err := manifest.Read(p.ManifestPath(), mdata)
	if err != nil {
		return nil, nil, err
	}
	return mf, p, nil
}

// stdinName names input read from stdin in findings and errors.
const stdinName = "<stdin>"

// loadReview reads what `kvplan check` reviews: a plan file alone, or a
// manifest completed by a plan file and the flags.
func loadReview(c *cli.Context, cat *catalog.Catalog, arg string) (*review, error) {
	m, file, err := loadManifest(c, arg)
	if err != nil {
		return nil, err
	}
	if m == nil {
		given := givenNames(c)
		for _, n := range supplementNames {
			if given[n] {
				return nil, fmt.Errorf("check: --%s applies to a manifest; a plan file says it itself (see the README's plan file keys)", n)
			}
		}
		return &review{plan: file, file: file.Path}, nil
	}
	s, err := supplement(c, cat)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	plan, notes, err := manifest.Complete(m, file, s)
	if err != nil {
		return nil, err
	}
	rv := &review{plan: plan, file: m.Path, findings: manifestFindings(m.Findings)}
	if file != nil {
		rv.file = file.Path // the plan that names the manifest is what was checked
	}
	for _, n := range append(append([]manifest.Note{}, m.Notes...), notes...) {
		rv.notes = append(rv.notes, report.CheckNote{Message: n.Text, Pos: n.At})
	}
	return rv, nil
}

// manifestFindings turns the manifest reader's findings into rule findings,
// located where the reader found them.
func manifestFindings(fs []manifest.Finding) []rules.Finding {
	out := make([]rules.Finding, 0, len(fs))
	for _, f := range fs {
		rf := rules.Finding{RuleID: f.ID, Severity: rules.Severity(f.Severity), Pool: f.Pool, Message: f.Message,
			Why: f.Why, Fix: f.Fix, File: f.At.File, Line: f.At.Line, Col: f.At.Col, Field: f.Field}
		if f.Field != "" {
			rf.Fields = []string{f.Field}
		}
		out = append(out, rf)
	}
	return out
}

// mergeFindings adds the manifest's findings to the rules', most severe
// first, the rules' before the manifest's within a severity; --disable
// turns a manifest finding off by its id too.
func mergeFindings(ruleFindings, manifestFindings []rules.Finding, disabled []string) []rules.Finding {
	out := append([]rules.Finding{}, ruleFindings...)
	for _, f := range manifestFindings {
		off := false
		for _, d := range disabled {
			off = off || d == f.RuleID
		}
		if !off {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity.Rank() > out[j].Severity.Rank() })
	return out
}

// manifestIDs are the finding ids of the manifest reader, which --disable
// accepts besides rule ids.
var manifestIDs = []string{manifest.IDNotUnderstood, manifest.IDBadValue, manifest.IDNoModel, manifest.IDGPUCount}

// splitDisable separates manifest finding ids from rule ids.
func splitDisable(ids []string) (ruleIDs, manifestOnes []string) {
	for _, id := range ids {
		isManifest := false
		for _, m := range manifestIDs {
			isManifest = isManifest || m == id
		}
		if isManifest {
			manifestOnes = append(manifestOnes, id)
		} else {
			ruleIDs = append(ruleIDs, id)
		}
	}
	return ruleIDs, manifestOnes
}

func manifestCommand() *cli.Command {
	return &cli.Command{
		Name:  "manifest",
		Usage: "read Kubernetes manifests of a deployment (Dynamo, llm-d, KServe, production-stack values, vllm serve)",
		Subcommands: []*cli.Command{{
			Name:      "show",
			Usage:     "print the plan kvplan reads from a manifest, each value with its manifest line",
			ArgsUsage: "MANIFEST.yaml | - | PLAN.toml",
			UsageText: `kvplan manifest show deploy/disagg.yaml
   helm template my-release vllm/vllm-stack -f values.yaml | kvplan manifest show -
   kvplan manifest show deploy/disagg.yaml --gpu h100-sxm -o json`,
			Description: `Reads the manifest's documents (DynamoGraphDeployment, DisaggregatedSet,
LeaderWorkerSet, LLMInferenceService, production-stack values, Deployments,
StatefulSets and Pods running an engine), parses each worker's engine
arguments as the engine does, and prints the plan: a plan file whose every
value carries the line:col it came from (-o toml), or JSON with a places map.
A plan file with [deployment] manifest = "..." is read with its manifest.
Arguments kvplan does not know, and what it assumed, are listed.`,
			Flags: append(supplementFlags(),
				outputFlag("toml", report.ManifestFormats()),
				&cli.StringSliceFlag{Name: "catalog", EnvVars: []string{catalog.EnvVar}, Usage: "directory (or file) of *.toml catalog entries merged over the embedded catalog; repeatable"},
				pathsRootFlag(), allowOutsideFlag(),
			),
			Action: runManifestShow,
		}},
	}
}

func runManifestShow(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("manifest show: give exactly one manifest (or - for stdin)")
	}
	format, err := units.ParseEnum(c.String("output"), report.ManifestFormats()) // -o JSON is json
	if err != nil {
		return fmt.Errorf("manifest show: -o %q is not a format; use one of %s", c.String("output"), strings.Join(report.ManifestFormats(), ", "))
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return err
	}
	m, file, err := loadManifest(c, c.Args().First())
	if err != nil {
		return err
	}
	if m == nil {
		return fmt.Errorf("manifest show: %s is a plan file without [deployment] manifest: nothing to read", c.Args().First())
	}
	s, err := supplement(c, cat)
	if err != nil {
		return fmt.Errorf("manifest show: %w", err)
	}
	plan, notes, err := manifest.Merge(m, file, s)
	if err != nil {
		return err
	}
	show := &report.ManifestShow{Manifest: m.Path, Kinds: m.Kinds, Plan: plan, Findings: manifestFindings(m.Findings),
		Defaults: manifest.EngineDefaults(plan)}
	for _, n := range append(append([]manifest.Note{}, m.Notes...), notes...) {
		show.Notes = append(show.Notes, report.CheckNote{Message: n.Text, Pos: n.At})
	}
	return report.WriteManifest(c.App.Writer, format, show)
}
