package capacity

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/openloop"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/slo"
	"github.com/kvplan/kvplan/workload"
)

// Pricing modes.
const (
	PricingOnDemand = "on-demand"
	PricingSpot     = "spot"
)

// Modes of a candidate.
const (
	ModeAggregated    = "aggregated"
	ModeDisaggregated = "disaggregated"
)

// Query is what `kvplan plan` asks: the cheapest deployment of Model that
// serves RatePerS requests of InputTokens in and OutputTokens out within
// the SLOs, from the GPUs, links and dtypes offered. With RatePerS = 0 and
// GPUs > 0 it asks instead for the highest rate GPUs GPUs sustain at the SLO.
type Query struct {
	Model        *catalog.Model
	Engine       *catalog.Engine
	InputTokens  int
	OutputTokens int
	RatePerS     float64 // requests per second; 0 = max-rate mode (GPUs)
	GPUs         int     // max-rate mode: GPUs to fill

	// SLO is every target the best candidate must meet (slo.SLO: TTFT and
	// ITL percentiles, TPOT mean and p99, E2E p95, goodput). TTFTP95MS and
	// ITLP95MS are shorthands for its TTFT and ITL p95 targets: Check folds
	// them in and sets them back from it.
	SLO       slo.SLO
	TTFTP95MS float64 // SLO on the 95th percentile of time to first token
	ITLP95MS  float64 // SLO on the 95th percentile of inter-token latency

	// Workload, when set, is the distribution of request lengths (and, from
	// a trace, arrivals and shared prompt blocks) the candidates are sized
	// for; InputTokens and OutputTokens are then its means. Nil: every
	// request InputTokens in and OutputTokens out.
	Workload *workload.Workload
	// PrefixRouting "kv" assumes KV-aware routing for a workload whose
	// trace has prefix hashes: each request's leading blocks seen before are
	// found cached (workload.CachedTokens).
	PrefixRouting string
	// Burstiness is the gamma shape of the gaps between arrivals (vLLM
	// bench's --burstiness): 0 or 1 Poisson, below 1 burstier; the queues
	// see c_a² = 1/Burstiness.
	Burstiness float64
	// TraceArrivals takes the arrivals from the workload's timestamps: its
	// rate (when RatePerS is 0) and the squared CV of its gaps.
	TraceArrivals bool
	// StorageLink is the link workers load their weights over when they
	// start (PlanDay's lead time); nil: the median of measured start-ups.
	// ScaleUpLeadS, when above 0, is the lead time itself.
	StorageLink  *catalog.Link
	ScaleUpLeadS float64

	GPUOptions   []*catalog.GPU
	Links        []*catalog.Link // between prefill and decode pools; none = aggregated only
	WeightDtypes []string        // "" = the model's
	KVDtypes     []string        // "" = the model's

	CachedFraction float64 // share of every prompt found in the prefix cache
	Prefixes       int     // distinct shared prefixes (instead of CachedFraction)
	PrefixTokens   int     // tokens of each prefix, at the start of the prompt

	MaxGPUs int                // 0 = no bound
	Pricing string             // PricingOnDemand (default), PricingSpot, PricingReserved1Y, PricingReserved3Y
	Prices  map[string]float64 // GPU name → $/GPU-hour, over the catalog's
	// Path is how requests reach the workers, and what that costs in
	// TTFT (perf.RequestPath: a frontend's cost, or the engine's own); the
	// zero value is direct to the engine.
	Path perf.RequestPath

	// Instances are the instance types workers are priced on (the catalog's,
	// with a --price-file merged over them); Provider the one that rents the
	// deployment ("" = planner.DefaultProvider, planner.ProviderAny = the
	// cheapest), ProviderStrict set when it was asked for.
	Instances      []*catalog.Instance
	Provider       string
	ProviderStrict bool
	Now            time.Time // prices older than a year before it are noted
	// Owned prices the deployment as owned hardware: power and amortisation.
	Owned *Owned
	// HostWattsPerGPU and PUE size the power draw (power_kw): 0 =
	// planner.DefaultHostWattsPerGPU and a PUE of 1.
	HostWattsPerGPU float64
	PUE             float64

	// Timers builds the engine model of one worker. Required.
	Timers TimerFactory
	// SeparatePrefill: the engine runs prefill batches alone while decoding
	// waits (SGLang's default); otherwise decodes and prefill chunks share
	// iterations (vLLM, TensorRT-LLM).
	SeparatePrefill bool

	// What Check derives from the workload and the arrivals.
	classes    []workload.Class // the workload's classes; nil = fixed lengths
	dropped    int              // requests longer than the model's context
	maxTotal   int              // the longest request kept, tokens in and out
	arrivalCV2 float64          // squared CV of the gaps between arrivals (1 = Poisson)
	traceHit   float64          // with --prefix-routing kv: share of the trace's requests with a cached prefix
	given      []slo.Given      // SLO.Given() of givenFor (targets)
	givenFor   slo.SLO
}

// StepTimer is the engine model's time of one iteration (openloop.StepTimer,
// the contract of TEAM.md); *perf.Model implements it.
type StepTimer = openloop.StepTimer

// EngineSpec is one worker's engine model: what a TimerFactory is asked for.
type EngineSpec struct {
	Model  *catalog.Model
	GPU    *catalog.GPU
	Engine string
	TP     int
	// Parallel is the worker's whole layout (its TP equals TP); the zero
	// value is tensor parallelism alone.
	Parallel models.Parallelism
	// Link is the network between the NVLink domains of a worker that
	// spans more than one; nil when it fits one. RedundantExperts are
	// EPLB's copies of hot experts.
	Link             *catalog.Link
	RedundantExperts int
	EPLB             bool // experts rebalanced by load (implied by RedundantExperts)
	TwoBatchOverlap  bool
	WeightDtype      string
	KVDtype          string
}

// TimerFactory builds the step-time model of a worker. note says how the
// model was chosen when it is not an exact fit (a fallback efficiency); an
// error rejects the combination (say, tp not dividing the heads).
type TimerFactory func(EngineSpec) (timer StepTimer, note string, err error)

// EngineModel is what the search takes from the engine model: workers'
// step times, and how the engine schedules prefill.
type EngineModel struct {
	Timers TimerFactory
	// SeparatePrefill reports whether an engine runs prefill batches alone
	// while decoding waits (SGLang); nil = none does.
	SeparatePrefill func(engine string) bool
}

// separate reports em's schedule for engine.
func (em EngineModel) separate(engine string) bool {
	return em.SeparatePrefill != nil && em.SeparatePrefill(engine)
}

// maxAbsurd bounds counts and rates the search accepts.
const (
	maxTokens  = 10_000_000
	maxRate    = 1_000_000
	maxGPUs    = 100_000
	maxSLOMS   = 86_400_000
	maxWorkers = 100_000
)

// Check validates q and fills its defaults.
func (q *Query) Check() error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	if err := q.checkWorkload(); err != nil {
		return err
	}
	switch {
	case q.Model == nil:
		return fmt.Errorf("no model given")
	case q.Engine == nil:
		return fmt.Errorf("no engine given")
	case q.Timers == nil:
		return fmt.Errorf("no engine model given")
	case q.InputTokens < 1 || q.InputTokens > maxTokens:
		return fmt.Errorf("input tokens %d: must be between 1 and %d", q.InputTokens, maxTokens)
	case q.OutputTokens < 1 || q.OutputTokens > maxTokens:
		return fmt.Errorf("output tokens %d: must be between 1 and %d", q.OutputTokens, maxTokens)
	case bad(q.RatePerS) || q.RatePerS < 0 || q.RatePerS > maxRate:
		return fmt.Errorf("rate %g requests/s: must be above 0 and at most %d", q.RatePerS, maxRate)
	case q.RatePerS == 0 && q.GPUs <= 0:
		return fmt.Errorf("give a request rate (--rate), or a GPU count (--gpus) to find the highest rate it sustains")
	case q.RatePerS > 0 && q.GPUs > 0:
		return fmt.Errorf("give a request rate or a GPU count, not both")
	case q.GPUs < 0 || q.GPUs > maxGPUs:
		return fmt.Errorf("gpus %d: must be between 1 and %d", q.GPUs, maxGPUs)
	case bad(q.TTFTP95MS) || q.TTFTP95MS < 0 || q.TTFTP95MS > maxSLOMS:
		return fmt.Errorf("TTFT p95 SLO %g ms: must be above 0 and at most a day", q.TTFTP95MS)
	case bad(q.ITLP95MS) || q.ITLP95MS < 0 || q.ITLP95MS > maxSLOMS:
		return fmt.Errorf("ITL p95 SLO %g ms: must be above 0 and at most a day", q.ITLP95MS)
	case len(q.GPUOptions) == 0:
		return fmt.Errorf("no GPU offered")
	case bad(q.CachedFraction) || q.CachedFraction < 0 || q.CachedFraction >= 1:
		return fmt.Errorf("cached fraction %g: must be in [0, 1)", q.CachedFraction)
	case q.CachedFraction > 0 && q.Prefixes > 0:
		return fmt.Errorf("give a cached fraction or prefixes and prefix tokens, not both")
	case q.Prefixes < 0 || q.PrefixTokens < 0 || (q.Prefixes > 0) != (q.PrefixTokens > 0):
		return fmt.Errorf("prefixes %d and prefix tokens %d: give both, above 0", q.Prefixes, q.PrefixTokens)
	case q.PrefixTokens >= q.InputTokens && q.Prefixes > 0:
		return fmt.Errorf("prefix tokens %d: a prefix is part of the prompt, so it must be shorter than the %d input tokens", q.PrefixTokens, q.InputTokens)
	case q.MaxGPUs < 0 || q.MaxGPUs > maxGPUs:
		return fmt.Errorf("max gpus %d: must be between 1 and %d", q.MaxGPUs, maxGPUs)
	case bad(q.Path.FrontendMS) || q.Path.FrontendMS < 0:
		return fmt.Errorf("frontend overhead %g ms: must be >= 0", q.Path.FrontendMS)
	}
	if bad(q.ScaleUpLeadS) || q.ScaleUpLeadS < 0 || q.ScaleUpLeadS > 86_400 {
		return fmt.Errorf("scale-up lead time %g s: must be between 0 and a day", q.ScaleUpLeadS)
	}
	if err := q.checkSLO(); err != nil {
		return err
	}
	switch q.Pricing {
	case "":
		q.Pricing = PricingOnDemand
	case PricingOnDemand, PricingSpot, PricingReserved1Y, PricingReserved3Y:
	default:
		return fmt.Errorf("pricing %q: want %s", q.Pricing, strings.Join(catalog.Pricings, ", "))
	}
	if bad(q.HostWattsPerGPU) || q.HostWattsPerGPU < 0 || q.HostWattsPerGPU > 100_000 {
		return fmt.Errorf("host power %g W per GPU: must be between 0 and 100,000", q.HostWattsPerGPU)
	}
	if bad(q.PUE) || q.PUE != 0 && (q.PUE < 1 || q.PUE > 10) {
		return fmt.Errorf("PUE %g: must be between 1 and 10", q.PUE)
	}
	if o := q.Owned; o != nil {
		switch {
		case bad(o.USDPerKWh) || o.USDPerKWh <= 0 || o.USDPerKWh > 100:
			return fmt.Errorf("owned: $%g per kWh must be above 0 and at most 100", o.USDPerKWh)
		case bad(o.CapexPerGPU) || o.CapexPerGPU < 0 || o.CapexPerGPU > 10_000_000:
			return fmt.Errorf("owned: capex $%g per GPU must be between 0 and 10,000,000", o.CapexPerGPU)
		case bad(o.AmortizeYears) || o.AmortizeYears < 0 || o.AmortizeYears > 50:
			return fmt.Errorf("owned: %g amortisation years must be between 0 and 50", o.AmortizeYears)
		case (o.CapexPerGPU > 0) != (o.AmortizeYears > 0):
			return fmt.Errorf("owned: give a capex per GPU and the years to amortise it over together")
		}
	}
	if err := q.checkPrices(); err != nil {
		return err
	}
	for name, usd := range q.Prices {
		if bad(usd) || usd <= 0 || usd > 10_000 {
			return fmt.Errorf("price of %s: $%g per GPU-hour must be above 0 and at most 10,000", name, usd)
		}
	}
	if len(q.WeightDtypes) == 0 {
		q.WeightDtypes = []string{""}
	}
	if len(q.KVDtypes) == 0 {
		q.KVDtypes = []string{""}
	}
	for i, d := range q.WeightDtypes {
		d = strings.ToLower(d)
		if _, ok := catalog.DtypeBytes(d); d != "" && !ok {
			return fmt.Errorf("weight dtype %q: want one of bf16, fp16, fp8, int8, int4, mxfp4, nvfp4, fp4", d)
		}
		q.WeightDtypes[i] = d
	}
	return nil
}

// hitCases turns the prefix settings into hit cases for a worker whose
// prefix cache has freeSlots tokens, serving a 1/holders share of the
// prefixes (KV-aware routing sends a prefix back to the worker that has it).
func (q *Query) hitCases(freeSlots float64, holders int) []openloop.Hit {
	switch {
	case q.CachedFraction > 0:
		c := min(q.InputTokens-1, int(math.Round(q.CachedFraction*float64(q.InputTokens))))
		return []openloop.Hit{{Prob: 1, Cached: c}}
	case q.Prefixes > 0:
		ws := float64(q.Prefixes) * float64(q.PrefixTokens) / float64(max(1, holders))
		// Uniform popularity under LRU (the independent reference model):
		// the hit ratio is the share of the working set the cache holds.
		p := math.Max(0, math.Min(1, freeSlots/ws))
		c := min(q.InputTokens-1, q.PrefixTokens)
		if p >= 1 {
			return []openloop.Hit{{Prob: 1, Cached: c}}
		}
		return []openloop.Hit{{Prob: p, Cached: c}, {Prob: 1 - p}}
	}
	return nil
}
