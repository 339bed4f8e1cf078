package capacity

import (
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planner"
)

// Candidate is one deployment the search sized: its pools, what it costs
// and what it achieves at the rate (or, in max-rate mode, at the highest
// rate its GPUs sustain at the SLO).
type Candidate struct {
	Mode        string `json:"mode"` // aggregated | disaggregated
	MeetsSLO    bool   `json:"meets_slo"`
	Pools       []Pool `json:"pools"`
	Link        string `json:"link,omitempty"`
	WeightDtype string `json:"weight_dtype"`
	KVDtype     string `json:"kv_dtype"`

	// The figures at the rate: gpus, usd_per_hour … tokens_per_s_per_user,
	// the same type and JSON names as kvplan check's and disagg's.
	planner.LoadFigures

	// What the price is made of: the provider, the instances the workers
	// are packed onto (and the GPUs they leave idle), or an owned cluster's
	// energy and amortisation; the power the deployment draws.
	Provider   string                `json:"provider,omitempty"`
	Instances  []planner.InstanceUse `json:"instances,omitempty"`
	IdleGPUs   int                   `json:"idle_gpus"`
	Owned      *planner.OwnedCost    `json:"owned,omitempty"`
	PowerKW    *float64              `json:"power_kw"`              // null when a GPU's TDP is unknown
	PriceNotes []string              `json:"price_notes,omitempty"` // per-GPU fallbacks, prices older than a year

	// LimitedBy says why a rejected candidate fails at the rate, or what
	// bounds a passing one's capacity: prefill compute, decode ITL, KV
	// slots, link, memory, TTFT.
	LimitedBy string   `json:"limited_by"`
	Misses    string   `json:"misses,omitempty"` // what a rejected candidate misses by
	Notes     []string `json:"notes,omitempty"`

	Simulated *Simulated `json:"simulated,omitempty"`

	Derivation planner.Derivation `json:"-"`

	shape *shape
	load  *evaluation
}

// Pool is one pool of identical workers.
type Pool struct {
	Role string `json:"role"` // aggregated | prefill | decode
	GPU  string `json:"gpu"`
	TP   int    `json:"tp"`
	// Parallel is one worker's layout, as the engines name it; Layout the
	// same as "tp1 dp8 ep8" (the counts that are 1 left out); GPUsPerWorker
	// tp × data_parallel_size × pipeline_parallel_size.
	Parallel            Parallel `json:"parallel"`
	Layout              string   `json:"layout"`
	GPUsPerWorker       int      `json:"gpus_per_worker"`
	Workers             int      `json:"workers"`
	MaxNumBatchedTokens int      `json:"max_num_batched_tokens"`
	MaxNumSeqs          int      `json:"max_num_seqs"`
	MaxModelLen         int      `json:"max_model_len"`
	KVSlotsPerWorker    int64    `json:"kv_slots_per_worker"`
	// GPUMemoryUtilization is the memory fraction the slots are sized at:
	// the engine's default for its version (kvplan memory's), as the plan
	// file writes it.
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization"`
	BatchCap             int     `json:"batch_cap"`           // sequences a worker runs at once (max_num_seqs or KV slots)
	Batch                float64 `json:"batch"`               // mean decoding sequences per worker at the rate
	PrefillUtilization   float64 `json:"prefill_utilization"` // GPU time prefill takes, per worker
	USDPerGPUHour        float64 `json:"usd_per_gpu_hour"`    // the per-GPU rate the sizing ranked by; 0 = unknown

	smallerBudget bool // max_num_batched_tokens lowered below the engine's default
}

// Simulated is the timed simulator's figures for a candidate at the same
// rate, and how far the analytic figures are from them. Percentiles are
// nearest-rank over the simulated requests (TTFT, TPOT, E2E: each request
// once) or over every gap between tokens (ITL), the frontend's overhead
// added to TTFT and E2E.
type Simulated struct {
	Requests       int      `json:"requests"`                        // completed
	Rejected       int      `json:"rejected_requests"`               // could never run
	OverContext    int      `json:"requests_over_context,omitempty"` // the workload's requests longer than the model's context, not replayed
	TTFTP50MS      float64  `json:"ttft_p50_ms"`
	TTFTP90MS      float64  `json:"ttft_p90_ms"`
	TTFTP95MS      float64  `json:"ttft_p95_ms"`
	TTFTP99MS      float64  `json:"ttft_p99_ms"`
	ITLP50MS       float64  `json:"itl_p50_ms"`
	ITLP90MS       float64  `json:"itl_p90_ms"`
	ITLP95MS       float64  `json:"itl_p95_ms"`
	ITLP99MS       float64  `json:"itl_p99_ms"`
	ITLMeanMS      float64  `json:"itl_mean_ms"` // the mean gap between tokens
	TPOTMeanMS     float64  `json:"tpot_mean_ms"`
	TPOTP90MS      float64  `json:"tpot_p90_ms"`
	TPOTP99MS      float64  `json:"tpot_p99_ms"`
	E2EP95MS       float64  `json:"e2e_p95_ms"`
	Goodput        *float64 `json:"goodput"` // null when the SLO names no per-request target
	TransferMeanMS float64  `json:"transfer_mean_ms,omitempty"`
	TTFTDiff       float64  `json:"ttft_p95_diff"` // (analytic − simulated) / simulated
	ITLDiff        float64  `json:"itl_mean_diff"`
	Disagree       bool     `json:"disagree"` // |diff| > 20% on either
	// MeetsSLO: every target within 10% in the simulation (the analytic
	// figure meeting it); Misses says which are not.
	MeetsSLO bool   `json:"meets_slo"`
	Misses   string `json:"misses,omitempty"`
	Note     string `json:"note,omitempty"`
	// SampledWorkers and SampleRatePerS are the workers per role and the
	// rate replayed when the candidate's pools are larger than the
	// simulator replays (verify.go: a sample of identical workers, each at
	// the load it has in the whole pool); left out when every worker was.
	SampledWorkers []int   `json:"sampled_workers,omitempty"`
	SampleRatePerS float64 `json:"sample_rate_per_s,omitempty"`
}

// Parallel is a worker's layout in JSON, named as the engines name it
// (models.Parallelism, every count at least 1).
type Parallel struct {
	TP                int     `json:"tensor_parallel_size"`
	DP                int     `json:"data_parallel_size"`
	EP                int     `json:"expert_parallel_size"`
	PP                int     `json:"pipeline_parallel_size"`
	SpeculativeTokens int     `json:"speculative_tokens"`
	AcceptanceLength  float64 `json:"acceptance_length"`
}

func parallelOf(p models.Parallelism) Parallel {
	n := p.Norm()
	return Parallel{TP: n.TP, DP: n.DP, EP: n.EP, PP: n.PP, SpeculativeTokens: n.SpeculativeTokens, AcceptanceLength: n.AcceptanceLength}
}

// Models is the layout as models.Parallelism.
func (p Parallel) Models() models.Parallelism {
	return models.Parallelism{TP: p.TP, DP: p.DP, EP: p.EP, PP: p.PP, SpeculativeTokens: p.SpeculativeTokens, AcceptanceLength: p.AcceptanceLength}
}

// layout is the pool's "tp1 dp8 ep8" (a pool built before layouts: its tp).
func (p Pool) layout() string {
	if p.Layout != "" {
		return p.Layout
	}
	return models.Parallelism{TP: p.TP}.String()
}
