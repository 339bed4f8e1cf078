package planner

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/links"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/units"
)

// SimulationScenario is a deployment to simulate in time: one model on
// workers of one GPU type, aggregated or (with Link) disaggregated.
type SimulationScenario struct {
	Catalog *catalog.Catalog // the engine model's efficiencies
	Model   *catalog.Model
	GPU     *catalog.GPU
	// Engine is the catalog entry of the engine's version (catalog.EngineVersion);
	// EngineVersion names it, VersionDefaulted when it is the newest, not asked for.
	Engine           *catalog.Engine
	EngineVersion    string
	VersionDefaulted bool
	KV               models.KVOptions // KV dtype and tensor parallelism
	WeightDtype      string           // matmul weights; "" = the model's

	GPUUtil             float64 // --gpu-memory-utilization, in (0, 1]
	EnforceEager        bool
	CUDAGraphMaxBatch   int // the largest CUDA-graphed iteration, tokens; 0 = the engine model's default (perf.Spec.GraphMax)
	MaxModelLen         int // 0 = the model's max context
	BlockSize           int // tokens per KV block
	MaxNumBatchedTokens int // 0 = the engine's default for the GPU
	MaxNumSeqs          int // 0 = the engine's default for the GPU

	// Link carries the KV from prefill to decode workers; nil when
	// aggregated. Both sides run the same GPU, tp and engine.
	Link *catalog.Link

	// Path is how a request reaches its worker (perf.RequestPath): through
	// a frontend at its cost (kvplan simulate's default, as plan and
	// disagg), or direct at the engine model's fitted request_ms +
	// request_us_per_token × prompt tokens (the zero value; calibrate
	// replays benchmarks run so).
	Path perf.RequestPath

	// Layout is each worker's layout beyond KV.TP (data, expert and
	// pipeline ranks, EPLB, two-batch overlap, MTP) and the network between
	// its NVLink domains; the zero value is tensor parallelism alone. A
	// worker of data-parallel ranks is simulated as one engine whose
	// iterations carry every rank's batch (perf's Step contract): its KV
	// blocks, token budget and sequences are the ranks' added up.
	Layout WorkerLayout

	// SpeculativeTokens, AcceptanceLength: the model's MTP heads propose
	// N tokens per step, L accepted per target step (the engine model's
	// MTP terms, docs/parallelism.md); 0 = none. Layout's, when it sets
	// them, are the same.
	SpeculativeTokens int
	AcceptanceLength  float64
}

// SimulationPlan is what the timed simulator needs, in plain numbers, with
// how each was derived.
type SimulationPlan struct {
	Memory *MemoryPlan `json:"memory"`
	// CapacityBlocks is a worker's KV blocks (kvplan memory's kv_blocks).
	CapacityBlocks      int `json:"capacity_blocks"`
	MaxNumBatchedTokens int `json:"max_num_batched_tokens"`
	MaxNumSeqs          int `json:"max_num_seqs"`
	// Layout is the worker's layout, normalized (tp alone: plain).
	Layout models.Parallelism `json:"-"`

	// Step is the engine model that times every iteration, StepModel its
	// name (with how its efficiencies were chosen), and SeparatePrefill the
	// engine's schedule (prefill iterations alone, as SGLang's).
	Step            *perf.Model `json:"-"`
	StepModel       string      `json:"step_model"`
	SeparatePrefill bool        `json:"separate_prefill"`
	// FrontendMS + FrontendMSPerToken × prompt tokens is a request's time
	// before its worker on RequestPath (perf.RequestPath.Cost: the
	// frontend's cost, or direct the engine model's fitted request_ms and
	// request_us_per_token), and RampMS the start-up ramp of a closed
	// loop's clients (its fitted ramp_ms).
	RequestPath        string  `json:"request_path"`
	FrontendMS         float64 `json:"frontend_ms"`
	FrontendMSPerToken float64 `json:"frontend_ms_per_token"`
	RampMS             float64 `json:"ramp_ms"`

	// Disaggregated only: the link's busiest path.
	Link              string  `json:"link,omitempty"`
	LinkRatePer       string  `json:"link_rate_per,omitempty"`
	ParallelPaths     int     `json:"parallel_paths,omitempty"`
	PathBytesPerToken float64 `json:"path_bytes_per_token,omitempty"`
	PathBytesPerS     float64 `json:"path_bytes_per_s,omitempty"`
	LinkLatencyMS     float64 `json:"link_latency_ms,omitempty"`
	LinkShared        bool    `json:"link_shared,omitempty"`

	Assumptions []string   `json:"assumptions"`
	Derivation  Derivation `json:"derivation,omitempty"`
}

// PlanSimulation sizes the simulated workers with the memory model, builds
// the engine model that times their iterations (package perf, the model of
// kvplan perf) and places the KV transfer on the link's paths. A worker that
// cannot start (weights leave no KV cache, or vLLM would refuse its
// max_model_len) is an error that says what to change.
func PlanSimulation(sc SimulationScenario) (*SimulationPlan, error) {
	switch {
	case sc.Model == nil || sc.GPU == nil || sc.Engine == nil:
		return nil, fmt.Errorf("a simulation needs a model, a GPU and an engine")
	case sc.Catalog == nil:
		return nil, fmt.Errorf("no catalog given for the engine model's efficiencies")
	}
	sched, ok := perf.Schedules[sc.Engine.Name]
	if !ok {
		return nil, fmt.Errorf("engine %q is not one the engine model knows (%s)", sc.Engine.Name, strings.Join(PerfEngines(), ", "))
	}
	// Weights of another dtype change the memory budget as well as the
	// step times (as kvplan perf takes them).
	m := *sc.Model
	if sc.WeightDtype != "" && sc.WeightDtype != m.WeightDtype {
		if _, ok := catalog.DtypeBytes(sc.WeightDtype); !ok {
			return nil, fmt.Errorf("weight dtype %q is not one of %s", sc.WeightDtype, strings.Join(catalog.WeightDtypes, ", "))
		}
		m.WeightDtype, m.WeightsBytes = sc.WeightDtype, 0
	}
	lay := sc.Layout
	lay.Parallel.TP = max(1, sc.KV.TP)
	if lay.Parallel.SpeculativeTokens == 0 {
		lay.Parallel.SpeculativeTokens, lay.Parallel.AcceptanceLength = sc.SpeculativeTokens, sc.AcceptanceLength
	}
	lay.Parallel = lay.Parallel.Norm()
	mp, err := PlanMemory(MemoryScenario{Model: &m, KV: sc.KV, GPU: sc.GPU, Engine: sc.Engine, EngineVersion: sc.EngineVersion,
		VersionDefaulted: sc.VersionDefaulted, GPUUtil: sc.GPUUtil, EnforceEager: sc.EnforceEager, MaxModelLen: sc.MaxModelLen,
		BlockSize: sc.BlockSize, MaxNumBatchedTokens: sc.MaxNumBatchedTokens, MaxNumSeqs: sc.MaxNumSeqs,
		Parallel: withoutSpeculation(lay.Parallel), PP: lay.Parallel.PP, RedundantExperts: lay.RedundantExperts})
	if err != nil {
		return nil, err
	}
	switch {
	case !mp.ModelFits || mp.KVBlocks <= 0:
		return nil, fmt.Errorf("%s on %s (tp %d) at --gpu-memory-utilization %g leaves no room for a KV cache: weights of %s per rank against %s requested; "+
			"use more tensor-parallel ranks (--tp), fp8 weights (--weight-dtype fp8), a higher utilization or a bigger GPU (kvplan memory shows the budget)",
			mp.Model, mp.GPU, mp.TP, mp.GPUUtil, units.Bytes(mp.WeightsBytes), units.Bytes(mp.RequestedBytes))
	case !mp.MaxModelLenFits:
		return nil, fmt.Errorf("%s on %s: vLLM refuses to start, one request of max_model_len %d needs more KV than the %d slots a worker has; "+
			"give --max-model-len %d or less, or more memory (kvplan memory shows the budget)",
			mp.Model, mp.GPU, mp.MaxModelLen, mp.KVSlotsTokens, mp.LargestFittingMaxModelLen)
	case mp.KVBlocks > 1<<31-1:
		return nil, fmt.Errorf("%s on %s: %d KV blocks is more than the simulator addresses", mp.Model, mp.GPU, mp.KVBlocks)
	}
	step, err := perf.New(perf.Spec{Model: &m, GPU: sc.GPU, Engine: sc.Engine.Name, TP: mp.TP, WeightDtype: m.WeightDtype,
		KVDtype: mp.KVDtype, EnforceEager: sc.EnforceEager, GraphMax: sc.CUDAGraphMaxBatch, Catalog: sc.Catalog,
		Parallel: lay.Parallel, Link: lay.Link, RedundantExperts: lay.RedundantExperts, EPLB: lay.EPLB || lay.RedundantExperts > 0, TwoBatchOverlap: lay.TwoBatchOverlap})
	if err != nil {
		return nil, err
	}
	dp := int64(lay.Parallel.DP) // each data-parallel rank holds its own KV and schedules its own budget
	if mp.KVBlocks*dp > 1<<31-1 {
		return nil, fmt.Errorf("%s on %s: %d KV blocks is more than the simulator addresses", mp.Model, mp.GPU, mp.KVBlocks*dp)
	}
	p := &SimulationPlan{Memory: mp, CapacityBlocks: int(mp.KVBlocks * dp), MaxNumBatchedTokens: mp.MaxNumBatchedTokens * int(dp), MaxNumSeqs: mp.MaxNumSeqs * int(dp), Layout: lay.Parallel,
		Step: step, StepModel: step.Name, SeparatePrefill: sched.SeparatePrefill, RampMS: step.Efficiency.RampMS}
	rc := step.RequestCost(sc.Path)
	p.RequestPath, p.FrontendMS, p.FrontendMSPerToken = rc.Path, rc.FixedMS, rc.PerTokenMS
	if step.Fallback != "" {
		p.StepModel += " (" + step.Fallback + ")"
	}
	p.Assumptions = append(p.Assumptions, sched.Note)
	p.Assumptions = append(p.Assumptions, mp.Assumptions...)
	p.Assumptions = append(p.Assumptions, step.Notes...)
	d := &p.Derivation
	if dp > 1 {
		d.Add("capacity_blocks", float64(p.CapacityBlocks), "blocks", "kvplan memory's kv_blocks of one data-parallel rank × data_parallel_size (each rank holds its own requests' KV)",
			"%d × %d", mp.KVBlocks, dp)
	} else {
		d.Add("capacity_blocks", float64(p.CapacityBlocks), "blocks", "kvplan memory's kv_blocks of one worker (every rank holds the same tokens)",
			"%d slots / %d tokens a block", mp.KVSlotsTokens, mp.BlockSize)
	}
	fixed, perTok := "the frontend's cost per request (--frontend-ms), in place of the engine's server", "none: the frontend's cost is per request"
	if rc.Path == perf.PathDirect {
		fixed, perTok = "the engine model's request_ms (the engine's own HTTP server)", "the engine model's request_us_per_token / 1000 (its tokenizer)"
	}
	d.Add("frontend_ms", p.FrontendMS, "ms", "a request's fixed cost before its worker, "+rc.Path+" path: "+fixed, "%g ms", p.FrontendMS)
	d.Note(rc.Source)
	d.Add("frontend_ms_per_token", p.FrontendMSPerToken, "ms/token", "its cost per prompt token: "+perTok, "%g µs / 1000", p.FrontendMSPerToken*1000)
	d.Add("ramp_ms", p.RampMS, "ms", "the engine model's ramp_ms: a closed loop's first requests are sent spread over it, as a benchmark's clients start",
		"%s", step.Efficiency.Key())
	if sc.Link == nil {
		return p, nil
	}
	tp := mp.TP
	perToken := mp.KVBytesPerToken * int64(tp) // what the decode ranks pull for one token, added up
	paths, err := links.Split(sc.Link, perToken, tp, tp)
	if err != nil {
		return nil, err
	}
	p.Link, p.LinkRatePer, p.ParallelPaths = sc.Link.Name, sc.Link.RatePer, paths.Rails
	if p.LinkRatePer == "" {
		p.LinkRatePer = catalog.RatePerNode
	}
	p.PathBytesPerToken = float64(perToken) / float64(paths.Rails)
	p.PathBytesPerS, p.LinkLatencyMS, p.LinkShared = sc.Link.EffectiveBytesPerS, sc.Link.LatencyMS, sc.Link.Shared
	if paths.PerGPU {
		d.Add("path_bytes_per_token", p.PathBytesPerToken, "B/token",
			"KV bytes per token per rank × tp / tp rails: the link's rate is per GPU, each rank sends its own shard on its own rail (an MLA latent is one copy a rank)",
			"%d × %d / %d", mp.KVBytesPerToken, tp, paths.Rails)
	} else {
		d.Add("path_bytes_per_token", p.PathBytesPerToken, "B/token",
			"KV bytes per token per rank × tp: the link is one path per node, every rank's KV crosses it",
			"%d × %d", mp.KVBytesPerToken, tp)
	}
	shared := "shared by every transfer in flight (processor sharing)"
	if !p.LinkShared {
		shared = "each transfer at the full rate (not shared)"
	}
	d.Add("path_bytes_per_s", p.PathBytesPerS, "B/s", "the link's effective throughput, "+shared, "%s", sc.Link.Effective)
	d.Note(sc.Link.Source)
	return p, nil
}
