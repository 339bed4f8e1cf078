package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/internal/safefile"
	"github.com/kvplan/kvplan/models/hfimport"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "turn a Hugging Face config.json into a catalog entry",
		ArgsUsage: "CONFIG.json",
		UsageText: `kvplan models import config.json --print
   kvplan models import config.json --name my-model --out ~/.kvplan/my-model.toml
   KVPLAN_CATALOG=~/.kvplan kvplan kv --model my-model --tokens 4000`,
		Description: `Reads a local config.json and prints a [[model]] entry in TOML, ready to add
to a user catalog (--catalog DIR or $KVPLAN_CATALOG). Handles head_dim that is
missing, null or not hidden/heads; kv-head aliases; MLA; sliding windows;
layers with their own KV geometry; text_config nesting; linear attention and
Mamba layers. A config it cannot interpret is an error naming the field.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "catalog name (default: from _name_or_path or the file name)"},
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
	path := c.Args().First()
	data, err := safefile.ReadFile(path, safefile.ModelConfig)
	if err != nil {
		return fmt.Errorf("models import: %w", err)
	}
	m, notes, err := hfimport.ImportConfig(data, path, c.String("name"))
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
	dest := c.String("out")
	if dest == "" || c.Bool("print") {
		if _, err := c.App.Writer.Write(out); err != nil {
			return err
		}
	}
	if dest != "" {
		// Atomic: a failed write leaves the old file and no stray file; a
		// symbolic link (even a dangling one) counts as existing.
		force := c.Bool("force")
		if err := safefile.WriteAtomic(dest, out, safefile.WriteOptions{Overwrite: force, FollowSymlink: force}); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("models import: %s exists; add --force to overwrite it, or choose another --out", dest)
			}
			return fmt.Errorf("models import: %w", err)
		}
		fmt.Fprintf(c.App.ErrWriter, "wrote %s (model %q)\n", dest, m.Name)
	}
	return nil
}
