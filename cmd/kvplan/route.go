package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/sim"
)

func routeCommand() *cli.Command {
	return &cli.Command{
		Name:  "route",
		Usage: "whether the prefix working set fits the workers' KV slots, per routing policy, and when KV-aware routing pays off",
		UsageText: `kvplan route --workers 2 --kv-slots 14816 --prefixes 12 --prefix-tokens 1500 --repeats 6
   kvplan route --workers 4 --model qwen3-8b --gpu l4 --gpu-util 0.9 --prefixes 40 --prefix-tokens 2000 --repeats 4
   kvplan route --workers 2 --kv-slots 14816 --prefixes 12 --prefix-tokens 1500 --repeats 6 --simulate`,
		Description: `Instant, analytic: the working set is prefixes × prefix tokens. Under
round-robin or random routing every worker ends up holding nearly every prefix;
under KV-aware routing each worker holds about 1/N of them. The expected hit
rate per policy comes from a stated approximation (shown with each policy);
--simulate replays the same synthetic workload through kvplan simulate, whose
LRU eviction the approximation only estimates.`,
		Flags: withCommon(append(slotFlags(),
			&cli.IntFlag{Name: "workers", Aliases: []string{"w"}, Value: 2, Usage: "workers behind the router"},
			&cli.IntFlag{Name: "prefixes", Value: 12, Usage: "distinct shared prefixes"},
			&cli.IntFlag{Name: "prefix-tokens", Value: 1500, Usage: "tokens of each prefix"},
			&cli.IntFlag{Name: "repeats", Value: 6, Usage: "sends of each prefix"},
			&cli.IntFlag{Name: "tail-tokens", Value: 24, Usage: "unique tokens after the prefix on every send"},
			&cli.IntFlag{Name: "block-size", Value: 16, Usage: "KV block size in tokens"},
			&cli.BoolFlag{Name: "simulate", Usage: "also run the block-level simulator on the same synthetic workload"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the simulated shuffle and random policy"},
		)...),
		Action: runRoute,
	}
}

// routeOutputTokens is what each send of route --simulate generates.
const routeOutputTokens = 128

// routeJSON is the `kvplan route -o json` contract: the analytic plan, and
// the simulated policies with --simulate.
type routeJSON struct {
	*planner.RoutePlan
	KVSlotsSource string       `json:"kv_slots_source"`
	Simulated     []sim.Result `json:"simulated,omitempty"`
}

func runRoute(c *cli.Context) error {
	if _, err := outputFormat(c); err != nil {
		return err
	}
	sc := planner.RouteScenario{}
	var err error
	for _, f := range []struct {
		name string
		dst  *int
		r    intRange
	}{
		{"workers", &sc.Workers, workersRange}, {"prefixes", &sc.Prefixes, prefixesRange}, {"prefix-tokens", &sc.PrefixTokens, tokensRange},
		{"repeats", &sc.Repeats, repeatsRange}, {"tail-tokens", &sc.TailTokens, extraTokensRange}, {"block-size", &sc.BlockSize, blockSizeRange},
	} {
		if *f.dst, err = intIn(c, f.name, f.r); err != nil {
			return err
		}
	}
	slots, from, err := workerSlots(c, sc.BlockSize)
	if err != nil {
		return err
	}
	if c.Bool("simulate") {
		if err := syntheticBlocks(sc.Prefixes, sc.PrefixTokens, sc.Repeats, sc.TailTokens, routeOutputTokens, sc.BlockSize, "route --simulate"); err != nil {
			return err
		}
	}
	sc.SlotsPerWorker = slots
	p, err := planner.PlanRoute(sc)
	if err != nil {
		return err
	}
	out := routeJSON{RoutePlan: p, KVSlotsSource: from}
	if c.Bool("simulate") {
		syn := sim.Synthetic{Prefixes: sc.Prefixes, PrefixTokens: sc.PrefixTokens, Repeats: sc.Repeats, TailTokens: sc.TailTokens,
			OutputTokens: routeOutputTokens, BlockSize: sc.BlockSize, Seed: c.Uint64("seed")}
		cfg := sim.Config{Workers: sc.Workers, CapacityBlocks: slots / sc.BlockSize, BlockSize: sc.BlockSize, Seed: c.Uint64("seed"),
			PrefillLoadScale: 1, OverlapCredit: 1}
		if out.Simulated, err = sim.RunAll(syn.Open, cfg, []string{"round-robin", "random", "kv-aware", "kv-aware-no-events"}); err != nil {
			return err
		}
	}
	doc := routeDoc(out)
	doc.JSON = jsonWithExplain(c, out, &p.Derivation)
	return emit(c, doc, p.Derivation)
}

func routeDoc(r routeJSON) *report.Doc {
	p := r.RoutePlan
	simulated := map[string]sim.Result{}
	for _, s := range r.Simulated {
		simulated[s.Name] = s
	}
	header := []string{"policy", "per-worker working set", "fits", "expected hit rate"}
	if len(r.Simulated) > 0 {
		header = append(header, "simulated hit rate")
	}
	var rows [][]string
	for _, pol := range p.Policies {
		row := []string{pol.Name, fmt.Sprintf("%d tokens", pol.PerWorkerWorkingTokens), yesNo(pol.Fits), pct(pol.ExpectedHitRate)}
		if len(r.Simulated) > 0 {
			row = append(row, pct(simulated[pol.Name].HitRate))
		}
		rows = append(rows, row)
	}
	minWorkers := "none: one prefix exceeds a worker's slots"
	if p.MinWorkersKVAware > 0 {
		minWorkers = fmt.Sprint(p.MinWorkersKVAware)
	}
	doc := &report.Doc{
		Title: fmt.Sprintf("Prefix routing on %d workers × %d KV slots (%s)", p.Workers, p.SlotsPerWorker, r.KVSlotsSource),
		Sections: []report.Section{
			{Title: "Working set", Header: []string{"figure", "value"}, Rows: [][]string{
				{"requests (repeats)", fmt.Sprintf("%d (%d)", p.Requests, p.RepeatRequests)},
				{"working set", fmt.Sprintf("%d tokens = %d blocks of %d", p.WorkingSetTokens, p.WorkingSetBlocks, p.BlockSize)},
				{"fits one worker", yesNo(p.FitsOneWorker)},
				{"fits the pool under KV-aware routing", yesNo(p.FitsPool)},
				{"fewest workers for KV-aware routing", minWorkers},
				{"slots a worker needs under round-robin", fmt.Sprintf("%d tokens", p.MinSlotsRoundRobin)},
			}},
			{Title: "Per policy", Header: header, Rows: rows},
		},
		Notes: []string{"Verdict: " + p.Verdict + "."},
		JSON:  r,
	}
	seen := map[string]bool{}
	for _, pol := range p.Policies {
		if !seen[pol.Approximation] {
			seen[pol.Approximation] = true
			doc.Notes = append(doc.Notes, fmt.Sprintf("%s: %s.", pol.Name, strings.TrimSuffix(pol.Approximation, ".")))
		}
	}
	return doc
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
