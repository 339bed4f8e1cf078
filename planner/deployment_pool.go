package planner

import (
	"fmt"
	"math"
	"sort"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planfile"
)

// WeightsFit says whether a pool's weights and overheads leave room for a
// KV cache in total × gpu_memory_utilization and, when they do not, what
// would (each found by sizing the worker again, as kvplan memory does).
type WeightsFit struct {
	Fits          bool
	RequiredBytes int64 // weights per rank + peak activation + non-torch + CUDA graphs
	ShortBytes    int64 // required − requested; 0 when it fits
	MinTP         int   // the smallest tp above the pool's that the model divides into and that fits; 0 = none up to models.MaxListedTP
	FP8Fits       bool  // fp8 weights would fit at the pool's tp (false when the weights are fp8 or narrower already)
	GPU           string
	// GPU is the catalog GPU with the least memory above the pool's that
	// fits at the pool's tp; "" when none does.
}

// KVInFlight compares the KV that the requests in flight on one worker hold
// with the worker's KV slots. Requests that share a cached prefix on one
// worker share its full blocks (prefix caching): each prefix is counted once
// per worker that holds it, as the routing figures place them (every prefix
// on every worker under round-robin or random routing, 1/workers of them
// under the KV router), and only on pools that keep prefixes (not decode).
type KVInFlight struct {
	RequestBlocks      int // blocks of one request's input + output: ceil(tokens / block_size)
	SharedBlocks       int // full blocks of one prefix that requests share: floor(prefix_tokens / block_size)
	PrefixesPerWorker  int // distinct prefixes a worker holds; 0 when nothing is shared
	TokensNeeded       int // KV tokens the in-flight requests of one worker hold, in whole blocks
	MaxRequestsThatFit int // the most requests in flight per worker whose KV fits the slots
}

// PromptFit compares one request with the pool's max_model_len. A prefill
// worker of a disaggregated pair generates one token (the decode worker the
// rest), so its request is input + 1 tokens.
type PromptFit struct {
	RequestTokens int
	Fits          bool
}

// PrefillCapacity is the floor on prefill compute that request_rate needs:
// demand = λ × uncached input tokens against the pool's
// workers × (uncached input tokens / prefill time of one request), the
// prefill time from EstimatePrefillMS. It is a floor: it leaves out the
// decode work of aggregated workers, queueing and the attention over a
// cached prefix.
type PrefillCapacity struct {
	RequestRate          float64 // requests per second this pool prefills (its share of workload.request_rate)
	UncachedTokens       int     // input tokens per request not served from the prefix cache
	PrefillMS            float64 // one request's uncached prefill on one worker
	DemandTokensPerS     float64
	CapacityTokensPerS   float64
	WorkersNeeded        int
	CachedPrefixFraction float64 // share of requests whose prefix is cached: (repeats − 1) / repeats when the working set fits
}

func (dep *Deployment) poolFigures(pp *PoolPlan) error {
	if err := dep.weightsFit(pp); err != nil {
		return err
	}
	dep.kvInFlight(pp)
	dep.promptFit(pp)
	return nil
}

func (dep *Deployment) weightsFit(pp *PoolPlan) error {
	m := pp.Memory
	f := &pp.Fit
	f.Fits = m.ModelFits
	f.RequiredBytes = m.WeightsBytes + m.ActivationBytes + m.NonTorchBytes + m.CUDAGraphBytes
	d := &dep.Derivation
	d.Add(pp.Name+".weights_and_overheads_bytes", float64(f.RequiredBytes), "B",
		"weights per rank + peak activation + non-torch + CUDA graphs, against gpu memory × gpu_memory_utilization",
		"%d + %d + %d + %d vs %d", m.WeightsBytes, m.ActivationBytes, m.NonTorchBytes, m.CUDAGraphBytes, m.RequestedBytes)
	if f.Fits {
		return nil
	}
	f.ShortBytes = f.RequiredBytes - m.RequestedBytes
	fits := func(sc MemoryScenario) (bool, error) {
		mp, err := PlanMemory(sc)
		if err != nil {
			return false, err
		}
		return mp.ModelFits, nil
	}
	sc := dep.memoryScenario(pp)
	for tp := pp.TP + 1; tp <= models.MaxListedTP; tp++ {
		if models.CheckTP(dep.Model, tp) != nil {
			continue
		}
		s := sc
		s.KV.TP = tp
		if s.Parallel.TP != 0 {
			s.Parallel.TP = tp
		}
		ok, err := fits(s)
		if err != nil {
			return err
		}
		if ok {
			f.MinTP = tp
			break
		}
	}
	if b, _ := catalog.DtypeBytes(dep.Model.WeightDtype); b > 1 {
		fp8 := *dep.Model
		fp8.WeightDtype, fp8.WeightsBytes = "fp8", 0
		s := sc
		s.Model = &fp8
		ok, err := fits(s)
		if err != nil {
			return err
		}
		f.FP8Fits = ok
	}
	gpus := append([]*catalog.GPU(nil), dep.cat.GPUs...)
	sort.SliceStable(gpus, func(i, j int) bool { return gpus[i].MemoryBytes < gpus[j].MemoryBytes })
	for _, g := range gpus {
		if g.MemoryBytes <= pp.GPU.MemoryBytes {
			continue
		}
		s := sc
		s.GPU = g
		ok, err := fits(s)
		if err != nil {
			return err
		}
		if ok {
			f.GPU = g.Name
			break
		}
	}
	return nil
}

func (dep *Deployment) kvInFlight(pp *PoolPlan) {
	w, m := dep.Plan.Workload, pp.Memory
	k := &pp.InFlight
	bs := m.BlockSize
	k.RequestBlocks = ceilDiv(requestTokens(pp, w), bs)
	if pp.Role != planfile.RoleDecode && w.Prefixes > 0 {
		k.SharedBlocks = w.PrefixTokens / bs
		k.PrefixesPerWorker = w.Prefixes
		if dep.Plan.Router.Mode == planfile.RouterKV {
			k.PrefixesPerWorker = ceilDiv(w.Prefixes, pp.Workers)
		}
	}
	if k.SharedBlocks == 0 {
		k.PrefixesPerWorker = 0
	}
	n := rankConcurrency(pp)                         // one data-parallel rank's requests, against its own blocks
	unique := max(1, k.RequestBlocks-k.SharedBlocks) // a request that is all prefix still takes a block of its own
	need := func(n int) int { return n*unique + min(n, k.PrefixesPerWorker)*k.SharedBlocks }
	k.TokensNeeded = need(n) * bs
	slots := int(m.KVBlocks)
	// The most requests whose blocks fit: while each brings its own prefix,
	// a request costs all its blocks; past the prefixes a worker holds, only
	// its own.
	if whole := slots / k.RequestBlocks; whole <= k.PrefixesPerWorker {
		k.MaxRequestsThatFit = whole
	} else {
		k.MaxRequestsThatFit = (slots - k.PrefixesPerWorker*k.SharedBlocks) / unique
	}
	d := &dep.Derivation
	if k.PrefixesPerWorker > 0 {
		d.Add(pp.Name+".kv_tokens_in_flight", float64(k.TokensNeeded), "tokens",
			"(in flight per worker × (request blocks − shared prefix blocks) + min(in flight, prefixes per worker) × shared prefix blocks) × block_size",
			"(%d × (%d − %d) + min(%d, %d) × %d) × %d", n, k.RequestBlocks, k.SharedBlocks, n, k.PrefixesPerWorker, k.SharedBlocks, bs)
		d.Note("prefix caching: requests sharing a cached prefix on one worker share its full blocks; prefixes per worker as the routing figures place them")
	} else {
		d.Add(pp.Name+".kv_tokens_in_flight", float64(k.TokensNeeded), "tokens",
			"in flight per worker × ceil(request tokens / block_size) × block_size; request tokens = input + output (input + 1 on a prefill pool)",
			"%d × %d × %d", n, k.RequestBlocks, bs)
	}
	d.Add(pp.Name+".max_requests_that_fit", float64(k.MaxRequestsThatFit), "requests",
		"the most requests in flight per worker whose KV blocks fit kv_blocks", "kv_blocks %d", slots)
}

// requestTokens is the KV one request takes on a worker of the pool at its
// end: input + output tokens, or input + 1 on a prefill worker, which
// generates the first token and hands the rest to the decode worker.
func requestTokens(pp *PoolPlan, w planfile.Workload) int {
	if pp.Role == planfile.RolePrefill {
		return max(1, w.InputTokens) + 1
	}
	return max(1, w.InputTokens) + w.OutputTokens
}

func (dep *Deployment) promptFit(pp *PoolPlan) {
	w := dep.Plan.Workload
	pf := &pp.Prompt
	pf.RequestTokens = requestTokens(pp, w)
	formula := "input_tokens + output_tokens"
	if pp.Role == planfile.RolePrefill {
		formula = "input_tokens + 1 (a prefill worker generates the first token only)"
	}
	pf.Fits = pf.RequestTokens <= pp.Memory.MaxModelLen
	dep.Derivation.Add(pp.Name+".request_tokens", float64(pf.RequestTokens), "tokens", formula+", against max_model_len "+fmt.Sprint(pp.Memory.MaxModelLen),
		"%d", pf.RequestTokens)
}

// planPrefillCapacity spreads workload.request_rate evenly over the workers
// that prefill (the prefill pools when disaggregated, else the aggregated
// pools) and compares each pool's prefill demand with its compute.
func (dep *Deployment) planPrefillCapacity() {
	p := dep.Plan
	rate := p.Workload.RequestRate
	if rate <= 0 {
		return
	}
	role := planfile.RoleAggregated
	if p.Disaggregated() {
		role = planfile.RolePrefill
	}
	var pools []*PoolPlan
	workers := 0
	for _, pp := range dep.Pools {
		if pp.Role == role {
			pools = append(pools, pp)
			workers += pp.Workers
		}
	}
	w := p.Workload
	hit := 0.0
	if w.Prefixes > 0 && w.Repeats > 0 && dep.Routing.WorkingSetTokens <= dep.Routing.CapacityTokens {
		hit = float64(w.Repeats-1) / float64(w.Repeats)
	}
	block := max(1, p.Router.BlockSize)
	cached := (w.PrefixTokens / block) * block // full blocks only
	uncached := max(1, w.InputTokens-int(math.Round(hit*float64(cached))))
	d := &dep.Derivation
	for _, pp := range pools {
		c := &pp.Prefill
		c.CachedPrefixFraction = hit
		c.UncachedTokens = uncached
		c.RequestRate = rate * float64(pp.Workers) / float64(workers)
		var scratch Derivation
		var err error
		c.PrefillMS, err = EstimatePrefillMSFor(dep.cat, dep.Engine.Name, dep.Model, pp.GPU, uncached, dep.layoutOf(pp), &scratch)
		if err != nil || !(c.PrefillMS > 0) || math.IsInf(c.PrefillMS, 0) {
			// No engine model for this pool (a user catalog without
			// efficiencies for it): no floor rather than a NaN or an infinity.
			c.PrefillMS = 0
			d.Add(pp.Name+".prefill_capacity_tokens_per_s", 0, "tokens/s", "unknown: the prefill time of "+pp.GPU.Name+" cannot be estimated (no engine-model efficiencies)", "0")
			continue
		}
		c.DemandTokensPerS = d.Add(pp.Name+".prefill_demand_tokens_per_s", c.RequestRate*float64(uncached), "tokens/s",
			"request_rate × workers / prefilling workers × uncached input tokens; uncached = input − (repeats − 1) / repeats × cached prefix blocks when the working set fits",
			"%g × %d / %d × %d", rate, pp.Workers, workers, uncached)
		c.CapacityTokensPerS = d.Add(pp.Name+".prefill_capacity_tokens_per_s", float64(pp.Workers)*float64(uncached)/c.PrefillMS*1000, "tokens/s",
			"workers × uncached tokens / prefill time of one request (EstimatePrefillMS: the engine model's prefill iterations): a floor that leaves out decode work and queueing",
			"%d × %d / %.3f ms", pp.Workers, uncached, c.PrefillMS)
		if n := len(scratch); n > 0 {
			d.Note("prefill_ms = " + scratch[n-1].Formula + " = " + scratch[n-1].Values)
		}
		c.WorkersNeeded = int(math.Ceil(c.RequestRate*c.PrefillMS/1000 - 1e-9))
		d.Add(pp.Name+".prefill_workers_needed", float64(c.WorkersNeeded), "workers", "ceil(pool request rate × prefill time of one request)",
			"ceil(%g/s × %.3f ms)", c.RequestRate, c.PrefillMS)
	}
}
