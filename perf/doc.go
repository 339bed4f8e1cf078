// Package perf is kvplan's engine performance model: the time of one engine
// iteration for a batch, and from it what a closed-loop benchmark of C clients
// measures (TTFT, TPOT, throughput).
//
// # One iteration
//
// An iteration runs prefill chunks (chunk i: prefillTokens[i] new tokens on
// top of prefillContext[i] tokens already in that sequence's KV) and advances
// len(decodeContext) decoding sequences by one token each. With T the tokens
// of the step (prefill tokens plus one per decoding sequence) and S the
// sequences, per tensor-parallel rank:
//
//	fixed      step_ms + layers × layer_us (CUDA graphs: decode-only steps of at most
//	           the captured batch) or layers × eager_layer_us (prefill steps, --enforce-eager)
//	dense      smax(2 × dense params × T / (peak(dtype) × gemm), dense weight bytes / (bw × memory))
//	experts    smax(2 × routed active params × T / (peak × gemm × moe),
//	                touched experts × bytes per expert / (bw × memory × moe))
//	           touched = E × (1 − (1 − k/E)^T), the distinct experts T tokens route to
//	lm head    smax(2 × vocab × hidden × S / (peak(bf16) × gemm), vocab × hidden × 2 B / (bw × memory))
//	attention  Σ groups 4 × q_heads × head_dim × pairs / (peak(bf16) × attention), pairs the
//	           causal (query, key) pairs of each prefill chunk (n(n+1)/2 + n × context,
//	           windows capped; MLA: 2 × heads × (qk_dim + v_dim) per pair)
//	kv read    smax(decode attention FLOPs / (peak(bf16) × attention),
//	           KV bytes of every sequence's context (windows capped) + 2 × linear state
//	           / (bw × memory))
//	all-reduce 2 × layers × (allreduce_us + 2 (tp − 1)/tp × T × hidden × 2 B / (interconnect × eff))
//
// and the step time is their sum: the operator classes run one after the
// other. smax(a, b) = (a³ + b³)^(1/3) is a smooth maximum: the slower of
// compute and memory wins, and near the crossover neither is reached. The
// efficiencies (gemm, memory, attention, moe, interconnect) and the fixed
// costs are fitted per GPU × engine × weight dtype on measured runs (package
// perf/fit) and stored in the catalog (catalog/data/efficiencies.toml) with
// their source; an unseen combination falls back to a less specific entry,
// and the model says so (Model.Fallback).
//
// # A worker's layout
//
// With Spec.Parallel beyond tensor parallelism (attention data parallelism,
// expert parallelism with its all-to-all and load imbalance, pipeline
// stages, MTP) the step is given the whole worker's batch and the slowest
// rank sets it; see parallel.go and docs/parallelism.md.
//
// # A closed-loop benchmark
//
// Steady computes what C clients that each send the next request when the
// last finishes measure (see closedloop.go).
package perf
