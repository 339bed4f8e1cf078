package main

import "github.com/urfave/cli/v2"

// flagActionsOnSetFlags makes urfave/cli's flag actions cost what the flags
// given cost, not the square of the flags a command has. After Before,
// cli.Command.Run runs the action of every set flag (runFlagActions): it asks
// IsSet of every name of every flag, and for a flag not given IsSet scans the
// command's flags calling Names() on each, which runs a regexp per name. For
// kvplan disagg's 22 flags that was a third of the time from main to exit
// outside package init (0.15–0.2 ms, a fifth of a hello-world binary's whole
// run). Only a set flag can have an action to run, so Before hands
// runFlagActions the set flags, and the full list is back before the
// command's action runs (and, through After, when a flag action fails).
func flagActionsOnSetFlags(c *cli.Command) {
	if c.Action == nil || c.Before != nil || c.After != nil {
		return
	}
	action := c.Action
	var all []cli.Flag
	restore := func() {
		if all != nil {
			c.Flags, all = all, nil
		}
	}
	c.Before = func(ctx *cli.Context) error {
		all = c.Flags
		c.Flags = setFlags(ctx, all)
		return nil
	}
	c.Action = func(ctx *cli.Context) error {
		restore()
		return action(ctx)
	}
	c.After = func(*cli.Context) error {
		restore()
		return nil
	}
}

// setFlags returns the flags of ctx's command that were given, on the
// command line or through their environment variables.
func setFlags(ctx *cli.Context, flags []cli.Flag) []cli.Flag {
	names := ctx.LocalFlagNames()
	if len(names) == 0 {
		return nil
	}
	given := make(map[string]bool, len(names))
	for _, n := range names {
		given[n] = true
	}
	var out []cli.Flag
	for _, f := range flags {
		for _, n := range flagNames(f) {
			if given[n] {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// givenNames returns every name and alias of the flags of ctx's command that
// were given, on the command line or through their environment variables:
// for those flags, what ctx.IsSet answers name by name. IsSet scans the
// command's flags running urfave/cli's regexp on each name for every flag
// not given, so a loop of IsSet over a list of flags costs their square.
func givenNames(ctx *cli.Context) map[string]bool {
	given := map[string]bool{}
	if ctx.Command == nil {
		return given
	}
	for _, f := range setFlags(ctx, ctx.Command.Flags) {
		for _, n := range flagNames(f) {
			given[n] = true
		}
	}
	return given
}
