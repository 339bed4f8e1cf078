package capacity

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/kvplan/kvplan/slo"
)

// Result is what the search found.
type Result struct {
	Model        string  `json:"model"`
	Engine       string  `json:"engine"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	RatePerS     float64 `json:"requests_per_s,omitempty"` // rate mode
	GPUs         int     `json:"gpus,omitempty"`           // max-rate mode
	Question     string  `json:"question"`                 // "cheapest at a rate" or "highest rate on N GPUs"
	TTFTP95MS    float64 `json:"ttft_p95_slo_ms"`
	ITLP95MS     float64 `json:"itl_p95_slo_ms"`
	Pricing      string  `json:"pricing"`
	// SLO is every target given; Workload the lengths and arrivals sized for.
	SLO      slo.SLO          `json:"slo"`
	Workload *WorkloadSummary `json:"workload"`
	// Figures says of each figure which percentile it is and how it is derived.
	Figures []FigureNote `json:"figures"`

	Best              *Candidate   `json:"best"` // null when nothing meets the SLO
	BestAggregated    *Candidate   `json:"best_aggregated"`
	BestDisaggregated *Candidate   `json:"best_disaggregated"`
	Closest           *Candidate   `json:"closest,omitempty"` // when nothing meets the SLO
	Candidates        []*Candidate `json:"candidates"`
	Verdict           string       `json:"verdict"`
	// DayPlan is the plan period by period through a rate profile
	// (PlanDay): its fields (schedule, usd_per_day, ...) sit at the top of
	// the JSON, absent without a profile.
	*DayPlan
	Notes       []string `json:"notes"`
	Assumptions []string `json:"assumptions"`
	// Lost: each GPU and link offered that the best (or the closest) does
	// not use, and why (cost, SLO, memory).
	Lost []Lost `json:"lost"`
}

// Questions a Result answers.
const (
	QuestionCheapest = "cheapest deployment at the rate"
	QuestionMaxRate  = "highest rate the GPUs sustain"
)

// Search sizes every candidate the query offers and ranks them.
func Search(q Query) (*Result, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	shapes, notes, err := q.shapes()
	if err != nil {
		return nil, err
	}
	if len(shapes) == 0 {
		return nil, fmt.Errorf("no candidate to size: %v", notes)
	}
	res := &Result{Model: q.Model.Name, Engine: q.Engine.Name, InputTokens: q.InputTokens, OutputTokens: q.OutputTokens,
		RatePerS: q.RatePerS, GPUs: q.GPUs, TTFTP95MS: q.TTFTP95MS, ITLP95MS: q.ITLP95MS, Pricing: q.Pricing,
		SLO: q.SLO, Workload: q.summary(), Figures: figureNotes(&q), Notes: notes, Assumptions: assumptions(&q)}
	res.Assumptions = append(res.Assumptions, q.requestAssumption(shapes[0].roles[0]))
	bestUSD, pruned := math.Inf(1), 0
	for _, s := range shapes {
		var c *Candidate
		if q.RatePerS > 0 {
			res.Question = QuestionCheapest
			if s.beyondTP() && s.floorUSD() >= bestUSD {
				// One worker of each role already costs more than a
				// deployment found that meets the SLO: this shape cannot be
				// the cheapest, and sizing it is what the wide layouts'
				// pairs would cost the search's time.
				pruned++
				continue
			}
			c = q.sizeAtRate(s)
			if c != nil && c.MeetsSLO && c.USDPerHour != nil {
				bestUSD = min(bestUSD, *c.USDPerHour)
			}
		} else {
			res.Question = QuestionMaxRate
			c = q.sizeForGPUs(s)
		}
		if c != nil {
			res.Candidates = append(res.Candidates, c)
		}
	}
	if pruned > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d disaggregated shapes with data, expert or pipeline parallelism were not sized: one worker of each of their roles costs more than a deployment already found within the SLO", pruned))
	}
	q.rank(res.Candidates)
	for _, c := range res.Candidates {
		switch {
		case !c.MeetsSLO:
		case c.Mode == ModeAggregated && res.BestAggregated == nil:
			res.BestAggregated = c
		case c.Mode == ModeDisaggregated && res.BestDisaggregated == nil:
			res.BestDisaggregated = c
		}
	}
	if len(res.Candidates) > 0 && res.Candidates[0].MeetsSLO {
		res.Best = res.Candidates[0]
	} else if len(res.Candidates) > 0 {
		res.Closest = res.Candidates[0]
	}
	for _, c := range []*Candidate{res.Best, res.BestAggregated, res.BestDisaggregated, res.Closest} {
		if c != nil && c.Derivation == nil {
			q.explain(c)
		}
	}
	res.Verdict = q.verdict(res)
	res.Lost = q.lost(res, notes)
	if res.Lost == nil {
		res.Lost = []Lost{}
	}
	return res, nil
}

// workerBound is the most workers a role may have: --max-gpus, or the
// search's own bound.
func (q *Query) workerBound(tp int) int {
	if q.MaxGPUs > 0 {
		return q.MaxGPUs / tp
	}
	return maxWorkers / tp
}

// maxScan bounds the sizes one round of a search tries one by one; more
// are searched coarse to fine. Below it the search is exhaustive as before.
const maxScan = 128

// smallest returns the smallest n in [lo, hi] with ok(n), assuming ok is
// monotone; found is false when not even hi is.
func smallest(lo, hi int, ok func(int) bool) (int, bool) {
	if hi < lo || !ok(hi) {
		return hi, false
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, true
}

// sizeAtRate finds the cheapest worker counts of s that meet the SLO at
// the query's rate, or, when none does, the size at which it comes closest.
func (q *Query) sizeAtRate(s *shape) *Candidate {
	λ := q.RatePerS
	if s.mode == ModeAggregated {
		hi := q.workerBound(s.roles[0].gpus)
		if hi < 1 {
			return nil
		}
		n, ok := smallest(1, hi, func(n int) bool { return q.evaluate(s, []int{n}, λ).ok })
		if !ok {
			return q.failed(s, func(n int) []int { return []int{n} }, hi)
		}
		return q.candidate(s, q.evaluate(s, []int{n}, λ))
	}
	p, d := s.roles[0], s.roles[1]
	hiP, hiD := q.workerBound(p.gpus), q.workerBound(d.gpus)
	if hiP < 1 || hiD < 1 {
		return nil
	}
	// Decode workers first: the fewest whose ITL meets the SLO on their own.
	dw := s.worker(q, d, nil)
	nd0, ok := smallest(1, hiD, func(n int) bool {
		return q.decodeMeets(dw, dw.SolveWith(λ/float64(n), q.cv2()))
	})
	if !ok {
		return q.failed(s, func(n int) []int { return []int{n, n} }, min(hiP, hiD))
	}
	var best *evaluation
	bestCost := math.Inf(1)
	// try sizes the pool with nd decode workers; false: more decode workers
	// cannot be cheaper.
	try := func(nd int) bool {
		if cost := q.roleCost(d, nd); cost >= bestCost {
			return false
		}
		budget := hiP
		if q.MaxGPUs > 0 {
			budget = (q.MaxGPUs - nd*d.gpus) / p.gpus
		}
		if budget < 1 {
			return false
		}
		np, ok := smallest(1, budget, func(n int) bool { return q.evaluate(s, []int{n, nd}, λ).ok })
		if !ok {
			return true
		}
		if cost := q.roleCost(p, np) + q.roleCost(d, nd); cost < bestCost {
			bestCost, best = cost, q.evaluate(s, []int{np, nd}, λ)
		}
		return true
	}
	top := min(hiD, 2*nd0+4)
	if top-nd0 < maxScan {
		for nd := nd0; nd <= top && try(nd); nd++ {
		}
	} else {
		// Thousands of decode workers (--rate 1e6 took over 20 s): coarse
		// to fine, maxScan sizes a round, each round around the best so far.
		bestND := nd0
		for lo, hi, step := nd0, top, (top-nd0)/maxScan+1; ; step = max(1, step/maxScan) {
			for nd := lo; nd <= hi; nd += step {
				if prev := best; try(nd) && best != prev {
					bestND = nd
				}
			}
			if step == 1 {
				break
			}
			lo, hi = max(nd0, bestND-step), min(top, bestND+step)
		}
	}
	if best == nil {
		return q.failed(s, func(n int) []int { return []int{n, max(nd0, n)} }, min(hiP, hiD))
	}
	return q.candidate(s, best)
}

// roleCost is what ranks sizes of one shape: dollars when the price is
// known, else GPUs.
func (q *Query) roleCost(r *role, workers int) float64 {
	g := float64(workers * r.gpus)
	if r.priceOK {
		return g * r.usd
	}
	return g
}

// failed sizes a shape that meets the SLO at no size: the smallest size
// within 1% of the best it can do, so the closest candidate is not absurdly
// large.
func (q *Query) failed(s *shape, sizes func(int) []int, hi int) *Candidate {
	if hi < 1 {
		return nil
	}
	floor := q.evaluate(s, sizes(hi), q.RatePerS)
	if math.IsInf(floor.worst, 1) {
		// No size carries the rate at all: show one worker per role, failing
		// for the reason even the largest size fails.
		e := q.evaluate(s, sizes(1), q.RatePerS)
		e.ok, e.limit = false, floor.limit
		return q.candidate(s, e)
	}
	n, _ := smallest(1, hi, func(n int) bool { return q.evaluate(s, sizes(n), q.RatePerS).worst <= floor.worst*1.01 })
	return q.candidate(s, q.evaluate(s, sizes(n), q.RatePerS))
}

// capacity is the highest rate the worker counts carry within the SLO, and
// what stops them just above it.
func (q *Query) capacity(s *shape, workers []int, from float64) (float64, string) {
	ok := func(r float64) bool { return q.evaluate(s, workers, r).ok }
	lo := from
	if lo <= 0 || !ok(lo) {
		lo = 0
		hi := math.Max(from, 1e-3)
		for hi > 1e-6 && !ok(hi) {
			hi /= 2
		}
		if hi <= 1e-6 {
			return 0, q.evaluate(s, workers, 1e-6).limit
		}
		lo = hi
	}
	hi := lo * 2
	for i := 0; i < 60 && ok(hi); i++ {
		lo, hi = hi, hi*2
	}
	for range 40 {
		if hi-lo <= 1e-4*lo {
			break
		}
		mid := (lo + hi) / 2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, q.evaluate(s, workers, hi).limit
}

// sizeForGPUs finds the split of at most q.GPUs GPUs into workers of s
// that sustains the highest rate within the SLO.
func (q *Query) sizeForGPUs(s *shape) *Candidate {
	if s.mode == ModeAggregated {
		n := q.GPUs / s.roles[0].gpus
		if n < 1 {
			return nil
		}
		rate, _ := q.capacity(s, []int{n}, 0)
		if rate <= 0 {
			return q.candidateAt(s, []int{n}, 1)
		}
		return q.candidateAt(s, []int{n}, rate)
	}
	p, d := s.roles[0], s.roles[1]
	maxP := (q.GPUs - d.gpus) / p.gpus
	if maxP < 1 {
		return nil
	}
	split := func(np int) []int { return []int{np, (q.GPUs - np*p.gpus) / d.gpus} }
	rateOf := map[int]float64{}
	rate := func(np int) float64 {
		if v, ok := rateOf[np]; ok {
			return v
		}
		v, _ := q.capacity(s, split(np), 0)
		rateOf[np] = v
		return v
	}
	// A coarse pass over the splits, then the neighbours of the best, at
	// finer steps until every neighbour is tried (at most maxScan a round:
	// one round over ±maxP/16 was linear in the GPUs, and --gpus 100000
	// with a link ran for minutes).
	step := max(1, maxP/16)
	bestN := 1
	for np := 1; np <= maxP; np += step {
		if rate(np) > rate(bestN) {
			bestN = np
		}
	}
	for span := step; span >= 1; {
		fine := max(1, 2*span/maxScan)
		for np := max(1, bestN-span); np <= min(maxP, bestN+span); np += fine {
			if rate(np) > rate(bestN) {
				bestN = np
			}
		}
		if fine == 1 {
			break
		}
		span = fine
	}
	r := rate(bestN)
	if r <= 0 {
		return q.candidateAt(s, split(bestN), 1)
	}
	return q.candidateAt(s, split(bestN), r)
}

func (q *Query) candidateAt(s *shape, workers []int, rate float64) *Candidate {
	return q.candidate(s, q.evaluate(s, workers, rate))
}

// rank orders candidates: those that meet the SLO first; then, at a rate,
// priced before unpriced, cheaper first, fewer GPUs first; in max-rate
// mode, higher rate first; failing ones by how close they come.
func (q *Query) rank(cs []*Candidate) {
	known := func(c *Candidate) int {
		if c.USDPerHour != nil {
			return 0
		}
		return 1
	}
	usd := func(c *Candidate) float64 {
		if c.USDPerHour == nil {
			return 0
		}
		return *c.USDPerHour
	}
	slices.SortStableFunc(cs, func(a, b *Candidate) int {
		if a.MeetsSLO != b.MeetsSLO {
			if a.MeetsSLO {
				return -1
			}
			return 1
		}
		if !a.MeetsSLO {
			return cmp.Or(cmp.Compare(a.load.worst, b.load.worst), cmp.Compare(a.GPUs, b.GPUs))
		}
		if q.RatePerS == 0 {
			return cmp.Or(cmp.Compare(b.RatePerS, a.RatePerS), cmp.Compare(known(a), known(b)), cmp.Compare(usd(a), usd(b)))
		}
		return cmp.Or(cmp.Compare(known(a), known(b)), cmp.Compare(usd(a), usd(b)), cmp.Compare(a.GPUs, b.GPUs),
			cmp.Compare(b.RequestsPerSCapacity, a.RequestsPerSCapacity))
	})
}
