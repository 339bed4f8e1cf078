package planner

// LoadFigures are the figures of a deployment serving a request rate: what
// `kvplan plan` prints for a candidate, `kvplan check` for a plan file or a
// manifest with workload.request_rate, `kvplan disagg --rate` for each side
// and `kvplan diff` for each of two deployments. One function computes them
// (planner/capacity's candidate, from the engine model, the memory model,
// the open-load worker model and the transfer at the load), and every
// command prints them from this type, under these JSON names.
type LoadFigures struct {
	GPUs int `json:"gpus"`

	// Prices: null when a GPU of the deployment has no price (Price says
	// "unknown").
	USDPerHour                *float64 `json:"usd_per_hour"`
	USDPerMillionOutputTokens *float64 `json:"usd_per_million_output_tokens"`
	Price                     string   `json:"price"` // "known" or "unknown"
	PriceSource               string   `json:"price_source"`

	RatePerS             float64 `json:"requests_per_s"`          // the rate the figures below are at
	RequestsPerSCapacity float64 `json:"requests_per_s_capacity"` // highest rate these pools carry within the SLO
	Utilization          float64 `json:"utilization"`             // requests_per_s / requests_per_s_capacity: 1 − headroom

	TTFTP95MS  float64 `json:"ttft_p95_ms"`
	TTFTMeanMS float64 `json:"ttft_mean_ms"`
	ITLP95MS   float64 `json:"itl_p95_ms"`
	ITLMeanMS  float64 `json:"itl_mean_ms"`
	// The other percentiles an SLO may name (planner/capacity's figures.go
	// says how each is derived); 0 when the deployment cannot carry the rate.
	TTFTP50MS float64 `json:"ttft_p50_ms"`
	TTFTP90MS float64 `json:"ttft_p90_ms"`
	TTFTP99MS float64 `json:"ttft_p99_ms"`
	ITLP50MS  float64 `json:"itl_p50_ms"`
	ITLP90MS  float64 `json:"itl_p90_ms"`
	ITLP99MS  float64 `json:"itl_p99_ms"`
	// TPOTMeanMS is the mean over requests of (last token − first token) /
	// (output tokens − 1), as vLLM bench's mean_tpot.
	TPOTMeanMS float64 `json:"tpot_mean_ms"`
	TPOTP99MS  float64 `json:"tpot_p99_ms"`
	E2EP95MS   float64 `json:"e2e_p95_ms"`
	// Goodput is the share of requests predicted to meet every per-request
	// target; null when the SLO names none (no TTFT, TPOT or E2E target).
	Goodput *float64 `json:"goodput"`
	// PercentileNotes says when a percentile is below its mean, and why.
	PercentileNotes []string `json:"percentile_notes,omitempty"`

	TransferMS     float64 `json:"transfer_ms"`     // mean KV transfer at the load (0 aggregated)
	TransferP95MS  float64 `json:"transfer_p95_ms"` // its 95th percentile
	LinkUtil       float64 `json:"link_utilization"`
	PrefixHitRatio float64 `json:"prefix_hit_ratio"` // share of requests that find their prefix cached

	OutputTokensPerSPerGPU float64 `json:"output_tokens_per_s_per_gpu"`
	TokensPerSPerUser      float64 `json:"tokens_per_s_per_user"` // 1000 / itl_mean_ms
}

// LoadResult is a deployment's LoadFigures with what decides them: whether
// it meets its SLO at the rate, and what limits it.
type LoadResult struct {
	Mode      string `json:"mode"`    // aggregated | disaggregated
	Pools     string `json:"pools"`   // "1 × tp8 h200 prefill + 2 × tp8 h200 decode over ib-ndr"
	Workers   []int  `json:"workers"` // per pool: the aggregated pool, or prefill then decode
	MeetsSLO  bool   `json:"meets_slo"`
	LimitedBy string `json:"limited_by"`       // what bounds its capacity, or why it fails at the rate
	Misses    string `json:"misses,omitempty"` // what a failing deployment misses the SLO by
	SLO       string `json:"slo"`              // the objectives held to, e.g. "TTFT p95 ≤ 1000 ms, ITL p95 ≤ 50 ms"; "" = stability only
	LoadFigures
	// Explain builds the derivation of the figures (for --explain); the
	// figures are computed without it.
	Explain func() Derivation `json:"-"`
}
