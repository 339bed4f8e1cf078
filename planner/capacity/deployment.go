package capacity

import (
	"fmt"

	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/openloop"
	"github.com/kvplan/kvplan/planner"
)

// ForDeployment computes, for a plan with workload.request_rate, what each
// of its pools carries within the plan's SLO (every target of its [slo],
// as `kvplan plan` sizes for them; a plan without an SLO is held to
// stability only), with the same figures `kvplan plan` sizes with, and stores them in
// PoolPlan.Capacity. The pools are taken as planned: their GPU, tp,
// workers, engine limits and KV slots from the memory model. A pool whose
// engine model cannot be built is left without figures, and so are plans
// without a request rate or whose pools are not one aggregated pool or one
// prefill and one decode pool; notes say why.
func ForDeployment(dep *planner.Deployment, em EngineModel) (notes []string, err error) {
	p := dep.Plan
	w := p.Workload
	if w.RequestRate <= 0 || w.InputTokens < 1 || w.OutputTokens < 1 {
		return nil, nil
	}
	// The plan's [slo] as kvplan plan sizes against it: every target it
	// names (slo.SLO), through the same evaluation.
	target := p.SLO
	target.Normalize()
	q := &Query{Model: dep.Model, Engine: dep.Engine, InputTokens: w.InputTokens, OutputTokens: w.OutputTokens,
		RatePerS: w.RequestRate, SLO: target, TTFTP95MS: target.TTFTMS, ITLP95MS: target.ITLMS, Links: nil,
		Prefixes: w.Prefixes, PrefixTokens: w.PrefixTokens, Path: planner.PlanRequestPath(p), Timers: em.Timers,
		SeparatePrefill: em.separate(dep.Engine.Name), Instances: dep.Instances()}
	slo := target.String() // "" for no target: held to stability only
	if target.Empty() {
		slo = ""
	}
	if q.Prefixes > 0 && (q.PrefixTokens <= 0 || q.PrefixTokens >= q.InputTokens) {
		q.Prefixes, q.PrefixTokens = 0, 0
	}
	var agg, pre, dec []*planner.PoolPlan
	for _, pp := range dep.Pools {
		switch pp.Role {
		case roleAggregated:
			agg = append(agg, pp)
		case rolePrefill:
			pre = append(pre, pp)
		case roleDecode:
			dec = append(dec, pp)
		}
	}
	var sets [][]*planner.PoolPlan
	switch {
	case len(pre) == 1 && len(dec) == 1 && len(agg) == 0 && dep.Link != nil:
		sets = [][]*planner.PoolPlan{{pre[0], dec[0]}}
	case len(pre) == 0 && len(dec) == 0:
		for _, a := range agg {
			sets = append(sets, []*planner.PoolPlan{a})
		}
	default:
		return []string{"capacity at the SLO is computed for one aggregated pool per share of the rate, or one prefill and one decode pool with a link"}, nil
	}
	aggWorkers := 0
	for _, a := range agg {
		aggWorkers += a.Workers
	}
	for _, set := range sets {
		rate := q.RatePerS
		if len(set) == 1 && aggWorkers > 0 {
			rate = q.RatePerS * float64(set[0].Workers) / float64(aggWorkers) // the router spreads requests over every aggregated worker
		}
		s, err := q.planShape(dep, set)
		if err != nil {
			notes = append(notes, err.Error())
			continue
		}
		workers := make([]int, len(set))
		for i, pp := range set {
			workers[i] = pp.Workers
		}
		e := q.evaluate(s, workers, rate)
		var capPerS float64
		var limit string
		if len(sets) == 1 {
			// The deployment's figures at the rate: kvplan plan's candidate
			// of these pools, from the same function.
			c := q.candidate(s, e)
			dep.AtLoad = atLoad(q, c, slo)
			capPerS, limit = c.RequestsPerSCapacity, c.LimitedBy
			if !e.ok {
				// Missing the SLO at the rate, it still carries a lower one.
				capPerS, limit = q.capacity(s, workers, rate)
				dep.AtLoad.RequestsPerSCapacity = capPerS
				if capPerS > 0 {
					dep.AtLoad.Utilization = rate / capPerS
				}
			}
		} else {
			capPerS, limit = q.capacity(s, workers, rate)
		}
		if len(set) == 2 && dep.Disagg != nil {
			a, err := q.disaggAtLoad(s, workers, rate, LoadFromRate)
			if err != nil {
				notes = append(notes, "no comparison at the load: "+err.Error())
			} else {
				dep.Disagg.SetAtLoad(a)
			}
		}
		for i, pp := range set {
			c := &planner.PoolCapacity{RequestRate: rate, CapacityPerS: capPerS, LimitedBy: limit, SLO: slo,
				TTFTP95MS: finite(e.ttftP95MS), ITLP95MS: finite(e.itlP95MS)}
			if len(set) == 1 && aggWorkers > 0 {
				c.CapacityPerS = capPerS * float64(aggWorkers) / float64(pp.Workers) // back to workload.request_rate
			}
			if e.ok && capPerS >= rate {
				c.LimitedBy = limit
			} else {
				c.LimitedBy = e.limit
			}
			bound := q.workerBound(pp.GPUsPerWorker)
			n, ok := smallest(1, max(bound, pp.Workers), func(n int) bool {
				ws := append([]int(nil), workers...)
				ws[i] = n
				return q.evaluate(s, ws, rate).ok
			})
			if ok {
				c.WorkersNeeded = n
			}
			if !e.ok {
				c.Exceeded = c.WorkersNeeded > pp.Workers || (c.WorkersNeeded == 0 && ownLimit(pp.Role, e.limit))
			}
			pp.Capacity = c
		}
	}
	return notes, nil
}

// atLoad is a candidate's figures as a deployment's LoadResult.
func atLoad(q *Query, c *Candidate, slo string) *planner.LoadResult {
	workers := make([]int, len(c.Pools))
	for i, p := range c.Pools {
		workers[i] = p.Workers
	}
	return &planner.LoadResult{Mode: c.Mode, Pools: c.Describe(), Workers: workers, MeetsSLO: c.MeetsSLO, LimitedBy: c.LimitedBy,
		Misses: c.Misses, SLO: slo, LoadFigures: c.LoadFigures,
		Explain: func() planner.Derivation {
			if c.Derivation == nil {
				q.explain(c)
			}
			return c.Derivation
		}}
}

// planShape is the shape of a plan's pools as written.
func (q *Query) planShape(dep *planner.Deployment, set []*planner.PoolPlan) (*shape, error) {
	m := dep.Model
	s := &shape{model: m, mode: ModeAggregated, link: dep.Link, weightDtype: m.WeightDtype}
	if len(set) == 2 {
		s.mode = ModeDisaggregated
	}
	kvd := dep.Plan.Model.KVDtype
	for _, pp := range set {
		mp := pp.Memory
		if mp == nil {
			return nil, fmt.Errorf("pool %s has no memory figures", pp.Name)
		}
		network := planner.NetworkFor(pp.GPU, pp.GPUsPerWorker, dep.Link)
		par := pp.Parallel
		if pp.LayoutError != "" {
			par = models.Parallelism{TP: pp.TP}
		}
		timer, note, err := q.Timers(EngineSpec{Model: m, GPU: pp.GPU, Engine: dep.Engine.Name, TP: pp.TP, Parallel: par, Link: network,
			RedundantExperts: pp.RedundantExperts, EPLB: pp.EPLB, TwoBatchOverlap: pp.TwoBatchOverlap, WeightDtype: m.WeightDtype, KVDtype: kvd})
		if err != nil {
			return nil, fmt.Errorf("pool %s: no capacity at the SLO: %w", pp.Name, err)
		}
		r := &role{name: pp.Role, gpu: pp.GPU, tp: pp.TP, par: par.Norm(), gpus: pp.GPUsPerWorker, network: network, budget: mp.MaxNumBatchedTokens, maxSeqs: mp.MaxNumSeqs,
			maxModelLen: mp.MaxModelLen, block: mp.BlockSize, slots: planner.WorkerKVSlots(mp), timer: timer, note: note,
			memory: mp, models: map[int]*openloop.Worker{}}
		r.usd, r.priceSource, r.priceOK = q.perGPU(pp.GPU, pp.GPUsPerWorker)
		need := int64(q.largestRequest())
		r.fits = mp.ModelFits && mp.KVSlotsTokens >= need
		if !r.fits {
			r.memoryWhy = fmt.Sprintf("pool %s: the weights leave no room for one request's KV", pp.Name)
		}
		s.roles = append(s.roles, r)
	}
	tp := s.roles[0].tp
	kv, err := models.NewKV(m, models.KVOptions{KVDtype: kvd, TP: tp})
	if err != nil {
		return nil, err
	}
	s.kv, s.kvDtype = kv, kv.KVDtype
	return s, nil
}

// ownLimit reports whether limit is a pool of role's own doing.
func ownLimit(role, limit string) bool {
	switch limit {
	case openloop.LimitPrefill:
		return role != roleDecode
	case openloop.LimitDecode:
		return role != rolePrefill
	case openloop.LimitKV, limitMemory:
		return true
	}
	return false
}
