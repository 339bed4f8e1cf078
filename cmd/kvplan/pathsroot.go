package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
)

// The files a plan names (model.config, deployment.manifest) are read
// only inside one directory, the paths root, symbolic links followed: a
// plan from a pull request must not make CI read ../../etc/passwd. The root
// is --paths-root when given; otherwise the working directory when the plan
// file is inside it (CI runs kvplan check plans/review.toml from the
// repository's root, and the plan may name ../k8s/disagg.yaml), else the
// plan file's own directory. --allow-outside-paths lifts the confinement.

func pathsRootFlag() cli.Flag {
	return &cli.StringFlag{Name: "paths-root", Usage: "directory inside which the files a plan names (model.config, deployment.manifest) must be (default: the working directory when the plan is inside it, else the plan file's directory)"}
}

func allowOutsideFlag() cli.Flag {
	return &cli.BoolFlag{Name: "allow-outside-paths", Usage: "let a plan name files anywhere (off: a plan from a pull request must not read ../../etc/passwd)"}
}

// pathsRoot returns the root for the plan file at plan.
func pathsRoot(c *cli.Context, plan string) (string, error) {
	if r := c.String("paths-root"); r != "" {
		st, err := os.Stat(r)
		if err != nil || !st.IsDir() {
			return "", fmt.Errorf("--paths-root %s: not a directory", r)
		}
		return r, nil
	}
	if plan == "-" {
		return ".", nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return filepath.Dir(plan), nil
	}
	abs, err := filepath.Abs(plan)
	if err != nil {
		return filepath.Dir(plan), nil
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return wd, nil
	}
	return filepath.Dir(plan), nil
}
