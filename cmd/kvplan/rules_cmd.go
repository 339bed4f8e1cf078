package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/internal/suggest"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/rules"
	"github.com/kvplan/kvplan/units"
)

func rulesCommand() *cli.Command {
	return &cli.Command{
		Name:  "rules",
		Usage: "list, show, document and test rule packs",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list the rules in effect (default pack + --rules, less --disable)",
				UsageText: "kvplan rules list [--rules DIR] [-o json]",
				Flags:     append(ruleFlags(), outputFlag(report.FormatTable, docFormats)),
				Action:    runRulesList,
			},
			{
				Name:      "show",
				Usage:     "show one rule: when it fires, why, and what to change",
				ArgsUsage: "ID",
				UsageText: "kvplan rules show host-oom-staged-kv",
				Flags:     append(ruleFlags(), outputFlag(report.FormatTable, docFormats)),
				Action:    runRulesShow,
			},
			{
				Name:      "env",
				Usage:     "every variable a rule can use, with its type, unit and meaning",
				UsageText: "kvplan rules env",
				Action: func(c *cli.Context) error {
					return rules.WriteEnvDoc(c.App.Writer)
				},
			},
			{
				Name:      "test",
				Usage:     "run rule tests: plan files with an expected-findings list beside them (NAME.expect.toml)",
				ArgsUsage: "DIR",
				UsageText: "kvplan rules test testdata/rules/planner --rules team-rules/ [-o junit > rules.xml]",
				Flags:     append(ruleFlags(), rulesTestOutputFlag()),
				Action:    runRulesTest,
			},
		},
	}
}

// rulesTestFormats are what kvplan rules test writes.
var rulesTestFormats = []string{"table", "junit"}

func rulesTestOutputFlag() cli.Flag {
	f := outputFlag("table", rulesTestFormats)
	f.Usage += " (table: one line per test; junit: one test case per .expect.toml, for CI)"
	return f
}

type ruleJSON struct {
	ID       string   `json:"id"`
	Severity string   `json:"severity"`
	PerPool  bool     `json:"per_pool"`
	When     string   `json:"when"`
	DenyWhen string   `json:"deny_when,omitempty"`
	Message  string   `json:"message"`
	Why      string   `json:"why"`
	Fix      string   `json:"fix"`
	Fields   []string `json:"fields,omitempty"`
	File     string   `json:"file"`
	Line     int      `json:"line"`
}

func toJSON(r *rules.Rule) ruleJSON {
	return ruleJSON{ID: r.ID, Severity: string(r.Severity), PerPool: r.PerPool, When: r.When, DenyWhen: r.DenyWhen,
		Message: r.Message, Why: r.Why, Fix: r.Fix, Fields: r.Fields, File: r.File, Line: r.Line}
}

func runRulesList(c *cli.Context) error {
	set, err := loadRules(c)
	if err != nil {
		return err
	}
	var rows [][]string
	var js []ruleJSON
	for _, r := range set.Rules {
		rows = append(rows, []string{r.ID, string(r.Severity), r.When, fmt.Sprintf("%s:%d", r.File, r.Line)})
		js = append(js, toJSON(r))
	}
	doc := &report.Doc{
		Title:    fmt.Sprintf("%d rules", len(rows)),
		Sections: []report.Section{{Header: []string{"id", "severity", "when", "defined in"}, Rows: rows}},
		JSON:     js,
	}
	return emit(c, doc, nil)
}

func runRulesShow(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("rules show: give exactly one rule id (kvplan rules list shows them)")
	}
	set, err := loadRules(c)
	if err != nil {
		return err
	}
	id := c.Args().First()
	r := set.Rule(id)
	if r == nil {
		var ids []string
		for _, x := range set.Rules {
			ids = append(ids, x.ID)
		}
		return fmt.Errorf("rules show: no rule %q%s", id, suggest.DidYouMean(id, ids))
	}
	rows := [][]string{
		{"id", r.ID}, {"severity", string(r.Severity)}, {"per pool", fmt.Sprint(r.PerPool)},
		{"when", r.When}, {"deny when", r.DenyWhen}, {"message", r.Message}, {"why", r.Why}, {"fix", r.Fix},
		{"fields", strings.Join(r.Fields, ", ")}, {"defined in", fmt.Sprintf("%s:%d", r.File, r.Line)},
	}
	return emit(c, &report.Doc{Title: r.ID, Sections: []report.Section{{Header: []string{"field", "value"}, Rows: rows}}, JSON: toJSON(r)}, nil)
}

func runRulesTest(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("rules test: give exactly one directory of *.expect.toml files")
	}
	format, err := units.ParseEnum(c.String("output"), rulesTestFormats) // -o JUNIT is junit
	if err != nil {
		return fmt.Errorf("rules test: -o %q is not a format; use table or junit", c.String("output"))
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return err
	}
	set, err := loadRules(c)
	if err != nil {
		return err
	}
	results, err := rules.RunTests(c.Args().First(), set, envBuilder(cat))
	if err != nil {
		return err
	}
	if len(results) == 0 {
		return fmt.Errorf("rules test: no *.expect.toml files under %s", c.Args().First())
	}
	failed := 0
	for _, r := range results {
		if !r.Passed() {
			failed++
		}
	}
	if format == "junit" {
		var buf bytes.Buffer
		if err := report.WriteRuleTestsJUnit(&buf, results); err != nil {
			return internalError{err}
		}
		if _, err := c.App.Writer.Write(buf.Bytes()); err != nil {
			return err
		}
		if failed > 0 {
			return findingsError{failed}
		}
		return nil
	}
	w := c.App.Writer
	for _, r := range results {
		if r.Passed() {
			fmt.Fprintf(w, "ok    %s\n", r.Name)
			continue
		}
		fmt.Fprintf(w, "FAIL  %s\n", r.Name)
		for _, f := range r.Failures {
			fmt.Fprintf(w, "      %s\n", f)
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", len(results)-failed, failed)
	if failed > 0 {
		return findingsError{failed}
	}
	return nil
}
