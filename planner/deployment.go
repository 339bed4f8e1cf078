package planner

import (
	"fmt"
	"math"
	"strings"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/models/hfimport"
	"github.com/kvplan/kvplan/planfile"
	"github.com/kvplan/kvplan/units"
)

// DefaultEngine is the engine whose memory accounting applies when the plan
// names none.
const DefaultEngine = "vllm"

// SameGPULink is the catalog link KV takes when prefill and decode share a
// GPU and the plan names no link: NIXL between two processes on one GPU.
const SameGPULink = "same-gpu-nixl"

// PoolPlan is the figures of one pool of identical workers.
type PoolPlan struct {
	Name    string
	Role    string
	Workers int
	GPU     *catalog.GPU
	TP      int    // tensor-parallel ranks of one worker: pools.<name>.tp, else model.tp
	GPUs    int    // GPUs the pool occupies (workers × GPUs per worker; 0 when it shares another pool's)
	TPError string // why the engine refuses this tp for the model (models.CheckTP); "" when it accepts it
	// Parallel is one worker's layout (tp, data, expert and pipeline
	// ranks, MTP), normalized: every count at least 1.
	Parallel models.Parallelism
	// GPUsPerWorker is Parallel.GPUs(): tp × data × pipeline ranks.
	GPUsPerWorker int
	// LayoutError is why the layout cannot serve the model
	// (models.Parallelism.Check: EP not dividing the experts or tp × dp, DP
	// or EP on a dense model, MTP without an acceptance length); "" when it
	// can.
	LayoutError string
	// RedundantExperts is EPLB's redundant experts
	// (pools.<name>.redundant_experts), spread over the EP ranks.
	RedundantExperts int
	EPLB             bool // pools.<name>.eplb (or redundant experts)
	TwoBatchOverlap  bool // pools.<name>.two_batch_overlap
	KV               *KVPlan

	// RequestsInFlight is the mean number of requests holding KV on the
	// pool's workers: the plan's concurrency when aggregated; when
	// disaggregated, its share by Little's law (a request holds KV on the
	// prefill pool through prefill and transfer, on the decode pool through
	// transfer and decode).
	RequestsInFlight     float64
	ConcurrencyPerWorker int // ceil(RequestsInFlight / workers), at least 1
	StagesKVInHost       bool
	Memory               *MemoryPlan
	ITLMS                float64 // decode step time, for pools that decode

	Fit      WeightsFit
	InFlight KVInFlight
	Prompt   PromptFit
	Prefill  PrefillCapacity
	Capacity *PoolCapacity // at the SLO, from the capacity search; nil = not computed
}

// Deployment is every figure of a plan file: what `kvplan check` feeds the
// rules and shows as key figures.
type Deployment struct {
	Plan          *planfile.Plan
	Model         *catalog.Model // with the plan's model.weight_dtype applied
	Link          *catalog.Link  // nil when the plan is not disaggregated and names none
	Engine        *catalog.Engine
	EngineVersion string  // the version the memory accounting is for (the newest the catalog knows unless the plan says)
	KV            *KVPlan // one request's prompt, at model.tp
	// RequestKVBytes is the KV of a whole request (prompt and output), all ranks, at model.tp.
	RequestKVBytes int64
	// ModelKVBytesPerToken and ModelKVBytesPerRequest are the model's own
	// KV of one token and of one request (input + output) at the KV dtype,
	// one copy: FACTS §2's published figures (an MLA latent once, not once
	// per rank that replicates it).
	ModelKVBytesPerToken   int64
	ModelKVBytesPerRequest int64
	Pools                  []*PoolPlan

	Disagg    *DisaggPlan // nil unless the plan has prefill and decode pools
	PrefillMS float64     // of one request on the pool that prefills
	TTFTMS    float64     // predicted: aggregated or disaggregated as planned
	ITLMS     float64     // predicted decode step time at the planned concurrency

	Routing RoutingFigures

	// The GPUs the link must join when disaggregated: every prefill and
	// decode worker (a decode worker pulls from whichever prefill worker
	// served the request), against the GPUs one NVLink domain of their GPU
	// joins (the smallest of the pools'; 0 = a GPU without NVLink).
	PDGPUs           int
	NVLinkDomainGPUs int

	GPUs       int     // GPUs of the whole deployment
	USDPerHour float64 // on-demand cost of those GPUs (0 when a GPU's price is unknown: PriceKnown)
	PriceKnown bool    // every GPU of the deployment has an on-demand price in the catalog

	// AtLoad is the deployment at workload.request_rate, computed by the
	// capacity search's own function (kvplan plan's figures for the same
	// pools); nil without a rate, or when the pools are not one aggregated
	// pool or one prefill and one decode pool, or no engine model prices
	// them.
	AtLoad *LoadResult

	Derivation Derivation

	cat *catalog.Catalog
	// sharedBy lists, per pool, the pools whose shares_gpu_with names it
	// (built once: looking at every pool for every pool was quadratic, 2 s
	// of 10,000 pools read from a manifest).
	sharedBy map[string][]string
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
// figure the rules use. Unknown names are errors at the plan file's line; a
// deployment that cannot work (weights that do not fit, a tp the engine
// refuses) is not an error: its figures say so, and the rules turn them into
// findings.
func PlanDeployment(cat *catalog.Catalog, p *planfile.Plan) (*Deployment, error) {
	at := p.FieldError // errors at the field's place in the plan file or manifest
	dep := &Deployment{Plan: p, cat: cat}
	if err := dep.resolveModel(cat, at); err != nil {
		return nil, err
	}
	engine := p.Runtime.Engine
	if engine == "" {
		engine = DefaultEngine
	}
	var err error
	if dep.Engine, dep.EngineVersion, err = cat.EngineVersion(engine, p.Runtime.EngineVersion); err != nil {
		return nil, at(pick(p.Runtime.EngineVersion != "", "runtime.engine_version", "runtime.engine"), err)
	}
	w := p.Workload
	if dep.KV, err = PlanKV(KVScenario{Model: dep.Model, KVDtype: p.Model.KVDtype, TP: p.Model.TP, Tokens: max(1, w.InputTokens)}); err != nil {
		return nil, at("model.kv_dtype", err)
	}
	if dep.RequestKVBytes, err = units.Product(dep.KV.kv.RequestBytes(max(1, w.InputTokens)+w.OutputTokens), int64(dep.KV.TP)); err != nil {
		return nil, at("workload.input_tokens", fmt.Errorf("KV of one request on all %d ranks: %w", dep.KV.TP, err))
	}
	one, err := PlanKV(KVScenario{Model: dep.Model, KVDtype: p.Model.KVDtype, TP: 1, Tokens: max(1, w.InputTokens) + w.OutputTokens})
	if err != nil {
		return nil, at("model.kv_dtype", err)
	}
	dep.ModelKVBytesPerToken, dep.ModelKVBytesPerRequest = one.KVBytesPerToken, one.KVBytes
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
	}
	d := &dep.Derivation
	d.Add("gpus", float64(dep.GPUs), "GPUs", "Σ pools workers × GPUs per worker (tp × data × pipeline ranks; a pool that shares another's GPU adds none)", "%s", dep.gpuTerms())
	priced := dep.price(cat)
	d.Add("usd_per_hour", dep.USDPerHour, "$/h", "Σ instances × on-demand $/instance-hour (workers packed onto whole instances, as kvplan plan prices them; 0 = unknown)", "%s", priced)
	if err := dep.planLatency(at); err != nil {
		return nil, err
	}
	dep.planRouting()
	for _, pp := range dep.Pools {
		if err := dep.poolFigures(pp); err != nil {
			return nil, at("pools."+pp.Name, err)
		}
	}
	dep.planPrefillCapacity()
	dep.planReach()
	return dep, nil
}

// resolveModel finds the model and applies the plan's model.weight_dtype (a
// quantized checkpoint of the same architecture: params × the new dtype).
func (dep *Deployment) resolveModel(cat *catalog.Catalog, at func(string, error) error) error {
	p := dep.Plan
	var m *catalog.Model
	var err error
	if p.Model.Name != "" {
		if m, err = cat.Model(p.Model.Name); err != nil {
			return at("model.name", err)
		}
	} else {
		data, err := p.ReadConfig() // a regular file, capped, inside the paths root (planfile)
		if err != nil {
			return err // at model.config's place already
		}
		if m, _, err = hfimport.ImportConfig(data, p.ConfigPath(), ""); err != nil {
			return err
		}
	}
	if wd := p.Model.WeightDtype; wd != "" && wd != m.WeightDtype {
		if _, ok := catalog.DtypeBytes(wd); !ok {
			return at("model.weight_dtype", fmt.Errorf("%q is not a weight dtype kvplan knows: want one of fp32, bf16, fp16, fp8, int8, int4, mxfp4", wd))
		}
		c := *m
		c.WeightDtype, c.WeightsBytes = wd, 0 // the catalog's checkpoint size is that of the other dtype
		m = &c
	}
	dep.Model = m
	return nil
}

func (dep *Deployment) gpuTerms() string {
	var s strings.Builder // += was quadratic in the pools
	for i, pp := range dep.Pools {
		if i > 0 {
			s.WriteString(" + ")
		}
		if pp.GPUs == 0 {
			s.WriteString("0 (" + pp.Name + " shares a GPU)")
			continue
		}
		fmt.Fprintf(&s, "%d × %d (%s%s)", pp.Workers, pp.GPUsPerWorker, pp.Name, layoutSuffix(pp.Parallel))
	}
	return s.String()
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
			LatencyMS: l.LatencyMS, Shared: true, RatePer: catalog.RatePerNode,
			Source: dep.Plan.Path + ": [link] throughput and latency (taken as one path per node)"}
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
	pp := &PoolPlan{Name: name, Role: pl.Role, Workers: max(1, pl.Workers), GPU: g, TP: p.PoolTP(pl),
		StagesKVInHost: pl.KVBufferDevice == planfile.BufferCPU && pl.Role != planfile.RoleAggregated}
	if err := models.CheckTP(dep.Model, pp.TP); err != nil {
		pp.TPError = err.Error()
	}
	pp.Parallel = PoolParallelism(p, pl).Norm()
	if dense := dep.Model.MoE == nil || dep.Model.MoE.Experts == 0; dense && pp.Parallel.DP > 1 && pp.Parallel.EP <= 1 {
		// A dense model's data-parallel ranks share nothing: they are
		// replicas behind one endpoint (vLLM --data-parallel-size), planned
		// as that many workers (the dp-on-dense-model rule says so).
		dep.Derivation.Add(name+".workers", float64(pp.Workers*pp.Parallel.DP), "workers",
			"workers × data_parallel_size: a dense model's data-parallel ranks are replicas", "%d × %d", pp.Workers, pp.Parallel.DP)
		pp.Workers *= pp.Parallel.DP
		pp.Parallel.DP = 1
	}
	pp.GPUsPerWorker = pp.Parallel.GPUs()
	pp.RedundantExperts = pl.RedundantExperts
	pp.EPLB, pp.TwoBatchOverlap = pl.EPLB || pl.RedundantExperts > 0, pl.TwoBatchOverlap
	if err := PoolParallelism(p, pl).Check(withRedundantExperts(dep.Model, pl.RedundantExperts)); err != nil {
		pp.LayoutError = err.Error()
	}
	pp.GPUs = pp.Workers * pp.GPUsPerWorker
	if dep.sharedBy == nil {
		dep.sharedBy = map[string][]string{}
		for other, o := range p.Pools {
			if o.SharesGPUWith != "" {
				dep.sharedBy[o.SharesGPUWith] = append(dep.sharedBy[o.SharesGPUWith], other)
			}
		}
	}
	// The first of two pools sharing GPUs counts them.
	if other := pl.SharesGPUWith; other != "" && other < name && p.Pools[other] != nil {
		pp.GPUs = 0
	}
	for _, other := range dep.sharedBy[name] {
		if other < name {
			pp.GPUs = 0
		}
	}
	if pp.KV, err = PlanKV(KVScenario{Model: dep.Model, KVDtype: p.Model.KVDtype, TP: pp.TP, Tokens: max(1, p.Workload.InputTokens)}); err != nil {
		return nil, at("model.kv_dtype", err)
	}
	pp.RequestsInFlight = float64(max(1, p.Workload.Concurrency))
	pp.ConcurrencyPerWorker = ceilDiv(max(1, p.Workload.Concurrency), pp.Workers)
	if err := dep.planPoolMemory(pp); err != nil {
		return nil, at("pools."+name, err)
	}
	return pp, nil
}

// withRedundantExperts is m with EPLB's redundant experts placed beside its
// routed ones: the experts the expert-parallel ranks hold between them.
func withRedundantExperts(m *catalog.Model, redundant int) *catalog.Model {
	if redundant <= 0 || m.MoE == nil {
		return m
	}
	c, moe := *m, *m.MoE
	moe.Experts += redundant
	c.MoE = &moe
	return &c
}

// PoolParallelism is the layout a plan gives one of its pools: its tp
// (pools.<name>.tp, else model.tp) and its data_parallel_size,
// expert_parallel_size, pipeline_parallel_size, speculative_tokens and
// acceptance_length, as written (0 = unset; Norm makes them 1).
func PoolParallelism(p *planfile.Plan, pl *planfile.Pool) models.Parallelism {
	return models.Parallelism{TP: p.PoolTP(pl), DP: pl.DataParallelSize, EP: pl.ExpertParallelSize, PP: pl.PipelineParallelSize,
		SpeculativeTokens: pl.SpeculativeTokens, AcceptanceLength: pl.AcceptanceLength}
}

// memoryScenario is the engine configuration of one of the pool's workers.
func (dep *Deployment) memoryScenario(pp *PoolPlan) MemoryScenario {
	p, pl := dep.Plan, dep.Plan.Pools[pp.Name]
	buffer := planfile.BufferGPU
	if pp.StagesKVInHost {
		buffer = planfile.BufferCPU
	}
	util := pl.GPUMemoryUtilization // 0: the engine's default for dep.EngineVersion (PlanMemory)
	lay := dep.layoutOf(pp)
	lay.Parallel = withoutSpeculation(lay.Parallel)
	block := p.Router.BlockSize
	if block == 0 {
		block = dep.Engine.DefaultBlockSize
	}
	return MemoryScenario{
		Model: dep.Model, KV: models.KVOptions{KVDtype: p.Model.KVDtype, TP: pp.TP}, GPU: pp.GPU, Engine: dep.Engine,
		GPUUtil: util, EnforceEager: pl.EnforceEager, MaxModelLen: pl.MaxModelLen, BlockSize: block,
		MaxNumBatchedTokens: pl.MaxNumBatchedTokens, MaxNumSeqs: pl.MaxNumSeqs,
		LimitBytes: pl.MemoryLimitBytes, KVBuffer: buffer, Concurrency: rankConcurrency(pp),
		Parallel: lay.Parallel, PP: lay.Parallel.PP, RedundantExperts: lay.RedundantExperts,
		InputTokens:   max(1, p.Workload.InputTokens),
		EngineVersion: dep.EngineVersion, VersionDefaulted: p.Runtime.EngineVersion == "", CPUOffloadCacheBytes: pl.CPUOffloadCacheBytes,
	}
}

// planPoolMemory sizes one worker of the pool (GPU per rank at the pool's
// tp, host for the worker) and its decode step.
func (dep *Deployment) planPoolMemory(pp *PoolPlan) error {
	var err error
	if pp.Memory, err = PlanMemory(dep.memoryScenario(pp)); err != nil {
		return err
	}
	if pp.Role != planfile.RolePrefill {
		if pp.ITLMS, err = dep.decodeStepMS(pp); err != nil {
			// The rules report what makes the engine model refuse (a tp that
			// does not divide the heads, no efficiencies): no ITL, not a NaN.
			pp.ITLMS = 0
			dep.Derivation.Add(pp.Name+".itl_ms", 0, "ms", "unknown: the engine model cannot price this pool", "%v", err)
		}
	}
	return nil
}

// decodeStepMS is the engine model's decode iteration (package perf) for a
// worker of the pool: its share of the requests in flight decoding at the
// mean context while decoding (fixed costs, weights and KV read at the
// fitted bandwidth, all-reduces).
func (dep *Deployment) decodeStepMS(pp *PoolPlan) (float64, error) {
	w := dep.Plan.Workload
	ctx := w.InputTokens + w.OutputTokens/2
	em, err := engineModelFor(dep.cat, dep.Engine.Name, dep.Model, pp.GPU, dep.layoutOf(pp), pp.Memory.EnforceEager)
	if err != nil {
		return 0, err
	}
	return em.DecodeStep(max(1, pp.ConcurrencyPerWorker), float64(ctx)).TotalMS, nil
}

func (dep *Deployment) pool(name string) *PoolPlan {
	for _, pp := range dep.Pools {
		if pp.Name == name {
			return pp
		}
	}
	return nil
}

// planLatency predicts TTFT (and ITL) the way the plan serves: aggregated on
// its aggregated pool, or through the prefill pool, the link and the decode
// pool.
func (dep *Deployment) planLatency(at func(string, error) error) error {
	p := dep.Plan
	prefills, decodes := p.PoolsByRole(planfile.RolePrefill), p.PoolsByRole(planfile.RoleDecode)
	d := &dep.Derivation
	if p.Disaggregated() && len(prefills) > 0 && len(decodes) > 0 {
		pre, dec := dep.pool(prefills[0].Name), dep.pool(decodes[0].Name)
		link := dep.Link
		if link == nil {
			return at("link", fmt.Errorf("a disaggregated plan needs a [link]: name = \"1gbe\" (kvplan links list), or throughput and latency"))
		}
		for _, pp := range []*PoolPlan{pre, dec} {
			if pp.TPError != "" {
				// The engine refuses the pool's tp: no latency to predict. The
				// tp-not-divisible rule reports it at the tp key, not an error
				// at the [workload] line.
				d.Add("predicted_ttft_ms", 0, "ms", "unknown: pool "+pp.Name+"'s tp cannot be served", "%s", pp.TPError)
				return nil
			}
		}
		sc := DisaggScenario{
			Model: dep.Model, KVDtype: p.Model.KVDtype, TP: pre.TP, DecodeTP: dec.TP,
			InputTokens: max(1, p.Workload.InputTokens), OutputTokens: p.Workload.OutputTokens,
			RequestRate: p.Workload.RequestRate, Link: link,
			PrefillGPU: pre.GPU, DecodeGPU: dec.GPU, SameGPU: dep.sharesOneGPU(), Path: PlanRequestPath(p),
			Catalog: dep.cat, Engine: dep.Engine.Name,
		}
		if p.Workload.RequestRate == 0 || p.Has("workload.concurrency") {
			sc.RequestsInFlight = max(1, p.Workload.Concurrency)
		}
		sc.DecodeMS = float64(p.Workload.OutputTokens) * dec.ITLMS
		sc.WorkerPairs = min(pre.Workers, dec.Workers)
		dp, err := PlanDisagg(sc)
		if err != nil {
			return at("workload", err)
		}
		dep.Disagg, dep.PrefillMS, dep.TTFTMS = dp, dp.PrefillMS, dp.TTFTDisaggMS
		*d = append(*d, dp.Derivation...)
		d.Add("predicted_ttft_ms", dep.TTFTMS, "ms", "ttft_disagg_ms: the plan disaggregates", "%.3f", dep.TTFTMS)
		if err := dep.splitInFlight(pre, dec, sc.DecodeMS); err != nil {
			return at("pools", err)
		}
		dep.ITLMS = dec.ITLMS
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
		var err error
		if dep.PrefillMS, err = EstimatePrefillMSFor(dep.cat, dep.Engine.Name, dep.Model, agg.GPU, max(1, p.Workload.InputTokens), dep.layoutOf(agg), d); err != nil {
			// No TTFT either: the frontend alone is not one (a multi-node
			// worker without a [link] read "ttft_one_request_ms 13 ms").
			dep.PrefillMS = 0
			d.Add("prefill_ms", 0, "ms", "unknown: the engine model cannot price this pool", "%v", err)
			dep.ITLMS = agg.ITLMS
			d.Add("predicted_itl_ms", dep.ITLMS, "ms", "the engine model's decode iteration with the requests in flight per worker at the mean decoding context (kvplan perf)", "%.3f", dep.ITLMS)
			return nil
		}
		path := PlanRequestPath(p)
		req, err := RequestMSFor(dep.cat, dep.Engine.Name, dep.Model, agg.GPU, dep.layoutOf(agg), path, max(1, p.Workload.InputTokens), d)
		if err != nil {
			return at("workload", err)
		}
		dep.TTFTMS = d.Add("predicted_ttft_ms", req+dep.PrefillMS, "ms", "request_ms ("+path.String()+" path, router.request_path) + prefill (aggregated)", "%.3f + %.3f", req, dep.PrefillMS)
		dep.ITLMS = agg.ITLMS
	}
	d.Add("predicted_itl_ms", dep.ITLMS, "ms", "the engine model's decode iteration with the requests in flight per worker at the mean decoding context (kvplan perf)", "%.3f", dep.ITLMS)
	return nil
}

// splitInFlight shares the requests in flight between the prefill and the
// decode pool by Little's law: of a request's life (prefill + transfer +
// decode) it holds KV on the prefill pool through prefill and transfer, and
// on the decode pool through transfer and decode (the decode worker
// allocates its blocks before it pulls). The pools' memory and decode step
// are then sized again for their share (one refinement, no iteration).
func (dep *Deployment) splitInFlight(pre, dec *PoolPlan, decodeMS float64) error {
	dp, d := dep.Disagg, &dep.Derivation
	c := float64(max(1, dep.Plan.Workload.Concurrency))
	life := dp.PrefillMS + dp.TransferMSShared + decodeMS
	if life <= 0 {
		return nil
	}
	pre.RequestsInFlight = d.Add(pre.Name+".requests_in_flight", c*(dp.PrefillMS+dp.TransferMSShared)/life, "requests",
		"concurrency × (prefill + shared transfer) / (prefill + shared transfer + decode): Little's law",
		"%g × (%.3f + %.3f) / %.3f", c, dp.PrefillMS, dp.TransferMSShared, life)
	dec.RequestsInFlight = d.Add(dec.Name+".requests_in_flight", c*(dp.TransferMSShared+decodeMS)/life, "requests",
		"concurrency × (shared transfer + decode) / (prefill + shared transfer + decode): Little's law",
		"%g × (%.3f + %.3f) / %.3f", c, dp.TransferMSShared, decodeMS, life)
	for _, pp := range []*PoolPlan{pre, dec} {
		n := max(1, int(math.Ceil(pp.RequestsInFlight/float64(pp.Workers)-1e-9)))
		if n == pp.ConcurrencyPerWorker {
			continue
		}
		pp.ConcurrencyPerWorker = n
		if err := dep.planPoolMemory(pp); err != nil {
			return err
		}
	}
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
		slots := int(WorkerKVSlots(pp.Memory))
		allSlots += slots * pp.Workers
		bestWorker = max(bestWorker, slots)
	}
	if holder == nil {
		return
	}
	r.HolderPool, r.HolderWorkers = holder.Name, holder.Workers
	r.SlotsPerWorkerTokens = int(WorkerKVSlots(holder.Memory))
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

// planReach counts the GPUs of the prefill and decode pools, which one
// link must join, and the GPUs one NVLink domain of theirs holds.
func (dep *Deployment) planReach() {
	first := true
	for _, pp := range dep.Pools {
		if pp.Role != planfile.RolePrefill && pp.Role != planfile.RoleDecode {
			continue
		}
		dep.PDGPUs += pp.GPUs
		if first || pp.GPU.NVLinkDomainGPUs < dep.NVLinkDomainGPUs {
			dep.NVLinkDomainGPUs = pp.GPU.NVLinkDomainGPUs
		}
		first = false
	}
	if dep.PDGPUs > 0 {
		dep.Derivation.Add("pd_gpus", float64(dep.PDGPUs), "GPUs", "Σ prefill and decode pools workers × tp: every GPU the link joins (any decode worker pulls from any prefill worker)", "%d", dep.PDGPUs)
		dep.Derivation.Add("nvlink_domain_gpus", float64(dep.NVLinkDomainGPUs), "GPUs", "GPUs one NVLink domain of the pools' GPU joins (the catalog's nvlink_domain_gpus; 0 = no NVLink)", "%d", dep.NVLinkDomainGPUs)
	}
}

// price sets the deployment's on-demand cost the way kvplan plan prices a
// candidate with its defaults (PriceInstances: whole instances of the
// default provider, the catalog's per-GPU price for GPUs it does not
// rent); 0 when a GPU has no price. It returns the instances, for the
// derivation.
func (dep *Deployment) price(cat *catalog.Catalog) string {
	var groups []WorkerGroup
	for _, pp := range dep.Pools {
		if pp.GPUs > 0 {
			groups = append(groups, WorkerGroup{GPU: pp.GPU, TP: pp.GPUsPerWorker, Workers: pp.Workers, SpansNodes: pp.GPUsPerWorker > pp.TP})
		}
	}
	d, err := PriceInstances(groups, PriceOptions{Instances: cat.Instances})
	dep.PriceKnown = err == nil && d.Known
	if err != nil || !d.Known {
		dep.USDPerHour = 0
		if err != nil {
			return err.Error()
		}
		return strings.Join(d.Unknown, "; ")
	}
	dep.USDPerHour = d.USDPerHour
	var parts []string
	for _, u := range d.Instances {
		parts = append(parts, fmt.Sprintf("%d × %s at $%g", u.Count, u.Type, u.USDPerHour))
	}
	return strings.Join(parts, " + ")
}
