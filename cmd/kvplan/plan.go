package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/units"
)

func planCommand() *cli.Command {
	return &cli.Command{
		Name:  "plan",
		Usage: "the cheapest deployment that meets a TTFT and ITL SLO at a request rate (or the highest rate N GPUs sustain)",
		UsageText: `kvplan plan --model llama-3.1-70b --isl 4000 --osl 512 --rate 20 --ttft-p95 1000ms --itl-p95 50ms --gpu h100-sxm --link ib-ndr
   kvplan plan --model llama-3.1-8b --isl 1024 --osl 256 --rate 50 --ttft-p95 500ms --itl-p95 30ms --gpu h100-sxm,a100-80gb,l40s --link ib-ndr,100gbe -o json
   kvplan plan --model llama-3.1-70b --isl 4000 --osl 512 --gpus 16 --ttft-p95 1s --itl-p95 50ms --gpu h100-sxm --link ib-ndr
   kvplan plan ... --write-plan deploy/plan.toml --plot pareto.svg --explain`,
		Description: `Enumerates aggregated pools and disaggregated prefill/decode pools (each GPU
offered, tp 1-8 per role, chunked-prefill budgets for aggregated pools, each
link and dtype offered), sizes the workers of each at the rate from the engine
model, the memory model, queueing (M/G/c prefill wait, KV-bound batch seats,
Poisson batch percentiles) and the KV transfer over the link with transfers in
flight from the load, and ranks them by $/hour. The top candidates are
replayed by the timed simulator (--verify) and both figures shown.
Without --rate, --gpus N asks for the highest rate N GPUs sustain within the
SLO, per mode. Exit 1 when nothing meets the SLO (the closest is shown).`,
		Flags: withCommon(
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "catalog model name or Hugging Face id (required; kvplan models list)"},
			inputTokensFlag(0, "input (prompt) tokens per request (required)", "isl"),
			outputTokensFlag(0, "output tokens per request (required)", "osl"),
			&cli.StringFlag{Name: "rate", Usage: "requests per second to serve (Poisson arrivals)"},
			&cli.IntFlag{Name: "gpus", Usage: "without --rate: the GPUs to fill; the answer is the highest rate they sustain"},
			&cli.StringFlag{Name: "ttft-p95", Usage: "SLO on the 95th percentile of time to first token, e.g. 1000ms, 1s (required)"},
			&cli.StringFlag{Name: "itl-p95", Usage: "SLO on the 95th percentile of inter-token latency, e.g. 50ms (required)"},
			&cli.StringSliceFlag{Name: "gpu", Usage: "GPUs to consider, comma-separated (kvplan gpus list; default " + defaultGPU + ")"},
			&cli.StringSliceFlag{Name: "link", Usage: "links between prefill and decode pools, comma-separated (kvplan links list); none: aggregated only"},
			&cli.StringFlag{Name: "engine", Value: planner.DefaultEngine, Usage: "serving engine: vllm, sglang or trtllm"},
			&cli.StringSliceFlag{Name: "weight-dtype", Usage: "weight dtypes to consider (bf16, fp8, fp4, ...; default the model's)"},
			kvDtypesFlag("KV cache dtypes to consider, comma-separated (bf16, fp8, ...; default the model's)"),
			&cli.StringFlag{Name: "cached-fraction", Usage: "share of every prompt found in the prefix cache, in [0, 1)"},
			&cli.IntFlag{Name: "prefixes", Usage: "distinct shared prefixes (with --prefix-tokens), equally popular"},
			&cli.IntFlag{Name: "prefix-tokens", Usage: "tokens of each shared prefix"},
			&cli.IntFlag{Name: "max-gpus", Usage: "most GPUs a candidate may use (0 = no bound)"},
			&cli.StringFlag{Name: "pricing", Value: capacity.PricingOnDemand, Usage: "GPU prices: " + orList(planPricings) + " (the catalog's cited AWS table)"},
			&cli.StringSliceFlag{Name: "price", Usage: "GPU=USD per GPU-hour, over the catalog's price; repeatable"},
			&cli.Float64Flag{Name: "frontend-ms", Value: planner.DefaultFrontendMS, Usage: "frontend overhead per request in ms (FACTS §5: +13 ms)"},
			&cli.IntFlag{Name: "verify", Value: 3, Usage: "replay the top N candidates with the timed simulator (0 = off)"},
			&cli.IntFlag{Name: "sim-requests", Value: 2000, Usage: "requests per simulated candidate"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the simulated arrivals"},
			&cli.IntFlag{Name: "top", Value: 4, Usage: "candidates side by side in the table"},
			&cli.StringFlag{Name: "write-plan", Usage: "write the best deployment as a plan file for kvplan check"},
			&cli.BoolFlag{Name: "force", Usage: "with --write-plan or --plot: replace an existing file"},
			&cli.StringFlag{Name: "plot", Usage: "write an SVG of output tokens/s per GPU against tokens/s per user (Pareto front) per mode"},
		),
		Action: runPlan,
	}
}

// planResultJSON is `kvplan plan -o json`: the search result, and the best
// candidate's arithmetic with --explain.
type planResultJSON struct {
	*capacity.Result
	Derivation planner.Derivation `json:"derivation,omitempty"`
}

func runPlan(c *cli.Context) error {
	if err := required(c, "model", "ttft-p95", "itl-p95"); err != nil {
		return err
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return err
	}
	q, err := planQuery(c, cat)
	if err != nil {
		return err
	}
	// The output files, the table's and the simulator's counts, checked
	// before the search.
	planPath, err := outputPath(c, "write-plan")
	if err != nil {
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
	res, err := capacity.Search(*q)
	if err != nil {
		return err
	}
	if verify > 0 {
		if err := q.Verify(res, verify, simRequests, c.Uint64("seed")); err != nil {
			return internalError{err}
		}
	}
	// Nothing meets the SLO: the closest is shown and the run exits 1, as
	// without the files; the notes say what was not written.
	if planPath != "" {
		if res.Best == nil {
			res.Notes = append(res.Notes, fmt.Sprintf("no plan was written to %s: nothing meets the SLO", planPath))
		} else {
			data, err := q.PlanFile(res.Best)
			if err != nil {
				return internalError{err}
			}
			if err := writeOutput(c, "write-plan", planPath, data); err != nil {
				return err
			}
		}
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
	out := &planResultJSON{Result: res}
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

// planQuery turns the flags into a capacity query.
func planQuery(c *cli.Context, cat *catalog.Catalog) (*capacity.Query, error) {
	em := planEngine(cat)
	q := &capacity.Query{Timers: em.Timers}
	var err error
	if q.FrontendMS, err = floatIn(c, "frontend-ms", 0, 3_600_000, "ms"); err != nil {
		return nil, err
	}
	if q.Pricing, err = parseEnumFlag("--pricing", c.String("pricing"), planPricings); err != nil { // SPOT is spot
		return nil, err
	}
	if q.Model, err = cat.Model(c.String("model")); err != nil {
		return nil, err
	}
	if q.Engine, err = cat.Engine(c.String("engine")); err != nil {
		return nil, err
	}
	q.SeparatePrefill = em.SeparatePrefill != nil && em.SeparatePrefill(q.Engine.Name)
	if q.InputTokens, err = positive(c, flagInputTokens, false); err != nil {
		return nil, err
	}
	if q.OutputTokens, err = positive(c, flagOutputTokens, false); err != nil {
		return nil, err
	}
	if err := withinContext(c, q.Model, "--input-tokens + --output-tokens", q.InputTokens+q.OutputTokens); err != nil {
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
	if q.TTFTP95MS, err = sloFlag(c, "ttft-p95"); err != nil {
		return nil, err
	}
	if q.ITLP95MS, err = sloFlag(c, "itl-p95"); err != nil {
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
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return q, nil
}

// planPricings are --pricing's values.
var planPricings = []string{capacity.PricingOnDemand, capacity.PricingSpot}

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
	slo := fmt.Sprintf("TTFT p95 ≤ %s, ITL p95 ≤ %s", units.MS(q.TTFTP95MS), units.MS(q.ITLP95MS))
	if res.Question == capacity.QuestionMaxRate {
		doc.Title = fmt.Sprintf("Highest rate %d GPUs sustain: %s, %d in, %d out, %s", q.GPUs, res.Model, q.InputTokens, q.OutputTokens, slo)
	} else {
		doc.Title = fmt.Sprintf("Cheapest deployment of %s at %.4g requests/s: %d in, %d out, %s", res.Model, q.RatePerS, q.InputTokens, q.OutputTokens, slo)
	}
	cols := sideBySide(res, top)
	if len(cols) > 0 {
		doc.Sections = append(doc.Sections, candidateSection(cols))
	}
	doc.Notes = append(doc.Notes, "Verdict: "+res.Verdict+".")
	for _, col := range cols {
		if s := col.c.Simulated; s != nil && s.Disagree {
			doc.Notes = append(doc.Notes, fmt.Sprintf("The simulator disagrees on %s by more than 20%%: TTFT p95 %s analytic vs %s simulated (%+.0f%%), ITL mean %s vs %s (%+.0f%%).",
				col.c.Describe(), units.MS(col.c.TTFTP95MS), units.MS(s.TTFTP95MS), s.TTFTDiff*100, units.MS(col.c.ITLMeanMS), units.MS(s.ITLMeanMS), s.ITLDiff*100))
		}
	}
	for _, col := range cols {
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

func candidateSection(cols []column) report.Section {
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
	row("GPUs", func(c *capacity.Candidate) string { return strconv.Itoa(c.GPUs) })
	row("$/hour", func(c *capacity.Candidate) string { return usd(c.USDPerHour) })
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
	return report.Section{Title: "Candidates", Header: header, Rows: rows}
}

func usd(v *float64) string {
	if v == nil {
		return "unknown"
	}
	return units.USD(*v)
}

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
	}
}

func msOrDash(v float64) string {
	if v == 0 {
		return "-"
	}
	return units.MS(v)
}
