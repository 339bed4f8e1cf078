package main

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/sim"
)

// progressAfter is the request count beyond which a terminal gets a bar.
const progressAfter = 20_000

func simFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "workers", Aliases: []string{"w"}, Value: 2, Usage: "workers behind the router"},
		&cli.StringFlag{Name: "policy", Aliases: []string{"p"}, Value: "all", Usage: "routing policy: all, or a comma-separated list of " + strings.Join(sim.Policies(), ", ")},
		&cli.IntFlag{Name: "block-size", Usage: "KV block size in tokens (default 16; a trace's own 512 with --trace)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the random policy and the synthetic shuffle"},
		&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Usage: "closed loop: this many clients, each sending its next request when the last ends (default: 1 for synthetic workloads, the trace's timestamps for traces)"},
		&cli.Float64Flag{Name: "rate", Usage: "open loop: Poisson arrivals at this many requests/s (seeded with --seed), instead of the trace's timestamps"},
		&cli.Float64Flag{Name: "prefill-load-scale", Value: 1, Usage: "kv-aware cost: weight of new prefill blocks (Dynamo default 1)"},
		&cli.Float64Flag{Name: "overlap-credit", Value: 1, Usage: "kv-aware cost: blocks credited to an overlap (Dynamo default 1)"},
	}
}

func simulateCommand() *cli.Command {
	return &cli.Command{
		Name:  "simulate",
		Usage: "replay a workload through a block-level prefix cache and each routing policy, with LRU eviction",
		UsageText: `kvplan simulate --synthetic 12x1500x6 --tail-tokens 24 --workers 2 --kv-slots 14816 --policy all
   kvplan simulate --trace conversation_trace.jsonl --workers 8 --kv-slots 200000 --policy all -o json
   kvplan simulate --synthetic 40x2000x4 --workers 4 --model qwen3-8b --gpu l4 --gpu-util 0.9`,
		Description: `Each worker caches KV blocks (chained hashes, LRU over blocks no running
request pins). Policies: round-robin, random (seeded), least-loaded, kv-aware
(Dynamo's cost: prefill_load_scale × max(new blocks − overlap_credit, 0) +
active blocks), kv-aware-no-events (no KV events: every overlap 0) and
kv-aware-approx (the router remembers where it sent prefixes). A request is a
repeat when its first block was seen before, and a hit when at least half of
its previously seen leading blocks are cached on the chosen worker.
Mooncake traces (one JSON object a line, 512-token hash_ids) are streamed.`,
		Flags: withCommon(append(append(simFlags(), slotFlags()...),
			&cli.StringFlag{Name: "trace", Usage: "Mooncake JSONL trace (timestamp, input_length, output_length, hash_ids)"},
			&cli.StringFlag{Name: "synthetic", Usage: "synthetic router workload PREFIXESxTOKENSxREPEATS, e.g. 12x1500x6 (FACTS §5)"},
			&cli.IntFlag{Name: "tail-tokens", Value: 24, Usage: "synthetic: changed tokens at the end of every send"},
			&cli.IntFlag{Name: "output-tokens", Value: 128, Usage: "synthetic: generated tokens per request"},
			&cli.BoolFlag{Name: "skip-bad-lines", Usage: "trace: skip malformed lines (and count them) instead of stopping"},
		)...),
		Action: runSimulate,
	}
}

// simulateJSON is the `kvplan simulate -o json` contract.
type simulateJSON struct {
	Workload       string       `json:"workload"`
	Workers        int          `json:"workers"`
	KVSlots        int          `json:"kv_slots_per_worker"`
	KVSlotsSource  string       `json:"kv_slots_source"`
	BlockSize      int          `json:"block_size"`
	CapacityBlocks int          `json:"capacity_blocks_per_worker"`
	Seed           uint64       `json:"seed"`
	Policies       []sim.Result `json:"policies"`
}

func runSimulate(c *cli.Context) error {
	trace, spec := c.String("trace"), c.String("synthetic")
	if (trace == "") == (spec == "") {
		return fmt.Errorf("simulate: give one workload: --trace FILE or --synthetic PxLxR (e.g. 12x1500x6)")
	}
	if _, err := outputFormat(c); err != nil {
		return err
	}
	blockSize, err := positive(c, "block-size", true)
	if err != nil {
		return err
	}
	var open func() (sim.Source, error)
	var name string
	total := 0
	if spec != "" {
		p, l, r, err := sim.ParseSyntheticSpec(spec)
		if err != nil {
			return fmt.Errorf("--synthetic: %w", err)
		}
		if blockSize == 0 {
			blockSize = 16
		}
		tail, err := positive(c, "tail-tokens", true)
		if err != nil {
			return err
		}
		out, err := positive(c, "output-tokens", true)
		if err != nil {
			return err
		}
		syn := sim.Synthetic{Prefixes: p, PrefixTokens: l, Repeats: r, TailTokens: tail, OutputTokens: out, BlockSize: blockSize, Seed: c.Uint64("seed")}
		open = syn.Open
		name = fmt.Sprintf("synthetic %d prefixes × %d tokens × %d sends, %d changed tail tokens", p, l, r, tail)
		total = p * r
	} else {
		if blockSize == 0 {
			blockSize = 512
		}
		if _, err := os.Stat(trace); err != nil {
			return fmt.Errorf("--trace: %w", err)
		}
		skip := c.Bool("skip-bad-lines")
		open = func() (sim.Source, error) { return sim.OpenMooncake(trace, blockSize, skip) }
		name = "trace " + trace
	}
	slots, slotsFrom, err := workerSlots(c, blockSize)
	if err != nil {
		return err
	}
	workers, err := positive(c, "workers", false)
	if err != nil {
		return err
	}
	conc, rate, err := simLoad(c)
	if err != nil {
		return err
	}
	policies, err := sim.ResolvePolicies(strings.Split(c.String("policy"), ","))
	if err != nil {
		return err
	}
	cfg := sim.DefaultConfig() // ExplicitZero: --overlap-credit 0 means 0
	cfg.Workers, cfg.CapacityBlocks, cfg.BlockSize, cfg.Seed = workers, slots/blockSize, blockSize, c.Uint64("seed")
	cfg.PrefillLoadScale, cfg.OverlapCredit, cfg.Concurrency, cfg.RatePerS = c.Float64("prefill-load-scale"), c.Float64("overlap-credit"), conc, rate
	if cfg.CapacityBlocks < 1 {
		return fmt.Errorf("--kv-slots %d is less than one block of %d tokens", slots, blockSize)
	}
	bar := progress(c, total*len(policies), name)
	if bar != nil {
		cfg.Progress = func(done int) { _ = bar.Set(done) } // cumulative across policies
		defer func() { _ = bar.Finish() }()
	}
	results, err := sim.RunAll(open, cfg, policies)
	if err != nil {
		return err
	}
	out := simulateJSON{Workload: name, Workers: workers, KVSlots: slots, KVSlotsSource: slotsFrom, BlockSize: blockSize,
		CapacityBlocks: cfg.CapacityBlocks, Seed: cfg.Seed, Policies: results}
	return emit(c, simulateDoc(out), nil)
}

// simLoad reads --concurrency and --rate: at most one, and each, when given,
// a positive number.
func simLoad(c *cli.Context) (conc int, rate float64, err error) {
	if c.IsSet("concurrency") {
		if conc, err = positive(c, "concurrency", false); err != nil {
			return 0, 0, fmt.Errorf("%w (clients of a closed loop; leave it out to follow the trace's timestamps)", err)
		}
	}
	if c.IsSet("rate") {
		rate = c.Float64("rate")
		if !(rate > 0) || math.IsInf(rate, 0) {
			return 0, 0, fmt.Errorf("--rate %g: want a finite number of requests/s above 0, e.g. --rate 2.5", rate)
		}
		if conc > 0 {
			return 0, 0, fmt.Errorf("--rate and --concurrency: give one load, an open-loop rate or a closed-loop number of clients")
		}
	}
	return conc, rate, nil
}

// progress returns a bar on stderr when it is a terminal and the run is long.
func progress(c *cli.Context, total int, what string) *progressbar.ProgressBar {
	f, ok := c.App.ErrWriter.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || (total > 0 && total < progressAfter) {
		return nil
	}
	if total == 0 {
		total = -1 // a trace: length unknown until read
	}
	return progressbar.NewOptions(total, progressbar.OptionSetWriter(f), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100_000_000))
}

func simulateDoc(s simulateJSON) *report.Doc {
	var rows [][]string
	for _, r := range s.Policies {
		peak, shares := 0, make([]string, 0, len(r.Workers))
		for _, w := range r.Workers {
			peak = max(peak, w.PeakOccupancyBlocks)
			shares = append(shares, fmt.Sprintf("%.0f%%", w.RequestShare*100))
		}
		rows = append(rows, []string{
			r.Name, fmt.Sprint(r.Requests), fmt.Sprint(r.RepeatRequests), fmt.Sprint(r.HitRequests),
			pct(r.HitRate), pct(r.CachedTokenRatio), fmt.Sprint(r.Evictions),
			fmt.Sprintf("%d / %d", peak, s.CapacityBlocks), strings.Join(shares, " "),
		})
	}
	doc := &report.Doc{
		Title: fmt.Sprintf("Prefix-cache simulation: %s", s.Workload),
		Sections: []report.Section{{
			Title:  fmt.Sprintf("%d workers × %d KV slots (%s), blocks of %d tokens", s.Workers, s.KVSlots, s.KVSlotsSource, s.BlockSize),
			Header: []string{"policy", "requests", "repeats", "hits", "hit rate", "cached tokens", "evictions", "peak blocks", "request share"},
			Rows:   rows,
		}},
		Notes: []string{
			"hit rate = hits / repeats: a repeat is a request whose first block was seen before; a hit finds at least half of its seen leading blocks on the chosen worker.",
			"cached tokens = prompt tokens found cached / all prompt tokens.",
			"peak blocks = the most blocks any one worker held, against its capacity.",
		},
		JSON: s,
	}
	if len(s.Policies) > 0 {
		// Workload figures, the same for every policy.
		r := s.Policies[0]
		if r.SkippedLines > 0 {
			doc.Notes = append(doc.Notes, fmt.Sprintf("%d malformed trace lines were skipped (--skip-bad-lines).", r.SkippedLines))
		}
		if r.RepeatUncertain > 0 {
			doc.Notes = append(doc.Notes, fmt.Sprintf("repeats are a lower bound: %d requests counted as new may be repeats (more distinct prompts than the exact record of first blocks holds).", r.RepeatUncertain))
		}
		if r.ForgottenBlockIDs > 0 {
			doc.Notes = append(doc.Notes, fmt.Sprintf("the bounded history of seen blocks forgot %d block ids: repeated blocks are a lower bound and a hit compares against a possibly short run of seen blocks.", r.ForgottenBlockIDs))
		}
	}
	return doc
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", x*100) }
