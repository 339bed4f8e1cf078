package main

import (
	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/planner"
)

// simLayoutFlags are the timed simulation's worker layout beyond --tp, as
// kvplan perf names them (parallel.go); --link, the KV link of a
// disaggregated run, is also the network between the nodes of a worker
// wider than the GPU's NVLink domain.
func simLayoutFlags() []cli.Flag {
	return append(memoryLayoutFlags(),
		&cli.BoolFlag{Name: flagEPLB, Usage: "timed: experts rebalanced by EPLB (lower expert-load imbalance)"},
		&cli.BoolFlag{Name: flagTBO, Usage: "timed: two micro-batches whose all-to-all overlaps the other's compute"},
		pipelineParallelFlag(1, "timed: pipeline stages of each worker"),
	) // --speculative-tokens and --acceptance-length are timedFlags'

}

// simLayout reads the layout flags of a timed simulation, checked as kvplan
// perf checks them (counts and what is accepted, exit 2).
func simLayout(c *cli.Context, cat *catalog.Catalog, sc planner.SimulationScenario) (planner.WorkerLayout, error) {
	par, redundant, eplb, link, err := layoutFromFlags(c, cat, sc.Model, sc.GPU, max(1, sc.KV.TP), true)
	if err != nil {
		return planner.WorkerLayout{}, err
	}
	return planner.WorkerLayout{Parallel: par, RedundantExperts: redundant, EPLB: eplb, TwoBatchOverlap: c.Bool(flagTBO),
		Link: planner.NetworkFor(sc.GPU, par.GPUs(), link)}, nil
}
