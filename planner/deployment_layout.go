package planner

import (
	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

// WorkerKVSlots is the KV slots of one whole worker: its data-parallel
// ranks' slots added up (each rank holds its own KV), else the memory
// plan's slots.
func WorkerKVSlots(m *MemoryPlan) int64 {
	if m == nil {
		return 0
	}
	if m.DP > 1 && m.WorkerKVSlotsTokens > 0 {
		return m.WorkerKVSlotsTokens
	}
	return m.KVSlotsTokens
}

// rankConcurrency is the requests in flight on one data-parallel rank of
// a worker of the pool: the worker's, spread evenly over its ranks.
func rankConcurrency(pp *PoolPlan) int {
	dp := max(1, pp.Parallel.DP)
	return max(1, ceilDiv(max(1, pp.ConcurrencyPerWorker), dp))
}

// NetworkFor is the link between the NVLink domains of a worker of
// gpusPerWorker GPUs of kind g: link when the worker spans more than one
// domain (nil when it fits one, or when the GPU has no NVLink domain).
func NetworkFor(g *catalog.GPU, gpusPerWorker int, link *catalog.Link) *catalog.Link {
	if g == nil || link == nil || link.Scope == catalog.ScopeNVLink {
		return nil
	}
	if dom := g.NVLinkDomainGPUs; dom > 0 && gpusPerWorker > dom {
		return link
	}
	return nil
}

// layoutOf is the engine model's view of a pool's worker: its layout, its
// redundant experts, and the plan's link when the worker spans NVLink
// domains.
//
// A layout the model cannot take (LayoutError) is sized as tensor
// parallelism alone: the pool is invalid and the rules report the layout at
// its key, so its figures only need to exist.
func (dep *Deployment) layoutOf(pp *PoolPlan) WorkerLayout {
	if pp.LayoutError != "" {
		return WorkerLayout{Parallel: models.Parallelism{TP: pp.TP}}
	}
	return WorkerLayout{Parallel: pp.Parallel, RedundantExperts: pp.RedundantExperts, EPLB: pp.EPLB, TwoBatchOverlap: pp.TwoBatchOverlap,
		Link: NetworkFor(pp.GPU, pp.GPUsPerWorker, dep.Link)}
}

// withoutSpeculation is p without MTP (the memory model takes the layout's
// ranks only).
func withoutSpeculation(p models.Parallelism) models.Parallelism {
	p.SpeculativeTokens, p.AcceptanceLength = 0, 0
	return p
}
