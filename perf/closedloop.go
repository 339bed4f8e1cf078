package perf

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Load is a closed-loop benchmark: Concurrency clients, each sending its next
// request as soon as the last one finished, every request InputTokens long
// and generating OutputTokens, with no prefix reuse.
type Load struct {
	Concurrency  int
	InputTokens  int
	OutputTokens int
	// AsHarness replays the benchmark as the harnesses run it (vLLM bench,
	// genai-perf/AIPerf, trtllm-bench, AIConfigurator's sweeps): the clients
	// send their first requests together, every request counts (the first
	// wave is in the figures), HarnessRequestsPerClient requests each, and
	// after its first request each client is out of phase with the others:
	// client i of C sends its second request i/C of its first request's
	// latency later than it finished, so from then on the clients' sends
	// spread evenly over a request's time, as requests that finish at
	// slightly different times leave them. ramp_ms is not used.
	AsHarness bool
	// Path is how each request reaches the worker (RequestPath); the zero
	// value is direct to the engine, as the benchmarks ran.
	Path RequestPath
}

// HarnessRequestsPerClient is what each client sends in an AsHarness replay.
const HarnessRequestsPerClient = 8

// Limits are the engine's scheduling limits.
type Limits struct {
	MaxNumSeqs          int   // sequences running at once
	MaxNumBatchedTokens int   // tokens per iteration (the chunked-prefill budget)
	KVSlots             int64 // KV tokens the worker holds (full-attention tokens, from the memory model)
	BlockSize           int   // tokens per KV block; 0 = 16
	// SeparatePrefill: prefill batches run alone and pause decoding (SGLang's
	// default); otherwise decodes and prefill chunks share iterations (vLLM,
	// TensorRT-LLM).
	SeparatePrefill bool
	// KVReserveOutput is the share of its output tokens' KV a request holds
	// on average beyond its prompt's, as admission counts it; 0 means 1, the
	// whole ISL + OSL reserved when admitted (TensorRT-LLM's
	// GUARANTEED_NO_EVICT). Engines that allocate KV as sequences grow admit
	// against what is in use: out of phase a request holds its prompt and on
	// average half its output (vLLM: 0.5, preemption when it runs out not
	// modelled); SGLang also keeps new_token_ratio (0.1 in steady state) of
	// the remaining output in reserve: 0.55.
	KVReserveOutput float64
	// GrowKV allocates KV as sequences grow, as vLLM V1 does
	// (v1/core/kv_cache_manager.py allocate_slots): a request is admitted
	// when its prompt's blocks are free now, each decode step takes the
	// blocks its new token needs, and when they run out the request
	// admitted last is preempted (v1/core/sched/scheduler.py: the running
	// queue's last, recompute mode): its blocks are freed and it waits at
	// the head of the queue to prefill its prompt and the tokens it had
	// generated again, then decodes the rest. KVReserveOutput is then not
	// used for admission. Not with BalanceRanks > 1 (there, admission
	// reserves as without it: kvplan's limit).
	GrowKV bool
	// BalanceRanks > 1 replays TensorRT-LLM's attention data parallelism
	// with balancing (attention_dp_config enable_balance, timeout_iters
	// BalanceTimeoutIters, batching_wait_iters 0) over that many ranks, each
	// with its own waiting queue and 1/BalanceRanks of MaxNumSeqs,
	// MaxNumBatchedTokens and KVSlots. A request joins the rank with the
	// fewest active (waiting or running) requests, the lowest rank on a tie
	// (executor_request_queue's _balance_requests_across_ranks: a heap of
	// the ranks' active prompt tokens, equal prompts here). New context
	// requests are scheduled in an iteration only when every rank has one
	// it can schedule, when some rank has no generating sequence, or when
	// the hold counter reaches the timeout (py_executor's
	// _balance_adp_requests: the counter counts every iteration that is not
	// balanced, requests waiting or not, and restarts on a release).
	// 0 = one queue for the worker, admitted as they come.
	BalanceRanks, BalanceTimeoutIters int
	// RecvInterval > 1 replays SGLang's --scheduler-recv-interval
	// (managers/scheduler_recv_skipper.py): the scheduler reads new requests
	// after a prefill (extend) iteration or an idle loop, and otherwise only
	// after every RecvInterval-th decode iteration since it last read, so a
	// request that arrives while the batch decodes waits for the next read.
	// Where a read falls against an arrival depends on every earlier
	// request's lengths, which the benchmarks vary; the replay's are fixed,
	// and would lock the two in one phase, so the replay charges the mean:
	// a request that arrives while the batch decodes is read (RecvInterval
	// − 1) / 2 decode iterations later (whole iterations, the remainders
	// carried), or at once after a prefill iteration before that. 0 or 1 =
	// every iteration (every engine's default).
	RecvInterval int
}

// HeldTokens is the KV a request of isl + osl tokens counts against the KV
// slots, in whole blocks, as the replay admits it: isl + ⌈KVReserveOutput ×
// osl⌉ (all of osl when KVReserveOutput is 0 or 1); under GrowKV what it
// holds on average out of phase, its prompt and half its output. The KV
// slots hold ⌊KVSlots / HeldTokens⌋ requests at once.
func (l Limits) HeldTokens(isl, osl int) int64 {
	bs := l.BlockSize
	if bs <= 0 {
		bs = 16
	}
	n := isl + osl
	switch f := l.KVReserveOutput; {
	case l.GrowKV && l.BalanceRanks <= 1:
		n = isl + osl/2
	case f > 0 && f < 1:
		n = isl + int(math.Ceil(f*float64(osl)))
	}
	return int64((n+bs-1)/bs) * int64(bs)
}

// The benchmark each Steady call replays: every client sends
// RequestsPerClient requests; the first WarmRequests of each are left out of
// the figures, so the start-up burst is not averaged in.
const (
	RequestsPerClient = 6
	WarmRequests      = 2
	maxSteps          = 20_000_000
	// minDelayMS: a request sent when the last token of the previous one
	// came out reaches the engine after the next iteration started.
	minDelayMS = 1e-3
)

// Result is what a closed-loop benchmark of the load measures, per replica.
type Result struct {
	TTFTMS           float64 `json:"ttft_ms"`                 // mean time to first token, as the client sees it
	TPOTMS           float64 `json:"tpot_ms"`                 // mean time per output token after the first
	ITLP50MS         float64 `json:"itl_ms_p50"`              // median gap between two output tokens of a sequence
	RequestsPerS     float64 `json:"requests_per_s"`          // completed requests per second (Little: C / mean request latency)
	OutputTokensPerS float64 `json:"output_tokens_per_s"`     // requests_per_s × output tokens
	Running          float64 `json:"running_sequences"`       // sequences in the engine's batch, time-averaged
	MaxRunning       int     `json:"max_running"`             // min(C, max_num_seqs, sequences the KV slots hold)
	KVLimited        bool    `json:"kv_limited"`              // the KV slots, not the clients or max_num_seqs, cap the batch
	SeqLimited       bool    `json:"max_num_seqs_limited"`    // max_num_seqs caps the batch
	WaitingMS        float64 `json:"waiting_ms"`              // mean time from reaching the engine to being scheduled (a slot, the iteration in flight)
	PrefillMS        float64 `json:"prefill_ms"`              // mean time from being scheduled to the first token
	RequestMS        float64 `json:"request_overhead_ms"`     // fixed per-request overhead in TTFT (frontend)
	DelayMS          float64 `json:"arrival_delay_ms"`        // mean client-to-engine delay (uniform in [0, jitter_ms])
	PrefillStepMS    float64 `json:"prefill_step_ms"`         // mean iteration that carries prefill chunks
	DecodeStepMS     float64 `json:"decode_step_ms"`          // mean iteration of decodes only
	PrefillStepShare float64 `json:"prefill_step_share"`      // fraction of iterations that carry prefill
	PrefillTokens    float64 `json:"prefill_tokens_per_step"` // mean prefill tokens of a prefill iteration
	Iterations       int     `json:"iterations"`              // engine iterations simulated
	Preemptions      int     `json:"preemptions"`             // requests preempted for KV blocks (Limits.GrowKV), measured ones
	PrefillStep      Terms   `json:"prefill_step"`            // terms of a mean prefill iteration
	DecodeStep       Terms   `json:"decode_step"`             // terms of a mean decode iteration
}

// Steady replays a closed-loop benchmark of the load on one replica,
// iteration by iteration, and returns what the benchmark measures.
//
// The clients start together, as benchmark tools start them, but their
// first requests reach the engine spread evenly over ramp_ms (a fitted
// constant: connection set-up and the frontend's tokenization stagger them,
// and how much decides whether the clients then run in lock-step, their
// prefills batched together, or out of step). Each iteration
// is scheduled as vLLM V1 does: the running sequences first (one token per
// decoding sequence, the next chunk of a prefill in progress), then waiting
// requests FCFS while the token budget (max_num_batched_tokens), max_num_seqs
// and the KV slots allow; a request reserves the blocks of ISL + OSL tokens
// when admitted, so when C requests do not fit the others wait and TTFT
// includes the wait. With SeparatePrefill an iteration either prefills or
// decodes, prefill first (SGLang). A request reaches the engine request_ms +
// ISL × request_us_per_token after its client sent it (the frontend: HTTP,
// tokenization; fitted), so it misses the iteration already in flight; TTFT
// counts from the send. Runs of decode-only iterations
// between events are summed in closed form (their times change smoothly with
// context); every iteration that carries prefill is priced exactly.
func (m *Model) Steady(ld Load, lim Limits) (Result, error) {
	if err := checkLoad(ld, lim); err != nil {
		return Result{}, err
	}
	b, err := newBench(m, ld, lim)
	if err != nil {
		return Result{}, err
	}
	if err := b.run(); err != nil {
		return Result{}, err
	}
	return b.result(), nil
}

// client is one benchmark client and its request in flight.
type client struct {
	sent      int     // requests sent so far, this one included
	send      float64 // when the client sent this request
	arrive    float64 // when it reaches the engine
	admit     float64 // when the engine scheduled its first chunk
	first     float64 // when its first token came out
	prefilled int
	finish    int // decode iteration at which it completes
}

// growState is a client's request under Limits.GrowKV: the tokens to
// prefill (the prompt, or after a preemption the prompt and what it had
// generated), the tokens it had generated when preempted, its admission
// order (the newest is preempted first), whether its first token is out
// already (resumed) and whether it is decoding now.
type growState struct {
	prompt, gen, order int
	resumed, decoding  bool
}

type bench struct {
	m               *Model
	lim             Limits
	C, isl, osl     int
	budget, maxSeqs int
	slots, need     int64
	separate        bool
	grow            bool        // Limits.GrowKV (one rank)
	gs              []growState // each client's, with grow
	bs              int64       // tokens per KV block
	kvPre           int64       // GrowKV: blocks held by requests still prefilling, in tokens
	admitted        int         // GrowKV: admissions so far (each request's order)
	preempted       int         // GrowKV: measured requests preempted
	reqMS, ramp     float64
	warm, perClient int     // requests per client left out, sent
	harness         bool    // Load.AsHarness
	recvN           int     // Limits.RecvInterval
	readAt          int     // RecvInterval: the decode iteration (dstep) of the next read; −1 = none due
	readCarry       float64 // RecvInterval: the remainder of (recvN − 1) / 2 carried to the next wait
	lastDecode      bool    // RecvInterval: the last iteration was decode-only

	cl         []client
	transit    minHeap // clients on their way to the engine, by arrival time
	waitq      []int   // arrived, not yet scheduled, FCFS
	balRanks   int     // Limits.BalanceRanks
	balTimeout int     // Limits.BalanceTimeoutIters
	// Per-rank state (balRanks > 1): each client's rank, each rank's
	// waiting queue, requests running (prefilling or decoding), decoding,
	// KV in use, and the rank's limits; holdIters is the balancing counter.
	rank           []int
	rq             [][]int
	rRun, rDec     []int
	rKV            []int64
	rSeqs, rBudget int
	rSlots         int64
	holdIters      int
	prefilling     []int   // scheduled, prefill not done, in order
	decoding       []int   // decoding (for windowed models' per-sequence contexts)
	pos            []int   // index of each decoding client in decoding
	done           minHeap // decoding clients by completion iteration
	sumS0          float64 // Σ first-token iteration of the decoding clients
	kvUsed         int64
	now            float64
	dstep          int // decode iterations so far
	steps          int
	measureT0      float64 // the first measured request's send time

	ttft, tpot, wait, prefill, latency stat
	runArea, runTime                   float64
	pSteps, dSteps                     float64 // iterations that carry prefill, decode-only ones (measured)
	pTime, dTime, pTokens              float64
	pDecodes, dDecodes, pSeqs, pCtx    float64
	itl                                []segment
}

type stat struct{ sum, n float64 }

func (s *stat) add(v float64) { s.sum, s.n = s.sum+v, s.n+1 }
func (s stat) mean() float64 {
	if s.n == 0 {
		return 0
	}
	return s.sum / s.n
}

// segment is a run of decode iterations of about the same duration.
type segment struct{ ms, n float64 }

func newBench(m *Model, ld Load, lim Limits) (*bench, error) {
	bs := lim.BlockSize
	if bs <= 0 {
		bs = 16
	}
	b := &bench{m: m, lim: lim, C: ld.Concurrency, isl: ld.InputTokens, osl: ld.OutputTokens,
		budget: lim.MaxNumBatchedTokens, maxSeqs: lim.MaxNumSeqs, slots: lim.KVSlots,
		separate: lim.SeparatePrefill, ramp: m.Efficiency.RampMS, warm: WarmRequests, perClient: RequestsPerClient,
		harness: ld.AsHarness, balRanks: lim.BalanceRanks, balTimeout: lim.BalanceTimeoutIters,
		reqMS: m.RequestCost(ld.Path).MS(float64(ld.InputTokens)), grow: lim.GrowKV && lim.BalanceRanks <= 1, bs: int64(bs),
		recvN: lim.RecvInterval, readAt: -1}
	b.need = int64((b.isl+b.osl+bs-1)/bs) * int64(bs)
	if b.need > b.slots {
		return nil, fmt.Errorf("one request of %d + %d tokens needs %d KV slots, but the worker holds %d", b.isl, b.osl, b.need, b.slots)
	}
	if !b.grow {
		b.need = lim.HeldTokens(b.isl, b.osl)
	}
	if b.need > b.slots {
		return nil, fmt.Errorf("one request of %d + %d tokens needs %d KV slots, but the worker holds %d", b.isl, b.osl, b.need, b.slots)
	}
	if !b.separate && b.budget < b.isl && b.budget < 2 {
		return nil, fmt.Errorf("max_num_batched_tokens %d leaves no room for a prefill chunk", b.budget)
	}
	if b.harness {
		b.ramp, b.warm, b.perClient = 0, 0, HarnessRequestsPerClient
	}
	b.cl = make([]client, b.C)
	if b.grow {
		b.gs = make([]growState, b.C)
	}
	if D := b.balRanks; D > 1 {
		b.rank = make([]int, b.C)
		b.rq = make([][]int, D)
		b.rRun, b.rDec, b.rKV = make([]int, D), make([]int, D), make([]int64, D)
		b.rSeqs, b.rBudget, b.rSlots = max(1, b.maxSeqs/D), max(1, b.budget/D), b.slots/int64(D)
		if b.need > b.rSlots {
			return nil, fmt.Errorf("one request of %d + %d tokens needs %d KV slots, but a data-parallel rank holds %d", b.isl, b.osl, b.need, b.rSlots)
		}
	}
	b.pos = make([]int, b.C)
	b.measureT0 = math.Inf(1)
	for c := range b.cl {
		b.send(c, 0)
	}
	if b.ramp > 0 {
		b.transit = minHeap{}
		for c := range b.cl {
			b.cl[c].send = b.ramp * (float64(c) + 0.5) / float64(b.C)
			b.cl[c].arrive = b.cl[c].send + b.reqMS + minDelayMS
			b.transit.push(b.cl[c].arrive, c)
		}
	}
	return b, nil
}

// send makes client c send its next request at time t.
func (b *bench) send(c int, t float64) {
	cl := &b.cl[c]
	*cl = client{sent: cl.sent + 1, send: t, arrive: t + b.reqMS + minDelayMS}
	if b.grow {
		b.gs[c] = growState{prompt: b.isl}
	}
	if cl.sent > b.warm && t < b.measureT0 {
		b.measureT0 = t
	}
	b.transit.push(cl.arrive, c)
}

func (b *bench) measured(c int) bool { return b.cl[c].sent > b.warm }

func (b *bench) run() error {
	for {
		read := b.reads()
		if read {
			b.readAt = -1
		}
		for read && b.transit.len() > 0 && b.transit.minKey() <= b.now {
			_, c := b.transit.pop()
			if b.balRanks > 1 {
				b.assign(c)
				continue
			}
			b.waitq = append(b.waitq, c)
		}
		running := len(b.prefilling) + len(b.decoding)
		if running == 0 && b.waiting() == 0 {
			if b.transit.len() == 0 {
				return nil
			}
			b.now, b.lastDecode = max(b.now, b.transit.minKey()), false // idle: the scheduler reads at once
			continue
		}
		if b.steps > maxSteps {
			return fmt.Errorf("the simulated benchmark did not finish within %d iterations", maxSteps)
		}
		if b.grow {
			b.makeRoom()
		}
		if len(b.prefilling) > 0 || (b.canAdmit() && b.balanced()) {
			b.prefillStep()
		} else if len(b.decoding) > 0 {
			b.decodeRun()
		} else {
			// Only requests still on their way: wait for the next one.
			b.now, b.lastDecode = max(b.now, b.transit.minKey()), false
		}
	}
}

// reads reports whether the scheduler reads new requests before this
// iteration (RecvInterval): always, but after a decode-only iteration only
// once the read due has come.
func (b *bench) reads() bool {
	return b.recvN <= 1 || !b.lastDecode || (b.readAt >= 0 && b.dstep >= b.readAt)
}

// readStop bounds a decode run of k iterations in which a request arrives
// after n of them (RecvInterval): the run ends at the read due, set when the
// first unread request arrives, (recvN − 1) / 2 iterations after it.
func (b *bench) readStop(n, k int, within bool) int {
	if b.recvN <= 1 {
		return n
	}
	if b.readAt < 0 {
		if !within {
			return k
		}
		b.readCarry += float64(b.recvN-1) / 2
		w := int(b.readCarry)
		b.readCarry -= float64(w)
		b.readAt = b.dstep + n + w
	}
	return max(1, b.readAt-b.dstep)
}

// assign puts client c's request in the waiting queue of the rank with the
// fewest active requests (the lowest on a tie).
func (b *bench) assign(c int) {
	best := 0
	for r := 1; r < b.balRanks; r++ {
		if b.rRun[r]+len(b.rq[r]) < b.rRun[best]+len(b.rq[best]) {
			best = r
		}
	}
	b.rank[c] = best
	b.rq[best] = append(b.rq[best], c)
}

// waiting is how many requests reached the engine and wait to be scheduled.
func (b *bench) waiting() int {
	if b.balRanks <= 1 {
		return len(b.waitq)
	}
	n := 0
	for _, q := range b.rq {
		n += len(q)
	}
	return n
}

// rankCanAdmit reports whether rank r can schedule its next waiting request.
func (b *bench) rankCanAdmit(r int) bool {
	return len(b.rq[r]) > 0 && b.rRun[r] < b.rSeqs && b.rKV[r]+b.need <= b.rSlots
}

// holdState is _balance_adp_requests' view of the ranks: whether every rank
// has a context request it can schedule, whether every rank has a
// generating sequence.
func (b *bench) holdState() (allCtx, allGen bool) {
	allCtx, allGen = true, true
	for r := 0; r < b.balRanks; r++ {
		if !b.rankCanAdmit(r) {
			allCtx = false
		}
		if b.rDec[r] == 0 {
			allGen = false
		}
	}
	return allCtx, allGen
}

// balanced reports whether this iteration may schedule new context
// requests (always, without balancing), without moving the counter.
func (b *bench) balanced() bool {
	if b.balRanks <= 1 {
		return true
	}
	allCtx, allGen := b.holdState()
	return allCtx || !allGen || b.holdIters+1 >= b.balTimeout
}

// decide is balanced for the iteration about to run, moving the counter.
func (b *bench) decide() bool {
	if b.balRanks <= 1 {
		return true
	}
	allCtx, allGen := b.holdState()
	if allCtx {
		b.holdIters = 0
		return true
	}
	b.holdIters++
	if b.holdIters >= b.balTimeout || !allGen {
		b.holdIters = 0
		return true
	}
	return false
}

// heldFor is how many iterations from now new requests stay held (0: the
// next iteration may schedule them, or none could be scheduled).
func (b *bench) heldFor() int {
	if b.balRanks <= 1 || !b.canAdmit() || b.balanced() {
		return 0
	}
	return b.balTimeout - 1 - b.holdIters
}

// holdRun moves the balancing counter over k decode-only iterations in which
// nothing is scheduled (decodeRun stops before a release).
func (b *bench) holdRun(k int) {
	if b.balRanks <= 1 {
		return
	}
	_, allGen := b.holdState()
	switch {
	case !allGen:
		b.holdIters = 0
	case b.canAdmit():
		b.holdIters += k
	default:
		b.holdIters = (b.holdIters + k) % b.balTimeout
	}
}

func (b *bench) canAdmit() bool {
	if b.balRanks > 1 {
		for r := 0; r < b.balRanks; r++ {
			if b.rankCanAdmit(r) {
				return true
			}
		}
		return false
	}
	if b.grow {
		return len(b.waitq) > 0 && len(b.prefilling)+len(b.decoding) < b.maxSeqs && b.used(1)+b.blocks(b.gs[b.waitq[0]].prompt) <= b.slots
	}
	return len(b.waitq) > 0 && len(b.prefilling)+len(b.decoding) < b.maxSeqs && b.kvUsed+b.need <= b.slots
}

// seat reports whether a request arriving now could be scheduled.
func (b *bench) seat() bool {
	if b.balRanks > 1 {
		for r := 0; r < b.balRanks; r++ {
			if b.rRun[r] < b.rSeqs && b.rKV[r]+b.need <= b.rSlots {
				return true
			}
		}
		return false
	}
	if b.grow {
		return len(b.decoding)+len(b.prefilling) < b.maxSeqs && b.used(1)+b.blocks(b.isl) <= b.slots
	}
	return len(b.decoding)+len(b.prefilling) < b.maxSeqs && b.kvUsed+b.need <= b.slots
}

// promptOf is the tokens client c's request prefills: the prompt, or with
// GrowKV after a preemption the prompt and the tokens it had generated.
func (b *bench) promptOf(c int) int {
	if b.gs == nil {
		return b.isl
	}
	return b.gs[c].prompt
}

// blocks is the KV slots n tokens take, in whole blocks.
func (b *bench) blocks(n int) int64 { return (int64(n) + b.bs - 1) / b.bs * b.bs }

// used is the KV in use (GrowKV) s decode iterations from now: the blocks of
// the requests prefilling, and each decoding sequence's context (isl + 1 +
// iterations since its first token) with half a block more on average.
func (b *bench) used(s int) int64 {
	D := float64(len(b.decoding))
	dec := D*float64(b.isl+1+b.dstep+s) - b.sumS0 + D*float64(b.bs)/2
	return b.kvPre + int64(math.Ceil(dec))
}

// makeRoom preempts the newest running requests (GrowKV) until the next
// iteration's decodes have the blocks their tokens need; the oldest one
// always runs.
func (b *bench) makeRoom() {
	for b.used(1) > b.slots && len(b.decoding)+len(b.prefilling) > 1 {
		newest, inPrefill := -1, false
		for _, c := range b.decoding {
			if newest < 0 || b.gs[c].order > b.gs[newest].order {
				newest, inPrefill = c, false
			}
		}
		for _, c := range b.prefilling {
			if newest < 0 || b.gs[c].order > b.gs[newest].order {
				newest, inPrefill = c, true
			}
		}
		b.preempt(newest, inPrefill)
	}
}

// preempt frees request c's blocks and puts it at the head of the waiting
// queue (vLLM V1's recompute preemption): a decoding request prefills its
// prompt and the tokens it had generated again, then decodes the rest.
func (b *bench) preempt(c int, inPrefill bool) {
	cl, g := &b.cl[c], &b.gs[c]
	if inPrefill {
		b.kvPre -= b.blocks(g.prompt)
		keep := b.prefilling[:0]
		for _, x := range b.prefilling {
			if x != c {
				keep = append(keep, x)
			}
		}
		b.prefilling = keep
	} else {
		s0 := cl.finish - b.osl + 1
		g.gen = b.dstep - s0
		g.prompt = b.isl + 1 + g.gen
		g.resumed, g.decoding = true, false
		b.sumS0 -= float64(s0)
		i, last := b.pos[c], b.decoding[len(b.decoding)-1]
		b.decoding[i], b.pos[last] = last, i
		b.decoding = b.decoding[:len(b.decoding)-1]
	}
	cl.prefilled = 0
	if b.measured(c) {
		b.preempted++
	}
	b.waitq = append([]int{c}, b.waitq...)
}

// decodeBatch adds the decoding sequences, at the current iteration, to a.
func (b *bench) decodeBatch(a *batch, at int) {
	D := float64(len(b.decoding))
	if D == 0 {
		return
	}
	a.decodes += D
	a.seqs += D
	// The context of a sequence whose first token came at iteration s0 is
	// isl + 1 + (at − s0) while it generates its next token.
	sum := D*float64(b.isl+1+at) - b.sumS0
	for gi := range b.m.groups {
		g := &b.m.groups[gi]
		ctx := sum
		if g.window > 0 {
			ctx = 0
			for _, c := range b.decoding {
				ctx += capWindow(float64(b.isl+1+at-b.cl[c].finish+b.osl-1), g.window)
			}
		}
		a.decodeFLOP += ctx * g.decodeFLOP
		a.kvBytes += ctx * g.kvBytesToken
	}
}

// prefillStep runs one iteration that carries prefill chunks.
func (b *bench) prefillStep() {
	// After a prefill iteration the scheduler reads new requests at once
	// (RecvInterval).
	b.lastDecode = false
	var a batch
	budget := b.budget
	withDecodes := !b.separate && len(b.decoding) > 0
	if withDecodes {
		b.decodeBatch(&a, b.dstep)
		budget -= len(b.decoding)
	}
	type chunk struct{ c, n int }
	var chunks [64]chunk
	list := chunks[:0]
	addChunk := func(c, n int) {
		ctx := b.cl[c].prefilled
		a.prefill += float64(n)
		a.seqs++
		for gi := range b.m.groups {
			g := &b.m.groups[gi]
			a.prefillFLOP += causalPairs(float64(n), float64(ctx), g.window) * g.pairFLOP
			a.kvBytes += capWindow(float64(ctx+n), g.window) * g.kvBytesToken
		}
		list = append(list, chunk{c, n})
	}
	if D := b.balRanks; D > 1 {
		// Each rank fills its own token budget: its chunks in progress,
		// then its waiting requests if the balancing lets them in.
		rb := make([]int, D)
		for r := range rb {
			rb[r] = b.rBudget
			if withDecodes {
				rb[r] -= b.rDec[r]
			}
		}
		for _, c := range b.prefilling {
			if r := b.rank[c]; rb[r] > 0 {
				n := min(b.isl-b.cl[c].prefilled, rb[r])
				addChunk(c, n)
				rb[r] -= n
			}
		}
		if b.decide() {
			for r := 0; r < D; r++ {
				for rb[r] > 0 && b.rankCanAdmit(r) {
					c := b.rq[r][0]
					b.rq[r] = b.rq[r][1:]
					b.cl[c].admit = b.now
					b.kvUsed += b.need
					b.rKV[r] += b.need
					b.rRun[r]++
					b.prefilling = append(b.prefilling, c)
					n := min(b.isl, rb[r])
					addChunk(c, n)
					rb[r] -= n
				}
			}
		}
	} else {
		for _, c := range b.prefilling {
			if budget <= 0 {
				break
			}
			n := min(b.promptOf(c)-b.cl[c].prefilled, budget)
			addChunk(c, n)
			budget -= n
		}
		for budget > 0 && b.canAdmit() {
			c := b.waitq[0]
			b.waitq = b.waitq[1:]
			cl := &b.cl[c]
			if b.grow {
				g := &b.gs[c]
				if !g.resumed {
					cl.admit = b.now
				}
				b.kvPre += b.blocks(g.prompt)
				b.admitted++
				g.order = b.admitted
			} else {
				cl.admit = b.now
				b.kvUsed += b.need
			}
			b.prefilling = append(b.prefilling, c)
			n := min(b.promptOf(c), budget)
			addChunk(c, n)
			budget -= n
		}
	}
	t := b.m.terms(a)
	b.advance(t.TotalMS)
	if b.now > b.measureT0 {
		b.pSteps++
		b.pTime += t.TotalMS
		b.pTokens += a.prefill
		b.pSeqs += float64(len(list))
		b.pDecodes += a.decodes
		for _, ch := range list {
			b.pCtx += float64(b.cl[ch.c].prefilled)
		}
		if withDecodes {
			b.itl = append(b.itl, segment{t.TotalMS, 1})
		}
	}
	if withDecodes {
		b.dstep++
		b.complete()
	}
	keep := b.prefilling[:0]
	for _, c := range b.prefilling {
		cl := &b.cl[c]
		for _, ch := range list {
			if ch.c == c {
				cl.prefilled += ch.n
			}
		}
		if cl.prefilled < b.promptOf(c) {
			keep = append(keep, c)
			continue
		}
		if b.grow {
			g := &b.gs[c]
			b.kvPre -= b.blocks(g.prompt)
			g.decoding = true
			if g.resumed {
				// A preempted request has its prefix back: it decodes what
				// is left of its output from where it was.
				s0 := b.dstep - g.gen
				cl.finish = s0 + b.osl - 1
				if cl.finish <= b.dstep {
					g.decoding = false
					b.finish(c)
					continue
				}
				b.pos[c] = len(b.decoding)
				b.decoding = append(b.decoding, c)
				b.sumS0 += float64(s0)
				b.done.push(float64(cl.finish), c)
				continue
			}
		}
		cl.first = b.now
		if b.measured(c) {
			b.ttft.add(cl.first - cl.send)
			b.wait.add(cl.admit - cl.arrive)
			b.prefill.add(cl.first - cl.admit)
		}
		if b.osl <= 1 {
			b.finish(c)
			continue
		}
		cl.finish = b.dstep + b.osl - 1
		b.pos[c] = len(b.decoding)
		b.decoding = append(b.decoding, c)
		if b.balRanks > 1 {
			b.rDec[b.rank[c]]++
		}
		b.sumS0 += float64(b.dstep)
		b.done.push(float64(cl.finish), c)
	}
	b.prefilling = keep
}

// decodeRun runs decode-only iterations up to the next event: a sequence
// completing, or a request arriving that could be scheduled.
func (b *bench) decodeRun() {
	k := int(b.done.minKey()) - b.dstep
	if k < 1 {
		k = 1
	}
	at := func(s int) Terms {
		var a batch
		b.decodeBatch(&a, b.dstep+s)
		return b.m.terms(a)
	}
	first := at(0)
	f0 := first.TotalMS
	f1, fm := f0, f0
	if k > 1 {
		f1 = at(k - 1).TotalMS
		fm = at((k - 1) / 2).TotalMS
	}
	// Steps until the decodes' new tokens run out of KV blocks (GrowKV).
	if b.grow {
		if room := int((b.slots - b.used(0)) / int64(max(1, len(b.decoding)))); room < k {
			k = max(1, room)
			f1 = at(k - 1).TotalMS
			fm = at((k - 1) / 2).TotalMS
		}
	}
	// Steps until a held request is released (attention-DP balancing).
	if h := b.heldFor(); h > 0 && h < k {
		k = h
		f1 = at(k - 1).TotalMS
		fm = at((k - 1) / 2).TotalMS
	}
	// Steps until a request on its way arrives, when it could be scheduled
	// (and the scheduler reads it, RecvInterval).
	if b.seat() && b.transit.len() > 0 {
		gap := b.transit.minKey() - b.now
		n := stepsToCover(gap, f0, f1, k)
		n = b.readStop(n, k, n < k || float64(k)*(f0+f1)/2 >= gap)
		if n < k {
			k = n
			f1 = at(k - 1).TotalMS
			fm = at((k - 1) / 2).TotalMS
		}
	}
	var total float64
	switch {
	case k == 1:
		total = f0
	case k == 2:
		total = f0 + f1
	default:
		// Simpson's rule over the run: exact for linear and quadratic drift.
		total = float64(k) * (f0 + 4*fm + f1) / 6
	}
	D := float64(len(b.decoding))
	b.advance(total)
	if b.now > b.measureT0 {
		b.dSteps += float64(k)
		b.dTime += total
		b.dDecodes += D * float64(k)
		b.itl = append(b.itl, segment{total / float64(k), float64(k)})
	}
	b.steps += k - 1
	b.dstep += k
	b.lastDecode = true
	b.holdRun(k)
	b.complete()
}

// stepsToCover is how many iterations, their times drifting linearly from
// f0 to f1 over k, it takes for the clock to pass gap (at least 1, at most k).
func stepsToCover(gap, f0, f1 float64, k int) int {
	if gap <= f0 || k <= 1 {
		return 1
	}
	slope := 0.0
	if k > 1 {
		slope = (f1 - f0) / float64(k-1)
	}
	// n f0 + slope n(n−1)/2 ≥ gap
	var n float64
	if math.Abs(slope) < 1e-12 {
		n = math.Ceil(gap / f0)
	} else {
		a, bb, c := slope/2, f0-slope/2, -gap
		disc := bb*bb - 4*a*c
		if disc < 0 {
			return k
		}
		n = math.Ceil((-bb + math.Sqrt(disc)) / (2 * a))
	}
	if n < 1 {
		return 1
	}
	if n > float64(k) {
		return k
	}
	return int(n)
}

// advance moves the clock by dt over an iteration (or a run of them).
func (b *bench) advance(dt float64) {
	if b.now > b.measureT0 {
		b.runArea += float64(len(b.prefilling)+len(b.decoding)) * dt
		b.runTime += dt
	}
	b.now += dt
	b.steps++
}

// complete retires the sequences whose last token came out in iteration
// dstep; their clients send their next requests.
func (b *bench) complete() {
	for b.done.len() > 0 && int(b.done.minKey()) <= b.dstep {
		k, c := b.done.pop()
		if b.grow {
			if !b.gs[c].decoding || b.cl[c].finish != int(k) {
				continue // preempted since: its entry is stale
			}
			b.gs[c].decoding = false
		}
		b.sumS0 -= float64(b.cl[c].finish - b.osl + 1)
		i, last := b.pos[c], b.decoding[len(b.decoding)-1]
		b.decoding[i], b.pos[last] = last, i
		b.decoding = b.decoding[:len(b.decoding)-1]
		if b.balRanks > 1 {
			b.rDec[b.rank[c]]--
		}
		b.finish(c)
	}
}

// finish records a completed request and sends the client's next one.
func (b *bench) finish(c int) {
	cl := &b.cl[c]
	if !b.grow {
		b.kvUsed -= b.need
	}
	if b.balRanks > 1 {
		b.rKV[b.rank[c]] -= b.need
		b.rRun[b.rank[c]]--
	}
	if b.measured(c) {
		if b.osl > 1 {
			b.tpot.add((b.now - cl.first) / float64(b.osl-1))
		}
		b.latency.add(b.now - cl.send)
	}
	if cl.sent < b.perClient {
		t := b.now
		if b.harness && cl.sent == 1 {
			t += (b.now - cl.send) * float64(c) / float64(b.C)
		}
		b.send(c, t)
	}
}

func (b *bench) result() Result {
	m := b.m
	r := Result{
		TTFTMS: b.ttft.mean(), TPOTMS: b.tpot.mean(), WaitingMS: b.wait.mean(), PrefillMS: b.prefill.mean(),
		RequestMS: b.reqMS + minDelayMS, Iterations: b.steps, Preemptions: b.preempted,
	}
	fit := int(b.slots / b.lim.HeldTokens(b.isl, b.osl))
	r.MaxRunning = min(b.C, b.maxSeqs, fit)
	r.KVLimited = fit < min(b.C, b.maxSeqs)
	r.SeqLimited = !r.KVLimited && b.maxSeqs < b.C
	if lat := b.latency.mean(); lat > 0 {
		r.RequestsPerS = float64(b.C) / lat * 1000
		r.OutputTokensPerS = r.RequestsPerS * float64(b.osl)
	}
	if b.runTime > 0 {
		r.Running = b.runArea / b.runTime
	}
	if n := b.pSteps + b.dSteps; n > 0 {
		r.PrefillStepShare = b.pSteps / n
	}
	ctxDecode := float64(b.isl) + float64(b.osl)/2
	if b.pSteps > 0 {
		r.PrefillStepMS = b.pTime / b.pSteps
		r.PrefillTokens = b.pTokens / b.pSteps
		seqs := math.Max(1, b.pSeqs/b.pSteps)
		r.PrefillStep = m.meanStep(r.PrefillTokens, seqs, b.pCtx/math.Max(1, b.pSeqs), b.pDecodes/b.pSteps, ctxDecode)
	}
	if b.dSteps > 0 {
		r.DecodeStepMS = b.dTime / b.dSteps
		r.DecodeStep = m.meanStep(0, 0, 0, b.dDecodes/b.dSteps, ctxDecode)
	}
	r.ITLP50MS = weightedMedian(b.itl)
	return r
}

func weightedMedian(s []segment) float64 {
	if len(s) == 0 {
		return 0
	}
	slices.SortFunc(s, func(a, b segment) int { return cmp.Compare(a.ms, b.ms) }) // ties share ms: the median is the same in any order
	var total float64
	for _, x := range s {
		total += x.n
	}
	var acc float64
	for _, x := range s {
		acc += x.n
		if acc >= total/2 {
			return x.ms
		}
	}
	return s[len(s)-1].ms
}

// meanStep is the step time of an average iteration: prefill chunks of
// chunk tokens in all, spread over seqs sequences with ctx tokens of context
// each, plus decodes sequences decoding at decodeCtx tokens of context.
func (m *Model) meanStep(chunk, seqs, ctx, decodes, decodeCtx float64) Terms {
	a := batch{decodes: decodes, seqs: decodes}
	if chunk > 0 {
		a.prefill, a.seqs = chunk, decodes+seqs
		per := chunk / seqs
		for _, g := range m.groups {
			a.prefillFLOP += seqs * causalPairs(per, ctx, g.window) * g.pairFLOP
			a.kvBytes += seqs * capWindow(ctx+per, g.window) * g.kvBytesToken
		}
	}
	for _, g := range m.groups {
		c := decodes * capWindow(decodeCtx, g.window)
		a.decodeFLOP += c * g.decodeFLOP
		a.kvBytes += c * g.kvBytesToken
	}
	return m.terms(a)
}

func checkLoad(ld Load, lim Limits) error {
	switch {
	case ld.Concurrency < 1:
		return fmt.Errorf("concurrency must be >= 1 (got %d)", ld.Concurrency)
	case ld.Concurrency > 100_000:
		return fmt.Errorf("concurrency %d is more clients than kvplan simulates (at most 100,000)", ld.Concurrency)
	case ld.InputTokens < 1:
		return fmt.Errorf("input tokens must be >= 1 (got %d)", ld.InputTokens)
	case ld.OutputTokens < 1:
		return fmt.Errorf("output tokens must be >= 1 (got %d)", ld.OutputTokens)
	case lim.MaxNumSeqs < 1:
		return fmt.Errorf("max_num_seqs must be >= 1 (got %d)", lim.MaxNumSeqs)
	case lim.MaxNumBatchedTokens < 1:
		return fmt.Errorf("max_num_batched_tokens must be >= 1 (got %d)", lim.MaxNumBatchedTokens)
	case lim.KVSlots < 1:
		return fmt.Errorf("the worker has no KV slots (%d): the model leaves no memory for a KV cache", lim.KVSlots)
	}
	return nil
}

// minHeap is a binary min-heap of (key, client).
type minHeap struct {
	keys []float64
	vals []int
}

func (h *minHeap) len() int        { return len(h.keys) }
func (h *minHeap) minKey() float64 { return h.keys[0] }
func (h *minHeap) less(i, j int) bool {
	return h.keys[i] < h.keys[j] || (h.keys[i] == h.keys[j] && h.vals[i] < h.vals[j])
}
func (h *minHeap) swap(i, j int) {
	h.keys[i], h.keys[j] = h.keys[j], h.keys[i]
	h.vals[i], h.vals[j] = h.vals[j], h.vals[i]
}

func (h *minHeap) push(k float64, v int) {
	h.keys, h.vals = append(h.keys, k), append(h.vals, v)
	for i := len(h.keys) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.swap(i, p)
		i = p
	}
}

func (h *minHeap) pop() (float64, int) {
	k, v := h.keys[0], h.vals[0]
	n := len(h.keys) - 1
	h.swap(0, n)
	h.keys, h.vals = h.keys[:n], h.vals[:n]
	for i := 0; ; {
		l, r, s := 2*i+1, 2*i+2, i
		if l < n && h.less(l, s) {
			s = l
		}
		if r < n && h.less(r, s) {
			s = r
		}
		if s == i {
			break
		}
		h.swap(i, s)
		i = s
	}
	return k, v
}

// PrefillMS is the time one request of tokens tokens takes to prefill on
// an idle engine: its chunks of at most budget tokens (0: one chunk) run one
// iteration each, each on top of the tokens before it.
func (m *Model) PrefillMS(tokens, budget int) float64 {
	if budget <= 0 {
		budget = tokens
	}
	var ms float64
	var pt, pc [1]int
	for done := 0; done < tokens; done += budget {
		pt[0], pc[0] = min(budget, tokens-done), done
		ms += m.StepMS(pt[:], pc[:], nil)
	}
	return ms
}

// DecodeStep is one decode-only iteration of n sequences with ctx tokens of
// context each.
func (m *Model) DecodeStep(n int, ctx float64) Terms { return m.meanStep(0, 0, 0, float64(n), ctx) }
