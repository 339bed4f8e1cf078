package planner

// PoolCapacity is what a pool carries at the plan's SLO under
// workload.request_rate, from the engine model and the open-load worker
// model (the figures `kvplan plan` sizes with). The capacity search
// (planner/capacity) fills it on a Deployment; nil when it was not computed
// (no request rate, or no engine model for the pool's GPU).
type PoolCapacity struct {
	RequestRate   float64 // requests per second the pool serves (its share of workload.request_rate)
	CapacityPerS  float64 // the highest workload.request_rate the deployment carries within the SLO, its other pools as planned
	WorkersNeeded int     // the fewest workers of this pool that carry workload.request_rate within the SLO, the others as planned; 0 = no count does
	LimitedBy     string  // what fails first above the capacity: prefill compute, decode ITL, KV slots, link, memory
	TTFTP95MS     float64 // predicted at workload.request_rate (0 when the deployment cannot carry it)
	ITLP95MS      float64
	SLO           string // the objectives used, e.g. "TTFT p95 ≤ 1000 ms, ITL p95 ≤ 50 ms"; "" without an [slo] (stability only)
	// Exceeded: the deployment misses the SLO at workload.request_rate and
	// this pool is what to grow: more of its workers would carry the rate,
	// or none would and what fails is this pool's own (its prefill, its
	// decode, its KV slots).
	Exceeded bool
}
