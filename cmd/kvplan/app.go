package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/internal/safetext"
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
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "kvplan: internal error: %v (this is a bug in kvplan; please report it with the command you ran)\n", r)
			code = ExitInternal
		}
	}()
	app := newApp(stdout, stderr)
	app.Reader = stdin
	args, err := numberFlags(app, flagsFirst(app, args))
	if err == nil {
		err = app.Run(args)
	}
	if err == nil {
		return ExitOK
	}
	var fe findingsError
	if errors.As(err, &fe) {
		return ExitFindings
	}
	var ie internalError
	if errors.As(err, &ie) {
		fmt.Fprintf(stderr, "kvplan: %v\n", err)
		return ExitInternal
	}
	// Several problems (a plan file or rule pack with many mistakes): one line each.
	for _, e := range flatten(err) {
		fmt.Fprintf(stderr, "kvplan: %s\n", oneLine(e.Error()))
	}
	return ExitUsage
}

// maxErrorLine bounds one line of an error: a 10 MB engine name must not be
// echoed as a 10 MB line.
const maxErrorLine = 2000

// flatten lists the leaves of joined errors (errors.Join), in order.
func flatten(err error) []error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range joined.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}

// oneLine writes an error on one line, with control characters (ANSI
// escapes from a name in a file) as visible escapes, cut at maxErrorLine.
func oneLine(s string) string {
	s = safetext.Clip(s, maxErrorLine)
	return safetext.Line(strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " "))
}

func newApp(stdout, stderr io.Writer) *cli.App {
	cli.HelpFlag = &cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help"}
	app := &cli.App{
		Name:  "kvplan",
		Usage: "predict KV sizes, disaggregation, memory and routing of an LLM-serving deployment before you deploy it",
		Description: `kvplan answers, from a catalog of models, links and GPUs:
   how many bytes of KV a token and a request cost   kvplan kv --model qwen3-8b --tokens 8000
   whether splitting prefill and decode pays off     kvplan disagg --model qwen3-0.6b --link 1gbe
   KV slots per worker, host-memory headroom         kvplan memory --model qwen3-0.6b --gpu l4 --limit 8Gi --kv-buffer cpu
   whether the prefix working set fits, per policy   kvplan route --workers 2 --kv-slots 14816 --prefixes 12
   hit rates of each router on a real trace          kvplan simulate --trace trace.jsonl --workers 8 --kv-slots 200000
   whether a deployment plan will work (CI)          kvplan check plan.toml -o github
   whether a Kubernetes manifest will work (CI)      kvplan check deploy.yaml --gpu h100-sxm -o github
   the cheapest deployment meeting an SLO at a rate  kvplan plan --model llama-3.1-70b --isl 4000 --osl 512 --rate 20 --ttft-p95 1s --itl-p95 50ms
   what the catalog holds                            kvplan models list; kvplan links list; kvplan gpus list

   Every command takes -o table|json|markdown, --catalog DIR and --explain.

` + exitCodesHelp,
		Writer:    stdout,
		ErrWriter: stderr,
		Commands: []*cli.Command{
			kvCommand(),
			disaggCommand(),
			memoryCommand(),
			checkCommand(),
			manifestCommand(),
			rulesCommand(),
			routeCommand(),
			simulateCommand(),
			planCommand(),
			catalogCommand("models", "model architectures", listModels, showModel, importCommand()),
			catalogCommand("links", "links between prefill and decode workers", listLinks, showLink, nil),
			catalogCommand("gpus", "GPUs", listGPUs, showGPU, nil),
		},
		CustomAppHelpTemplate: cli.AppHelpTemplate,
		ExitErrHandler:        func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return fmt.Errorf("%v (see kvplan --help)", err)
		},
		Suggest:                true,
		UseShortOptionHandling: false,
		HideVersion:            true,
	}
	for _, c := range app.Commands {
		setUsageErrors(c)
	}
	return app
}

// setUsageErrors makes flag errors of every subcommand one line, exit 2.
func setUsageErrors(c *cli.Command) {
	name := c.Name
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return fmt.Errorf("%s: %v (see kvplan %s --help)", name, err, name)
	}
	if c.CustomHelpTemplate == "" {
		c.CustomHelpTemplate = cli.CommandHelpTemplate + "\n" + exitCodesHelp + "\n"
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
	for _, s := range c.Subcommands {
		setUsageErrors(s)
	}
}
