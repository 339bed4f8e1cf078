package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/units"
)

type listFunc func(*catalog.Catalog) *report.Doc
type showFunc func(*catalog.Catalog, string) (*report.Doc, error)

// catalogCommand builds `kvplan models|links|gpus list|show`.
func catalogCommand(name, what string, list listFunc, show showFunc, extra *cli.Command) *cli.Command {
	cmd := &cli.Command{
		Name:  name,
		Usage: "list or show catalog " + what,
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list the catalog's " + what,
				UsageText: "kvplan " + name + " list [-o json] [--catalog DIR]",
				Flags:     commonFlags(),
				Action: func(c *cli.Context) error {
					cat, err := loadCatalog(c)
					if err != nil {
						return err
					}
					return emit(c, list(cat), nil)
				},
			},
			{
				Name:      "show",
				Usage:     "show one entry with every field and its source",
				UsageText: "kvplan " + name + " show NAME [-o json]",
				ArgsUsage: "NAME",
				Flags:     commonFlags(),
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return fmt.Errorf("%s show: give exactly one name (kvplan %s list shows them)", name, name)
					}
					cat, err := loadCatalog(c)
					if err != nil {
						return err
					}
					doc, err := show(cat, c.Args().First())
					if err != nil {
						return err
					}
					return emit(c, doc, nil)
				},
			},
		},
	}
	if extra != nil {
		cmd.Subcommands = append(cmd.Subcommands, extra)
	}
	return cmd
}

// modelJSON is a model entry with its derived KV figures, for -o json.
type modelJSON struct {
	*catalog.Model
	KVBytesPerToken      int64 `json:"kv_bytes_per_token"`
	FullBytesPerToken    int64 `json:"full_attention_bytes_per_token"`
	StateBytesPerRequest int64 `json:"state_bytes_per_request"`
}

func describeModel(m *catalog.Model) modelJSON {
	out := modelJSON{Model: m}
	if kv, err := models.NewKV(m, models.KVOptions{}); err == nil {
		out.KVBytesPerToken, out.FullBytesPerToken, out.StateBytesPerRequest = kv.BytesPerToken(), kv.FullBytesPerToken(), kv.StateBytesPerRequest()
	}
	return out
}

func layoutString(m *catalog.Model) string {
	if m.MLA != nil && len(m.Layout) == 0 {
		return fmt.Sprintf("%d MLA (latent %d + rope %d)", m.Layers, m.MLA.KVLoraRank, m.MLA.QKRopeHeadDim)
	}
	if len(m.Layout) == 0 {
		return fmt.Sprintf("%d full", m.Layers)
	}
	var parts []string
	for _, g := range m.Layout {
		s := fmt.Sprintf("%d %s", g.Count, g.Kind)
		switch {
		case g.Ratio > 0:
			s += fmt.Sprintf(" (1 per %d, window %d)", g.Ratio, g.Window)
		case g.Window > 0:
			s += fmt.Sprintf(" (window %d)", g.Window)
		}
		if g.IndexBytes > 0 {
			s += " + indexer"
		}
		parts = append(parts, s)
	}
	s := strings.Join(parts, " + ")
	if m.MLA != nil {
		s += fmt.Sprintf(", MLA latent %d + rope %d", m.MLA.KVLoraRank, m.MLA.QKRopeHeadDim)
	}
	return s
}

func params(m *catalog.Model) string {
	s := fmt.Sprintf("%.2fB", float64(m.ParamsTotal)/1e9)
	if m.ParamsActive > 0 && m.ParamsActive != m.ParamsTotal {
		s += fmt.Sprintf(" (%.2fB active)", float64(m.ParamsActive)/1e9)
	}
	return s
}

func listModels(cat *catalog.Catalog) *report.Doc {
	var rows [][]string
	var js []modelJSON
	for _, m := range cat.Models {
		d := describeModel(m)
		js = append(js, d)
		rows = append(rows, []string{m.Name, params(m), m.WeightDtype, layoutString(m), bytesWithExact(d.KVBytesPerToken), m.KVDtype})
	}
	return &report.Doc{
		Title:    fmt.Sprintf("%d models", len(rows)),
		Sections: []report.Section{{Header: []string{"name", "params", "weights", "attention layers", "KV per token", "KV dtype"}, Rows: rows}},
		JSON:     js,
	}
}

func showModel(cat *catalog.Catalog, name string) (*report.Doc, error) {
	m, err := cat.Model(name)
	if err != nil {
		return nil, err
	}
	d := describeModel(m)
	rows := [][]string{
		{"name", m.Name}, {"hugging face id", m.HFID}, {"aliases", strings.Join(m.Aliases, ", ")},
		{"parameters", params(m)}, {"weight dtype", m.WeightDtype}, {"tied embeddings", fmt.Sprint(m.TiedEmbeddings)},
		{"layers", layoutString(m)}, {"kv heads × head_dim", fmt.Sprintf("%d × %d", m.KVHeads, m.HeadDim)},
		{"KV dtype", m.KVDtype}, {"KV per token", bytesWithExact(d.KVBytesPerToken)},
		{"MTP layers (not counted)", fmt.Sprint(m.MTPLayers)}, {"max context", fmt.Sprint(m.MaxContext)},
		{"source", m.Source}, {"defined in", fmt.Sprintf("%s:%d", m.File, m.Line)},
	}
	return &report.Doc{Title: m.Name, Sections: []report.Section{{Header: []string{"field", "value"}, Rows: rows}}, JSON: d}, nil
}

func listLinks(cat *catalog.Catalog) *report.Doc {
	var rows [][]string
	for _, l := range cat.Links {
		rows = append(rows, []string{l.Name, units.Rate(l.NominalBytesPerS), units.Rate(l.EffectiveBytesPerS), units.MS(l.LatencyMS), fmt.Sprint(l.Shared), l.RatePer, l.Description})
	}
	return &report.Doc{
		Title:    fmt.Sprintf("%d links", len(rows)),
		Sections: []report.Section{{Header: []string{"name", "nominal", "effective", "latency", "shared", "rate per", "description"}, Rows: rows}},
		JSON:     cat.Links,
	}
}

func showLink(cat *catalog.Catalog, name string) (*report.Doc, error) {
	l, err := cat.Link(name)
	if err != nil {
		return nil, err
	}
	rows := [][]string{
		{"name", l.Name}, {"description", l.Description}, {"aliases", strings.Join(l.Aliases, ", ")},
		{"nominal", fmt.Sprintf("%s (%s)", units.Rate(l.NominalBytesPerS), l.Nominal)},
		{"effective", units.Rate(l.EffectiveBytesPerS)},
		{"latency per transfer", units.MS(l.LatencyMS)}, {"shared by concurrent transfers", fmt.Sprint(l.Shared)},
		{"rate per", l.RatePer + map[bool]string{true: " (a rail per GPU: each tensor-parallel rank sends its own shard)", false: " (one path per host, shared by every rank)"}[l.PerGPU()]},
		{"source", l.Source}, {"defined in", fmt.Sprintf("%s:%d", l.File, l.Line)},
	}
	return &report.Doc{Title: l.Name, Sections: []report.Section{{Header: []string{"field", "value"}, Rows: rows}}, JSON: l}, nil
}

func listGPUs(cat *catalog.Catalog) *report.Doc {
	var rows [][]string
	for _, g := range cat.GPUs {
		rows = append(rows, []string{g.Name, units.Bytes(g.MemoryBytes), fmt.Sprintf("%g", g.BF16TFLOPS), units.Rate(g.MemoryBandwidthBytes), priceOrUnknown(g.USDPerHour), g.Description})
	}
	return &report.Doc{
		Title:    fmt.Sprintf("%d GPUs", len(rows)),
		Sections: []report.Section{{Header: []string{"name", "memory", "bf16 TFLOP/s", "bandwidth", "$/hour", "description"}, Rows: rows}},
		JSON:     cat.GPUs,
	}
}

func showGPU(cat *catalog.Catalog, name string) (*report.Doc, error) {
	g, err := cat.GPU(name)
	if err != nil {
		return nil, err
	}
	rows := [][]string{
		{"name", g.Name}, {"description", g.Description}, {"aliases", strings.Join(g.Aliases, ", ")},
		{"memory", bytesWithExact(g.MemoryBytes)}, {"CUDA-visible memory", bytesWithExact(g.CUDAMemoryBytes) + " (what engines compute with)"},
		{"dense bf16", fmt.Sprintf("%g TFLOP/s", g.BF16TFLOPS)},
		{"dense fp8 / fp4 / int8", fmt.Sprintf("%g / %g TFLOP/s, %g TOP/s (0 = no such tensor path)", g.FP8TFLOPS, g.FP4TFLOPS, g.INT8TOPS)},
		{"memory bandwidth", units.Rate(g.MemoryBandwidthBytes)},
		{"interconnect", fmt.Sprintf("%s, %s per GPU one way", g.Interconnect, units.Rate(g.InterconnectBandwidthBytes))},
		{"price per GPU-hour", fmt.Sprintf("on-demand %s, spot %s: %s", dollarsOrUnknown(g.USDPerHour), dollarsOrUnknown(g.USDPerHourSpot), g.PriceSource)},
		{"instances", instanceList(cat, g)},
		{"board power (TDP)", wattsOrUnknown(g.TDPWatts) + ": " + g.TDPSource},
		{"source", g.Source}, {"defined in", fmt.Sprintf("%s:%d", g.File, g.Line)},
	}
	return &report.Doc{Title: g.Name, Sections: []report.Section{{Header: []string{"field", "value"}, Rows: rows}}, JSON: g}, nil
}

// priceOrUnknown is a per-GPU price to the cent, or "unknown" (never 0.00).
func priceOrUnknown(v float64) string {
	if v <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.2f", v)
}

// dollarsOrUnknown is "$6.88", or "unknown".
func dollarsOrUnknown(v float64) string {
	if v <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("$%.2f", v)
}

// wattsOrUnknown is "700 W", or "unknown".
func wattsOrUnknown(v float64) string {
	if v <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%g W", v)
}

// instanceList names the instance types that hold g, with their GPUs and
// on-demand price.
func instanceList(cat *catalog.Catalog, g *catalog.GPU) string {
	var out []string
	for _, in := range cat.InstancesOf(g) {
		out = append(out, fmt.Sprintf("%s (%d GPUs, on-demand %s/h, as of %s)", in.Name, in.GPUs, dollarsOrUnknown(in.USDPerHour), in.AsOf))
	}
	if len(out) == 0 {
		return "none in the catalog"
	}
	return strings.Join(out, "; ")
}
