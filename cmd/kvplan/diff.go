package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/rules"
	"github.com/kvplan/kvplan/units"
)

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "the change in GPUs, cost, TTFT/ITL/TPOT and capacity from one plan file or manifest to another, and the findings added or resolved; exit 1 when HEAD adds a failing finding (for pull requests)",
		ArgsUsage: "BASE HEAD",
		UsageText: `kvplan diff base.toml head.toml
   kvplan diff base.toml head.toml -o markdown > comment.md    # a pull-request comment
   kvplan diff deploy/disagg.yaml deploy/disagg-new.yaml --gpu h100-sxm --rate 4 -o json
   git show main:plan.toml > /tmp/base.toml && kvplan diff /tmp/base.toml plan.toml --fail-on warn`,
		Description: `Reads BASE and HEAD exactly as kvplan check reads each (plan files or
manifests, the same flags for both: --gpu, --link, --rate, --rules, --disable
...), and compares kvplan check's figures (GPUs, $/hour, $/M output tokens,
TTFT and ITL p95, TPOT, KV transfer, capacity within the SLO: kvplan plan's
names and values) and findings (by rule and pool: added in HEAD, resolved
from BASE). Exit 1 when HEAD adds a finding at --fail-on or worse; a finding
BASE already had does not fail the diff. One of BASE and HEAD may be - for
stdin.`,
		Flags: append(append(ruleFlags(), supplementFlags()...),
			outputFlag(report.FormatTable, report.DiffFormats()),
			&cli.StringFlag{Name: "fail-on", Value: "deny", Usage: "lowest severity of an added finding that fails the diff: deny, warn or info"},
			pathsRootFlag(), allowOutsideFlag(),
		),
		Action: runDiff,
	}
}

func runDiff(c *cli.Context) error {
	if c.NArg() != 2 {
		return fmt.Errorf("diff: give BASE and HEAD, two plan files or manifests (e.g. kvplan diff base.toml head.toml)")
	}
	base, head := c.Args().Get(0), c.Args().Get(1)
	if base == "-" && head == "-" {
		return fmt.Errorf("diff: only one of BASE and HEAD can be - (stdin)")
	}
	format, err := units.ParseEnum(c.String("output"), report.DiffFormats())
	if err != nil {
		return fmt.Errorf("diff: -o %q is not a format; use one of %s", c.String("output"), strings.Join(report.DiffFormats(), ", "))
	}
	failOn, err := rules.ParseSeverity(strings.ToLower(c.String("fail-on")))
	if err != nil {
		return fmt.Errorf("diff: --fail-on: %w", err)
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
	var sides [2]*report.CheckResult
	for i, arg := range []string{base, head} {
		if sides[i], _, err = checkInput(c, cat, set, manifestOff, arg, failOn); err != nil {
			return fmt.Errorf("diff: %s: %w", []string{"BASE", "HEAD"}[i], err)
		}
	}
	d := report.NewDiff(sides[0], sides[1], failOn)
	var buf bytes.Buffer
	if err := report.WriteDiff(&buf, format, d); err != nil {
		return internalError{err}
	}
	if _, err := c.App.Writer.Write(buf.Bytes()); err != nil {
		return err
	}
	if d.Verdict == report.VerdictFail {
		return findingsError{d.Counts.AddedFailing}
	}
	return nil
}
