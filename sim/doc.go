// Package sim is kvplan's block-level prefix-cache and router simulator,
// with the workload sources it runs on. It answers FACTS §1.3: does the
// prefix working set fit a worker, and how much reuse does each routing
// policy keep?
//
// # Model
//
// Each worker has a KV cache of Config.CapacityBlocks blocks of
// Config.BlockSize tokens. A request's full prompt blocks are named by
// chained 64-bit ids (an id stands for its block and all before it, as in
// vLLM and Dynamo) and are cached with LRU eviction; the trailing partial
// block and the output tokens take scratch blocks while the request runs,
// and when it completes the ones that filled up stay cached as vLLM keeps
// every full block (they take room and are evicted like any block, but no
// later prompt names their content, so they never match). A request holds
// KV for input + output − 1 tokens at the end (the last sampled token is
// never fed back). A running request pins its blocks; when every block is
// pinned, what does not fit runs uncached and is counted
// (Result.OverflowBlocks). The cache rules, tie-breaks included, are
// documented on the cache type in cache.go.
//
// Requests are issued in order, at most Config.Concurrency in flight, or at
// their trace arrival times, or at Poisson arrival times (Config.RatePerS).
// In the cache-only simulation a request completes after a service time of
// PrefillMSPerToken × uncached prompt tokens + DecodeMSPerToken × output
// tokens (see the constants in config.go), whatever else its worker does.
//
// # Timed simulation
//
// With Config.Engine every worker is an engine that batches, vLLM V1 style:
// iterations of chunked prefill and decode within max_num_batched_tokens and
// max_num_seqs, admission only while KV blocks are free (cached prefix
// blocks are pinned, not recomputed), a first-come-first-served waiting
// queue, and recompute preemption of the last admitted sequence when a
// running one cannot grow. Iteration times come from a StepTimer, the
// engine model, which the caller passes in (sim imports nothing of the
// project's models, catalog or planner). Optionally the workers are prefill workers behind which decode
// workers take each request after its KV crossed a link shared by every
// transfer in flight (processor sharing). Routers see the load in flight
// as Dynamo's router keeps it, from its own decisions (see active.go): the
// requests routed to each worker and not finished, the prompt tokens of
// those not yet past their first token, and their distinct prompt blocks.
// Results add TTFT, TPOT, end-to-end, queue and transfer latencies (p50,
// p90, p99, mean), throughput, preemptions and each worker's busy fraction. See Engine for the rules and the one
// approximation (decode stretches).
//
// Everything is deterministic for given inputs and seeds.
//
// # Policies
//
//   - round-robin: workers in turn.
//   - random: uniform, from a PCG seeded with Config.Seed.
//   - least-loaded: NVIDIA Dynamo's least-loaded mode: the fewest requests
//     in flight (routed there and not finished).
//   - kv-aware: NVIDIA Dynamo's KV router (FACTS §5): the lowest
//     PrefillLoadScale × max(0, (booked prefill tokens + prompt tokens) /
//     block − OverlapCredit × overlap) + active blocks + new blocks, where
//     booked prefill tokens are those of the requests routed to the worker
//     whose first token has not come yet (each booked as its prompt less the
//     overlap the router saw), overlap is the run of the request's leading
//     blocks cached on the worker, active blocks are the distinct full
//     prompt blocks of the requests in flight there and new blocks the
//     request's blocks not among them.
//   - kv-aware-no-events: the same cost with every overlap 0, the router's
//     view when workers publish no KV events; one request at a time it
//     routes exactly like least-loaded.
//   - kv-aware-approx: overlaps from the blocks the router itself sent to
//     each worker, ignoring evictions. The router keeps, for each block id,
//     a bit mask of the workers it went to, in the same bounded history
//     as the repeat metric below, so one probe a block serves every worker.
//
// Exact ties go to the worker that has received the fewest requests, then
// the lowest index (Dynamo draws among tied workers at random; this
// deterministic stand-in gives each its turn).
//
// # One pass
//
// RunAll reads the source once and feeds every policy from the same
// requests: one producer parses, validates and classifies each request
// against one history of seen blocks, and hands batches to one goroutine per
// policy (kv-aware-approx runs in the producer, since its routing state is
// that history). One request at a time, kv-aware-no-events routes exactly
// like least-loaded (nothing is in flight and its overlaps are all 0, so its
// cost is the same on every worker and the tie-break decides), so when both
// run on a sequential load the pass simulates least-loaded once and reports
// it under both names. Each result equals a run of that policy alone, whatever the
// goroutine schedule (TestOnePassEqualsSeparateRuns).
//
// # Metrics
//
// A request is a repeat if its first full block was seen in an earlier
// request, and a hit if at least half of its previously seen leading blocks
// were cached on the worker it went to. See Result for every field.
//
// # Memory
//
// Worker caches take memory in proportion to Workers × CapacityBlocks
// (about 120 to 220 bytes a block for caches of up to 65,536 blocks, 45 to
// 70 beyond).
// The record of seen blocks is the only structure that would grow with the
// trace, so it is bounded by Config.SeenBlocks (default DefaultSeenBlocks,
// 8,388,608 ids): at most that many ids in two generations of hash tables,
// at most 16 bytes an id (plus a byte per 8 workers for kv-aware-approx).
// Until a run references about SeenBlocks/2 distinct blocks nothing is
// forgotten and results are exact; beyond, the ids not referenced for a
// whole generation are forgotten (Result.ForgottenBlockIDs counts them), so
// a repeat's seen run can come out short and kv-aware-approx no longer
// credits a worker for it. Forgetting never creates a repeat or an overlap.
// The repeat count itself stays exact: a separate record of first blocks,
// one id a request prefix, holds up to SeenBlocks/4 distinct first blocks
// (at most 32 MiB under the default) and never forgets; past that it says
// by how much the count may be short (Result.RepeatUncertain). A negative
// SeenBlocks removes both bounds (memory then grows with the distinct
// blocks, 16 to 32 bytes each). The full conversation trace stays exact
// under the default at every block size from 16 to 512 tokens. The pass
// holds at most a few batches of requests (batchesInFlight × 32,768 ids).
//
// # Trace files
//
// Traces are opened and streamed through internal/safefile, the one project
// package sim imports (it imports only the standard library): a FIFO, a
// device or a directory is refused before a byte is read, a line is capped
// at MaxTraceLineBytes (1 MiB) and its hash ids at MaxHashIDsPerLine
// (65,536), and a trace with no request is an error. The caps sit in the
// reader, not in the command, so every reader of a trace (a file, stdin, a
// test) is bounded; the read buffer stays 64 KiB, so the parse keeps its
// speed.
//
// # API
//
//	type Config struct {
//		Workers, CapacityBlocks, BlockSize int
//		Policy                              string
//		Seed                                uint64
//		PrefillLoadScale, OverlapCredit     float64
//		Concurrency                         int
//		RatePerS                            float64 // Poisson arrivals, seeded
//		Engine                              *Engine // timed simulation; nil: cache-only
//		PrefillMSPerToken, DecodeMSPerToken float64
//		ExplicitZero                        bool // 0 in the four floats means 0, not the default
//		SeenBlocks                          int  // bound on remembered block ids; 0 default, < 0 none
//		Progress                            func(done int)
//	}
//	func DefaultConfig() Config // every default, ExplicitZero set
//	func Run(src Source, cfg Config) (Result, error)
//	func RunAll(open func() (Source, error), cfg Config, policies []string) ([]Result, error)
//	func Policies() []string
//	func ResolvePolicies(names []string) ([]string, error)
//
//	type StepTimer interface { StepMS(prefillTokens, prefillContext, decodeContext []int) float64 }
//	type Engine struct {
//		Step                                  StepTimer
//		MaxNumBatchedTokens, MaxNumSeqs       int
//		DecodeWorkers                         int // > 0: Workers are prefill workers
//		DecodeStep                            StepTimer
//		DecodeCapacityBlocks                  int
//		DecodeMaxNumBatchedTokens, DecodeMaxNumSeqs int
//		Link                                  Link
//		ExactSteps                            bool
//	}
//	type Link struct { BytesPerS, LatencyMS, BytesPerToken float64; Dedicated bool; Paths int }
//
//	type Request struct { ArrivalMS float64; InputTokens, OutputTokens int; Blocks []uint64 }
//	type Source interface { Next(*Request) (bool, error); BlockSize() int }
//	type Timed interface { Timed() bool }     // optional: follow arrival times
//	type Skipper interface { Skipped() int }  // optional: malformed lines skipped
//
//	type Synthetic struct { Prefixes, PrefixTokens, Repeats, TailTokens, OutputTokens, BlockSize int; Seed uint64 }
//	func (Synthetic) Open() (Source, error)
//	func ParseSyntheticSpec(s string) (prefixes, tokens, repeats int, err error)
//
//	func NewMooncakeReader(r io.Reader, name string, blockSize int, skipBad bool) *MooncakeReader
//	func OpenMooncake(path string, blockSize int, skipBad bool) (*MooncakeReader, error)
//	// *MooncakeReader: Next, BlockSize, Timed, Skipped, Close
//
//	const RoundRobin, Random, LeastLoaded, KVAware, KVAwareNoEvents, KVAwareApprox, AllPolicies // names
//	const DefaultPrefillMSPerToken, DefaultDecodeMSPerToken      // 0.03, 20 ms a token
//	const DefaultPrefillLoadScale, DefaultOverlapCredit          // 1, 1
//	const DefaultSeenBlocks                                      // 8,388,608 block ids
//	const DefaultSyntheticBlockSize, DefaultOutputTokens         // 16, 128
//	const MooncakeBlockTokens                                    // 512
//	const MaxTraceLineBytes, MaxHashIDsPerLine                   // 1 MiB, 65,536 a line
//
//	type Result struct { ... }       // JSON: name, requests, repeat_requests, hit_requests,
//	                                  // hit_rate, cached_token_ratio, evictions,
//	                                  // blocks_referenced, repeated_blocks, block_size,
//	                                  // input_tokens, cached_tokens, overflow_blocks,
//	                                  // skipped_lines, repeat_requests_uncertain,
//	                                  // forgotten_block_ids, workers; timed: ttft_ms, tpot_ms,
//	                                  // e2e_ms, queue_ms, transfer_ms (Latency), requests_per_s,
//	                                  // output_tokens_per_s, duration_ms, completed_requests,
//	                                  // rejected_requests, preemptions
//	type Latency struct { P50, P90, P99, Mean float64 }
//	type WorkerResult struct { ... } // JSON: index, requests, request_share,
//	                                  // peak_occupancy_blocks, evictions, overflow_blocks;
//	                                  // timed: role, gpu_busy_fraction, preemptions
//
// The package has no terminal code: the CLI attaches a progress bar through
// Config.Progress.
package sim
