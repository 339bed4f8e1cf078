package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/sim"
)

// traceSource checks --trace now, so that a missing file, a FIFO or a
// device is an error before any other work, and returns the opener the
// simulator calls once: the file again (sim.OpenMooncake: a regular file,
// streamed with capped lines), or stdin for "-".
func traceSource(c *cli.Context, path string, blockSize int) (func() (sim.Source, error), error) {
	skip := c.Bool("skip-bad-lines")
	if path == "-" {
		return func() (sim.Source, error) { return sim.NewMooncakeReader(c.App.Reader, "stdin", blockSize, skip), nil }, nil
	}
	src, err := sim.OpenMooncake(path, blockSize, skip)
	if err != nil {
		return nil, fmt.Errorf("simulate: --trace: %w", err)
	}
	if err := src.Close(); err != nil {
		return nil, fmt.Errorf("simulate: --trace: %w", err)
	}
	return func() (sim.Source, error) { return sim.OpenMooncake(path, blockSize, skip) }, nil
}

// maxRatePerS bounds an open-loop rate (requests/s), as disagg's --rate.
const maxRatePerS = 1_000_000

// routerWeights checks the kv-aware router's two weights: finite, not
// negative (NaN used to reach the router).
func routerWeights(c *cli.Context) error {
	for _, name := range []string{"prefill-load-scale", "overlap-credit"} {
		if _, err := floatIn(c, name, 0, 1_000_000, ""); err != nil {
			return err
		}
	}
	return nil
}

// allRejected is the error of a timed run in which no request could ever
// run: each needs more KV than a worker holds, so every figure would be 0.
func allRejected(results []sim.Result, slots int) error {
	for _, r := range results {
		if r.Timing == nil || r.Timing.Completed > 0 || r.Timing.Rejected == 0 {
			return nil
		}
	}
	return fmt.Errorf("simulate: every request was rejected: none fits a worker's %d KV slots (prompt + output tokens); give fewer tokens (--synthetic, --output-tokens), or more KV per worker (--tensor-parallel-size, --gpu-memory-utilization, --kv-cache-dtype fp8, a bigger --gpu)", slots)
}
