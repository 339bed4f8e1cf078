package main

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/units"
)

// enginesCommand is `kvplan engines list|show`: the catalog's serving
// engine profiles, one per range of versions.
func enginesCommand() *cli.Command {
	return &cli.Command{
		Name:  "engines",
		Usage: "list or show the catalog's serving engines: memory accounting constants per version range, with sources",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list every engine profile: name, version range, the releases it was checked against",
				UsageText: "kvplan engines list [-o json] [--catalog DIR]",
				Flags:     commonFlags(),
				Action: func(c *cli.Context) error {
					cat, err := loadCatalog(c)
					if err != nil {
						return err
					}
					return emit(c, listEngines(cat), nil)
				},
			},
			{
				Name:      "show",
				Usage:     "show one engine's constants, each with its source, at a version (default: the newest the catalog knows)",
				ArgsUsage: "NAME",
				UsageText: `kvplan engines show vllm
   kvplan engines show vllm --engine-version 0.19.0 -o json
   kvplan engines show sglang`,
				Flags: append(commonFlags(),
					&cli.StringFlag{Name: "engine-version", Usage: "the version whose profile to show, e.g. 0.19.0 (default: the newest the catalog knows)"}),
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return fmt.Errorf("engines show: give exactly one engine name (kvplan engines list shows them)")
					}
					cat, err := loadCatalog(c)
					if err != nil {
						return err
					}
					e, v, err := cat.EngineVersion(c.Args().First(), c.String("engine-version"))
					if err != nil {
						return err
					}
					return emit(c, showEngine(e, v), nil)
				},
			},
		},
	}
}

// engineJSON is one engine profile in -o json.
type engineJSON struct {
	Name               string            `json:"name"`
	Family             string            `json:"family"`
	Description        string            `json:"description"`
	Versions           string            `json:"versions"`
	Range              string            `json:"range"`
	MinVersion         string            `json:"min_version,omitempty"`
	BelowVersion       string            `json:"below_version,omitempty"`
	Releases           []string          `json:"releases"`
	MemoryFraction     float64           `json:"memory_fraction"`
	MemoryFractionFlag string            `json:"memory_fraction_flag"`
	Constants          map[string]string `json:"constants,omitempty"`
	Sources            map[string]string `json:"sources,omitempty"`
	Source             string            `json:"source"`
	File               string            `json:"file"`
	Line               int               `json:"line"`
}

func describeEngine(e *catalog.Engine, withConstants bool) engineJSON {
	j := engineJSON{Name: e.Name, Family: e.FamilyOf(), Description: e.Description, Versions: e.Version, Range: e.Range(),
		MinVersion: e.MinVersion, BelowVersion: e.BelowVersion, Releases: e.Versions, MemoryFraction: e.MemoryFraction,
		MemoryFractionFlag: e.MemoryFractionFlag, Source: e.Source, File: e.File, Line: e.Line}
	if j.Releases == nil {
		j.Releases = []string{}
	}
	if withConstants {
		j.Constants, j.Sources = map[string]string{}, map[string]string{}
		for _, k := range catalog.EngineConstants(e.FamilyOf()) {
			j.Constants[k] = engineConstant(e, k)
			j.Sources[k] = e.SourceOf(k)
		}
	}
	return j
}

func listEngines(cat *catalog.Catalog) *report.Doc {
	var rows [][]string
	var js []engineJSON
	for _, e := range cat.Engines {
		fraction := "derived"
		if e.MemoryFraction > 0 {
			fraction = fmt.Sprintf("%g", e.MemoryFraction)
		}
		rows = append(rows, []string{e.Name, e.Range(), strings.Join(e.Versions, ", "), e.MemoryFractionFlag + " " + fraction, e.Description})
		js = append(js, describeEngine(e, false))
	}
	return &report.Doc{
		Title:    fmt.Sprintf("%d engine profiles", len(rows)),
		Sections: []report.Section{{Header: []string{"name", "versions", "releases checked", "memory fraction", "description"}, Rows: rows}},
		Notes: []string{"kvplan memory --engine NAME --engine-version V picks the profile whose range holds V; without a version, the newest release listed.",
			"kvplan engines show NAME lists every constant with its source."},
		JSON: js,
	}
}

func showEngine(e *catalog.Engine, resolved string) *report.Doc {
	title := e.Name + " " + e.Range()
	if resolved != "" {
		title = fmt.Sprintf("%s %s (profile %s)", e.Name, resolved, e.Range())
	}
	rows := [][]string{
		{"description", e.Description, ""}, {"versions", e.Version, ""},
		{"releases checked", strings.Join(e.Versions, ", "), ""},
	}
	consts := catalog.EngineConstants(e.FamilyOf())
	sort.Strings(consts)
	for _, k := range consts {
		rows = append(rows, []string{k, engineConstant(e, k), e.SourceOf(k)})
	}
	rows = append(rows, []string{"defined in", fmt.Sprintf("%s:%d", e.File, e.Line), ""})
	return &report.Doc{Title: title, Sections: []report.Section{{Header: []string{"constant", "value", "source"}, Rows: rows}},
		JSON: describeEngine(e, true)}
}

// engineConstant writes one constant of an engine profile by its TOML
// name, as the catalog states it: a size with its bytes ("2GiB (2 GiB)"),
// a number, a switch. The field is found by its toml tag, so a constant
// added to catalog.Engine shows without a change here.
func engineConstant(e *catalog.Engine, name string) string {
	switch name {
	case "memory_fraction":
		if e.MemoryFraction == 0 {
			return "derived (" + e.MemoryFractionFlag + ")"
		}
		return fmt.Sprintf("%g (%s)", e.MemoryFraction, e.MemoryFractionFlag)
	case "non_torch_tp":
		var parts []string
		for _, x := range e.NonTorchTPBytes {
			parts = append(parts, fmt.Sprintf("tp %d: %s", x.TP, units.Bytes(x.Bytes)))
		}
		return strings.Join(parts, ", ")
	case "fraction_bucket":
		var parts []string
		for _, b := range e.FractionBuckets {
			below := "rest"
			if b.Below != "" {
				below = "< " + b.Below
			}
			parts = append(parts, fmt.Sprintf("%s: chunked prefill %d, graph bs %d/%d", below, b.ChunkedPrefillSize, b.CUDAGraphMaxBS, b.CUDAGraphMaxBSTP4))
		}
		return strings.Join(parts, "; ")
	}
	v := reflect.ValueOf(e).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if strings.Split(f.Tag.Get("toml"), ",")[0] != name {
			continue
		}
		fv := v.Field(i)
		switch fv.Kind() {
		case reflect.String:
			if fv.String() == "" {
				return "-"
			}
			if b := v.FieldByName(f.Name + "Bytes"); b.IsValid() && b.Kind() == reflect.Int64 {
				return fmt.Sprintf("%s (%s)", fv.String(), units.Bytes(b.Int()))
			}
			return fv.String()
		case reflect.Float64:
			return fmt.Sprintf("%g", fv.Float())
		case reflect.Int, reflect.Int64:
			return fmt.Sprint(fv.Int())
		case reflect.Bool:
			return fmt.Sprint(fv.Bool())
		}
	}
	return "(not shown: kvplan engines show does not know this constant yet)"
}
