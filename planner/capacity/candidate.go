package capacity

import "github.com/kvplan/kvplan/planner"

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
	GPUs        int    `json:"gpus"`

	// Prices: null when a GPU of the candidate has no price (Price says
	// "unknown"); such candidates rank after every priced one.
	USDPerHour                *float64 `json:"usd_per_hour"`
	USDPerMillionOutputTokens *float64 `json:"usd_per_million_output_tokens"`
	Price                     string   `json:"price"` // "known" or "unknown"
	PriceSource               string   `json:"price_source"`
	// What the price is made of: the provider, the instances the workers
	// are packed onto (and the GPUs they leave idle), or an owned cluster's
	// energy and amortisation; the power the deployment draws.
	Provider   string                `json:"provider,omitempty"`
	Instances  []planner.InstanceUse `json:"instances,omitempty"`
	IdleGPUs   int                   `json:"idle_gpus"`
	Owned      *planner.OwnedCost    `json:"owned,omitempty"`
	PowerKW    *float64              `json:"power_kw"`              // null when a GPU's TDP is unknown
	PriceNotes []string              `json:"price_notes,omitempty"` // per-GPU fallbacks, prices older than a year

	RatePerS             float64 `json:"requests_per_s"`          // the rate the figures below are at
	RequestsPerSCapacity float64 `json:"requests_per_s_capacity"` // highest rate these pools carry within the SLO
	Utilization          float64 `json:"utilization"`             // requests_per_s / requests_per_s_capacity: 1 − headroom

	TTFTP95MS  float64 `json:"ttft_p95_ms"`
	TTFTMeanMS float64 `json:"ttft_mean_ms"`
	ITLP95MS   float64 `json:"itl_p95_ms"`
	ITLMeanMS  float64 `json:"itl_mean_ms"`
	// The other percentiles an SLO may name (figures.go says how each is
	// derived); 0 when the candidate cannot carry the rate.
	TTFTP50MS  float64 `json:"ttft_p50_ms"`
	TTFTP90MS  float64 `json:"ttft_p90_ms"`
	TTFTP99MS  float64 `json:"ttft_p99_ms"`
	ITLP50MS   float64 `json:"itl_p50_ms"`
	ITLP90MS   float64 `json:"itl_p90_ms"`
	ITLP99MS   float64 `json:"itl_p99_ms"`
	TPOTMeanMS float64 `json:"tpot_mean_ms"`
	TPOTP99MS  float64 `json:"tpot_p99_ms"`
	E2EP95MS   float64 `json:"e2e_p95_ms"`
	// Goodput is the share of requests predicted to meet every per-request
	// target; null when the SLO names none (no TTFT, TPOT or E2E target).
	Goodput *float64 `json:"goodput"`
	// PercentileNotes says when a percentile is below its mean, and why.
	PercentileNotes []string `json:"percentile_notes,omitempty"`
	TransferMS      float64  `json:"transfer_ms"`     // mean KV transfer at the load (0 aggregated)
	TransferP95MS   float64  `json:"transfer_p95_ms"` // its 95th percentile
	LinkUtil        float64  `json:"link_utilization"`
	PrefixHitRatio  float64  `json:"prefix_hit_ratio"` // share of requests that find their prefix cached

	OutputTokensPerSPerGPU float64 `json:"output_tokens_per_s_per_gpu"`
	TokensPerSPerUser      float64 `json:"tokens_per_s_per_user"` // 1000 / itl_mean_ms

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
	Role                string  `json:"role"` // aggregated | prefill | decode
	GPU                 string  `json:"gpu"`
	TP                  int     `json:"tp"`
	Workers             int     `json:"workers"`
	MaxNumBatchedTokens int     `json:"max_num_batched_tokens"`
	MaxNumSeqs          int     `json:"max_num_seqs"`
	MaxModelLen         int     `json:"max_model_len"`
	KVSlotsPerWorker    int64   `json:"kv_slots_per_worker"`
	BatchCap            int     `json:"batch_cap"`           // sequences a worker runs at once (max_num_seqs or KV slots)
	Batch               float64 `json:"batch"`               // mean decoding sequences per worker at the rate
	PrefillUtilization  float64 `json:"prefill_utilization"` // GPU time prefill takes, per worker
	USDPerGPUHour       float64 `json:"usd_per_gpu_hour"`    // the per-GPU rate the sizing ranked by; 0 = unknown

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
}
