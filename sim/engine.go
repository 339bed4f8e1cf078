package sim

import (
	"errors"
	"fmt"
	"math"
)

// StepTimer is the engine model: the time of one engine iteration. An
// iteration runs prefill chunk i of prefillTokens[i] new tokens on top of
// prefillContext[i] tokens already in that sequence's KV, and advances
// len(decodeContext) decoding sequences by one token each, sequence j
// having decodeContext[j] tokens in its KV before the step. It returns
// milliseconds (finite, above 0 for a non-empty iteration), must not keep
// or change the slices, and must be safe for concurrent use: the policies
// of one pass call it from their own goroutines. *perf.Model implements it;
// sim imports nothing of the project, so the CLI passes it in.
type StepTimer interface {
	StepMS(prefillTokens, prefillContext, decodeContext []int) float64
}

// Engine turns on the timed simulation (Config.Engine): every worker is an
// engine that runs iterations, vLLM V1 style.
//
// Each iteration first serves the running sequences in admission order (a
// decoding one takes 1 token of the budget, one still in prefill takes the
// rest of its prompt, chunked to the budget), then admits waiting ones,
// first come first served, while the token budget, MaxNumSeqs and the KV
// blocks allow: a waiting request is admitted only if the blocks of its
// first chunk fit (cached prefix blocks are pinned, not recomputed; a hit
// never covers the last prompt token, which the engine recomputes to
// sample). Blocks grow as tokens are computed; when a running sequence
// needs a block and none is free, the most recently admitted running
// sequence is preempted (its blocks freed, its full blocks left cached),
// and it waits at the head of the queue to recompute everything it had
// (counted in Result.Preemptions). A request that could never fit a worker
// (its final KV exceeds the capacity) is rejected and counted.
// SeparatePrefill schedules as SGLang does instead: prefill iterations run
// alone and decoding waits.
//
// Disaggregation (DecodeWorkers > 0): Config.Workers are then prefill
// workers, the ones that hold the prefix caches the policies route on. A
// request is prefilled there; at the end of its prefill it goes to the
// decode worker with the fewest active blocks by the router's account (the
// prompt blocks of the requests sent there and not finished), waits there for blocks for its whole
// prompt (first come, first served), and its KV then crosses Link, shared
// by every transfer in flight; the prefill worker holds the request's
// blocks until its transfer ends. On the decode worker the request's first
// step recomputes its last prompt token and samples the first token.
//
// Decode-only iterations between events are taken in one stretch: a run of
// k steps over the same sequences (k up to the next finish, and as far as
// the KV blocks allow), timed by calling Step for the first and the last
// step and taking the steps in between as linear in the step index (exact
// when the step time is affine in each context, as a memory-bound decode
// is; ExactSteps calls Step for every iteration instead). A stretch ends
// early, at the end of the step in progress, when a request joins the
// worker.
type Engine struct {
	// Step times the iterations of the workers that Config.Workers counts
	// (every worker, or the prefill workers when disaggregated).
	Step StepTimer
	// MaxNumBatchedTokens is the token budget of an iteration, vLLM's
	// max_num_batched_tokens.
	MaxNumBatchedTokens int
	// MaxNumSeqs bounds the running sequences of a worker, vLLM's
	// max_num_seqs.
	MaxNumSeqs int
	// DecodeWorkers, when above 0, disaggregates: so many decode workers
	// behind Config.Workers prefill workers.
	DecodeWorkers int
	// DecodeStep times the decode workers' iterations; nil means Step.
	DecodeStep StepTimer
	// DecodeCapacityBlocks is a decode worker's KV capacity in blocks; 0
	// means Config.CapacityBlocks.
	DecodeCapacityBlocks int
	// DecodeMaxNumBatchedTokens and DecodeMaxNumSeqs are the decode
	// workers' limits; 0 means the values above.
	DecodeMaxNumBatchedTokens, DecodeMaxNumSeqs int
	// Link carries the KV from prefill to decode workers.
	Link Link
	// FrontendMS is the time a request spends in the frontend (HTTP,
	// tokenization, the routing decision) before it reaches the router and
	// its worker: latencies count from the client's send, so TTFT and
	// end-to-end include it, and a closed-loop client's next request reaches
	// the engine that much after the last one ended. FACTS §5 measured about
	// 13 ms at concurrency 1. FrontendMSPerToken adds that much per prompt
	// token (tokenizing and moving the prompt).
	FrontendMS, FrontendMSPerToken float64
	// SeparatePrefill schedules as SGLang does by default: an iteration
	// either prefills (running prefills, then waiting requests, within
	// MaxNumBatchedTokens) or, when there is no prefill to do, decodes every
	// running sequence; decoding waits while prefill runs. False is vLLM's
	// schedule, which mixes them.
	SeparatePrefill bool
	// ExactSteps times every decode iteration with Step instead of taking
	// decode-only runs in stretches.
	ExactSteps bool
	// Observer, when set, is shown every completed request and every gap
	// between a sequence's tokens (the figures vLLM bench computes its
	// percentiles, TPOT and goodput from). The simulation does not depend
	// on it. Run calls it from one goroutine; RunAll runs each policy in a
	// goroutine of its own, so an Observer it shares must be safe for
	// concurrent use.
	Observer Observer
}

// Observer sees the timed simulation request by request (Engine.Observer).
type Observer interface {
	// Request is called once for each completed request.
	Request(RequestTiming)
	// Gaps is called for the gaps between tokens: n sequences each waited
	// ms for their next token (one iteration's step).
	Gaps(ms float64, n int)
}

// RequestTiming is one completed request: its lengths, its arrival (the
// client's send) and its times to first and last token from there.
type RequestTiming struct {
	InputTokens, OutputTokens int
	ArrivalMS                 float64
	TTFTMS, E2EMS             float64
}

// TPOTMS is the request's time per output token after the first, (E2E −
// TTFT) / (output − 1), as vLLM bench computes it; 0 for one output token.
func (r RequestTiming) TPOTMS() float64 {
	if r.OutputTokens < 2 {
		return 0
	}
	return (r.E2EMS - r.TTFTMS) / float64(r.OutputTokens-1)
}

// Link is the path the KV of a disaggregated request crosses, in plain
// numbers (the caller reads the link profile): the bytes one path carries
// per prompt token and its throughput. With rails (a NIC per GPU, each
// tensor-parallel rank sending its own shard at the same time) a path is
// one rank's rail and BytesPerToken one rank's share; over one host port a
// path is that port and BytesPerToken the whole KV of a token.
type Link struct {
	// BytesPerS is the path's achieved throughput, all transfers together.
	BytesPerS float64
	// LatencyMS is the fixed cost of one transfer, on top of its bytes.
	LatencyMS float64
	// BytesPerToken is the KV bytes a path carries per prompt token.
	BytesPerToken float64
	// Dedicated gives every transfer the whole throughput (a link whose
	// transfers do not share it); false shares it equally among the
	// transfers in flight (processor sharing: four transfers each get a
	// quarter, as measured on 1 GbE, FACTS §3).
	Dedicated bool
	// Paths is how many such links there are side by side, each with
	// BytesPerS of its own (one per prefill–decode worker pair, as over
	// per-GPU rails on separate hosts); a transfer takes the path of its
	// decode worker, decode worker i on path i mod Paths, and shares only
	// that path. 0 or 1: one link that every transfer shares.
	Paths int
}

// settle checks e and fills its defaults.
func (e Engine) settle(cfg Config) (Engine, error) {
	if e.Step == nil {
		return e, errors.New("engine: no step-time model")
	}
	if e.MaxNumBatchedTokens < 1 {
		return e, fmt.Errorf("engine: max_num_batched_tokens %d, want at least 1", e.MaxNumBatchedTokens)
	}
	if e.MaxNumSeqs < 1 {
		return e, fmt.Errorf("engine: max_num_seqs %d, want at least 1", e.MaxNumSeqs)
	}
	if e.DecodeWorkers < 0 {
		return e, fmt.Errorf("engine: %d decode workers, want 0 (aggregated) or more", e.DecodeWorkers)
	}
	if cfg.CapacityBlocks < 1 {
		return e, fmt.Errorf("engine: a timed worker needs a KV capacity (got %d blocks)", cfg.CapacityBlocks)
	}
	if !(e.FrontendMS >= 0) || math.IsInf(e.FrontendMS, 0) || !(e.FrontendMSPerToken >= 0) || math.IsInf(e.FrontendMSPerToken, 0) {
		return e, fmt.Errorf("engine: frontend overhead %g ms + %g ms a token, want finite times ≥ 0", e.FrontendMS, e.FrontendMSPerToken)
	}
	if e.DecodeWorkers == 0 {
		return e, nil
	}
	if e.DecodeStep == nil {
		e.DecodeStep = e.Step
	}
	if e.DecodeCapacityBlocks == 0 {
		e.DecodeCapacityBlocks = cfg.CapacityBlocks
	}
	if e.DecodeCapacityBlocks < 1 {
		return e, fmt.Errorf("engine: decode capacity %d blocks, want at least 1", e.DecodeCapacityBlocks)
	}
	if e.DecodeMaxNumBatchedTokens == 0 {
		e.DecodeMaxNumBatchedTokens = e.MaxNumBatchedTokens
	}
	if e.DecodeMaxNumSeqs == 0 {
		e.DecodeMaxNumSeqs = e.MaxNumSeqs
	}
	if e.DecodeMaxNumBatchedTokens < 1 || e.DecodeMaxNumSeqs < 1 {
		return e, errors.New("engine: decode workers' max_num_batched_tokens and max_num_seqs must be at least 1")
	}
	l := e.Link
	if !(l.BytesPerS > 0) || math.IsInf(l.BytesPerS, 0) {
		return e, fmt.Errorf("link: throughput %g B/s, want a finite rate above 0", l.BytesPerS)
	}
	if !(l.LatencyMS >= 0) || math.IsInf(l.LatencyMS, 0) || !(l.BytesPerToken >= 0) || math.IsInf(l.BytesPerToken, 0) {
		return e, errors.New("link: latency and bytes per token must be finite and not negative")
	}
	if l.Paths < 0 || l.Paths > e.DecodeWorkers {
		return e, fmt.Errorf("link: %d paths, want 0 to %d (one a decode worker at most)", l.Paths, e.DecodeWorkers)
	}
	return e, nil
}
