package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/internal/suggest"
	"github.com/kvplan/kvplan/units"
)

// Exit codes, as `kvplan --help` lists them.
const (
	ExitOK       = 0 // no failing finding
	ExitFindings = 1 // a rule found a failing finding
	ExitUsage    = 2 // bad invocation or bad input (flags, names, files)
	ExitInternal = 3 // a bug in kvplan
)

const exitCodesHelp = `EXIT CODES:
   0  ok: no failing finding
   1  findings: a rule failed (check, and commands whose rules apply)
   2  usage or input error: a bad flag, name, number or file
   3  internal error: a bug in kvplan; please report it`

// findingsError makes run exit 1 after the output was written.
type findingsError struct{ n int }

func (e findingsError) Error() string { return fmt.Sprintf("%d failing finding(s)", e.n) }

// internalError makes run exit 3.
type internalError struct{ err error }

func (e internalError) Error() string { return "internal error: " + e.err.Error() }

// run is kvplan's whole life: parse args, act, write to stdout and stderr,
// and return the exit code. Tests call it with buffers.
func run(args []string, stdout, stderr io.Writer) (code int) {
	return runIn(args, os.Stdin, stdout, stderr)
}

// runIn is run with stdin given (for `kvplan check -`).
func runIn(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	out := &countingWriter{w: stdout}
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprintf("internal error: %v (this is a bug in kvplan; please report it with the command you ran)", r)
			fmt.Fprintf(stderr, "kvplan: %s\n", msg)
			code = ExitInternal
			writeErrorReport(out, args, errors.New(msg), code)
		}
	}()
	code, err := runApp(args, stdin, out, stderr)
	if code == ExitUsage || code == ExitInternal {
		// -o junit|sarif|json|github|markdown: a CI report of the error on
		// stdout, so a pipeline never saves an empty file.
		writeErrorReport(out, args, err, code)
	}
	return code
}

// runApp runs the app and returns the exit code and the error that set it.
func runApp(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	app := newAppFor(stdout, stderr, onlyCommand(args))
	app.Reader = stdin
	var err error
	if n := len(args); n == 0 || args[n-1] != completionFlag {
		// Shell completion wants its flag last and the words as typed.
		args, err = numberFlags(app, flagsFirst(app, args))
	}
	if err == nil {
		err = app.Run(args)
	}
	if err == nil {
		return ExitOK, nil
	}
	var fe findingsError
	if errors.As(err, &fe) {
		return ExitFindings, err
	}
	var ie internalError
	if errors.As(err, &ie) {
		fmt.Fprintf(stderr, "kvplan: %v\n", err)
		return ExitInternal, err
	}
	// Several problems (a plan file or rule pack with many mistakes): one line each.
	for _, e := range flatten(err) {
		fmt.Fprintf(stderr, "kvplan: %s\n", oneLine(e.Error()))
	}
	return ExitUsage, err
}

// maxErrorLine bounds one line of an error: a 10 MB engine name must not be
// echoed as a 10 MB line.
const maxErrorLine = 2000

// maxErrors bounds the errors printed of one run: a plan file of 20,000
// bad pools printed 20,002 lines. The rest are counted in one line.
const maxErrors = 10

// flatten lists the leaves of joined errors (errors.Join), in order: the
// first maxErrors, then "… and N more errors" when there are more.
func flatten(err error) []error {
	var out []error
	n := 0
	var walk func(error)
	walk = func(err error) {
		joined, ok := err.(interface{ Unwrap() []error })
		if !ok {
			if n++; n <= maxErrors {
				out = append(out, err)
			}
			return
		}
		for _, e := range joined.Unwrap() {
			walk(e)
		}
	}
	walk(err)
	if n > maxErrors {
		out = append(out, fmt.Errorf("… and %s more errors (the first %d are listed)", units.Thousands(int64(n-maxErrors)), maxErrors))
	}
	return out
}

// oneLine writes an error on one line, with control characters (ANSI
// escapes from a name in a file) as visible escapes, cut at maxErrorLine.
func oneLine(s string) string {
	s = safetext.Clip(s, maxErrorLine)
	return safetext.Line(strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " "))
}

// commands are kvplan's top-level commands, in the order help lists them,
// each under its name so that a run can build only the one it runs
// (TestCommandsTable: each name is its command's).
var commands = []struct {
	name     string
	build    func() *cli.Command
	needsAll bool // its run reads every command (completion fish writes them all)
}{
	{name: "kv", build: kvCommand},
	{name: "disagg", build: disaggCommand},
	{name: "memory", build: memoryCommand},
	{name: "perf", build: perfCommand},
	{name: "calibrate", build: calibrateCommand},
	{name: "check", build: checkCommand},
	{name: "diff", build: diffCommand},
	{name: "manifest", build: manifestCommand},
	{name: "rules", build: rulesCommand},
	{name: "route", build: routeCommand},
	{name: "simulate", build: simulateCommand},
	{name: "plan", build: planCommand},
	{name: "models", build: func() *cli.Command {
		return catalogCommand("models", "model architectures", listModels, showModel, importCommand())
	}},
	{name: "links", build: func() *cli.Command {
		return catalogCommand("links", "links between prefill and decode workers", listLinks, showLink, nil)
	}},
	{name: "gpus", build: func() *cli.Command { return catalogCommand("gpus", "GPUs", listGPUs, showGPU, nil) }},
	{name: "engines", build: enginesCommand},
	{name: "completion", build: completionCommand, needsAll: true},
}

// buildCommands builds the top-level commands: all of them, or with only
// set, that one and a stub of each other.
func buildCommands(only string) []*cli.Command {
	out := make([]*cli.Command, len(commands))
	for i, c := range commands {
		if only == "" || c.name == only {
			out[i] = c.build()
		} else {
			out[i] = &cli.Command{Name: c.name}
		}
	}
	return out
}

// onlyCommand names the top-level command args run when it is their first
// word (kvplan disagg ...), for newAppFor; "" when a run may need every
// command: help, completion, a flag or an unknown word first. `kvplan
// --version` alone needs none: it gets a name no command has, so that every
// command is a stub (building them all was half its run).
func onlyCommand(args []string) string {
	if len(args) == 2 && (args[1] == "--version" || args[1] == "-V") {
		return args[1]
	}
	if len(args) < 2 || args[len(args)-1] == completionFlag {
		return ""
	}
	for _, c := range commands {
		if c.name == args[1] && !c.needsAll {
			return c.name
		}
	}
	return ""
}

// completionFlag is urfave/cli's shell-completion request, the last word.
const completionFlag = "--generate-bash-completion"

func newApp(stdout, stderr io.Writer) *cli.App { return newAppFor(stdout, stderr, "") }

// newAppFor is newApp with only one top-level command built in full when
// only names one: the others are stubs with their names, which is all a
// run of that command needs of them (urfave/cli routes by name). Building
// every command's flags, usage and help was a tenth of a one-shot command's
// time from main to exit. "" builds them all (help, completion, an unknown
// command's did-you-mean).
func newAppFor(stdout, stderr io.Writer, only string) *cli.App {
	cli.HelpFlag = &cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help"}
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Aliases: []string{"V"}, Usage: "print kvplan's version, commit and Go version"}
	cli.VersionPrinter = func(c *cli.Context) { writeVersion(c.App.Writer) }
	cli.FlagStringer = flagString
	app := &cli.App{
		Name:  "kvplan",
		Usage: "predict KV sizes, disaggregation, memory and routing of an LLM-serving deployment before you deploy it",
		Description: `What kvplan answers from a catalog of models, links, GPUs and engines:
   how many bytes of KV a token and a request cost   kvplan kv --model qwen3-8b --input-tokens 8000
   whether splitting prefill and decode pays off     kvplan disagg --model qwen3-0.6b --link 1gbe
   KV slots per worker, host-memory headroom         kvplan memory --model qwen3-0.6b --gpu l4 --memory-limit 8Gi --kv-buffer-device cpu
   TTFT, TPOT, throughput under a closed-loop load   kvplan perf --model llama-3.1-8b --gpu h100-sxm --isl 1024 --osl 1024 --concurrency 64
   whether the prefix working set fits, per policy   kvplan route --workers 2 --kv-slots 14816 --prefixes 12
   hit rates of each router on a real trace          kvplan simulate --trace trace.jsonl --workers 8 --kv-slots 200000
   whether a deployment plan will work (CI)          kvplan check plan.toml -o github
   whether a Kubernetes manifest will work (CI)      kvplan check deploy.yaml --gpu h100-sxm -o github
   what a change to a plan costs and breaks (PR)     kvplan diff base.toml head.toml -o markdown
   the memory of a vllm serve line, pasted           kvplan memory --gpu l4 -- vllm serve Qwen/Qwen3-8B --max-model-len 16384
   the cheapest deployment meeting an SLO at a rate  kvplan plan --model llama-3.1-70b --isl 4000 --osl 512 --rate 20 --ttft-p95 1s --itl-p95 50ms
   what the catalog holds                            kvplan models list; kvplan links list; kvplan gpus list; kvplan engines list

   kv, disagg, memory, perf, route, simulate, plan and the catalog's list and
   show take -o table|json|markdown and --catalog DIR; kv, disagg, memory, perf,
   route and plan also --explain (every figure with its formula). check takes -o table, json,
   markdown, junit, sarif or github, --catalog and --explain. Flags are named
   as the plan file's keys and vLLM's flags (--tensor-parallel-size,
   --gpu-memory-utilization, --max-model-len, --kv-cache-dtype); kvplan's
   older names (--tp, --gpu-util, --kv-dtype, --limit) still work.

   kvplan --version; shell completion: kvplan completion bash|zsh|fish.

` + exitCodesHelp,
		Writer:                stdout,
		ErrWriter:             stderr,
		Commands:              buildCommands(only),
		CustomAppHelpTemplate: appHelpTemplate,
		ExitErrHandler:        func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return fmt.Errorf("%v (see kvplan --help)", flagHint(err, append(c.App.VisibleFlags(), cli.HelpFlag, cli.VersionFlag)))
		},
		Action:                 unknownCommand(""),
		Suggest:                true,
		UseShortOptionHandling: false,
		EnableBashCompletion:   true,
		HideHelpCommand:        true,
		Version:                "kvplan", // --version prints readBuildInfo
	}
	for _, c := range app.Commands {
		setUsageErrors(c)
	}
	return app
}

// commandHelpTemplate is the help of a command: urfave/cli's with the exit
// codes. One string for all commands: built per command, it was 45 KB of
// every start.
var commandHelpTemplate = sync.OnceValue(func() string { return cli.CommandHelpTemplate + "\n" + exitCodesHelp + "\n" })

// setUsageErrors makes flag errors of every subcommand one line, exit 2,
// with a did-you-mean for a mistyped flag; gives groups (kvplan rules) a
// help that lists their commands with examples and an error for an
// unknown command.
func setUsageErrors(c *cli.Command) { setUsageErrorsIn(c, "") }

func setUsageErrorsIn(c *cli.Command, parent string) {
	name := strings.TrimSpace(parent + " " + c.Name)
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return fmt.Errorf("%s: %v (see kvplan %s --help)", name, flagHint(err, append(c.Flags, cli.HelpFlag)), name)
	}
	if len(c.Subcommands) > 0 {
		if c.CustomHelpTemplate == "" {
			c.CustomHelpTemplate = groupHelp(c, name)
		}
		if c.Action == nil {
			c.Action = unknownCommand(name)
		}
		c.HideHelpCommand = true
		for _, s := range c.Subcommands {
			setUsageErrorsIn(s, name)
		}
		return
	}
	if c.CustomHelpTemplate == "" {
		c.CustomHelpTemplate = commandHelpTemplate()
	}
	if action := c.Action; action != nil && c.ArgsUsage == "" && len(c.Subcommands) == 0 {
		// A command that takes no arguments refuses them: `kvplan kv --model m 8000`
		// must not silently ignore the 8000.
		c.Action = func(ctx *cli.Context) error {
			if ctx.NArg() > 0 {
				full := strings.TrimPrefix(ctx.Command.HelpName, ctx.App.Name+" ")
				return fmt.Errorf("%s: unexpected argument %q: this command takes flags only, each written --name value (see kvplan %s --help)", full, ctx.Args().First(), full)
			}
			return action(ctx)
		}
	}
	flagActionsOnSetFlags(c)
}

// unknownCommand is the action of the app and of a group: with no
// argument it shows the help, with one it says the command does not exist
// and offers the closest.
func unknownCommand(group string) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() == 0 {
			return cli.ShowSubcommandHelp(c)
		}
		cmds := c.App.Commands
		if c.Command != nil && len(c.Command.Subcommands) > 0 {
			cmds = c.Command.Subcommands
		}
		var names []string
		for _, x := range cmds {
			if !x.Hidden {
				names = append(names, x.Names()...)
			}
		}
		msg := "unknown command " + safetext.Quote(c.Args().First())
		if group != "" {
			msg = group + ": " + msg
		}
		if s := suggest.Closest(c.Args().First(), names, 1); len(s) > 0 {
			msg += fmt.Sprintf("; did you mean %s?", strings.TrimSpace(group+" "+s[0]))
		}
		return fmt.Errorf("%s (see %s --help)", msg, strings.TrimSpace("kvplan "+group))
	}
}
