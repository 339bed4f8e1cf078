package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/internal/suggest"
	"github.com/kvplan/kvplan/perf"
)

// requestPathFlags are how a request reaches its worker, the first term of
// every TTFT (perf.RequestPath): perf, plan, disagg and simulate take the
// same two flags, each with its own default path (def).
func requestPathFlags(def string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "request-path", Value: def, Usage: "how requests reach the worker: frontend (Dynamo's: it serves HTTP and tokenizes in the engine's place, --frontend-ms a request) or direct (the engine's own server, as benchmarks run and as KServe and llm-d's gateway forward to it: the engine model's fitted request_ms + request_us_per_token × prompt)"},
		&cli.Float64Flag{Name: "frontend-ms", Value: perf.DefaultFrontendMS, Usage: "the frontend's cost per request in TTFT, ms, on the frontend path (FACTS §5: +13 ms at concurrency 1); implies --request-path frontend"},
	}
}

// requestPath reads --request-path and --frontend-ms.
func requestPath(c *cli.Context) (perf.RequestPath, error) {
	name := c.String("request-path")
	if c.IsSet("frontend-ms") && !c.IsSet("request-path") {
		name = perf.PathFrontend
	}
	switch name {
	case perf.PathFrontend:
		ms, err := floatIn(c, "frontend-ms", 0, 3_600_000, "ms")
		if err != nil {
			return perf.RequestPath{}, err
		}
		return perf.Frontend(ms), nil
	case perf.PathDirect:
		if c.IsSet("frontend-ms") {
			return perf.RequestPath{}, fmt.Errorf("%s: --frontend-ms with --request-path direct: a direct request pays the engine's own request cost, not a frontend's; leave one out", c.Command.Name)
		}
		return perf.Direct(), nil
	}
	msg := fmt.Sprintf("%s: --request-path %q: want %s", c.Command.Name, name, strings.Join(perf.RequestPaths, " or "))
	if s := suggest.Closest(name, perf.RequestPaths, 1); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return perf.RequestPath{}, fmt.Errorf("%s", msg)
}

// requestPathName says in words what a path is, for notes.
func requestPathName(path string) string {
	if path == perf.PathFrontend {
		return "through a frontend, in place of the engine's own server"
	}
	return "direct to the engine's server, at the engine model's fitted request cost"
}

// requestNote is a table's note on the request's cost on path.
func requestNote(path string) string {
	if path == perf.PathFrontend {
		return "the frontend's HTTP, tokenization, routing"
	}
	return "the engine's server, as fitted"
}

// requestCostText is a request's cost before its worker, in words.
func requestCostText(fixedMS, perTokenMS float64) string {
	if perTokenMS == 0 {
		return fmt.Sprintf("%.3g ms", fixedMS)
	}
	return fmt.Sprintf("%.3g ms + %.3g µs a prompt token", fixedMS, perTokenMS*1000)
}
