package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/internal/suggest"
)

// flagString writes one flag's help line: every name once with one value
// placeholder ("--tensor-parallel-size, --tp value"), the usage, and the
// default once: a usage that states its default ("(default: the model's)")
// gets no second one, and zero values, false and "" are not defaults worth
// printing. It replaces urfave/cli's FlagStringer, which printed
// "(default: false)" on every switch and a second default after usages
// that already said theirs.
func flagString(f cli.Flag) string {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return strings.Join(f.Names(), ", ")
	}
	names := make([]string, 0, len(f.Names()))
	for _, n := range f.Names() {
		if len(n) == 1 {
			names = append(names, "-"+n)
		} else {
			names = append(names, "--"+n)
		}
	}
	head := strings.Join(names, ", ")
	if df.TakesValue() {
		head += " value"
	}
	if s, ok := f.(cli.DocGenerationSliceFlag); ok && s.IsSliceFlag() && !strings.Contains(df.GetUsage(), "repeatable") {
		head += " (repeatable)"
	}
	usage := df.GetUsage()
	if def := defaultText(df); def != "" && !strings.Contains(usage, "default") {
		usage += " (default: " + def + ")"
	}
	if env := df.GetEnvVars(); len(env) > 0 && !strings.Contains(usage, "$"+env[0]) {
		usage += " [$" + strings.Join(env, ", $") + "]"
	}
	return head + "\t" + usage
}

// defaultText is a flag's default as help shows it, or "" for none.
func defaultText(df cli.DocGenerationFlag) string {
	if !df.TakesValue() {
		return "" // a switch is off unless given
	}
	v := df.GetDefaultText()
	if v == "" {
		v = df.GetValue()
	}
	v = strings.Trim(v, `"`)
	switch v {
	case "", "0", "false", "[]":
		return ""
	}
	return v
}

// appHelpTemplate is urfave/cli's, without the VERSION section (kvplan
// --version prints the version with its commit and Go version).
var appHelpTemplate = strings.Replace(cli.AppHelpTemplate, `{{if .Version}}{{if not .HideVersion}}

VERSION:
   {{.Version}}{{end}}{{end}}`, "", 1)

// groupHelp is the help of a command with subcommands (kvplan rules
// --help): the subcommands, then examples of each (the subcommands' usage
// lines), then how to get one subcommand's flags.
func groupHelp(c *cli.Command, path string) string {
	var ex []string
	for _, s := range c.Subcommands {
		if s.Hidden {
			continue
		}
		for _, l := range strings.Split(s.UsageText, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				ex = append(ex, "   "+l)
			}
		}
	}
	examples := ""
	if len(ex) > 0 {
		examples = "\n\nEXAMPLES:\n" + templateLiteral(strings.Join(ex, "\n"))
	}
	return `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   kvplan ` + path + ` COMMAND [flags]{{if .Description}}

DESCRIPTION:
   {{template "descriptionTemplate" .}}{{end}}

COMMANDS:{{template "visibleCommandTemplate" .}}` + examples + `

Each command's flags: kvplan ` + path + ` COMMAND --help

` + exitCodesHelp + "\n"
}

// templateLiteral quotes text for a text/template: {{ in an example must
// not start an action.
func templateLiteral(s string) string {
	return strings.ReplaceAll(s, "{{", `{{"{{"}}`)
}

// unknownFlagPrefix starts the error of Go's flag package for a flag that is
// not defined.
const unknownFlagPrefix = "flag provided but not defined: "

// flagHint turns "flag provided but not defined: -modle" into "unknown flag
// --modle; did you mean --model?", offering the closest of flags' names.
// Other errors are returned as they are.
func flagHint(err error, flags []cli.Flag) error {
	msg := err.Error()
	if !strings.HasPrefix(msg, unknownFlagPrefix) {
		return err
	}
	typed := strings.TrimLeft(strings.TrimPrefix(msg, unknownFlagPrefix), "-")
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	out := "unknown flag " + dashed(typed)
	if c := suggest.Closest(typed, names, 1); len(c) > 0 {
		out += "; did you mean " + dashed(c[0]) + "?"
	}
	return fmt.Errorf("%s", out)
}

// dashed writes a flag name as it is typed: -o, --model.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
