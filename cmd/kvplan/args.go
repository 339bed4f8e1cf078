package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// flagsFirst moves a command's flags before its arguments, so that
// `kvplan check plan.toml -o github` works: urfave/cli v2 stops parsing flags
// at the first argument. "--" ends flags as usual.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	cmds := app.Commands
	var cmd *cli.Command
	i := 1
	for i < len(args) {
		c := findCommand(cmds, args[i])
		if c == nil {
			break
		}
		out = append(out, args[i])
		cmd, cmds = c, c.Subcommands
		i++
	}
	if cmd == nil || len(cmd.Subcommands) > 0 {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range flagNames(f) {
			takesValue[n] = !isBool
		}
	}
	var flags, positional []string
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// flagNames returns f's name and aliases. urfave/cli's Names() runs a regexp
// on each (it cuts a v1-style "name, alias" string), and kvplan asks for a
// command's names three times before urfave/cli parses them twice more;
// kvplan's names have no comma or space, so the fields serve as they are
// (TestFlagNames compares the two on every flag of every command).
func flagNames(f cli.Flag) []string {
	var name string
	var aliases []string
	switch f := f.(type) {
	case *cli.BoolFlag:
		name, aliases = f.Name, f.Aliases
	case *cli.StringFlag:
		name, aliases = f.Name, f.Aliases
	case *cli.IntFlag:
		name, aliases = f.Name, f.Aliases
	case *cli.Float64Flag:
		name, aliases = f.Name, f.Aliases
	case *cli.StringSliceFlag:
		name, aliases = f.Name, f.Aliases
	case *cli.Uint64Flag:
		name, aliases = f.Name, f.Aliases
	default:
		return f.Names()
	}
	return append([]string{name}, aliases...)
}
