package capacity

import (
	"fmt"
	"math"
	"strings"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/planner"
)

// candidate turns an evaluation into the figures a user sees.
func (q *Query) candidate(s *shape, e *evaluation) *Candidate {
	c := &Candidate{Mode: s.mode, MeetsSLO: e.ok, WeightDtype: s.weightDtype, KVDtype: s.kvDtype,
		LoadFigures: planner.LoadFigures{RatePerS: e.rate, PrefixHitRatio: e.hit}, LimitedBy: e.limit, shape: s, load: e}
	if s.link != nil {
		c.Link = s.link.Name
	}
	usd, known := 0.0, false
	for i, r := range s.roles {
		p := Pool{Role: r.name, GPU: r.gpu.Name, TP: r.tp, Parallel: parallelOf(r.par), Layout: r.par.String(), GPUsPerWorker: r.gpus, Workers: e.workers[i], MaxNumBatchedTokens: r.budget,
			MaxNumSeqs: r.maxSeqs, MaxModelLen: r.maxModelLen, KVSlotsPerWorker: r.slots, smallerBudget: r.smaller}
		if r.memory != nil {
			p.GPUMemoryUtilization = r.memory.GPUUtil
		}
		if i < len(e.loads) {
			ld := e.loads[i]
			p.BatchCap, p.Batch, p.PrefillUtilization = ld.BatchCap, finite(ld.Batch), finite(ld.PrefillUtil)
		}
		if r.priceOK {
			p.USDPerGPUHour = r.usd
		}
		c.GPUs += p.Workers * r.gpus
		c.Pools = append(c.Pools, p)
		if r.note != "" {
			c.Notes = append(c.Notes, r.note)
		}
		if !r.fits {
			c.Notes = append(c.Notes, r.memoryWhy)
		}
	}
	if q.MaxGPUs > 0 && c.GPUs > q.MaxGPUs && e.ok {
		// Sized past the bound only to show how close the shape comes.
		e.ok, e.limit = false, limitGPUs
		c.MeetsSLO, c.LimitedBy = false, limitGPUs
	}
	q.priceCandidate(c)
	known = c.USDPerHour != nil
	if known {
		usd = *c.USDPerHour
	}
	c.TTFTP95MS, c.TTFTMeanMS = finite(e.ttftP95MS), finite(e.ttftMeanMS)
	c.ITLP95MS, c.ITLMeanMS = finite(e.itlP95MS), finite(e.itlMeanMS)
	q.fillPercentiles(c, e)
	if s.mode == ModeDisaggregated {
		c.TransferMS, c.TransferP95MS, c.LinkUtil = finite(e.transfer.meanMS), finite(e.transfer.p95MS), finite(e.transfer.util)
	}
	if e.ok {
		tokensPerS := e.rate * float64(q.OutputTokens)
		c.OutputTokensPerSPerGPU = tokensPerS / float64(c.GPUs)
		if c.ITLMeanMS > 0 {
			c.TokensPerSPerUser = 1000 / c.ITLMeanMS
		}
		if known {
			v := usd / (tokensPerS * 3600) * 1e6
			c.USDPerMillionOutputTokens = &v
		}
		c.RequestsPerSCapacity, c.LimitedBy = q.capacity(s, e.workers, e.rate)
		if c.RequestsPerSCapacity > 0 {
			c.Utilization = e.rate / c.RequestsPerSCapacity
		}
	} else {
		c.Misses = q.misses(e)
	}
	return c
}

func finite(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	return v
}

// misses says what a failing evaluation misses the SLO by.
func (q *Query) misses(e *evaluation) string {
	if math.IsInf(e.ttftP95MS, 1) || math.IsInf(e.itlP95MS, 1) {
		if e.limit == limitMemory {
			return "does not fit in GPU memory"
		}
		return fmt.Sprintf("cannot carry %.4g requests/s at any batch (%s saturated)", e.rate, e.limit)
	}
	if e.limit == limitGPUs {
		gpus := 0
		for i, r := range e.shape.roles {
			gpus += e.workers[i] * r.gpus
		}
		return fmt.Sprintf("meets the SLO only with %d GPUs, more than --max-gpus %d", gpus, q.MaxGPUs)
	}
	return strings.Join(q.missesSLO(e), "; ")
}

// verdict is one sentence: which mode wins and why.
func (q *Query) verdict(res *Result) string {
	a, d := res.BestAggregated, res.BestDisaggregated
	cost := func(c *Candidate) string {
		if c.USDPerHour == nil {
			return fmt.Sprintf("%d GPUs (price unknown)", c.GPUs)
		}
		return fmt.Sprintf("%d GPUs, $%.2f/h", c.GPUs, *c.USDPerHour)
	}
	if res.Question == QuestionMaxRate {
		switch {
		case a == nil && d == nil:
			if why := q.noWorkerFits(res); why != "" {
				return why
			}
			return fmt.Sprintf("no split of %d GPUs meets the SLO at any rate", q.GPUs)
		case d == nil:
			return fmt.Sprintf("aggregated: %d GPUs sustain %.3g requests/s; no disaggregated split meets the SLO", q.GPUs, a.RatePerS)
		case a == nil:
			return fmt.Sprintf("disaggregated: %d GPUs sustain %.3g requests/s; no aggregated size meets the SLO", q.GPUs, d.RatePerS)
		case a.RatePerS >= d.RatePerS:
			return fmt.Sprintf("aggregated sustains %.3g requests/s on %d GPUs against %.3g disaggregated (bounded by %s)", a.RatePerS, q.GPUs, d.RatePerS, d.LimitedBy)
		default:
			return fmt.Sprintf("disaggregated sustains %.3g requests/s on %d GPUs against %.3g aggregated (bounded by %s)", d.RatePerS, q.GPUs, a.RatePerS, a.LimitedBy)
		}
	}
	switch {
	case res.Best == nil:
		c := res.Closest
		if c == nil {
			return "no candidate could be sized"
		}
		if why := q.noWorkerFits(res); why != "" {
			return why
		}
		return fmt.Sprintf("nothing meets the SLO: the closest is %s (%s), limited by %s: %s", c.Mode, describe(c), c.LimitedBy, c.Misses)
	case d == nil:
		why := "no link was offered (--link)"
		if len(q.Links) > 0 {
			why = "no disaggregated candidate meets the SLO"
			if c := closestOf(res, ModeDisaggregated); c != nil {
				why += fmt.Sprintf(" (the closest is limited by %s: %s)", c.LimitedBy, c.Misses)
			}
		}
		return fmt.Sprintf("aggregated: %s; %s", cost(a), why)
	case a == nil:
		why := "no aggregated candidate meets the SLO"
		if c := closestOf(res, ModeAggregated); c != nil {
			why += fmt.Sprintf(" (the closest is limited by %s: %s)", c.LimitedBy, c.Misses)
		}
		return fmt.Sprintf("disaggregated: %s; %s", cost(d), why)
	case sameCost(a, d):
		w, l := a, d
		if res.Best == d {
			w, l = d, a
		}
		name := func(c *Candidate) string {
			if c.Mode == ModeDisaggregated {
				return "disaggregated over " + c.Link
			}
			return "aggregated"
		}
		return fmt.Sprintf("%s (%s) and %s (%s) cost the same; %s has more headroom: it carries %.3g requests/s within the SLO against %.3g (ITL p95 %.1f vs %.1f ms), the other bounded by %s",
			name(w), cost(w), name(l), cost(l), name(w), w.RequestsPerSCapacity, l.RequestsPerSCapacity, w.ITLP95MS, l.ITLP95MS, l.LimitedBy)
	case res.Best == a:
		return fmt.Sprintf("aggregated wins: %s against %s disaggregated over %s, whose split is bounded by %s", cost(a), cost(d), d.Link, d.LimitedBy)
	default:
		return fmt.Sprintf("disaggregated over %s wins: %s against %s aggregated, which is bounded by %s", d.Link, cost(d), cost(a), a.LimitedBy)
	}
}

// sameCost reports whether two candidates cost the same: the same dollars
// to the cent, or, unpriced, the same GPUs.
func sameCost(a, b *Candidate) bool {
	if a.USDPerHour != nil && b.USDPerHour != nil {
		return math.Abs(*a.USDPerHour-*b.USDPerHour) < 0.005
	}
	return a.USDPerHour == nil && b.USDPerHour == nil && a.GPUs == b.GPUs
}

func closestOf(res *Result, mode string) *Candidate {
	for _, c := range res.Candidates {
		if c.Mode == mode && !c.MeetsSLO {
			return c
		}
	}
	return nil
}

// describe names a candidate's pools: "2 × tp4 h100-sxm", "2 × tp4
// h100-sxm (chunks of 1024)" when its prefill budget is below the engine's
// default, or "1 × tp2 h100-sxm prefill + 3 × tp1 h100-sxm decode over
// ib-ndr".
func describe(c *Candidate) string {
	var parts []string
	for _, p := range c.Pools {
		s := fmt.Sprintf("%d × %s %s", p.Workers, p.layout(), p.GPU)
		if p.Role != roleAggregated {
			s += " " + p.Role
		}
		if p.smallerBudget {
			s += fmt.Sprintf(" (chunks of %d)", p.MaxNumBatchedTokens)
		}
		parts = append(parts, s)
	}
	s := strings.Join(parts, " + ")
	if c.Link != "" {
		s += " over " + c.Link
	}
	return s
}

// Describe names a candidate's pools in one line.
func (c *Candidate) Describe() string { return describe(c) }

// assumptions lists what every figure of the search assumes.
func assumptions(q *Query) []string {
	arrivals := "requests arrive as a Poisson process at the rate"
	switch {
	case q.TraceArrivals:
		arrivals = fmt.Sprintf("requests arrive as the trace's timestamps say: its gaps' squared coefficient of variation %.3g enters the queues (c_a²; Poisson is 1)", q.cv2())
	case q.Burstiness > 0 && q.Burstiness != 1:
		arrivals = fmt.Sprintf("requests arrive with gamma-distributed gaps of shape %g (vLLM bench's --burstiness): c_a² = 1/%g = %.3g in the queues", q.Burstiness, q.Burstiness, q.cv2())
	}
	lengths := fmt.Sprintf("every request %d tokens in and %d out", q.InputTokens, q.OutputTokens)
	if q.Workload != nil {
		lengths = q.workloadText() + "; an aggregated worker's prefill wait is the M/G/1 one of the classes' prompt times (Pollaczek–Khinchine, scaled to G/G/1 by Kingman), a prefill pool's sees their variance, the seats the variance of each class's hold, and max_model_len is the longest request's"
	}
	a := []string{
		arrivals + ", " + lengths,
		routingAssumption(q),
		"decode batch by Little's law (rate × (output tokens − 1) × ITL), a sequence seeing 1 + Poisson(batch) sequences in its iterations",
		"TTFT p95 = Σ parts' means + √Σ (part p95 − mean)²: request (frontend or engine, --request-path), queue, prefill, transfer, seat wait, first step, taken as independent (every other TTFT and E2E percentile likewise)",
		fmt.Sprintf("workers start with %s and max_model_len %d; KV seats reserve the blocks of a whole request", engineFraction(q.Engine), q.maxModelLen()),
		"disaggregated: every request's prompt KV crosses the link (the decode side holds none of it); the rate is spread over min(prefill, decode) worker pairs, each over its own path",
	}
	switch {
	case q.PrefixRouting == "kv":
		a = append(a, "KV-aware routing finds each request's leading prompt blocks that an earlier request of the trace began with (an unbounded prefix cache: an upper bound on reuse; the simulator replays the trace's blocks with the workers' real slots)")
	case q.CachedFraction > 0:
		a = append(a, fmt.Sprintf("%.0f%% of every prompt is found in the prefix cache", q.CachedFraction*100))
	case q.Prefixes > 0:
		a = append(a, fmt.Sprintf("%d prefixes of %d tokens, equally popular, routed KV-aware (each worker keeps 1/N of them); the hit ratio is the share of a worker's working set its free KV slots hold (LRU)", q.Prefixes, q.PrefixTokens))
	default:
		a = append(a, "no prefix reuse")
	}
	return a
}

// engineFraction names the memory fraction workers start with: the
// engine's default for its version, as kvplan memory takes it.
func engineFraction(e *catalog.Engine) string {
	if e.MemoryFraction > 0 {
		return fmt.Sprintf("%s %g (%s %s's default)", e.MemoryFractionFlag, e.MemoryFraction, e.Name, e.Newest())
	}
	return fmt.Sprintf("the %s that %s %s derives from each GPU's memory", e.MemoryFractionFlag, e.Name, e.Newest())
}

func routingAssumption(q *Query) string {
	if q.CachedFraction > 0 || q.Prefixes > 0 || q.PrefixRouting == "kv" {
		return "Dynamo's KV router (prefix reuse): it places by overlap and KV blocks, not by prefill backlog, so an aggregated worker's prefill queue is M/G/1 at its share of the rate; a prefill pool, whose blocks are its backlog, waits like one M/G/c queue"
	}
	return "round-robin routing: an aggregated worker's prefill queue is G/G/1 with Erlang-n arrivals (c_a² = 1/workers); a prefill pool waits like one M/G/c queue. Dynamo's least-loaded and KV routers, which weigh each worker's requests and prefill backlog, queue prefill about as well in the timed simulator"
}
