package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/units"
)

func kvCommand() *cli.Command {
	return &cli.Command{
		Name:  "kv",
		Usage: "KV cache bytes of one token and of one request",
		UsageText: `kvplan kv --model qwen3-8b --input-tokens 8000
   kvplan kv --model qwen3-8b --input-tokens 32k --kv-cache-dtype fp8 --tensor-parallel-size 2 -o json
   kvplan kv --model qwen3.5-27b --input-tokens 100k --engine sglang --explain`,
		Flags: withCommon(append(modelFlags(),
			inputTokensFlag(1, "tokens in the request", "tokens", "n"),
			&cli.StringFlag{Name: "engine", Value: "vllm", Usage: "whose linear-attention and Mamba state convention counts: vllm or sglang"},
		)...),
		Action: runKV,
	}
}

func runKV(c *cli.Context) error {
	if err := required(c, "model"); err != nil {
		return err
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return err
	}
	m, err := cat.Model(c.String("model"))
	if err != nil {
		return err
	}
	dtype, err := kvDtype(c)
	if err != nil {
		return err
	}
	tp, err := tpFlag(c, m)
	if err != nil {
		return err
	}
	tokens, err := positive(c, flagInputTokens, false)
	if err != nil {
		return err
	}
	if err := withinContext(c, m, "--"+flagInputTokens, tokens); err != nil {
		return err
	}
	if err := stateEngine(c.String("engine")); err != nil {
		return err
	}
	p, err := planner.PlanKV(planner.KVScenario{Model: m, KVDtype: dtype, TP: tp, Tokens: tokens, Engine: c.String("engine")})
	if err != nil {
		return err
	}
	rows := [][]string{
		{"model", p.Model},
		{"KV dtype", p.KVDtype},
		{"tensor parallel", fmt.Sprintf("%d", p.TP)},
		{"KV per token (per rank)", bytesWithExact(p.KVBytesPerToken)},
	}
	if p.FullAttnBytesPerToken != p.KVBytesPerToken {
		label := "  of which full-attention layers"
		if p.Compressed() {
			label = "  per token beyond every window"
		}
		rows = append(rows, []string{label, bytesWithExact(p.FullAttnBytesPerToken)})
	}
	if p.StateBytesPerRequest > 0 {
		label := "linear-attention state per request"
		switch {
		case p.StateConvention != "":
			label = fmt.Sprintf("linear/Mamba state per request (%s)", c.String("engine"))
		case p.Compressed():
			label = "compressor state per request"
		}
		rows = append(rows, []string{label, bytesWithExact(p.StateBytesPerRequest)})
	}
	rows = append(rows,
		[]string{fmt.Sprintf("KV for %d tokens (per rank)", p.Tokens), bytesWithExact(p.KVBytes)},
	)
	if p.TP > 1 {
		rows = append(rows, []string{"KV for the request, all ranks", bytesWithExact(p.KVBytesAllRanks)})
	}
	notes := []string{"Convention: " + p.MTPConvention + "."}
	if p.SlidingWindowCapApplied {
		notes = append(notes, "Sliding-window layers hold at most their window of tokens per request.")
	}
	if p.StateConvention != "" {
		notes = append(notes, "State: "+p.StateConvention+".")
	}
	doc := &report.Doc{
		Title:    fmt.Sprintf("KV cache of %s", p.Model),
		Sections: []report.Section{{Header: []string{"figure", "value"}, Rows: rows}},
		Notes:    notes,
		JSON:     jsonWithExplain(c, p, &p.Derivation),
	}
	return emit(c, doc, p.Derivation)
}

// bytesWithExact shows a size in human units with the exact byte count.
func bytesWithExact(b int64) string {
	return fmt.Sprintf("%s (%d B)", units.Bytes(b), b)
}

// jsonWithExplain drops the derivation from JSON unless --explain is set.
// It checks the figures first (planner.Derivation.Check): a NaN or
// infinite figure must stop the output (exit 2), with or without
// --explain, and emit returns that error.
func jsonWithExplain(c *cli.Context, v any, d *planner.Derivation) any {
	if err := d.Check(); err != nil {
		return figureFailure{err}
	}
	if !c.Bool("explain") {
		*d = nil
	}
	return v
}
