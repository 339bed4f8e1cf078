//go:build floorlibs

package main

// With the tag floorlibs the floor also links the libraries kvplan uses
// beyond the design card's four (BenchmarkStartup's floor-all-libraries):
// gonum.org/v1/plot for SVG plots (with the go-latex text and Go fonts it
// imports), YAML with positions for manifests, shell words for their
// command lines, the terminal's width, and string distances for "did you
// mean". Their package initialisation runs in every kvplan start. It links
// them as kvplan does: with internal/plotfonts, which moves the parsing of
// gonum/plot's twelve fonts from every start to the first plot (without it
// the floor paid 0.3 ms that kvplan does not).
import (
	_ "github.com/xrash/smetrics"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/term"
	_ "gonum.org/v1/plot"
	_ "gonum.org/v1/plot/font/liberation"
	_ "gonum.org/v1/plot/plotter"
	_ "gonum.org/v1/plot/vg/vgsvg"
	_ "mvdan.cc/sh/v3/expand"
	_ "mvdan.cc/sh/v3/syntax"

	_ "github.com/kvplan/kvplan/internal/plotfonts"
)
