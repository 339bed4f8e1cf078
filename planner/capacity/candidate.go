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

	RatePerS             float64 `json:"requests_per_s"`          // the rate the figures below are at
	RequestsPerSCapacity float64 `json:"requests_per_s_capacity"` // highest rate these pools carry within the SLO
	Utilization          float64 `json:"utilization"`             // requests_per_s / requests_per_s_capacity: 1 − headroom

	TTFTP95MS      float64 `json:"ttft_p95_ms"`
	TTFTMeanMS     float64 `json:"ttft_mean_ms"`
	ITLP95MS       float64 `json:"itl_p95_ms"`
	ITLMeanMS      float64 `json:"itl_mean_ms"`
	TransferMS     float64 `json:"transfer_ms"`     // mean KV transfer at the load (0 aggregated)
	TransferP95MS  float64 `json:"transfer_p95_ms"` // its 95th percentile
	LinkUtil       float64 `json:"link_utilization"`
	PrefixHitRatio float64 `json:"prefix_hit_ratio"` // share of requests that find their prefix cached

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
	USDPerGPUHour       float64 `json:"usd_per_gpu_hour"`    // 0 with an unknown price

	smallerBudget bool // max_num_batched_tokens lowered below the engine's default
}

// Simulated is the timed simulator's figures for a candidate at the same
// rate, and how far the analytic figures are from them.
type Simulated struct {
	Requests       int     `json:"requests"`          // completed
	Rejected       int     `json:"rejected_requests"` // could never run
	TTFTP95MS      float64 `json:"ttft_p95_ms"`       // log-linear between the simulator's p90 and p99
	TTFTP90MS      float64 `json:"ttft_p90_ms"`
	TTFTP99MS      float64 `json:"ttft_p99_ms"`
	ITLMeanMS      float64 `json:"itl_mean_ms"` // the simulator's mean TPOT
	TPOTP90MS      float64 `json:"tpot_p90_ms"`
	TransferMeanMS float64 `json:"transfer_mean_ms,omitempty"`
	TTFTDiff       float64 `json:"ttft_p95_diff"` // (analytic − simulated) / simulated
	ITLDiff        float64 `json:"itl_mean_diff"`
	Disagree       bool    `json:"disagree"` // |diff| > 20% on either
	Note           string  `json:"note,omitempty"`
	// SampledWorkers and SampleRatePerS are the workers per role and the
	// rate replayed when the candidate's pools are larger than the
	// simulator replays (verify.go: a sample of identical workers, each at
	// the load it has in the whole pool); left out when every worker was.
	SampledWorkers []int   `json:"sampled_workers,omitempty"`
	SampleRatePerS float64 `json:"sample_rate_per_s,omitempty"`
}
