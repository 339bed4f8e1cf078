package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/internal/safefile"
)

// Files kvplan writes (plan --write-plan and --plot, perf --plot, models
// import --out) go through these two helpers, so every output flag treats
// an empty path, an existing file and a symbolic link alike.

// outputPath reads a flag that names a file to write: "" when it is not
// given, and an error when it is given empty (`--write-plan ”` wrote
// nothing and exited 0).
func outputPath(c *cli.Context, flag string) (string, error) {
	p := c.String(flag)
	if p == "" && c.IsSet(flag) {
		return "", fmt.Errorf("%s: --%s is empty: give the path of the file to write", c.Command.Name, flag)
	}
	return p, nil
}

// writeOutput writes data to path atomically (safefile.WriteAtomic). An
// existing file or a symbolic link at path is refused unless --force, which
// replaces the file, or the link's target (even a dangling link's), as a
// shell's > does.
func writeOutput(c *cli.Context, flag, path string, data []byte) error {
	force := c.Bool("force")
	if err := safefile.WriteAtomic(path, data, safefile.WriteOptions{Overwrite: force, FollowSymlink: force}); err != nil {
		return fmt.Errorf("--%s: %w", flag, err)
	}
	return nil
}
