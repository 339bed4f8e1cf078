package sim

// Result is what one policy did with one workload.
type Result struct {
	// Name is the policy name.
	Name string `json:"name"`
	// Requests is the number of requests simulated.
	Requests int `json:"requests"`
	// RepeatRequests counts requests with at least one full block whose
	// chained id was seen in an earlier request (on any worker). Because ids
	// are chained, that is the same as the first full block having been seen.
	RepeatRequests int `json:"repeat_requests"`
	// HitRequests counts repeats for which at least half of the previously
	// seen leading blocks were cached on the chosen worker when it was
	// admitted: 2 × overlap ≥ seen blocks.
	HitRequests int `json:"hit_requests"`
	// HitRate is HitRequests / RepeatRequests, or 0 without repeats.
	HitRate float64 `json:"hit_rate"`
	// CachedTokenRatio is CachedTokens / InputTokens.
	CachedTokenRatio float64 `json:"cached_token_ratio"`
	// Evictions counts stored blocks evicted, over all workers.
	Evictions int64 `json:"evictions"`
	// BlocksReferenced counts full-block references (the sum of
	// len(Request.Blocks)); partial blocks are not counted.
	BlocksReferenced int64 `json:"blocks_referenced"`
	// RepeatedBlocks counts full-block references whose id was seen in an
	// earlier request.
	RepeatedBlocks int64 `json:"repeated_blocks"`
	// BlockSize is the tokens per block.
	BlockSize int `json:"block_size"`
	// InputTokens is the total prompt tokens.
	InputTokens int64 `json:"input_tokens"`
	// CachedTokens is the total prompt tokens served from the prefix cache:
	// overlap blocks × block size.
	CachedTokens int64 `json:"cached_tokens"`
	// OverflowBlocks counts blocks that could not be cached because every
	// block of the worker was pinned; those requests ran uncached for them.
	OverflowBlocks int64 `json:"overflow_blocks"`
	// SkippedLines counts malformed trace lines skipped (SkipBadLines).
	SkippedLines int `json:"skipped_lines"`
	// RepeatUncertain counts requests counted as new that may be repeats:
	// 0 unless more distinct first blocks came than the exact first-block
	// record holds (Config.SeenBlocks/4); RepeatRequests is then a lower
	// bound, short by at most this many.
	RepeatUncertain int `json:"repeat_requests_uncertain"`
	// ForgottenBlockIDs counts block ids the bounded history of seen blocks
	// dropped (Config.SeenBlocks). While it is 0, RepeatedBlocks and the
	// hit classification are exact; beyond, RepeatedBlocks is a lower bound
	// and a repeat's seen run may be short.
	ForgottenBlockIDs int64 `json:"forgotten_block_ids"`
	// Timing holds the timed simulation's figures (Config.Engine), absent
	// from the cache-only simulation.
	*Timing
	// Workers holds per-worker figures, by index: with disaggregation the
	// prefill workers, then the decode workers.
	Workers []WorkerResult `json:"workers"`
}

// Timing is what the timed simulation adds to a Result. Latencies are over
// the completed requests, from each request's arrival (its issue time in a
// closed loop).
type Timing struct {
	// TTFTMS is the time to the first token: arrival to the end of the
	// iteration that samples it (on the decode worker when disaggregated).
	TTFTMS Latency `json:"ttft_ms"`
	// TPOTMS is the time per output token after the first: (end − first
	// token) / (output − 1), over requests of at least 2 output tokens.
	TPOTMS Latency `json:"tpot_ms"`
	// E2EMS is arrival to the last token.
	E2EMS Latency `json:"e2e_ms"`
	// QueueMS is the time spent waiting for admission: in a worker's queue,
	// and when disaggregated also for blocks on the decode worker.
	QueueMS Latency `json:"queue_ms"`
	// TransferMS is the KV transfer's time on the link, sharing included
	// (0 when aggregated).
	TransferMS Latency `json:"transfer_ms"`
	// RequestsPerS and OutputTokensPerS are completions and output tokens
	// over DurationMS.
	RequestsPerS     float64 `json:"requests_per_s"`
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
	// DurationMS is the first arrival to the last completion.
	DurationMS float64 `json:"duration_ms"`
	// Completed and Rejected count requests that ran to the end and those
	// that could never run (an empty prompt, or KV larger than a worker).
	Completed int `json:"completed_requests"`
	Rejected  int `json:"rejected_requests"`
	// Preemptions counts sequences preempted for lack of KV blocks.
	Preemptions int64 `json:"preemptions"`
}

func (r *Result) timing() *Timing {
	if r.Timing == nil {
		r.Timing = &Timing{}
	}
	return r.Timing
}

// WorkerResult is one worker's share of a Result.
type WorkerResult struct {
	Index int `json:"index"`
	// Requests routed to this worker, and their share of all requests.
	Requests     int     `json:"requests"`
	RequestShare float64 `json:"request_share"`
	// PeakOccupancyBlocks is the most blocks held at once (stored plus
	// scratch), at most the capacity.
	PeakOccupancyBlocks int   `json:"peak_occupancy_blocks"`
	Evictions           int64 `json:"evictions"`
	OverflowBlocks      int64 `json:"overflow_blocks"`
	// WorkerTiming is the timed simulation's per-worker figures.
	*WorkerTiming
}

// WorkerTiming is one worker's share of a Timing.
type WorkerTiming struct {
	// Role is aggregated, prefill or decode.
	Role string `json:"role"`
	// GPUBusyFraction is the time the worker ran iterations over
	// Timing.DurationMS.
	GPUBusyFraction float64 `json:"gpu_busy_fraction"`
	Preemptions     int64   `json:"preemptions"`
}
