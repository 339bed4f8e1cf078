package capacity

import (
	"github.com/kvplan/kvplan/openloop"
	"math"
)

// evaluation is a shape with worker counts at a rate: every figure of the
// candidate and, when it fails, why.
type evaluation struct {
	shape   *shape
	workers []int // per role
	rate    float64

	loads    []openloop.Load    // per role
	prefill  openloop.Wait      // the prefill queue of the pool that prefills
	inFlight *openloop.InFlight // a data-parallel worker's prefill wait, in place of prefill's (nil: none)
	hit      float64            // share of requests that find their prefix cached

	transfer transferLoad

	ttftMeanMS, ttftP95MS float64
	itlMeanMS, itlP95MS   float64
	ttftParts             []part // the terms of TTFT p95, in order

	// The decoding pool's worker and its load, for the percentiles of ITL
	// and TPOT; its decode distribution, built when a figure needs it.
	decoder   *openloop.Worker
	decodeLd  openloop.Load
	prefills  bool // the decoding worker prefills too (aggregated)
	decodeDst *decodeDist

	ok     bool      // meets every target of the SLO
	limit  string    // why not (or "" when ok)
	worst  float64   // the largest figure / target ratio
	figs   []float64 // per target of q.SLO.Given(), its figure (judge)
	figBuf [16]float64
}

// gpus is the GPU count of the shape at the given worker counts.
func (s *shape) gpus(workers []int) int {
	n := 0
	for i, r := range s.roles {
		n += workers[i] * r.gpus
	}
	return n
}

// evaluate computes every figure of s with workers per role at rate
// requests per second.
func (q *Query) evaluate(s *shape, workers []int, rate float64) *evaluation {
	e := &evaluation{shape: s, workers: workers, rate: rate}
	for _, r := range s.roles {
		if !r.fits {
			e.limit = limitMemory
			e.worst = math.Inf(1)
			return e
		}
	}
	if s.mode == ModeAggregated {
		q.evalAggregated(s, e)
	} else {
		q.evalDisaggregated(s, e)
	}
	q.judge(e)
	return e
}

// holderHits are the hit cases of a pool of workers that keep the prefix
// cache: two passes, the first without hits to learn how many KV slots the
// running requests hold, the second with the slots left over for prefixes.
func (q *Query) holderHits(s *shape, r *role, workers int, rate float64, inUse func(*openloop.Worker) float64) ([]openloop.Hit, float64) {
	if q.CachedFraction == 0 && q.Prefixes == 0 {
		// A trace's own prefixes (--prefix-routing kv): the share of its
		// requests that find some of their prompt cached.
		return nil, q.traceHit
	}
	used := 0.0
	if q.Prefixes > 0 {
		used = inUse(s.worker(q, r, q.hitCases(0, workers)))
	}
	hits := q.hitCases(float64(r.slots)-used, workers)
	hp := 0.0
	for _, h := range hits {
		if h.Cached > 0 {
			hp += h.Prob
		}
	}
	return hits, hp
}

func (q *Query) evalAggregated(s *shape, e *evaluation) {
	r, n := s.roles[0], e.workers[0]
	per := e.rate / float64(n)
	hits, hp := q.holderHits(s, r, n, e.rate, func(w *openloop.Worker) float64 { return w.Solve(per).SlotsInUse })
	e.hit = hp
	w := s.worker(q, r, hits)
	ld := w.SolveWith(per, q.cv2())
	e.loads = []openloop.Load{ld}
	if !ld.Stable {
		e.limit = ld.Limit
		return
	}
	// Prefill waits in its worker's queue: the router places a request on
	// arrival. Round-robin deals every n-th request to a worker, so its gaps
	// are Erlang-n, c_a² = 1/n (G/G/1, Kingman); with prefix reuse Dynamo's
	// KV router places by overlap and KV blocks, not by prefill backlog, so
	// the worker sees Poisson arrivals (M/G/1) at its share of the rate.
	ca2 := q.cv2() / float64(n)
	if q.CachedFraction > 0 || q.Prefixes > 0 || q.PrefixRouting == "kv" {
		ca2 = q.cv2()
	}
	e.prefill = openloop.Queue{RatePerS: per, Servers: 1, ServiceMS: ld.Prefill.PackedMS, ServiceCV2: ld.Prefill.PackedCV2, ArrivalCV2: ca2}.Wait()
	if !e.prefill.Stable {
		e.limit = openloop.LimitPrefill
		return
	}
	e.decoder, e.decodeLd, e.prefills = w, ld, true
	pq, adm := e.prefill, ld.Admission
	pqAt := pq.Quantile
	if q.classes != nil {
		// Prompts of many lengths: the wait's tail from the prompts' own
		// service times (Pollaczek–Khinchine), not an exponential.
		if d, ok := q.mixedWait(w, ld, per, ca2); ok {
			pqAt = d.Quantile
			e.prefill.P95MS = d.Quantile(0.95)
		}
	}
	if r.par.DP > 1 && q.classes == nil {
		// Data-parallel ranks run each iteration in lockstep (the MoE
		// layer's collectives join them), and the worker's budget, dp ×
		// max_num_batched_tokens, takes the prompts of every rank into one
		// iteration, one rank each: the G/G/1 queue above, whose service is
		// a prompt's packed share of such an iteration (1/dp of it or less),
		// leaves out that a prompt arriving while one runs waits for the
		// whole of it. The wait is what is left of the previous arrival's
		// iteration, (S_m − gap)⁺, the gaps those the router deals the
		// worker (InFlight); the prompts waiting with it share the next
		// iteration. The queue's stability stays the G/G/1's.
		f := openloop.InFlight{RatePerS: per, GapCV2: ca2, IterMS: ld.Prefill.ChunkMS}
		e.prefill.MeanMS, e.prefill.P95MS, e.prefill.PWait = f.MeanMS(), f.Quantile(0.95), f.PWait()
		pqAt = f.Quantile
		e.inFlight = &f
	}
	e.ttftParts = []part{
		q.requestPart(r),
		{"iteration in flight", ld.DecodeInFlight, ld.ITLP95MS, e.itlQuantile},
		{"prefill queue", e.prefill.MeanMS, e.prefill.P95MS, pqAt},
		{"prefill", ld.Prefill.AloneMS, ld.Prefill.AloneP95MS, func(x float64) float64 {
			alone, _ := w.PrefillMS(int(math.Round(ld.Batch)))
			return w.Quantile(alone, x)
		}},
		{"wait for a batch seat", ld.Admission.MeanMS, ld.Admission.P95MS, adm.Quantile},
	}
	e.itlMeanMS, e.itlP95MS = ld.ITLMeanMS, ld.ITLP95MS
}

func (q *Query) evalDisaggregated(s *shape, e *evaluation) {
	pr, dr := s.roles[0], s.roles[1]
	np, nd := e.workers[0], e.workers[1]
	pper, dper := e.rate/float64(np), e.rate/float64(nd)
	dw := s.worker(q, dr, nil)
	dl := dw.SolveWith(dper, q.cv2())
	// The prefill workers hold a prompt's KV from its prefill until its
	// transfer ends; the transfer is computed first without the prefill's own
	// hold, which it does not depend on.
	tr := q.transfer(s, np, nd, e.rate)
	e.transfer = tr
	hits, hp := q.holderHits(s, pr, np, e.rate, func(w *openloop.Worker) float64 {
		ld := w.Solve(pper)
		return pper / 1000 * (ld.Prefill.AloneMS + tr.meanMS) * float64(w.NeedSlots())
	})
	e.hit = hp
	pw := s.worker(q, pr, hits)
	pl := pw.SolveWith(pper, q.cv2())
	e.loads = []openloop.Load{pl, dl}
	switch {
	case !pl.Stable:
		e.limit = pl.Limit
		return
	case !dl.Stable:
		e.limit = dl.Limit
		return
	case !tr.stable:
		e.limit = limitLink
		return
	}
	held := pper / 1000 * (pl.Prefill.AloneMS + tr.meanMS) * float64(pw.NeedSlots())
	if held > float64(pr.slots) {
		e.limit = openloop.LimitKV
		return
	}
	// A prefill worker's load in the router's eyes is its prompt blocks,
	// queued and in progress: it balances the prefill backlog, so the pool
	// waits like one M/G/c queue (least work left is central FCFS).
	e.prefill = openloop.Queue{RatePerS: e.rate, Servers: np, ServiceMS: pl.Prefill.PackedMS, ServiceCV2: pl.Prefill.PackedCV2, ArrivalCV2: q.cv2()}.Wait()
	if !e.prefill.Stable {
		e.limit = openloop.LimitPrefill
		return
	}
	pqAt := e.prefill.Quantile
	if pr.par.DP > 1 && np == 1 && q.classes == nil {
		// One prefill worker of data-parallel ranks in lockstep: a prompt
		// waits out what is left of the previous arrival's iteration, as an
		// aggregated one does (evalAggregated). With more prefill workers
		// the router's choice among them is not modeled (kvplan's limit):
		// their M/G/c queue stays.
		f := openloop.InFlight{RatePerS: pper, GapCV2: q.cv2(), IterMS: pl.Prefill.ChunkMS}
		e.prefill.MeanMS, e.prefill.P95MS, e.prefill.PWait = f.MeanMS(), f.Quantile(0.95), f.PWait()
		pqAt = f.Quantile
		e.inFlight = &f
	}
	// A prompt that waits is picked up with the others waiting: only the
	// share that finds every worker busy batches.
	lamWait := pper / 1000 * e.prefill.PWait
	pl.Prefill.AloneMS, pl.Prefill.AloneP95MS = pw.BatchedPrefill(lamWait)
	e.loads[0] = pl
	e.decoder, e.decodeLd = dw, dl
	adm := dl.Admission
	e.ttftParts = []part{
		q.requestPart(pr),
		{"prefill queue", e.prefill.MeanMS, e.prefill.P95MS, pqAt},
		{"prefill", pl.Prefill.AloneMS, pl.Prefill.AloneP95MS, func(x float64) float64 { return pw.Quantile(pw.BatchedPrefillMS(lamWait), x) }},
		{"KV transfer", tr.meanMS, tr.p95MS, tr.quantile},
		{"wait for a decode seat", dl.Admission.MeanMS, dl.Admission.P95MS, adm.Quantile},
		{"first decode step", dl.ITLMeanMS, dl.ITLP95MS, e.itlQuantile},
	}
	e.itlMeanMS, e.itlP95MS = dl.ITLMeanMS, dl.ITLP95MS
}

// judge adds up TTFT and compares every figure the SLO names with its
// target (judgeSLO). The parts are independent, so TTFT's 95th percentile
// is taken as the sum of their means plus their excesses over the mean
// (p95 − mean) added in quadrature (sumQuantile).
func (q *Query) judge(e *evaluation) {
	if e.limit != "" {
		e.ttftMeanMS, e.ttftP95MS, e.itlMeanMS, e.itlP95MS = math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1)
		e.worst = math.Inf(1)
		return
	}
	e.ttftMeanMS = 0
	for _, p := range e.ttftParts {
		e.ttftMeanMS += p.meanMS
	}
	e.ttftP95MS = sumQuantile(e.ttftParts, 0.95)
	q.judgeSLO(e)
}

// ttftCause names what makes TTFT long: the largest part beyond the
// prefill itself decides between prefill compute, the link and KV slots.
func (e *evaluation) ttftCause() string {
	best, cause := -1.0, openloop.LimitPrefill
	for _, p := range e.ttftParts {
		c := ""
		switch p.name {
		case "prefill queue", "prefill":
			c = openloop.LimitPrefill
		case "KV transfer":
			c = limitLink
		case "wait for a batch seat", "wait for a decode seat":
			c = openloop.LimitKV
		case "iteration in flight", "first decode step":
			c = openloop.LimitDecode
		default:
			continue
		}
		if p.p95MS > best {
			best, cause = p.p95MS, c
		}
	}
	return cause
}
