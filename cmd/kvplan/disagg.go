package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/units"
)

// defaultGPU is the prefill GPU assumed when none is given.
const defaultGPU = "h100-sxm"

func disaggCommand() *cli.Command {
	return &cli.Command{
		Name:  "disagg",
		Usage: "whether splitting prefill and decode onto separate workers pays off over a link",
		UsageText: `kvplan disagg --model qwen3-0.6b --link 1gbe --input-tokens 1500 --concurrency 4
   kvplan disagg --model llama-3.1-70b --tensor-parallel-size 4 --link ib-ndr --prefill-gpu h100-sxm
   kvplan disagg --model qwen3-0.6b --same-gpu --prefill-ms 80
   kvplan disagg --model deepseek-v3 --kv-cache-dtype fp8 --tp 8 --prefill-gpu h200 --link ib-ndr --isl 8000 --osl 1000 --rate 1.5 --ttft-p95 2s --itl-p95 50ms`,
		Description: `Compares the time to first token (TTFT) of one request served aggregated
(frontend + prefill) with disaggregated (frontend + prefill + KV transfer while
--concurrency transfers share the link), and the prefill time the split takes
off the decode worker. On a link whose rate is per GPU (kvplan links show:
rate_per = gpu) each tensor-parallel rank moves its own KV shard on its own
rail; on a per-node link all of it crosses one path. Prefill time is estimated from the GPU's bf16 FLOP/s and
prefill MFU unless --prefill-ms gives a measured value.
With --rate, both sides are sized to carry the load (within --ttft-p95 and
--itl-p95 when given) by kvplan plan's own sizing, so the figures are plan's
for the same GPUs and tp; the cheaper side wins.`,
		Flags: withCommon(append(append(modelFlags(),
			&cli.StringFlag{Name: "link", Aliases: []string{"l"}, Usage: "link between prefill and decode workers (kvplan links list); default " + planner.SameGPULink + " with --same-gpu"},
			&cli.StringFlag{Name: "throughput", Usage: "a link of your own instead of --link: its effective throughput, e.g. 104MB/s, 1Gbps, 25GB/s"},
			&cli.StringFlag{Name: "latency", Value: "0.2ms", Usage: "per-transfer latency of the --throughput link, e.g. 0.2ms, 20us"},
			inputTokensFlag(1500, "prompt tokens per request", "isl"),
			outputTokensFlag(128, "generated tokens per request", "osl"),
			&cli.IntFlag{Name: "decode-tp", Usage: "tensor-parallel ranks of the decode worker (default: --tensor-parallel-size); each decode rank pulls its own KV shard"},
			&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Value: 1, Usage: "transfers sharing the link at once (not requests in flight: kvplan check derives transfers from the load)"},
			&cli.StringFlag{Name: "rate", Usage: "the load, requests per second: size the split and the aggregated pool on these GPUs to carry it, as kvplan plan does, and compare them; without it, one request's view"},
			&cli.StringFlag{Name: "ttft-p95", Usage: "with --rate: SLO on the 95th percentile of time to first token, e.g. 1s (default: none, a steady state only)"},
			&cli.StringFlag{Name: "itl-p95", Usage: "with --rate: SLO on the 95th percentile of inter-token latency, e.g. 50ms (default: none)"},
			&cli.StringFlag{Name: "engine", Value: planner.DefaultEngine, Usage: "serving engine of the comparison at the load: vllm, sglang or trtllm"},
			&cli.StringFlag{Name: "prefill-gpu", Value: defaultGPU, Usage: "GPU of the prefill worker (kvplan gpus list)"},
			&cli.StringFlag{Name: "decode-gpu", Usage: "GPU of the decode worker (default: the prefill GPU)"},
			&cli.BoolFlag{Name: "same-gpu", Usage: "prefill and decode workers share one GPU"},
			&cli.Float64Flag{Name: "prefill-ms", Usage: "measured prefill time in ms (default: estimated from the prefill GPU)"},
		), requestPathFlags(perf.PathFrontend)...)...),
		Action: runDisagg,
	}
}

func runDisagg(c *cli.Context) error {
	if err := required(c, "model"); err != nil {
		return err
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return err
	}
	sc := planner.DisaggScenario{SameGPU: c.Bool("same-gpu"), PrefillMS: c.Float64("prefill-ms"), Catalog: cat}
	if sc.Path, err = requestPath(c); err != nil {
		return err
	}
	if sc.Model, err = cat.Model(c.String("model")); err != nil {
		return err
	}
	if sc.Link, err = disaggLink(c, cat, sc.SameGPU); err != nil {
		return err
	}
	if sc.PrefillGPU, err = cat.GPU(c.String("prefill-gpu")); err != nil {
		return err
	}
	sc.DecodeGPU = sc.PrefillGPU
	if name := c.String("decode-gpu"); name != "" {
		if sc.DecodeGPU, err = cat.GPU(name); err != nil {
			return err
		}
	}
	if sc.KVDtype, err = kvDtype(c); err != nil {
		return err
	}
	if sc.TP, err = tpFlag(c, sc.Model); err != nil {
		return err
	}
	sc.DecodeTP = sc.TP
	if c.IsSet("decode-tp") {
		if sc.DecodeTP, err = tpFlag(c, sc.Model, "decode-tp"); err != nil {
			return err
		}
	}
	if sc.InputTokens, err = positive(c, flagInputTokens, false); err != nil {
		return err
	}
	if sc.OutputTokens, err = positive(c, flagOutputTokens, true); err != nil {
		return err
	}
	if err := withinContext(c, sc.Model, "--input-tokens + --output-tokens", sc.InputTokens+sc.OutputTokens); err != nil {
		return err
	}
	if sc.Concurrency, err = positive(c, "concurrency", false); err != nil {
		return err
	}
	if sc.PrefillMS < 0 || sc.PrefillMS > 3.6e6 {
		return fmt.Errorf("--prefill-ms %g: must be between 0 (estimate) and 3,600,000", sc.PrefillMS)
	}
	p, err := planner.PlanDisagg(sc)
	if err != nil {
		return err
	}
	if err := disaggAtLoad(c, cat, sc, p); err != nil {
		return err
	}
	return emit(c, disaggDoc(c, p), p.Derivation)
}

// disaggAtLoad adds the comparison at the load (kvplan plan's figures) to
// p when --rate gives the load (--concurrency counts transfers sharing the
// link, not requests in flight, so it sets no load).
func disaggAtLoad(c *cli.Context, cat *catalog.Catalog, sc planner.DisaggScenario, p *planner.DisaggPlan) error {
	engine, err := cat.Engine(c.String("engine")) // a mistyped --engine is an error even without --rate
	if err != nil {
		return err
	}
	s := c.String("rate")
	switch {
	case s == "":
		for _, name := range []string{"ttft-p95", "itl-p95"} {
			if c.String(name) != "" {
				return fmt.Errorf("disagg: --%s applies with --rate (the SLO both sides are sized to at that load)", name)
			}
		}
		return nil
	case sc.SameGPU:
		return fmt.Errorf("disagg: --rate compares the split with the same GPUs aggregated; with --same-gpu there is no second GPU to compare, so leave --rate out")
	case sc.OutputTokens < 1:
		return fmt.Errorf("disagg: --rate compares decode iterations at the load; give --output-tokens of at least 1")
	}
	rate, err := units.ParseNumber(s)
	if err != nil || !(rate > 0) || rate > maxRatePerS {
		return fmt.Errorf("--rate %q: want requests per second above 0 (at most 1,000,000)", s)
	}
	var slo [2]float64
	for i, name := range []string{"ttft-p95", "itl-p95"} {
		if c.String(name) != "" {
			if slo[i], err = sloFlag(c, name); err != nil {
				return err
			}
		}
	}
	a, err := capacity.SizeAtLoad(sc, engine, rate, slo[0], slo[1], planEngine(cat))
	if err != nil {
		return fmt.Errorf("disagg: --rate: %w", err)
	}
	p.SetAtLoad(a)
	return nil
}

func disaggDoc(c *cli.Context, p *planner.DisaggPlan) *report.Doc {
	prefillWhere := fmt.Sprintf("%s on %s", p.PrefillSource, p.PrefillGPU)
	if p.PrefillSource == "given" {
		prefillWhere = "given"
	}
	shareNote := fmt.Sprintf("%d in flight, %s each", p.Concurrency, units.Rate(p.PerTransferBytesPerS))
	if !p.LinkShared {
		shareNote = "not shared: each transfer keeps the full rate"
	}
	doc := &report.Doc{
		Title: fmt.Sprintf("Disaggregating %s over %s (%d input tokens)", p.Model, p.Link, p.InputTokens),
		Sections: []report.Section{
			{Title: "KV to move", Header: []string{"figure", "value"}, Rows: [][]string{
				{"KV dtype, tensor parallel", fmt.Sprintf("%s, tp %d", p.KVDtype, p.TP)},
				{"KV per token (the model's)", bytesWithExact(p.KVBytesPerToken)},
				{"KV per request (the model's)", bytesWithExact(p.KVBytesPerRequest)},
				{"crossing the link per request", bytesWithExact(p.BytesPerTransfer)},
			}},
			{Title: "Transfer over " + p.Link, Header: []string{"figure", "value", "note"}, Rows: [][]string{
				{"on the busiest path", bytesWithExact(p.BytesPerPath), pathNote(p)},
				{"effective throughput", units.Rate(p.EffectiveBytesPerS), fmt.Sprintf("latency %s per transfer", units.MS(p.LinkLatencyMS))},
				{"transfer alone", units.MS(p.TransferMS), ""},
				{"transfer while shared", units.MS(p.TransferMSShared), shareNote},
			}},
			{Title: "Time to first token", Header: []string{"figure", "value", "note"}, Rows: [][]string{
				{"request (" + p.RequestPath + " path)", units.MS(p.RequestMS), requestNote(p.RequestPath)},
				{"prefill", units.MS(p.PrefillMS), prefillWhere},
				{"prefill freed from decode", units.MS(p.DecodeStallFreedMS), "what the split gains per request"},
				{"TTFT aggregated", units.MS(p.TTFTAggMS), "request + prefill"},
				{"TTFT disaggregated", units.MS(p.TTFTDisaggMS), "request + prefill + shared transfer"},
				{"ratio", fmt.Sprintf("%.2f×", p.TTFTRatio), "disaggregated / aggregated"},
			}},
		},
		JSON: jsonWithExplain(c, p, &p.Derivation),
	}
	if a := p.AtLoad; a != nil && a.Split != nil && a.Aggregated != nil {
		doc.Sections = append(doc.Sections, sizedSection(a))
	} else if a != nil {
		doc.Sections = append(doc.Sections, report.Section{Title: fmt.Sprintf("At the load: %.4g requests/s (%s)", a.RequestsPerS, a.LoadSource),
			Header: []string{"figure", "value", "note"}, Rows: [][]string{
				{"ITL aggregated", msOrDash(a.ITLAggMS), fmt.Sprintf("%d aggregated workers on the same GPUs", a.AggWorkers)},
				{"ITL disaggregated", msOrDash(a.ITLDisaggMS), "the decode worker, no prefill in its iterations"},
				{"decode freed per request", msOrDash(a.DecodeStallFreedMS), "(output tokens − 1) × (ITL aggregated − ITL disaggregated)"},
				{"transfer at the load", msOrDash(a.TransferMS), "mean, transfers in flight sharing the link"},
				{"TTFT p95 aggregated / disaggregated", msOrDash(a.TTFTAggP95MS) + " / " + msOrDash(a.TTFTDisaggP95MS), "kvplan plan's model"},
			}})
	}
	doc.Notes = append(doc.Notes, "Verdict: "+p.Verdict+".")
	for _, a := range p.Assumptions {
		doc.Notes = append(doc.Notes, "Assumes "+a+".")
	}
	doc.Notes = append(doc.Notes, "Convention: "+p.MTPConvention+".")
	nm := "Not modelled: "
	for i, n := range p.NotModelled {
		if i > 0 {
			nm += "; "
		}
		nm += n
	}
	doc.Notes = append(doc.Notes, nm+".")
	return doc
}

func pathNote(p *planner.DisaggPlan) string {
	if p.LinkRatePer == catalog.RatePerGPU {
		return fmt.Sprintf("rate per GPU: %d rails in parallel, one per rank pair (prefill tp %d, decode tp %d)", p.ParallelPaths, p.TP, p.DecodeTP)
	}
	return "rate per node: every rank's KV crosses one path"
}

// disaggLink is --link from the catalog, a link of the user's own from
// --throughput and --latency, or the same-GPU path with --same-gpu.
func disaggLink(c *cli.Context, cat *catalog.Catalog, sameGPU bool) (*catalog.Link, error) {
	name, rate := c.String("link"), c.String("throughput")
	switch {
	case name != "" && rate != "":
		return nil, fmt.Errorf("disagg: give --link or --throughput, not both")
	case rate != "":
		bps, err := units.ParseRate(rate)
		if err != nil {
			return nil, fmt.Errorf("--throughput: %w", err)
		}
		if bps <= 0 {
			return nil, fmt.Errorf("--throughput %s: must be > 0", rate)
		}
		ms, err := units.ParseMS(c.String("latency"))
		if err != nil {
			return nil, fmt.Errorf("--latency: %w", err)
		}
		return &catalog.Link{Name: "custom " + rate, Nominal: rate, NominalBytesPerS: bps, EffectiveBytesPerS: bps,
			LatencyMS: ms, Shared: true, RatePer: catalog.RatePerNode,
			Source: "given: --throughput " + rate + " --latency " + c.String("latency") + " (taken as one path per node)"}, nil
	case name == "" && !sameGPU:
		return nil, fmt.Errorf("disagg: --link is required (e.g. --link 1gbe; kvplan links list), or --throughput 104MB/s, or --same-gpu")
	case name == "":
		name = planner.SameGPULink
	}
	return cat.Link(name)
}

// sizedSection lays the two sides of disagg --rate side by side, as plan's
// candidates table does.
func sizedSection(a *planner.DisaggAtLoad) report.Section {
	title := fmt.Sprintf("At %.4g requests/s, each side sized as kvplan plan sizes it", a.RequestsPerS)
	if s := a.Split.SLO; s != "" {
		title += " within " + s
	} else {
		title += " (a steady state; no SLO given)"
	}
	sides := []*planner.LoadResult{a.Split, a.Aggregated}
	rows := [][]string{}
	row := func(name string, f func(*planner.LoadResult) string) {
		r := []string{name}
		for _, x := range sides {
			r = append(r, f(x))
		}
		rows = append(rows, r)
	}
	row("pools", func(r *planner.LoadResult) string { return r.Pools })
	row("GPUs", func(r *planner.LoadResult) string { return fmt.Sprint(r.GPUs) })
	row("$/hour", func(r *planner.LoadResult) string { return usd(r.USDPerHour) })
	row("carries the load", func(r *planner.LoadResult) string {
		if r.MeetsSLO {
			return "yes"
		}
		if r.Misses != "" {
			return "no: " + r.Misses
		}
		return "no"
	})
	row("TTFT p95 (mean)", func(r *planner.LoadResult) string {
		return fmt.Sprintf("%s (%s)", msOrDash(r.TTFTP95MS), msOrDash(r.TTFTMeanMS))
	})
	row("ITL p95 (TPOT mean)", func(r *planner.LoadResult) string {
		return fmt.Sprintf("%s (%s)", msOrDash(r.ITLP95MS), msOrDash(r.TPOTMeanMS))
	})
	row("KV transfer mean", func(r *planner.LoadResult) string { return msOrDash(r.TransferMS) })
	row("capacity", func(r *planner.LoadResult) string {
		if r.RequestsPerSCapacity == 0 {
			return "-"
		}
		return fmt.Sprintf("%.4g/s (utilization %.0f%%)", r.RequestsPerSCapacity, r.Utilization*100)
	})
	row("limited by", func(r *planner.LoadResult) string { return r.LimitedBy })
	return report.Section{Title: title, Header: []string{"figure", "disaggregated", "aggregated"}, Rows: rows}
}
