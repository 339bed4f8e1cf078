package main

import (
	"fmt"
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
// name, as the catalog states it.
func engineConstant(e *catalog.Engine, name string) string {
	size := func(s string, b int64) string {
		if s == "" {
			return "-"
		}
		return fmt.Sprintf("%s (%s)", s, units.Bytes(b))
	}
	num := func(f float64) string { return fmt.Sprintf("%g", f) }
	switch name {
	case "memory_fraction":
		if e.MemoryFraction == 0 {
			return "derived (" + e.MemoryFractionFlag + ")"
		}
		return num(e.MemoryFraction) + " (" + e.MemoryFractionFlag + ")"
	case "default_block_size":
		return fmt.Sprint(e.DefaultBlockSize)
	case "default_max_num_batched_tokens":
		return fmt.Sprint(e.DefaultMaxNumBatchedTokens)
	case "default_max_num_seqs":
		return fmt.Sprint(e.DefaultMaxNumSeqs)
	case "host_baseline_rss":
		return size(e.HostBaselineRSS, e.HostBaselineRSSBytes)
	case "host_margin":
		return size(e.HostMargin, e.HostMarginBytes)
	case "host_retention":
		return num(e.HostRetention)
	case "non_torch":
		return size(e.NonTorch, e.NonTorchBytes)
	case "non_torch_pp":
		return size(e.NonTorchPP, e.NonTorchPPBytes)
	case "non_torch_eager":
		return size(e.NonTorchEager, e.NonTorchEagerBytes)
	case "non_torch_tp":
		var parts []string
		for _, x := range e.NonTorchTPBytes {
			parts = append(parts, fmt.Sprintf("tp %d: %s", x.TP, units.Bytes(x.Bytes)))
		}
		return strings.Join(parts, ", ")
	case "activation_hidden_copies":
		return num(e.ActivationHiddenCopies)
	case "activation_mlp_copies":
		return num(e.ActivationMLPCopies)
	case "activation_kept_hidden_copies":
		return num(e.ActivationKeptHiddenCopies)
	case "moe_workspace_copies":
		return num(e.MoEWorkspaceCopies)
	case "pp_buffer_hidden_copies":
		return num(e.PPBufferHiddenCopies)
	case "sampler_bytes_per_logit":
		return num(e.SamplerBytesPerLogit)
	case "cuda_graphs_charged":
		return fmt.Sprint(e.CUDAGraphsCharged)
	case "cuda_graph_base":
		return size(e.CUDAGraphBase, e.CUDAGraphBaseBytes)
	case "cuda_graph_per_layer":
		return size(e.CUDAGraphPerLayer, e.CUDAGraphPerLayerBytes)
	case "cuda_graph_max_tokens":
		return fmt.Sprint(e.CUDAGraphMaxTokens)
	case "large_gpu_memory":
		return size(e.LargeGPUMemory, e.LargeGPUMemoryBytes)
	case "large_gpu_max_num_batched_tokens":
		return fmt.Sprint(e.LargeMaxNumBatchedTokens)
	case "large_gpu_max_num_seqs":
		return fmt.Sprint(e.LargeMaxNumSeqs)
	case "init_overhead":
		return size(e.InitOverhead, e.InitOverheadBytes)
	case "init_overhead_tp":
		return size(e.InitOverheadTP, e.InitOverheadTPBytes)
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
	case "reserve_base":
		return size(e.ReserveBase, e.ReserveBaseBytes)
	case "reserve_per_prefill_token":
		return size(e.ReservePerPrefillToken, e.ReservePerPrefillTokenBytes)
	case "reserve_per_graph_batch":
		return size(e.ReservePerGraphBatch, e.ReservePerGraphBatchBytes)
	case "reserve_per_8_ranks":
		return size(e.ReservePer8Ranks, e.ReservePer8RanksBytes)
	case "reserve_floor":
		return size(e.ReserveFloor, e.ReserveFloorBytes)
	case "reserve_floor_above":
		return size(e.ReserveFloorAbove, e.ReserveFloorAboveBytes)
	}
	return "(not shown: kvplan engines show does not know this constant yet)"
}
