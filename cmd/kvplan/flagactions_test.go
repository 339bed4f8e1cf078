package main

import (
	"io"
	"os"
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestFlagActionsOnSetFlags: with the set flags handed to runFlagActions,
// flag actions still run for exactly the flags given (by name, by alias or
// through the environment), and the command's action sees every flag.
func TestFlagActionsOnSetFlags(t *testing.T) {
	cases := []struct {
		args []string
		env  string
		want []string // flags whose action ran, in flag order
	}{
		{[]string{"x"}, "", nil},
		{[]string{"x", "--alpha", "1"}, "", []string{"alpha"}},
		{[]string{"x", "-b", "2", "--alpha=3"}, "", []string{"alpha", "beta"}},
		{[]string{"x", "--gamma"}, "", []string{"gamma"}},
		{[]string{"x"}, "9", []string{"delta"}},
	}
	for _, tc := range cases {
		t.Setenv("KVPLAN_TEST_DELTA", tc.env)
		if tc.env == "" {
			os.Unsetenv("KVPLAN_TEST_DELTA") // set but empty counts as set
		}
		var ran []string
		action := func(name string) func(*cli.Context, string) error {
			return func(*cli.Context, string) error { ran = append(ran, name); return nil }
		}
		var seen []string
		cmd := &cli.Command{
			Name: "x",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "alpha", Action: action("alpha")},
				&cli.StringFlag{Name: "beta", Aliases: []string{"b"}, Action: action("beta")},
				&cli.BoolFlag{Name: "gamma", Action: func(*cli.Context, bool) error { ran = append(ran, "gamma"); return nil }},
				&cli.StringFlag{Name: "delta", EnvVars: []string{"KVPLAN_TEST_DELTA"}, Action: action("delta")},
				&cli.StringFlag{Name: "epsilon", Value: "e"},
			},
			Action: func(c *cli.Context) error {
				for _, f := range c.Command.Flags {
					seen = append(seen, f.Names()[0])
				}
				if c.String("epsilon") != "e" {
					t.Errorf("%v: --epsilon default %q, want e", tc.args, c.String("epsilon"))
				}
				return nil
			},
		}
		flagActionsOnSetFlags(cmd)
		app := &cli.App{Name: "t", Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{cmd}}
		if err := app.Run(append([]string{"t"}, tc.args...)); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		slices.Sort(ran)
		if !slices.Equal(ran, tc.want) {
			t.Errorf("%v env %q: actions ran for %v, want %v", tc.args, tc.env, ran, tc.want)
		}
		for _, f := range []string{"alpha", "beta", "gamma", "delta", "epsilon"} {
			if !slices.Contains(seen, f) {
				t.Errorf("%v: the action saw the flags %v, without %s", tc.args, seen, f)
			}
		}
	}
}

// TestFlagNames: flagNames, which skips urfave/cli's regexp, gives what
// Names() gives for every flag of every command.
func TestFlagNames(t *testing.T) {
	app := newApp(io.Discard, io.Discard)
	n := 0
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				n++
				if got, want := flagNames(f), f.Names(); !slices.Equal(got, want) {
					t.Errorf("%s %s: flagNames %q, Names() %q", path, c.Name, got, want)
				}
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("kvplan", app.Commands)
	if n < 100 {
		t.Errorf("only %d flags walked", n)
	}
}
