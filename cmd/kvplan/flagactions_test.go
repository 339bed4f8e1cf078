package main

import (
	"bytes"
	"io"
	"os"
	"slices"
	"strings"
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

// TestUrfaveNames: clinames.go's regexp is the one urfave/cli's FlagNames
// runs (a name with a space comes out whole, where urfave/cli's own cuts
// it), it cuts a v1-style "name, alias" as urfave/cli's does, and no name
// of any flag of any command has a comma or a space, so that urfave/cli's
// own regexp would leave every name as it is too.
func TestUrfaveNames(t *testing.T) {
	if got := cli.FlagNames("model m", nil); !slices.Equal(got, []string{"model m"}) {
		t.Errorf(`FlagNames("model m") = %q: urfave/cli still runs its own regexp (renamed? see clinames.go)`, got)
	}
	if got := cli.FlagNames("model, m", []string{"x,y"}); !slices.Equal(got, []string{"model", "x"}) {
		t.Errorf(`FlagNames("model, m", "x,y") = %q, want what urfave/cli gives: "model", "x"`, got)
	}
	app := newApp(io.Discard, io.Discard)
	n := 0
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range append(c.Flags, cli.HelpFlag, cli.VersionFlag) {
				for _, name := range flagNames(f) {
					n++
					if strings.ContainsAny(name, ", ") || name == "" {
						t.Errorf("%s %s: flag name %q: urfave/cli's regexp would cut it", path, c.Name, name)
					}
				}
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("kvplan", app.Commands)
	if n < 150 {
		t.Errorf("only %d names walked", n)
	}
}

// TestCommandsTable: each entry of the commands table builds the command it
// is named for, and a run that builds only that command (newAppFor) prints
// the same help for it as the whole app does.
func TestCommandsTable(t *testing.T) {
	full := newApp(io.Discard, io.Discard)
	if len(full.Commands) != len(commands) {
		t.Fatalf("%d commands built, %d in the table", len(full.Commands), len(commands))
	}
	for i, c := range commands {
		got := full.Commands[i]
		if got.Name != c.name || len(got.Aliases) > 0 {
			t.Errorf("entry %q builds %q (aliases %q): onlyCommand finds a command by its first word, so the table needs its name and no alias", c.name, got.Name, got.Aliases)
		}
		if c.needsAll {
			if onlyCommand([]string{"kvplan", c.name}) != "" {
				t.Errorf("%s needs every command, yet onlyCommand picks it alone", c.name)
			}
			continue
		}
		if o := onlyCommand([]string{"kvplan", c.name, "--help"}); o != c.name {
			t.Errorf("onlyCommand(kvplan %s --help) = %q", c.name, o)
		}
		var all, one bytes.Buffer
		if code := run([]string{"kvplan", c.name, "--help"}, &one, io.Discard); code != ExitOK {
			t.Errorf("kvplan %s --help: exit %d", c.name, code)
		}
		app := newApp(&all, io.Discard)
		if err := app.Run([]string{"kvplan", c.name, "--help"}); err != nil {
			t.Fatal(err)
		}
		if one.String() != all.String() || one.Len() == 0 {
			t.Errorf("kvplan %s --help differs when only it is built:\n%s\nwant:\n%s", c.name, one.String(), all.String())
		}
	}
	for _, args := range [][]string{{"kvplan"}, {"kvplan", "--help"}, {"kvplan", "-h", "disagg"}, {"kvplan", "disagg", completionFlag}, {"kvplan", "nope"}} {
		if o := onlyCommand(args); o != "" {
			t.Errorf("onlyCommand(%q) = %q, want every command built", args, o)
		}
	}
}

// TestGivenNames: givenNames answers what IsSet answers for every name and
// alias of a command's flags, given by name, by alias, through the
// environment or not at all.
func TestGivenNames(t *testing.T) {
	cases := []struct {
		args []string
		env  string
	}{
		{[]string{"x"}, ""},
		{[]string{"x", "--alpha", "1"}, ""},
		{[]string{"x", "-b", "2", "--gamma"}, ""},
		{[]string{"x", "--beta=2"}, ""},
		{[]string{"x"}, "9"},
	}
	names := []string{"alpha", "beta", "b", "gamma", "delta", "epsilon"}
	for _, tc := range cases {
		t.Setenv("KVPLAN_TEST_DELTA", tc.env)
		if tc.env == "" {
			os.Unsetenv("KVPLAN_TEST_DELTA")
		}
		ran := false
		cmd := &cli.Command{
			Name: "x",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "alpha"},
				&cli.StringFlag{Name: "beta", Aliases: []string{"b"}},
				&cli.BoolFlag{Name: "gamma"},
				&cli.StringFlag{Name: "delta", EnvVars: []string{"KVPLAN_TEST_DELTA"}},
				&cli.StringFlag{Name: "epsilon", Value: "e"},
			},
			Action: func(c *cli.Context) error {
				ran = true
				given := givenNames(c)
				for _, n := range names {
					if given[n] != c.IsSet(n) {
						t.Errorf("%v env %q: givenNames says %s %v, IsSet %v", tc.args, tc.env, n, given[n], c.IsSet(n))
					}
				}
				return nil
			},
		}
		flagActionsOnSetFlags(cmd)
		app := &cli.App{Name: "t", Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{cmd}}
		if err := app.Run(append([]string{"t"}, tc.args...)); err != nil || !ran {
			t.Fatalf("%v: %v (action ran: %v)", tc.args, err, ran)
		}
	}
}
