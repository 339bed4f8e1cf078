package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/internal/safefile"
	"github.com/kvplan/kvplan/internal/suggest"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/models/hfimport"
	"github.com/kvplan/kvplan/units"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "turn a Hugging Face config.json into a catalog entry",
		ArgsUsage: "CONFIG.json",
		UsageText: `kvplan models import config.json --print
   kvplan models import config.json --name my-model --out ~/.kvplan/my-model.toml
   kvplan models import config.json --weights-bytes 595GB --engine sglang
   KVPLAN_CATALOG=~/.kvplan kvplan kv --model my-model --tokens 4000`,
		Description: `Reads a local config.json and prints a [[model]] entry in TOML, ready to add
to a user catalog (--catalog DIR or $KVPLAN_CATALOG). Handles head_dim that is
missing, null or not hidden/heads; kv-head aliases; MLA; sliding windows and
chunked attention; layers with their own KV geometry; text_config nesting;
sparse-attention indexers (DeepSeek-V3.2, GLM-5); compressed attention
(DeepSeek-V4); linear attention and Mamba-1/-2 layers; quantization blocks
(their weight bytes). A config it cannot interpret is an error naming the field.

Linear-attention and Mamba layers keep their state's dimensions in the entry;
the notes give its bytes per request under each engine's convention, --engine's
first (vllm: conv kernel − 1 columns, recurrent state in the model dtype unless
the config pins one; sglang: the same, but fp32 recurrent state by default).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "catalog name (default: from _name_or_path or the file name)"},
			&cli.StringFlag{Name: "engine", Value: "vllm", Usage: "state convention the notes lead with: vllm or sglang"},
			&cli.StringFlag{Name: "weights-bytes", Usage: "the checkpoint's size (e.g. 595GB, 62GiB): it replaces the weight bytes estimated from the config"},
			&cli.StringFlag{Name: "quant-config", Usage: "the checkpoint's hf_quant_config.json, when config.json has no quantization_config (modelopt checkpoints)"},
			&cli.BoolFlag{Name: "print", Usage: "print the entry to stdout (the default when --out is not given)"},
			&cli.StringFlag{Name: "out", Usage: "write the entry to this file"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite --out if it exists, or write through it if it is a symbolic link"},
		},
		Action: runImport,
	}
}

func runImport(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("models import: give exactly one config.json path")
	}
	dest, err := outputPath(c, "out")
	if err != nil {
		return fmt.Errorf("models %w", err)
	}
	path := c.Args().First()
	data, err := safefile.ReadFile(path, safefile.ModelConfig)
	if err != nil {
		return fmt.Errorf("models import: %w", err)
	}
	opts := hfimport.Options{Name: c.String("name"), Engine: c.String("engine")}
	if err := stateEngine(opts.Engine); err != nil {
		return fmt.Errorf("models import: %w", err)
	}
	if s := c.String("weights-bytes"); s != "" {
		if opts.WeightsBytes, err = units.ParseBytes(s); err != nil {
			return fmt.Errorf("models import: --weights-bytes: %w", err)
		}
		if opts.WeightsBytes <= 0 {
			return fmt.Errorf("models import: --weights-bytes %s: must be > 0", s)
		}
	}
	if qf := c.String("quant-config"); qf != "" {
		if opts.QuantConfig, err = safefile.ReadFile(qf, safefile.QuantConfig); err != nil {
			return fmt.Errorf("models import: --quant-config: %w", err)
		}
		opts.QuantFile = qf
	}
	m, notes, err := hfimport.Import(data, path, opts)
	if err != nil {
		return err
	}
	out, err := hfimport.EncodeTOML(m)
	if err != nil {
		return internalError{err}
	}
	for _, n := range notes {
		fmt.Fprintf(c.App.ErrWriter, "note: %s\n", n)
	}
	if dest == "" || c.Bool("print") {
		if _, err := c.App.Writer.Write(out); err != nil {
			return err
		}
	}
	if dest != "" {
		// Atomic: a failed write leaves the old file and no stray file; a
		// symbolic link (even a dangling one) counts as existing.
		if err := writeOutput(c, "out", dest, out); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("models import: %s exists; add --force to overwrite it, or choose another --out", dest)
			}
			return fmt.Errorf("models import: %w", err)
		}
		fmt.Fprintf(c.App.ErrWriter, "wrote %s (model %q)\n", dest, m.Name)
	}
	return nil
}

// stateEngine checks an engine name for its linear/Mamba state convention.
func stateEngine(engine string) error {
	if models.KnownStateConvention(engine) {
		return nil
	}
	msg := fmt.Sprintf("--engine %q: want one of %s (the linear-attention and Mamba state convention)", engine, strings.Join(models.StateConventions, ", "))
	if s := suggest.Closest(engine, models.StateConventions, 1); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return fmt.Errorf("%s", msg)
}
