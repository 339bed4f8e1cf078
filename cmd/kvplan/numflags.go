package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/units"
)

// numberFlags gives every integer and float flag of every command the one
// number grammar of units, without touching the commands: before urfave/cli
// sees the arguments, the value of such a flag is read with units.ParseCount
// (integers: 8000, 1.5k, 2M, 1e6, 10_000) or units.ParseNumber (floats:
// 0.9, 1.5k, 1e6) and written back as a plain decimal. NaN and Inf, which
// strconv accepts, are refused; a value neither accepts is refused with the
// grammar's message instead of urfave's "parse error". A plain negative
// integer is left alone for the command's own range check. args must have
// been through flagsFirst (flags before "--").
func numberFlags(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	cmds := app.Commands
	var cmd *cli.Command
	i := 1
	for ; i < len(args); i++ {
		c := findCommand(cmds, args[i])
		if c == nil {
			break
		}
		cmd, cmds = c, c.Subcommands
	}
	if cmd == nil {
		return args, nil
	}
	kinds := map[string]string{} // flag name → "int" or "float"
	for _, f := range cmd.Flags {
		kind := ""
		switch f.(type) {
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
			kind = "int"
		case *cli.Float64Flag:
			kind = "float"
		default:
			continue
		}
		for _, n := range flagNames(f) {
			kinds[n] = kind
		}
	}
	out := append([]string(nil), args...)
	for ; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, value, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		kind := kinds[name]
		if kind == "" {
			continue
		}
		if !inline {
			if i+1 >= len(out) {
				continue // urfave reports the missing value
			}
			i++
			value = out[i]
		}
		v, err := normalizeNumber(kind, value)
		if err != nil {
			return nil, fmt.Errorf("%s: --%s %s: %v", cmd.Name, name, safetext.Clip(value, 40), err)
		}
		if inline {
			out[i] = a[:len(a)-len(value)] + v
		} else {
			out[i] = v
		}
	}
	return out, nil
}

// normalizeNumber returns value as strconv will read it for a flag of kind.
func normalizeNumber(kind, value string) (string, error) {
	if kind == "int" {
		if _, err := strconv.ParseInt(value, 10, 64); err == nil {
			return value, nil // includes negatives, for the command to judge
		}
		n, err := units.ParseCount(value)
		if err != nil {
			return "", err
		}
		return strconv.FormatInt(n, 10), nil
	}
	if f, err := strconv.ParseFloat(value, 64); err == nil && units.Finite(f) && f < 0 {
		return value, nil // a negative, for the command to judge
	}
	f, err := units.ParseNumber(value)
	if err != nil {
		return "", err
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}
