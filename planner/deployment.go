package planner

import (
	"fmt"
	"os"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/internal/tomlpos"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planfile"
)

// DefaultEngine is the engine whose memory accounting applies when the plan
// names none.
const DefaultEngine = "vllm"

// SameGPULink is the catalog link KV takes when prefill and decode share a
// GPU and the plan names no link: NIXL between two processes on one GPU.
const SameGPULink = "same-gpu-nixl"

// PoolPlan is the figures of one pool of identical workers.
type PoolPlan struct {
	Name                 string
	Role                 string
	Workers              int
	GPU                  *catalog.GPU
	GPUs                 int // GPUs the pool occupies (workers × tp; 0 when it shares another pool's)
	ConcurrencyPerWorker int
	StagesKVInHost       bool
	Memory               *MemoryPlan
	ITLMS                float64 // decode step time, for pools that decode
}

// Deployment is every figure of a plan file: what `kvplan check` feeds the
// rules and shows as key figures.
type Deployment struct {
	Plan          *planfile.Plan
	Model         *catalog.Model
	Link          *catalog.Link // nil when the plan is not disaggregated and names none
	Engine        *catalog.Engine
	EngineVersion string  // the engine version the memory accounting is for (the newest the catalog knows unless the plan says)
	KV            *KVPlan // one request's prompt
	// RequestKVBytes is the KV of a whole request (prompt and output), all ranks.
	RequestKVBytes int64
	Pools          []*PoolPlan

	Disagg    *DisaggPlan // nil unless the plan has prefill and decode pools
	PrefillMS float64     // of one request on the pool that prefills
	TTFTMS    float64     // predicted: aggregated or disaggregated as planned
	ITLMS     float64     // predicted decode step time at the planned concurrency

	Routing RoutingFigures

	GPUs       int     // GPUs of the whole deployment
	USDPerHour float64 // on-demand cost of those GPUs

	Derivation Derivation
}

// RoutingFigures compare the prefix working set with the KV slots of the
// pool that keeps prefixes cached.
type RoutingFigures struct {
	WorkingSetTokens     int
	HolderPool           string
	HolderWorkers        int
	SlotsPerWorkerTokens int
	SlotsPoolTokens      int
	CapacityTokens       int // what the plan's router can use
	CapacityAggTokens    int // the same if every worker served aggregated
}

// PlanDeployment resolves a plan file against the catalog and computes every
// figure the rules use. Unknown names are errors at the plan file's line.
func PlanDeployment(cat *catalog.Catalog, p *planfile.Plan) (*Deployment, error) {
	at := func(field string, err error) error {
		return &tomlpos.Error{File: p.Path, Line: p.Line(field), Field: field, Msg: err.Error()}
	}
	dep := &Deployment{Plan: p}
	var err error
	if p.Model.Name != "" {
		if dep.Model, err = cat.Model(p.Model.Name); err != nil {
			return nil, at("model.name", err)
		}
	} else {
		data, err := os.ReadFile(p.ConfigPath())
		if err != nil {
			return nil, at("model.config", err)
		}
		if dep.Model, _, err = models.ImportConfig(data, p.ConfigPath(), ""); err != nil {
			return nil, err
		}
	}
	engine := p.Runtime.Engine
	if engine == "" {
		engine = DefaultEngine
	}
	if dep.Engine, dep.EngineVersion, err = cat.EngineVersion(engine, p.Runtime.EngineVersion); err != nil {
		return nil, at(pick(p.Runtime.EngineVersion != "", "runtime.engine_version", "runtime.engine"), err)
	}
	w := p.Workload
	if dep.KV, err = PlanKV(KVScenario{Model: dep.Model, KVDtype: p.Model.KVDtype, TP: p.Model.TP, Tokens: max(1, w.InputTokens)}); err != nil {
		return nil, at("model.kv_dtype", err)
	}
	dep.RequestKVBytes = dep.KV.kv.RequestBytes(max(1, w.InputTokens)+w.OutputTokens) * int64(dep.KV.TP)
	if err := dep.resolveLink(cat, at); err != nil {
		return nil, err
	}
	for _, name := range p.PoolNames() {
		pp, err := dep.planPool(cat, name, at)
		if err != nil {
			return nil, err
		}
		dep.Pools = append(dep.Pools, pp)
		dep.GPUs += pp.GPUs
		dep.USDPerHour += float64(pp.GPUs) * pp.GPU.USDPerHour
	}
	d := &dep.Derivation
	d.Add("gpus", float64(dep.GPUs), "GPUs", "Σ pools workers × tp (a pool that shares another's GPU adds none)", "%d", dep.GPUs)
	d.Add("usd_per_hour", dep.USDPerHour, "$/h", "Σ pools GPUs × on-demand $/hour of the GPU", "%.2f", dep.USDPerHour)
	if err := dep.planLatency(at); err != nil {
		return nil, err
	}
	dep.planRouting()
	return dep, nil
}

func (dep *Deployment) resolveLink(cat *catalog.Catalog, at func(string, error) error) error {
	l := dep.Plan.Link
	switch {
	case l.Name != "":
		link, err := cat.Link(l.Name)
		if err != nil {
			return at("link.name", err)
		}
		dep.Link = link
	case l.ThroughputBytesPerS > 0:
		dep.Link = &catalog.Link{Name: "plan link", EffectiveBytesPerS: l.ThroughputBytesPerS, NominalBytesPerS: l.ThroughputBytesPerS,
			LatencyMS: l.LatencyMS, Shared: true, Source: dep.Plan.Path + ": [link] throughput and latency"}
	case dep.sharesOneGPU():
		link, err := cat.Link(SameGPULink)
		if err != nil {
			return at("link", err)
		}
		dep.Link = link
	}
	return nil
}

// sharesOneGPU reports whether a prefill pool and a decode pool share GPUs.
func (dep *Deployment) sharesOneGPU() bool {
	for _, pl := range dep.Plan.Pools {
		if o, ok := dep.Plan.Pools[pl.SharesGPUWith]; ok && pl.Role != planfile.RoleAggregated && o.Role != planfile.RoleAggregated && o.Role != pl.Role {
			return true
		}
	}
	return false
}

func (dep *Deployment) planPool(cat *catalog.Catalog, name string, at func(string, error) error) (*PoolPlan, error) {
	p, pl := dep.Plan, dep.Plan.Pools[name]
	g, err := cat.GPU(pl.GPU)
	if err != nil {
		return nil, at("pools."+name+".gpu", err)
	}
	tp := max(1, p.Model.TP)
	pp := &PoolPlan{Name: name, Role: pl.Role, Workers: max(1, pl.Workers), GPU: g,
		StagesKVInHost: pl.KVBufferDevice == planfile.BufferCPU && pl.Role != planfile.RoleAggregated}
	pp.GPUs = pp.Workers * tp
	for other, o := range p.Pools {
		if other < name && (o.SharesGPUWith == name || pl.SharesGPUWith == other) {
			pp.GPUs = 0 // the first of two pools sharing GPUs counts them
		}
	}
	pp.ConcurrencyPerWorker = ceilDiv(max(1, p.Workload.Concurrency), pp.Workers)
	buffer := planfile.BufferGPU
	if pp.StagesKVInHost {
		buffer = planfile.BufferCPU
	}
	util := pl.GPUMemoryUtilization
	if util == 0 {
		util = planfile.DefaultGPUMemoryUtilization
	}
	block := p.Router.BlockSize
	if block == 0 {
		block = dep.Engine.DefaultBlockSize
	}
	pp.Memory, err = PlanMemory(MemoryScenario{
		Model: dep.Model, KV: models.KVOptions{KVDtype: p.Model.KVDtype, TP: tp}, GPU: g, Engine: dep.Engine,
		GPUUtil: util, EnforceEager: pl.EnforceEager, MaxModelLen: pl.MaxModelLen, BlockSize: block,
		LimitBytes: pl.MemoryLimitBytes, KVBuffer: buffer, Concurrency: pp.ConcurrencyPerWorker,
		InputTokens:   max(1, p.Workload.InputTokens),
		EngineVersion: dep.EngineVersion, VersionDefaulted: p.Runtime.EngineVersion == "", CPUOffloadCacheBytes: pl.CPUOffloadCacheBytes,
		MaxNumSeqs: pl.MaxNumSeqs, MaxNumBatchedTokens: pl.MaxNumBatchedTokens,
	})
	if err != nil {
		return nil, at("pools."+name, err)
	}
	if pl.Role != planfile.RolePrefill {
		pp.ITLMS = decodeStepMS(pp, dep.KV, p.Workload)
	}
	return pp, nil
}

// decodeStepMS is a memory-bound roofline of one decode step: every step
// reads the rank's weights and the KV of every sequence in the batch once,
// at the GPU's memory bandwidth. It is a floor; compute, kernel launches and
// scheduling add to it.
func decodeStepMS(pp *PoolPlan, kv *KVPlan, w planfile.Workload) float64 {
	ctx := w.InputTokens + w.OutputTokens/2 // mean context while decoding
	bytes := float64(pp.Memory.WeightsBytes) + float64(pp.ConcurrencyPerWorker)*float64(kv.kv.RequestBytes(ctx))
	return bytes / pp.GPU.MemoryBandwidthBytes * 1000
}

// planLatency predicts TTFT (and ITL) the way the plan serves: aggregated on
// its aggregated pool, or through the prefill pool, the link and the decode
// pool.
func (dep *Deployment) planLatency(at func(string, error) error) error {
	p := dep.Plan
	prefills, decodes := p.PoolsByRole(planfile.RolePrefill), p.PoolsByRole(planfile.RoleDecode)
	d := &dep.Derivation
	pool := func(name string) *PoolPlan {
		for _, pp := range dep.Pools {
			if pp.Name == name {
				return pp
			}
		}
		return nil
	}
	if p.Disaggregated() && len(prefills) > 0 && len(decodes) > 0 {
		pre, dec := pool(prefills[0].Name), pool(decodes[0].Name)
		same := dep.sharesOneGPU()
		link := dep.Link
		if link == nil {
			return at("link", fmt.Errorf("a disaggregated plan needs a [link]: name = \"1gbe\" (kvplan links list), or throughput and latency"))
		}
		dp, err := PlanDisagg(DisaggScenario{
			Model: dep.Model, KVDtype: p.Model.KVDtype, TP: p.Model.TP,
			InputTokens: max(1, p.Workload.InputTokens), OutputTokens: p.Workload.OutputTokens,
			Concurrency: max(1, p.Workload.Concurrency), Link: link,
			PrefillGPU: pre.GPU, DecodeGPU: dec.GPU, SameGPU: same, FrontendMS: DefaultFrontendMS,
		})
		if err != nil {
			return at("workload", err)
		}
		dep.Disagg, dep.PrefillMS, dep.TTFTMS, dep.ITLMS = dp, dp.PrefillMS, dp.TTFTDisaggMS, dec.ITLMS
		*d = append(*d, dp.Derivation...)
		d.Add("predicted_ttft_ms", dep.TTFTMS, "ms", "ttft_disagg_ms: the plan disaggregates", "%.3f", dep.TTFTMS)
	} else {
		var agg *PoolPlan
		for _, pp := range dep.Pools {
			if pp.Role == planfile.RoleAggregated {
				agg = pp
				break
			}
		}
		if agg == nil {
			return nil
		}
		dep.PrefillMS = EstimatePrefillMS(dep.Model, agg.GPU, max(1, p.Workload.InputTokens), p.Model.TP, d)
		dep.TTFTMS = d.Add("predicted_ttft_ms", DefaultFrontendMS+dep.PrefillMS, "ms", "frontend + prefill (aggregated)", "%g + %.3f", float64(DefaultFrontendMS), dep.PrefillMS)
		dep.ITLMS = agg.ITLMS
	}
	d.Add("predicted_itl_ms", dep.ITLMS, "ms", "(weights per rank + sequences per worker × KV per sequence) / memory bandwidth: a memory-bound floor", "%.3f", dep.ITLMS)
	return nil
}

// planRouting compares the prefix working set with the slots of the pool
// that keeps prefixes: the prefill pool when disaggregated (FACTS §1.3).
func (dep *Deployment) planRouting() {
	p := dep.Plan
	r := &dep.Routing
	r.WorkingSetTokens = p.Workload.Prefixes * p.Workload.PrefixTokens
	var holder *PoolPlan
	allSlots, bestWorker := 0, 0
	for _, pp := range dep.Pools {
		if pp.Role != planfile.RoleDecode && holder == nil {
			holder = pp
		}
		slots := int(pp.Memory.KVSlotsTokens)
		allSlots += slots * pp.Workers
		bestWorker = max(bestWorker, slots)
	}
	if holder == nil {
		return
	}
	r.HolderPool, r.HolderWorkers = holder.Name, holder.Workers
	r.SlotsPerWorkerTokens = int(holder.Memory.KVSlotsTokens)
	r.SlotsPoolTokens = r.SlotsPerWorkerTokens * holder.Workers
	r.CapacityTokens, r.CapacityAggTokens = r.SlotsPerWorkerTokens, bestWorker
	if p.Router.Mode == planfile.RouterKV {
		r.CapacityTokens, r.CapacityAggTokens = r.SlotsPoolTokens, allSlots
	}
	d := &dep.Derivation
	d.Add("working_set_tokens", float64(r.WorkingSetTokens), "tokens", "prefixes × prefix tokens", "%d × %d", p.Workload.Prefixes, p.Workload.PrefixTokens)
	d.Add("capacity_tokens", float64(r.CapacityTokens), "tokens",
		"slots of one worker of the holder pool (round-robin/random: every worker holds every prefix), or of the whole pool (kv router)",
		"pool %s: %d workers × %d slots, router %s", r.HolderPool, r.HolderWorkers, r.SlotsPerWorkerTokens, p.Router.Mode)
}
