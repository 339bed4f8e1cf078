package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/manifest"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/slo"
	"github.com/kvplan/kvplan/units"
	"github.com/kvplan/kvplan/workload"
)

func planCommand() *cli.Command {
	return &cli.Command{
		Name:  "plan",
		Usage: "the cheapest deployment that meets an SLO (TTFT, ITL, TPOT, E2E percentiles, goodput) at a request rate, a day's traffic, or the highest rate N GPUs sustain",
		UsageText: `kvplan plan --model llama-3.1-70b --isl 4000 --osl 512 --rate 20 --ttft-p95 1000ms --itl-p95 50ms --gpu h100-sxm --link ib-ndr
   kvplan plan --model llama-3.1-8b --isl 1024 --osl 256 --rate 50 --ttft-p95 500ms --itl-p95 30ms --gpu h100-sxm,a100-80gb,l40s --link ib-ndr,100gbe -o json
   kvplan plan --model llama-3.1-70b --isl 4000 --osl 512 --gpus 16 --ttft-p95 1s --itl-p95 50ms --gpu h100-sxm --link ib-ndr
   kvplan plan --model qwen3-32b --isl 2000 --osl 300 --rate 50 --ttft-p95 500ms --itl-p95 40ms --tpot 40ms --gpu l40s
   kvplan plan --model llama-3.1-8b --lengths testdata/sim/conversation_excerpt.jsonl --rate 2 --ttft-p99 8s --tpot 50ms --goodput 0.9 --gpu h100-sxm
   kvplan plan --model llama-3.1-70b --isl 4000 --osl 512 --rate-profile testdata/plan/day-profile.csv --ttft-p95 1s --tpot 45ms --gpu h100-sxm --plot day.svg
   kvplan plan ... --write-plan deploy/plan.toml --plot pareto.svg --explain
   kvplan plan ... --emit dynamo=deploy.yaml --emit vllm=serve.sh`,
		Description: `Enumerates aggregated pools and disaggregated prefill/decode pools (each GPU
offered, tp 1-8 per role, chunked-prefill budgets for aggregated pools, each
link and dtype offered), sizes the workers of each at the rate from the engine
model, the memory model, queueing (M/G/c prefill wait, KV-bound batch seats,
Poisson batch percentiles) and the KV transfer over the link with transfers in
flight from the load, and ranks them by $/hour. The top candidates are
replayed by the timed simulator (--verify) and both figures shown.
Without --rate, --gpus N asks for the highest rate N GPUs sustain within the
SLO, per mode. The SLO is any of --ttft-p50/p90/p95/p99, --itl-p50/p90/p95/p99,
--tpot (mean), --tpot-p99, --e2e-p95 and --goodput (at least one); every
target given is met analytically and, within 10%, in the simulator. --lengths
or --isl-range-ratio size for a distribution of lengths, --burstiness or
--arrivals trace for bursty arrivals, --rate-profile for a day (schedule,
usd_per_day). Exit 1 when nothing meets the SLO (the closest is shown; with
--rate-profile, at the peak period).`,
		Flags: withCommon(flagGroups(flagList(
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "catalog model name or Hugging Face id (required; kvplan models list)"},
			inputTokensFlag(0, "input (prompt) tokens per request (required without --lengths)", "isl"),
			outputTokensFlag(0, "output tokens per request (required without --lengths)", "osl"),
			&cli.StringFlag{Name: "rate", Usage: "requests per second to serve (Poisson arrivals unless --burstiness or --arrivals trace)"},
			&cli.IntFlag{Name: "gpus", Usage: "without --rate: the GPUs to fill; the answer is the highest rate they sustain"},
		), sloFlags(), workloadFlags(), flagList(
			&cli.StringSliceFlag{Name: "gpu", Usage: "GPUs to consider, comma-separated (kvplan gpus list; default " + defaultGPU + ")"},
			&cli.StringSliceFlag{Name: "link", Usage: "links between prefill and decode pools, comma-separated (kvplan links list); none: aggregated only"},
			&cli.StringFlag{Name: "engine", Value: planner.DefaultEngine, Usage: "serving engine: vllm, sglang or trtllm"},
			&cli.StringSliceFlag{Name: "weight-dtype", Usage: "weight dtypes to consider (bf16, fp8, fp4, ...; default the model's)"},
			kvDtypesFlag("KV cache dtypes to consider, comma-separated (bf16, fp8, ...; default the model's)"),
			&cli.StringFlag{Name: "cached-fraction", Usage: "share of every prompt found in the prefix cache, in [0, 1)"},
			&cli.IntFlag{Name: "prefixes", Usage: "distinct shared prefixes (with --prefix-tokens), equally popular"},
			&cli.IntFlag{Name: "prefix-tokens", Usage: "tokens of each shared prefix"},
			&cli.IntFlag{Name: "max-gpus", Usage: "most GPUs a candidate may use (0 = no bound)"},
			&cli.StringFlag{Name: "pricing", Value: capacity.PricingOnDemand, Usage: "instance prices: " + orList(catalog.Pricings) + " (the catalog lists no reserved prices: give them in --price-file)"},
			&cli.StringFlag{Name: "provider", Usage: "provider whose instances the workers are packed onto (aws, gcp, azure, lambda, oci, coreweave, ...; any: the cheapest; default aws, GPUs it does not rent at the catalog's per-GPU price)"},
			&cli.StringFlag{Name: "price-file", Usage: "TOML file of [[instance]] entries (as catalog/data/instances.toml) merged over the catalog's instance prices"},
			&cli.StringSliceFlag{Name: "price", Usage: "GPU=USD per GPU-hour, paid by the GPU with no instance, over the catalog's price; repeatable"},
			&cli.BoolFlag{Name: "owned", Usage: "price owned GPUs: power (--usd-per-kwh, --pue) and amortisation (--capex-per-gpu over --amortize-years) instead of a list price"},
			&cli.Float64Flag{Name: "usd-per-kwh", Usage: "with --owned: the electricity price, USD per kWh (required)"},
			&cli.Float64Flag{Name: "pue", Usage: "facility power usage effectiveness, 1 to 10, that multiplies power_kw (default 1: the servers alone)"},
			&cli.Float64Flag{Name: "capex-per-gpu", Usage: "with --owned: purchase price of one GPU with its share of the server, USD"},
			&cli.Float64Flag{Name: "amortize-years", Usage: "with --owned and --capex-per-gpu: years the purchase is spread over"},
			&cli.Float64Flag{Name: "host-watts-per-gpu", Usage: "host power per GPU in power_kw (default 575 W, DGX H100's 10.2 kW less its 8 × 700 W GPUs, ÷ 8)"},
			&cli.IntFlag{Name: "verify", Value: 3, Usage: "replay the top N candidates with the timed simulator (0 = off)"},
			&cli.IntFlag{Name: "sim-requests", Value: 2000, Usage: "requests per simulated candidate"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the simulated arrivals"},
			&cli.IntFlag{Name: "top", Value: 4, Usage: "candidates side by side in the table"},
			&cli.StringFlag{Name: "write-plan", Usage: "write the best deployment as a plan file for kvplan check"},
			&cli.StringSliceFlag{Name: "emit", Usage: "write the best deployment as FORMAT=FILE, repeatable; FORMAT: " + strings.Join(manifest.EmitFormats, ", ") + " (kvplan check reads each back)"},
			&cli.IntFlag{Name: "candidate", Usage: "with --write-plan or --emit: write the Nth ranked candidate (the table's #N) instead of the best"},
			&cli.BoolFlag{Name: "force", Usage: "with --write-plan, --emit or --plot: replace an existing file"},
			&cli.StringFlag{Name: "plot", Usage: "write an SVG: output tokens/s per GPU against per user (Pareto front) per mode, or with --rate-profile the day's rate, GPUs and $/hour; above the best's latency percentiles beside their targets"},
		), requestPathFlags(perf.PathFrontend))...),
		Action: runPlan,
	}
}

// planResultJSON is `kvplan plan -o json`: the search result, and the best
// candidate's arithmetic with --explain.
type planResultJSON struct {
	*capacity.Result
	// Efficiencies are the entries the candidates shown rest on, and
	// whether each is the shipped fit or the user's calibration.
	Efficiencies []planner.EfficiencyUse `json:"efficiencies"`
	Derivation   planner.Derivation      `json:"derivation,omitempty"`
}

func runPlan(c *cli.Context) error {
	if err := required(c, "model"); err != nil {
		return err
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return err
	}
	q, profile, err := planQuery(c, cat)
	if err != nil {
		return err
	}
	// The output files, the table's and the simulator's counts, checked
	// before the search.
	if _, err := outputPath(c, "write-plan"); err != nil {
		return err
	}
	plotPath, err := outputPath(c, "plot")
	if err != nil {
		return err
	}
	verify, err := intIn(c, "verify", intRange{0, 100, "candidates"})
	if err != nil {
		return err
	}
	simRequests, err := intIn(c, "sim-requests", intRange{100, 1_000_000, "requests"})
	if err != nil {
		return err
	}
	top, err := intIn(c, "top", intRange{1, 100, "candidates"})
	if err != nil {
		return err
	}
	emits, err := emitFlags(c)
	if err != nil {
		return err
	}
	var res *capacity.Result
	if profile != nil {
		res, err = capacity.PlanDay(*q, profile)
	} else {
		res, err = capacity.Search(*q)
	}
	if err != nil {
		return err
	}
	if verify > 0 {
		if err := q.Verify(res, verify, simRequests, c.Uint64("seed")); err != nil {
			return internalError{err}
		}
	}
	if err := writeDeployment(c, cat, q, res, emits); err != nil {
		return err
	}
	if plotPath != "" {
		if err := writePlot(c, plotPath, res, q); err != nil {
			return err
		}
	}
	var d planner.Derivation
	if best := res.Best; best != nil {
		d = best.Derivation
	} else if res.Closest != nil {
		d = res.Closest.Derivation
	}
	centsOf(res)
	doc := planDoc(q, res, top)
	out := &planResultJSON{Result: res, Efficiencies: planEfficiencies(cat, q, res, top)}
	for _, u := range out.Efficiencies {
		doc.Notes = append(doc.Notes, "E"+strings.TrimPrefix(u.Note(), "e")+".")
	}
	if c.Bool("explain") {
		out.Derivation = d
	}
	doc.JSON = out
	if err := emit(c, doc, d); err != nil {
		return err
	}
	if res.Best == nil {
		return findingsError{1}
	}
	return nil
}

// planQuery turns the flags into a capacity query, and reads the rate
// profile when one is given.
func planQuery(c *cli.Context, cat *catalog.Catalog) (*capacity.Query, *workload.Profile, error) {
	q, err := planQueryOf(c, cat)
	if err != nil {
		return nil, nil, err
	}
	p, err := planDay(c, cat, q)
	if err != nil {
		return nil, nil, err
	}
	if err := q.Check(); err != nil {
		return nil, nil, fmt.Errorf("plan: %w", err)
	}
	return q, p, nil
}

func planQueryOf(c *cli.Context, cat *catalog.Catalog) (*capacity.Query, error) {
	em := planEngine(cat)
	q := &capacity.Query{Timers: em.Timers}
	var err error
	if q.Path, err = requestPath(c); err != nil {
		return nil, err
	}
	if q.Pricing, err = parseEnumFlag("--pricing", c.String("pricing"), catalog.Pricings); err != nil { // SPOT is spot
		return nil, err
	}
	if q.Model, err = cat.Model(c.String("model")); err != nil {
		return nil, err
	}
	if q.Engine, err = cat.Engine(c.String("engine")); err != nil {
		return nil, err
	}
	q.SeparatePrefill = em.SeparatePrefill != nil && em.SeparatePrefill(q.Engine.Name)
	if c.String("lengths") == "" {
		if q.InputTokens, err = positive(c, flagInputTokens, false); err != nil {
			return nil, err
		}
		if q.OutputTokens, err = positive(c, flagOutputTokens, false); err != nil {
			return nil, err
		}
		if c.String("isl-range-ratio") == "" && c.String("osl-range-ratio") == "" {
			if err := withinContext(c, q.Model, "--input-tokens + --output-tokens", q.InputTokens+q.OutputTokens); err != nil {
				return nil, err
			}
		}
	}
	if err := planWorkload(c, q); err != nil {
		return nil, err
	}
	if s := c.String("rate"); s != "" {
		if q.RatePerS, err = units.ParseNumber(s); err != nil {
			return nil, fmt.Errorf("--rate: %w", err)
		}
		if !(q.RatePerS > 0) || q.RatePerS > maxRatePerS {
			return nil, fmt.Errorf("--rate %s: must be above 0 and at most 1,000,000 requests per second", s)
		}
	}
	if c.IsSet("gpus") { // --gpus 0 is out of range, not "give a rate or a GPU count"
		if q.GPUs, err = intIn(c, "gpus", intRange{1, 100_000, "GPUs"}); err != nil {
			return nil, err
		}
	}
	if q.SLO, err = planSLO(c); err != nil {
		return nil, err
	}
	names := splitList(c.StringSlice("gpu"))
	if len(names) == 0 {
		names = []string{defaultGPU}
	}
	for _, n := range names {
		g, err := cat.GPU(n)
		if err != nil {
			return nil, err
		}
		q.GPUOptions = append(q.GPUOptions, g)
	}
	for _, n := range splitList(c.StringSlice("link")) {
		l, err := cat.Link(n)
		if err != nil {
			return nil, err
		}
		q.Links = append(q.Links, l)
	}
	for _, d := range splitList(c.StringSlice("weight-dtype")) {
		if d, err = weightDtype(d); err != nil {
			return nil, err
		}
		q.WeightDtypes = append(q.WeightDtypes, d)
	}
	for _, d := range splitList(c.StringSlice(flagKVDtype)) {
		d, err := units.ParseEnum(d, catalog.KVDtypes) // FP8 is fp8
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", flagKVDtype, err)
		}
		q.KVDtypes = append(q.KVDtypes, d)
	}
	if s := c.String("cached-fraction"); s != "" {
		if q.CachedFraction, err = units.ParseNumber(s); err != nil {
			return nil, fmt.Errorf("--cached-fraction: %w", err)
		}
	}
	if q.Prefixes, err = positive(c, "prefixes", true); err != nil {
		return nil, err
	}
	if q.PrefixTokens, err = positive(c, "prefix-tokens", true); err != nil {
		return nil, err
	}
	if q.MaxGPUs, err = positive(c, "max-gpus", true); err != nil {
		return nil, err
	}
	if q.Prices, err = priceFlags(c, cat); err != nil {
		return nil, err
	}
	if err := pricingFlags(c, cat, q); err != nil {
		return nil, err
	}
	return q, nil
}

// sloFlag reads a latency SLO: a duration ("1s", "50ms", a bare number is ms).
func sloFlag(c *cli.Context, name string) (float64, error) {
	ms, err := units.ParseMS(c.String(name))
	if err != nil {
		return 0, fmt.Errorf("--%s: %w", name, err)
	}
	if !(ms > 0) || ms > 86_400_000 {
		return 0, fmt.Errorf("--%s %s: must be above 0 and at most a day", name, c.String(name))
	}
	return ms, nil
}

// priceFlags reads --price GPU=USD, checking the GPU against the catalog.
func priceFlags(c *cli.Context, cat *catalog.Catalog) (map[string]float64, error) {
	out := map[string]float64{}
	for _, kv := range splitList(c.StringSlice("price")) {
		name, usd, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--price %q: want GPU=USD per GPU-hour, e.g. --price h100-sxm=2.50", kv)
		}
		g, err := cat.GPU(strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("--price: %w", err)
		}
		v, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(usd), "$"), 64)
		if err != nil || !(v > 0) || v > 10_000 || math.IsInf(v, 0) {
			return nil, fmt.Errorf("--price %s: %q is not a price in USD per GPU-hour above 0 (and at most 10,000)", g.Name, usd)
		}
		out[g.Name] = v
	}
	return out, nil
}

// splitList flattens repeated and comma-separated flag values.
func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// planDoc lays the best candidates side by side.
func planDoc(q *capacity.Query, res *capacity.Result, top int) *report.Doc {
	doc := &report.Doc{}
	slo := sloText(q.SLO)
	lengths := fmt.Sprintf("%d in, %d out", q.InputTokens, q.OutputTokens)
	if w := res.Workload; w != nil && q.Workload != nil {
		lengths = fmt.Sprintf("%d requests' lengths (mean %.0f in, %.0f out; p99 %d in)", w.Requests, w.InputTokens.Mean, w.OutputTokens.Mean, w.InputTokens.P99)
	}
	switch {
	case q.TraceArrivals:
		lengths += ", arrivals as the trace's"
	case q.Burstiness > 0 && q.Burstiness != 1:
		lengths += fmt.Sprintf(", bursty arrivals (gamma, shape %g)", q.Burstiness)
	}
	if res.Question == capacity.QuestionMaxRate {
		doc.Title = fmt.Sprintf("Highest rate %d GPUs sustain: %s, %s, %s", q.GPUs, res.Model, lengths, slo)
	} else {
		doc.Title = fmt.Sprintf("Cheapest deployment of %s at %.4g requests/s: %s, %s", res.Model, q.RatePerS, lengths, slo)
	}
	cols := sideBySide(res, top)
	if len(cols) > 0 {
		doc.Sections = append(doc.Sections, candidateSection(cols, q.SLO))
	}
	if d := res.DayPlan; d != nil {
		doc.Title = fmt.Sprintf("A day of %s: %s's traffic (peak %.4g requests/s at %s), %s, %s", res.Model, d.Profile, q.RatePerS, d.Peak, lengths, slo)
		doc.Sections = append(doc.Sections, daySection(d))
	}
	if len(res.Lost) > 0 {
		sec := report.Section{Title: "Offered but not chosen", Header: []string{"offered", "lost on", "why"}}
		for _, l := range res.Lost {
			sec.Rows = append(sec.Rows, []string{l.Kind + " " + l.Name, l.Reason, l.Why})
		}
		doc.Sections = append(doc.Sections, sec)
	}
	doc.Notes = append(doc.Notes, "Verdict: "+res.Verdict+".")
	if d := res.DayPlan; d != nil {
		doc.Notes = append(doc.Notes, dayNotes(d)...)
	}
	if len(cols) > 0 {
		for _, n := range cols[0].c.PercentileNotes {
			doc.Notes = append(doc.Notes, "Percentiles: "+n+".")
		}
	}
	for _, col := range cols {
		if s := col.c.Simulated; s != nil && s.Disagree {
			doc.Notes = append(doc.Notes, fmt.Sprintf("The simulator disagrees on %s by more than 20%%: TTFT p95 %s analytic vs %s simulated (%+.0f%%), ITL mean %s vs %s (%+.0f%%).",
				col.c.Describe(), units.MS(col.c.TTFTP95MS), units.MS(s.TTFTP95MS), s.TTFTDiff*100, units.MS(col.c.ITLMeanMS), units.MS(s.ITLMeanMS), s.ITLDiff*100))
		}
	}
	for _, col := range cols {
		for _, n := range col.c.PriceNotes {
			if note := "Price: " + n + "."; !slices.Contains(doc.Notes, note) {
				doc.Notes = append(doc.Notes, note)
			}
		}
		if col.c.Price == "unknown" {
			doc.Notes = append(doc.Notes, fmt.Sprintf("Price unknown for %s (%s): ranked after every priced candidate.", col.c.Describe(), col.c.PriceSource))
		}
	}
	for _, n := range res.Notes {
		doc.Notes = append(doc.Notes, "Note: "+n+".")
	}
	for _, a := range res.Assumptions {
		doc.Notes = append(doc.Notes, "Assumes "+a+".")
	}
	return doc
}

// planEfficiencies are the efficiency entries of the candidates the
// table shows, each once.
func planEfficiencies(cat *catalog.Catalog, q *capacity.Query, res *capacity.Result, top int) []planner.EfficiencyUse {
	out := []planner.EfficiencyUse{}
	seen := map[string]bool{}
	for _, col := range sideBySide(res, top) {
		for _, p := range col.c.Pools {
			u, ok := planner.UsedEfficiency(cat, p.GPU, q.Engine.Name, col.c.WeightDtype)
			if ok && !seen[u.Wanted] {
				seen[u.Wanted] = true
				out = append(out, u)
			}
		}
	}
	return out
}

type column struct {
	label string
	c     *capacity.Candidate
}

// sideBySide picks the columns: the best, the best of the other mode, then
// the next candidates, up to top.
func sideBySide(res *capacity.Result, top int) []column {
	var cols []column
	seen := map[*capacity.Candidate]bool{}
	add := func(label string, c *capacity.Candidate) {
		if c != nil && !seen[c] && len(cols) < max(2, top) {
			seen[c] = true
			cols = append(cols, column{label, c})
		}
	}
	if res.Best == nil {
		add("closest", res.Closest)
	}
	add("best", res.Best)
	add("best aggregated", res.BestAggregated)
	add("best disaggregated", res.BestDisaggregated)
	for i, c := range res.Candidates {
		if c.MeetsSLO {
			add(fmt.Sprintf("#%d", i+1), c)
		}
	}
	return cols
}

// sloText says the targets: "TTFT p95 ≤ 500.0 ms, ITL p95 ≤ 40.00 ms, TPOT mean ≤ 40.00 ms".
func sloText(s slo.SLO) string {
	var parts []string
	for _, g := range s.Given() {
		if g.Metric == slo.Goodput {
			parts = append(parts, fmt.Sprintf("goodput ≥ %.4g%% (%s)", g.Value*100, s.PerRequestString()))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s ≤ %s", g.Label(), units.MS(g.Value)))
	}
	return strings.Join(parts, ", ")
}

func candidateSection(cols []column, target slo.SLO) report.Section {
	header := []string{"figure"}
	for _, col := range cols {
		header = append(header, col.label)
	}
	rows := [][]string{}
	row := func(name string, f func(*capacity.Candidate) string) {
		r := []string{name}
		for _, col := range cols {
			r = append(r, f(col.c))
		}
		rows = append(rows, r)
	}
	row("mode", func(c *capacity.Candidate) string { return c.Mode })
	row("pools", func(c *capacity.Candidate) string { return c.Describe() })
	row("weights / KV dtype", func(c *capacity.Candidate) string { return c.WeightDtype + " / " + c.KVDtype })
	row("GPUs", func(c *capacity.Candidate) string { return strconv.Itoa(c.GPUs) })
	row("$/hour", func(c *capacity.Candidate) string { return usd(c.USDPerHour) })
	row("instances", instancesCell)
	row("power", func(c *capacity.Candidate) string {
		if c.PowerKW == nil {
			return "unknown"
		}
		return fmt.Sprintf("%.1f kW", *c.PowerKW)
	})
	row("$/M output tokens", func(c *capacity.Candidate) string {
		if !c.MeetsSLO {
			return "-" // its tokens are not served within the SLO
		}
		return usd(c.USDPerMillionOutputTokens)
	})
	row("requests/s", func(c *capacity.Candidate) string { return fmt.Sprintf("%.4g", c.RatePerS) })
	row("capacity within SLO", func(c *capacity.Candidate) string {
		if !c.MeetsSLO {
			return "-"
		}
		return fmt.Sprintf("%.4g/s (utilization %.0f%%)", c.RequestsPerSCapacity, c.Utilization*100)
	})
	row("TTFT p95 (mean)", func(c *capacity.Candidate) string {
		return fmt.Sprintf("%s (%s)", msOrDash(c.TTFTP95MS), msOrDash(c.TTFTMeanMS))
	})
	row("ITL p95 (mean)", func(c *capacity.Candidate) string {
		return fmt.Sprintf("%s (%s)", msOrDash(c.ITLP95MS), msOrDash(c.ITLMeanMS))
	})
	// Every other target beside its predicted value.
	for _, g := range target.Given() {
		if g.JSON == "ttft_p95_ms" || g.JSON == "itl_p95_ms" {
			continue
		}
		g := g
		label := fmt.Sprintf("%s (target ≤ %s)", g.Label(), units.MS(g.Value))
		if g.Metric == slo.Goodput {
			label = fmt.Sprintf("goodput (target ≥ %.4g%%)", g.Value*100)
		}
		row(label, func(c *capacity.Candidate) string {
			v, ok := c.Figure(g.Target)
			return figureText(g.Target, v, ok && v > 0)
		})
	}
	row("KV transfer mean (p95)", func(c *capacity.Candidate) string {
		if c.Mode != capacity.ModeDisaggregated {
			return "-"
		}
		return fmt.Sprintf("%s (%s), link %.0f%% busy", units.MS(c.TransferMS), units.MS(c.TransferP95MS), c.LinkUtil*100)
	})
	row("meets SLO", func(c *capacity.Candidate) string {
		if c.MeetsSLO {
			return "yes"
		}
		return "no: " + c.Misses
	})
	row("limited by", func(c *capacity.Candidate) string { return c.LimitedBy })
	row("simulated TTFT p95", func(c *capacity.Candidate) string {
		if c.Simulated == nil {
			return "-"
		}
		return fmt.Sprintf("%s (%+.0f%%)", units.MS(c.Simulated.TTFTP95MS), c.Simulated.TTFTDiff*100)
	})
	row("simulated ITL mean", func(c *capacity.Candidate) string {
		if c.Simulated == nil {
			return "-"
		}
		return fmt.Sprintf("%s (%+.0f%%)", units.MS(c.Simulated.ITLMeanMS), c.Simulated.ITLDiff*100)
	})
	for _, g := range target.Given() {
		if g.JSON == "ttft_p95_ms" {
			continue
		}
		g := g
		row("simulated "+g.Label(), func(c *capacity.Candidate) string {
			if c.Simulated == nil {
				return "-"
			}
			v, ok := c.Simulated.Figure(g.Target)
			return figureText(g.Target, v, ok)
		})
	}
	row("simulated meets SLO", func(c *capacity.Candidate) string {
		switch {
		case c.Simulated == nil:
			return "-"
		case c.Simulated.MeetsSLO:
			return "yes"
		}
		return "no: " + c.Simulated.Misses
	})
	return report.Section{Title: "Candidates", Header: header, Rows: rows}
}

// figureText prints a figure of target t: a goodput as a percentage, a
// time in ms; "-" when there is none.
func figureText(t slo.Target, v float64, ok bool) string {
	switch {
	case !ok:
		return "-"
	case t.Metric == slo.Goodput:
		return fmt.Sprintf("%.1f%%", v*100)
	}
	return units.MS(v)
}

func usd(v *float64) string { return units.USDOrUnknown(v) }

// centsOf rounds every dollar figure of res to cents, as every format
// prints money (units.Cents).
func centsOf(res *capacity.Result) {
	for _, c := range res.Candidates {
		for _, v := range []*float64{c.USDPerHour, c.USDPerMillionOutputTokens} {
			if v != nil {
				*v = units.Cents(*v)
			}
		}
		for i := range c.Pools {
			c.Pools[i].USDPerGPUHour = units.Cents(c.Pools[i].USDPerGPUHour)
		}
		if o := c.Owned; o != nil {
			o.EnergyUSDPerHour, o.AmortizedUSDPerHour = units.Cents(o.EnergyUSDPerHour), units.Cents(o.AmortizedUSDPerHour)
		}
	}
}

func msOrDash(v float64) string {
	if v == 0 {
		return "-"
	}
	return units.MS(v)
}

// daySection is the schedule: a row per period.
func daySection(d *capacity.DayPlan) report.Section {
	rows := [][]string{}
	for _, p := range d.Schedule {
		var pools []string
		for _, pl := range p.Pools {
			pools = append(pools, fmt.Sprintf("%d × tp%d %s %s", pl.Workers, pl.TP, pl.GPU, pl.Role))
		}
		meets := "yes"
		if !p.MeetsSLO {
			meets = "no"
		}
		up := p.ScaleUpFrom
		if up == "" {
			up = "-"
		}
		rows = append(rows, []string{p.Start, fmt.Sprintf("%.4g", p.RatePerS), strings.Join(pools, " + "), strconv.Itoa(p.GPUs), usd(p.USDPerHour), meets, up})
	}
	return report.Section{Title: "Day schedule", Header: []string{"start", "requests/s", "workers", "GPUs", "$/hour", "meets SLO", "scale up from"}, Rows: rows}
}

// dayNotes say what the day costs against the peak all day, and the lead
// time the schedule plans ahead by.
func dayNotes(d *capacity.DayPlan) []string {
	var out []string
	if d.USDPerDay != nil && d.USDPerDayStaticPeak != nil {
		s := fmt.Sprintf("Day: %s a day following the traffic against %s with the peak's deployment all day", usd(d.USDPerDay), usd(d.USDPerDayStaticPeak))
		if d.Saving != nil {
			s += fmt.Sprintf(" (%.0f%% less)", *d.Saving*100)
		}
		out = append(out, s+".")
	} else {
		out = append(out, "Day: the cost per day is unknown (a price is unknown).")
	}
	lt := d.LeadTime
	s := fmt.Sprintf("Scale-up lead time %.0f s: each period's added workers start that long before it", lt.S)
	if lt.LoadBytesPerS > 0 {
		s += fmt.Sprintf(" (%s of weights per rank at %s = %.1f s, then %.1f s of warm-up; %s)", units.Bytes(lt.WeightsBytesPerRank), units.Rate(lt.LoadBytesPerS), lt.LoadS, lt.WarmupS, lt.Source)
	} else {
		s += " (" + lt.Source + ")"
	}
	out = append(out, s+".")
	for _, n := range d.Notes {
		out = append(out, "Day: "+n+".")
	}
	return out
}

// flagList is its flags as a slice, and flagGroups the groups one after
// the other: a command's flags spliced from groups.
func flagList(fs ...cli.Flag) []cli.Flag { return fs }

func flagGroups(groups ...[]cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}
