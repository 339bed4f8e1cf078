package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/units"
)

// commonFlags are accepted by every command that prints a result.
func commonFlags() []cli.Flag {
	return []cli.Flag{
		outputFlag(report.FormatTable, docFormats),
		&cli.StringSliceFlag{Name: "catalog", EnvVars: []string{catalog.EnvVar},
			Usage: "directory (or file) of *.toml catalog entries merged over the embedded catalog; repeatable. Precedence: flag > $" + catalog.EnvVar + " > embedded"},
		&cli.BoolFlag{Name: "explain", Usage: "show every figure with its formula and the values that produced it"},
	}
}

// docFormats are the formats of report.Render, in the order help lists them.
var docFormats = []string{report.FormatTable, report.FormatJSON, report.FormatMarkdown}

func withCommon(flags ...cli.Flag) []cli.Flag { return append(flags, commonFlags()...) }

// loadCatalog loads the embedded catalog and the user's directories.
func loadCatalog(c *cli.Context) (*catalog.Catalog, error) {
	var dirs []string
	for _, d := range c.StringSlice("catalog") {
		dirs = append(dirs, filepath.SplitList(d)...)
	}
	return catalog.Load(dirs...)
}

// outputFormat checks -o against the formats a command supports.
func outputFormat(c *cli.Context, extra ...string) (string, error) {
	ok := append(report.Formats(), extra...)
	f, err := units.ParseEnum(c.String("output"), ok) // -o JSON is json
	if err != nil {
		return "", fmt.Errorf("-o %q is not a format; use one of %s", c.String("output"), strings.Join(ok, ", "))
	}
	return f, nil
}

// figureFailure is the JSON of a doc whose figures failed their check
// (jsonWithExplain): emit returns err instead of rendering.
type figureFailure struct{ err error }

// emit renders doc to stdout, adding the derivation when --explain is set.
// A figure that is NaN or infinite is an error (exit 2) naming the figure
// and its formula, never "NaN ms" in a table or a JSON encoding failure.
func emit(c *cli.Context, doc *report.Doc, d planner.Derivation) error {
	if ff, ok := doc.JSON.(figureFailure); ok {
		return ff.err
	}
	if err := d.Check(); err != nil {
		return err
	}
	f, err := outputFormat(c)
	if err != nil {
		return err
	}
	if c.Bool("explain") {
		doc.Explain = d.String()
	}
	var buf bytes.Buffer
	if err := report.Render(&buf, f, doc); err != nil {
		return internalError{err}
	}
	_, err = c.App.Writer.Write(buf.Bytes())
	return err
}

// positive reads an int flag that must be > 0 (or >= 0 when zeroOK).
func positive(c *cli.Context, name string, zeroOK bool) (int, error) {
	v := c.Int(name)
	lo := int64(1)
	if zeroOK {
		lo = 0
	}
	// "--isl 0 is out of range: want 1 to 100,000,000", the range as every
	// range error states it.
	if err := units.CheckInt(int64(v), lo, 100_000_000, ""); err != nil {
		return 0, fmt.Errorf("--%s %w", name, err)
	}
	return v, nil
}

// parseEnumFlag matches a value against allowed without regard to case,
// for the flag or argument named what.
func parseEnumFlag(what, value string, allowed []string) (string, error) {
	v, err := units.ParseEnum(value, allowed)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

// kvDtype checks --kv-cache-dtype (FP8 is fp8).
func kvDtype(c *cli.Context) (string, error) {
	d := c.String(flagKVDtype)
	if d == "" {
		return "", nil
	}
	v, err := units.ParseEnum(d, catalog.KVDtypes)
	if err != nil {
		return "", fmt.Errorf("--%s: %w", flagKVDtype, err)
	}
	return v, nil
}

// kvFlags reads --kv-cache-dtype and --tp for model m into the KV options
// memory, simulate and the slot lookups share.
func kvFlags(c *cli.Context, m *catalog.Model) (models.KVOptions, error) {
	dtype, err := kvDtype(c)
	if err != nil {
		return models.KVOptions{}, err
	}
	tp, err := tpFlag(c, m)
	if err != nil {
		return models.KVOptions{}, err
	}
	return models.KVOptions{KVDtype: dtype, TP: tp}, nil
}

// tpFlag checks --tp (or another tp flag) against the range kvplan accepts
// and against the model's heads (models.CheckTP, the same check as the
// tp-not-divisible rule of kvplan check).
func tpFlag(c *cli.Context, m *catalog.Model, names ...string) (int, error) {
	name := flagTP
	if len(names) > 0 {
		name = names[0]
	}
	tp := c.Int(name)
	if tp < 1 || tp > 1024 {
		return 0, fmt.Errorf("--%s %d: must be between 1 and 1024", name, tp)
	}
	if err := models.CheckTP(m, tp); err != nil {
		return 0, fmt.Errorf("%s: --%s: %w", c.Command.Name, name, err)
	}
	return tp, nil
}

// withinContext refuses a token count past the model's max context unless
// --beyond-context is given.
func withinContext(c *cli.Context, m *catalog.Model, what string, tokens int) error {
	if c.Bool("beyond-context") {
		return nil
	}
	if err := models.CheckContext(m, tokens); err != nil {
		return fmt.Errorf("%s: %s: %w; add --beyond-context to compute it anyway", c.Command.Name, what, err)
	}
	return nil
}

func modelFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "catalog model name or Hugging Face id (required; kvplan models list)"},
		kvDtypeFlag("KV cache dtype: bf16, fp16, fp8 or int8 (default: the model's)"),
		tensorParallelFlag(1, "tensor-parallel ranks; kv heads per rank = max(1, kv_heads / tp); the model's heads must divide (vLLM)"),
		&cli.BoolFlag{Name: "beyond-context", Usage: "accept token counts past the model's max context (max_position_embeddings)"},
	}
}

// required checks that string flags were given; urfave/cli's own check
// prints the whole help to stdout, which buries the one line that matters.
func required(c *cli.Context, names ...string) error {
	for _, n := range names {
		if c.String(n) == "" {
			return fmt.Errorf("%s: --%s is required (see kvplan %s --help)", c.Command.Name, n, c.Command.Name)
		}
	}
	return nil
}
