package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/sim"
	"github.com/kvplan/kvplan/units"
)

// progressAfter is the request count beyond which a terminal gets a bar.
const progressAfter = 20_000

func simFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "workers", Aliases: []string{"w"}, Value: 2, Usage: "workers behind the router"},
		&cli.StringFlag{Name: "policy", Aliases: []string{"p"}, Value: "all", Usage: "routing policy: all, or a comma-separated list of " + strings.Join(sim.Policies(), ", ") + " (any case)"},
		&cli.IntFlag{Name: "block-size", Usage: "KV block size in tokens (default 16; a trace's own 512 with --trace)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the random policy and the synthetic shuffle"},
		&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Usage: "closed loop: this many clients, each sending its next request when the last ends (default: 1 for synthetic workloads, the trace's timestamps for traces)"},
		&cli.Float64Flag{Name: "rate", Usage: "open loop: Poisson arrivals at this many requests/s (seeded with --seed), instead of the trace's timestamps"},
		&cli.Float64Flag{Name: "prefill-load-scale", Value: 1, Usage: "kv-aware cost: weight of the prefill term, Dynamo's prefill_load_scale (default 1)"},
		&cli.Float64Flag{Name: "overlap-credit", Value: 1, Usage: "kv-aware cost: prefill blocks each cached block takes off, Dynamo's overlap_score_credit (default 1)"},
	}
}

func simulateCommand() *cli.Command {
	return &cli.Command{
		Name:  "simulate",
		Usage: "replay a workload through each routing policy's prefix caches; with --model and --gpu, in time: batching engines, queues, KV transfers",
		UsageText: `kvplan simulate --synthetic 12x1500x6 --tail-tokens 24 --workers 2 --kv-slots 14816 --policy all
   kvplan simulate --trace testdata/sim/conversation_excerpt.jsonl --workers 8 --kv-slots 200000 --policy all -o json
   kvplan simulate --model qwen3-8b --gpu l4 --synthetic 40x2000x4 --workers 4 --rate 2
   kvplan simulate --model qwen3-0.6b --gpu rtx4090 --synthetic 40x3000x1 --concurrency 4 --prefill-workers 1 --decode-workers 1 --link 1gbe --output-tokens 64`,
		Description: `Each worker caches KV blocks (chained hashes, LRU over blocks no running
request pins; filled output blocks stay cached, as vLLM keeps them). Policies:
round-robin, random (seeded), least-loaded (Dynamo's: fewest requests in
flight), kv-aware (Dynamo's cost: prefill_load_scale × max(0, (prefill tokens
booked + prompt) / block − overlap_credit × overlap) + active blocks + new
blocks, from the router's own account of what it sent where),
kv-aware-no-events (no KV events: every overlap 0) and kv-aware-approx (the
router remembers where it sent prefixes). A request is a repeat when its first
block was seen before, and a hit when at least half of its previously seen
leading blocks are cached on the chosen worker. The load is a closed loop
(--concurrency), Poisson arrivals (--rate) or a trace's timestamps. Mooncake
traces (one JSON object a line, 512-token hash_ids) are streamed, once for all
policies.

With --model and --gpu the simulation is timed: each worker runs vLLM-style
iterations (chunked prefill, max_num_batched_tokens, max_num_seqs, admission
while KV blocks fit, FCFS, preemption) timed by the engine model of kvplan
perf, and sizes its KV with kvplan memory. --prefill-workers, --decode-workers
and --link disaggregate: the KV crosses the link, shared by every transfer in
flight. The output adds TTFT, TPOT, end-to-end, queue and transfer latencies
(p50, p90, p99, mean), throughput, preemptions and each worker's busy time.`,
		Flags: withCommon(append(append(append(append(simFlags(), slotFlags()...), timedFlags()...), simLayoutFlags()...),
			&cli.StringFlag{Name: "trace", Usage: fmt.Sprintf("Mooncake JSONL trace (timestamp, input_length, output_length, hash_ids), or - for stdin; lines up to %d MiB and %s hash ids",
				sim.MaxTraceLineBytes>>20, units.Thousands(sim.MaxHashIDsPerLine))},
			&cli.StringFlag{Name: "synthetic", Usage: "synthetic router workload PREFIXESxTOKENSxREPEATS, e.g. 12x1500x6 (FACTS §5)"},
			&cli.IntFlag{Name: "tail-tokens", Value: 24, Usage: "synthetic: changed tokens at the end of every send"},
			outputTokensFlag(128, "synthetic: generated tokens per request", "osl"),
			&cli.BoolFlag{Name: "skip-bad-lines", Usage: "trace: skip malformed lines (and count them) instead of stopping"},
		)...),
		Action: runSimulate,
	}
}

// simulateJSON is the `kvplan simulate -o json` contract.
type simulateJSON struct {
	Workload       string `json:"workload"`
	Workers        int    `json:"workers"`
	KVSlots        int    `json:"kv_slots_per_worker"`
	KVSlotsSource  string `json:"kv_slots_source"`
	BlockSize      int    `json:"block_size"`
	CapacityBlocks int    `json:"capacity_blocks_per_worker"`
	Seed           uint64 `json:"seed"`
	// Timed is the timed simulation's setup (--model and --gpu).
	Timed    *simulateSetup `json:"timed,omitempty"`
	Policies []sim.Result   `json:"policies"`
	// Derivation explains the timed setup's figures (with --explain).
	Derivation planner.Derivation `json:"derivation,omitempty"`
}

func runSimulate(c *cli.Context) error {
	trace, spec := c.String("trace"), c.String("synthetic")
	if (trace == "") == (spec == "") {
		return fmt.Errorf("simulate: give one workload: --trace FILE or --synthetic PxLxR (e.g. 12x1500x6)")
	}
	if _, err := outputFormat(c); err != nil {
		return err
	}
	blockSize, err := intInOrZero(c, "block-size", blockSizeRange)
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
		for _, f := range []struct {
			v int
			r intRange
		}{{p, prefixesRange}, {l, tokensRange}, {r, repeatsRange}} {
			if err := units.CheckInt(int64(f.v), f.r.lo, f.r.hi, f.r.unit); err != nil {
				return fmt.Errorf("simulate: --synthetic %s: %w", spec, err)
			}
		}
		if blockSize == 0 {
			blockSize = 16
		}
		tail, err := intIn(c, "tail-tokens", extraTokensRange)
		if err != nil {
			return err
		}
		out, err := intIn(c, flagOutputTokens, outputTokensRange)
		if err != nil {
			return err
		}
		if err := syntheticBlocks(p, l, r, tail, out, blockSize, "simulate: --synthetic "+spec); err != nil {
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
		if open, err = traceSource(c, trace, blockSize); err != nil {
			return err
		}
		name = "trace " + trace
	}
	timed, err := simTimed(c, blockSize)
	if err != nil {
		return err
	}
	var slots, workers int
	var slotsFrom string
	if timed != nil {
		slots, slotsFrom, workers = timed.slots, timed.slotsFrom, timed.workers
	} else {
		if slots, slotsFrom, err = workerSlots(c, blockSize); err != nil {
			return err
		}
		if workers, err = intIn(c, "workers", workersRange); err != nil {
			return err
		}
	}
	conc, rate, err := simLoad(c)
	if err != nil {
		return err
	}
	policies, err := sim.ResolvePolicies(strings.Split(strings.ToLower(c.String("policy")), ",")) // KV-AWARE is kv-aware
	if err != nil {
		return err
	}
	if err := routerWeights(c); err != nil {
		return err
	}
	cfg := sim.DefaultConfig() // ExplicitZero: --overlap-credit 0 means 0
	cfg.Workers, cfg.CapacityBlocks, cfg.BlockSize, cfg.Seed = workers, slots/blockSize, blockSize, c.Uint64("seed")
	cfg.PrefillLoadScale, cfg.OverlapCredit, cfg.Concurrency, cfg.RatePerS = c.Float64("prefill-load-scale"), c.Float64("overlap-credit"), conc, rate
	if cfg.CapacityBlocks < 1 {
		return fmt.Errorf("--kv-slots %d is less than one block of %d tokens", slots, blockSize)
	}
	var d planner.Derivation
	var setup *simulateSetup
	if timed != nil {
		cfg.Engine, d, setup = timed.engine, timed.derivation, &timed.setup
		setup.Load = loadName(conc, rate, trace != "")
		if cfg.Concurrency > 0 {
			cfg.RampMS = setup.RampMS // a closed loop's clients start as a benchmark's do
		} else {
			setup.RampMS = 0
		}
	}
	if bar := progress(c, total, policies); bar != nil {
		n := len(policies)
		cfg.Progress = func(done int) { bar.Set(int64(done / n)) } // sim counts across policies
		defer bar.Finish()
	}
	results, err := sim.RunAll(open, cfg, policies)
	if err != nil {
		return err
	}
	if err := allRejected(results, slots); err != nil {
		return err
	}
	out := simulateJSON{Workload: name, Workers: workers, KVSlots: slots, KVSlotsSource: slotsFrom, BlockSize: blockSize,
		CapacityBlocks: cfg.CapacityBlocks, Seed: cfg.Seed, Timed: setup, Policies: results, Derivation: d}
	doc := simulateDoc(out)
	doc.JSON = jsonWithExplain(c, &out, &out.Derivation)
	return emit(c, doc, d)
}

// simLoad reads --concurrency and --rate: at most one, and each, when given,
// a positive number.
func simLoad(c *cli.Context) (conc int, rate float64, err error) {
	if c.IsSet("concurrency") {
		if conc, err = intIn(c, "concurrency", concurrencyRange); err != nil {
			return 0, 0, fmt.Errorf("%w (clients of a closed loop; leave it out to follow the trace's timestamps)", err)
		}
	}
	if c.IsSet("rate") {
		rate = c.Float64("rate")
		if !(rate > 0) || math.IsInf(rate, 0) || rate > maxRatePerS {
			return 0, 0, fmt.Errorf("--rate %g: want a finite number of requests/s above 0 and at most 1,000,000, e.g. --rate 2.5", rate)
		}
		if conc > 0 {
			return 0, 0, fmt.Errorf("--rate and --concurrency: give one load, an open-loop rate or a closed-loop number of clients")
		}
	}
	return conc, rate, nil
}

// progress returns a progress line on stderr, naming the policies and
// counting the workload's requests, when stdout and stderr are terminals and
// the run is long (total 0: a trace, its length unknown until read).
func progress(c *cli.Context, total int, policies []string) *progressLine {
	if total > 0 && total*len(policies) < progressAfter {
		return nil
	}
	bar := newProgress(c.App.Writer, c.App.ErrWriter, int64(total), "requests")
	what := fmt.Sprintf("%d policies", len(policies))
	if len(policies) == 1 {
		what = policies[0]
	}
	bar.Phase(what, "replaying")
	return bar
}

func simulateDoc(s simulateJSON) *report.Doc {
	var rows [][]string
	for _, r := range s.Policies {
		peak, shares := 0, make([]string, 0, len(r.Workers))
		for _, w := range r.Workers {
			peak = max(peak, w.PeakOccupancyBlocks)
			shares = append(shares, fmt.Sprintf("%.0f%%", w.RequestShare*100))
		}
		// The headline is the prefill saved (cached tokens); the share of
		// repeats that hit comes second: a high hit share of a few short
		// prefixes can save little prefill.
		rows = append(rows, []string{
			r.Name, pct(r.CachedTokenRatio), pct(r.HitRate), fmt.Sprint(r.Requests), fmt.Sprint(r.RepeatRequests), fmt.Sprint(r.HitRequests),
			fmt.Sprint(r.Evictions), fmt.Sprintf("%d / %d", peak, s.CapacityBlocks), strings.Join(shares, " "),
		})
	}
	doc := &report.Doc{
		Title: fmt.Sprintf("Prefix-cache simulation: %s", s.Workload),
		Sections: []report.Section{{
			Title:  fmt.Sprintf("%d workers × %d KV slots (%s), blocks of %d tokens", s.Workers, s.KVSlots, s.KVSlotsSource, s.BlockSize),
			Header: []string{"policy", "cached tokens (prefill saved)", "repeats that hit", "requests", "repeats", "hits", "evictions", "peak blocks", "request share"},
			Rows:   rows,
		}},
		Notes: []string{
			"cached tokens = prompt tokens found cached / all prompt tokens: the share of prefill the cache saves, what routing is for.",
			"repeats that hit = hits / repeats: a repeat is a request whose first block was seen before; a hit finds at least half of its seen leading blocks on the chosen worker.",
			"peak blocks = the most blocks any one worker held, against its capacity.",
		},
		JSON: s,
	}
	if s.Timed != nil {
		timedSections(doc, s)
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

// timedSections adds the timed simulation's latencies and throughput.
func timedSections(doc *report.Doc, s simulateJSON) {
	t := s.Timed
	disagg := t.DecodeWorkers > 0
	doc.Title = fmt.Sprintf("Serving simulation: %s", s.Workload)
	pool := fmt.Sprintf("%d workers", s.Workers)
	if disagg {
		pool = fmt.Sprintf("%d prefill + %d decode workers over %s (%d path(s) of %s, %s B a token each)",
			t.PrefillWorkers, t.DecodeWorkers, t.Link, t.ParallelPaths, units.Rate(t.PathBytesPerS), fmt.Sprint(t.PathBytesPerToken))
	}
	doc.Sections[0].Title = fmt.Sprintf("%s × %d KV slots (%s), blocks of %d tokens; prefix cache", pool, s.KVSlots, s.KVSlotsSource, s.BlockSize)
	header := []string{"policy", "TTFT p50", "TTFT p90", "TTFT p99", "TPOT p50", "TPOT p90", "TPOT p99", "e2e p50", "e2e p99", "queue p99"}
	if disagg {
		header = append(header, "transfer p50", "transfer p99")
	}
	var lat, thr [][]string
	for _, r := range s.Policies {
		if r.Timing == nil {
			continue
		}
		m := r.Timing
		c := latencyCell
		row := []string{r.Name, c(m.TTFTMS.P50), c(m.TTFTMS.P90), c(m.TTFTMS.P99), c(m.TPOTMS.P50), c(m.TPOTMS.P90), c(m.TPOTMS.P99),
			c(m.E2EMS.P50), c(m.E2EMS.P99), c(m.QueueMS.P99)}
		if disagg {
			row = append(row, c(m.TransferMS.P50), c(m.TransferMS.P99))
		}
		lat = append(lat, row)
		busy := make([]string, 0, len(r.Workers))
		for _, w := range r.Workers {
			if w.WorkerTiming != nil {
				busy = append(busy, fmt.Sprintf("%.0f%%", w.GPUBusyFraction*100))
			}
		}
		thr = append(thr, []string{r.Name, fmt.Sprint(m.Completed), fmt.Sprintf("%.2f", m.RequestsPerS), fmt.Sprintf("%.0f", m.OutputTokensPerS),
			fmt.Sprint(m.Preemptions), fmt.Sprint(m.Rejected), strings.Join(busy, " ")})
	}
	doc.Sections = append(doc.Sections,
		report.Section{Title: fmt.Sprintf("Latency, ms (%s; %s)", t.Load, t.StepModel), Header: header, Rows: lat},
		report.Section{Title: "Throughput", Header: []string{"policy", "completed", "requests/s", "output tokens/s", "preemptions", "rejected", "GPU busy"}, Rows: thr},
	)
	doc.Notes = append(doc.Notes,
		fmt.Sprintf("timed: each worker runs %s iterations (at most %d batched tokens and %d sequences, %s, admission while KV blocks fit, FCFS, recompute preemption) timed by the engine model of kvplan perf; a request spends %s before its worker (%s; --request-path); --explain shows the derivation.",
			t.Engine, t.MaxNumBatchedTokens, t.MaxNumSeqs, scheduleName(t.SeparatePrefill), requestCostText(t.FrontendMS, t.FrontendMSPerToken), requestPathName(t.RequestPath)),
		"TPOT = (last token − first token) / (output tokens − 1); queue = waiting for admission; GPU busy = time in iterations / duration, per worker.")
	if disagg {
		doc.Notes = append(doc.Notes, "disaggregated: a request's KV (the whole prompt) crosses the link once a decode worker has blocks for it; transfers in flight share the link; TTFT ends at the decode worker's first step.")
	}
	for _, a := range t.Assumptions {
		doc.Notes = append(doc.Notes, "Assumes "+strings.TrimSuffix(a, ".")+".")
	}
}

// scheduleName says how an engine mixes prefill and decode.
func scheduleName(separate bool) string {
	if separate {
		return "prefill iterations alone, decoding waiting"
	}
	return "chunked prefill mixed with decodes"
}

// latencyCell formats milliseconds for the latency table.
func latencyCell(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
