package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/perf"
)

// Flags of a worker's layout beyond --tensor-parallel-size, named as the
// engines name them (issue 27).
const (
	flagDP        = "data-parallel-size"
	flagEP        = "expert-parallel-size"
	flagSpecTok   = "speculative-tokens"
	flagAccept    = "acceptance-length"
	flagRedundant = "redundant-experts"
	flagEPLB      = "eplb"
	flagTBO       = "two-batch-overlap"
)

var layoutRange = intRange{1, 1024, "ranks"}

// expertParallelFlags are --expert-parallel-size and --redundant-experts (perf and memory).
func expertParallelFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: flagEP, Aliases: []string{"ep"}, Value: 1, Usage: "ranks the routed experts are spread over; MoE tp = tp × dp / ep (vLLM --enable-expert-parallel is ep = tp × dp)"},
		&cli.IntFlag{Name: flagRedundant, Usage: "EPLB's redundant experts, spread over the ep ranks (experts + redundant must divide by ep); implies --eplb"},
	}
}

// memoryLayoutFlags are kvplan memory's layout flags beyond --tp and --pp.
func memoryLayoutFlags() []cli.Flag {
	return append([]cli.Flag{&cli.IntFlag{Name: flagDP, Aliases: []string{"dp"}, Value: 1,
		Usage: "attention data-parallel ranks: each holds its own KV and batch; the figures are one rank's"}}, expertParallelFlags()...)
}

// layoutPerfFlags are perf's flags beyond --tp and --data-parallel-size
// (which benchFlags declares, shared with --against).
func layoutPerfFlags() []cli.Flag {
	return append(expertParallelFlags(),
		&cli.BoolFlag{Name: flagEPLB, Usage: "experts rebalanced by EPLB (SGLang --enable-eplb, TRT-LLM's MoE load balancer): lower expert-load imbalance"},
		&cli.BoolFlag{Name: flagTBO, Usage: "two micro-batches whose all-to-all overlaps the other's compute (SGLang --enable-two-batch-overlap)"},
		pipelineParallelFlag(1, "pipeline stages of the worker: layers / pp each, micro-batches, point-to-point sends"),
		&cli.IntFlag{Name: flagSpecTok, Usage: "tokens the model's MTP heads propose per step (TRT-LLM num_nextn_predict_layers, SGLang --speculative-num-steps)"},
		&cli.Float64Flag{Name: flagAccept, Usage: "with --speculative-tokens: mean tokens accepted per target step, the bonus token included (1 to N + 1)"},
		&cli.StringFlag{Name: "link", Usage: "the network between the nodes of a worker wider than the GPU's NVLink domain (kvplan links list)"},
	)
}

// layoutFromFlags reads the layout flags of perf (spec: MTP flags too) or
// memory, checks them against the model, GPU and link, and returns it.
func layoutFromFlags(c *cli.Context, cat *catalog.Catalog, m *catalog.Model, g *catalog.GPU, tp int, spec bool) (models.Parallelism, int, bool, *catalog.Link, error) {
	lay := models.Parallelism{TP: tp}
	var err error
	for _, f := range []struct {
		name string
		dst  *int
	}{{flagDP, &lay.DP}, {flagEP, &lay.EP}, {flagPP, &lay.PP}} {
		if c.Int(f.name) == 0 && !c.IsSet(f.name) {
			continue
		}
		if *f.dst, err = intIn(c, f.name, layoutRange); err != nil {
			return lay, 0, false, nil, err
		}
	}
	redundant := 0
	if c.IsSet(flagRedundant) {
		if redundant, err = intIn(c, flagRedundant, intRange{0, 4096, "experts"}); err != nil {
			return lay, 0, false, nil, err
		}
	}
	var link *catalog.Link
	if spec {
		if c.IsSet(flagSpecTok) {
			if lay.SpeculativeTokens, err = intIn(c, flagSpecTok, intRange{1, 16, "tokens"}); err != nil {
				return lay, 0, false, nil, err
			}
			if !c.IsSet(flagAccept) {
				return lay, 0, false, nil, fmt.Errorf("%s: --%s needs --%s (mean tokens accepted per step, 1 to %d)", c.Command.Name, flagSpecTok, flagAccept, lay.SpeculativeTokens+1)
			}
		}
		lay.AcceptanceLength = c.Float64(flagAccept)
		if name := c.String("link"); name != "" {
			if link, err = cat.Link(name); err != nil {
				return lay, 0, false, nil, err
			}
		}
	}
	if spec { // memory is per rank: PlanMemory checks the layout, and no link is needed
		if err := perf.CheckLayout(m, g, lay, redundant, link); err != nil {
			return lay, 0, false, nil, fmt.Errorf("%s: %w", c.Command.Name, err)
		}
	}
	return lay, redundant, c.Bool(flagEPLB) || redundant > 0, link, nil
}
