// Package openloop is an engine under an open load: requests arriving at a
// rate (Poisson), served by a worker that batches them the way vLLM V1
// does (chunked prefill within max_num_batched_tokens, max_num_seqs, KV
// seats), priced by any step-time model. It gives the steady state of a
// worker (the decode batch by Little's law, ITL and its 95th percentile,
// the GPU time prefill takes, the wait for a batch seat) and the queueing
// arithmetic (Erlang C, Allen–Cunneen, Poisson percentiles) the capacity
// search and the planner build on. It imports nothing of the project: the
// step-time model comes in through StepTimer.
package openloop

import (
	"math"
	"sort"
)

// StepTimer is the engine model's time of one iteration (the contract of
// TEAM.md): prefill chunk i runs prefillTokens[i] new tokens on top of
// prefillContext[i] tokens already in that sequence's KV, and every
// decoding sequence j, with decodeContext[j] tokens of context, advances by
// one token. Milliseconds; pure and safe for concurrent use. *perf.Model
// implements it.
type StepTimer interface {
	StepMS(prefillTokens, prefillContext, decodeContext []int) float64
}

// Hit is one way a request finds its prefix: with probability Prob its
// first cached tokens are in the worker's prefix cache.
type Hit struct {
	Prob   float64
	Cached int
}

// Class is one kind of request of a workload drawn from a distribution:
// with probability Prob it has InputTokens in, OutputTokens out, and finds
// CachedTokens of its prompt in the prefix cache.
type Class struct {
	Prob                      float64
	InputTokens, OutputTokens int
	CachedTokens              int
}

// Worker is one worker of a pool: its engine model, the workload and
// its scheduling limits. Step times depend only on the batch, so they are
// computed once per batch size and reused at every rate the search tries.
type Worker struct {
	step     StepTimer
	isl, osl int
	budget   int   // max_num_batched_tokens: tokens per iteration
	maxSeqs  int   // max_num_seqs
	slots    int64 // KV slots of the worker, tokens
	block    int   // tokens per KV block
	prefills bool  // runs prefill (aggregated worker or prefill worker)
	decodes  bool  // runs decode (aggregated worker or decode worker)
	separate bool  // prefill iterations carry no decodes
	cases    []Class

	// With a length distribution (lengths): the mean output, the
	// seat-weighted mean KV of a running sequence, and the quantiles of
	// the context of a decoding sequence (ctxQ[i] at (i + ½)/len).
	lengths  bool
	outMean  float64
	needMean int64
	ctxQ     []float64

	dec     []float64         // dec[b]: a decode-only iteration of b sequences; NaN = not yet computed
	alone   map[int][]chunked // per batch b of decodes riding along: per case
	ctxBuf  []int
	oneTok  [1]int
	oneCtx  [1]int
	packTok []int
	packCtx []int
	q95     [1]float64 // itlP95's quantile and result, not allocated per call
	p95     [1]float64
}

// chunked is one prompt's prefill on a worker with b sequences decoding.
type chunked struct {
	aloneMS  float64 // the prompt alone: the sum of its chunks' iterations
	chunks   int     // iterations it takes (chunked to the token budget)
	packedMS float64 // GPU time per prompt when prompts queue: iterations packed to the budget
	// batchMS[n−1] is an iteration of n such prompts together (n up to the
	// k that fit the budget; only when the prompt fits it in one chunk).
	batchMS []float64
}

// Config describes a worker.
type Config struct {
	Step                StepTimer
	InputTokens         int   // prompt tokens per request
	OutputTokens        int   // output tokens per request
	MaxNumBatchedTokens int   // tokens per iteration (the chunked-prefill budget)
	MaxNumSeqs          int   // sequences running at once
	KVSlots             int64 // KV tokens the worker holds (the memory model's slots)
	BlockSize           int   // tokens per KV block; 0 = 16
	Prefills            bool  // runs prefill: an aggregated or a prefill worker
	Decodes             bool  // runs decode: an aggregated or a decode worker
	Hits                []Hit // how requests find their prefix cached; none = no prefix reuse
	// Classes, when given, is the workload as a distribution of lengths
	// (and cached prefixes), in place of InputTokens, OutputTokens and
	// Hits, which then only name its means.
	Classes []Class
	// SeparatePrefill: prefill batches run alone and decoding waits (SGLang's
	// default); otherwise decodes and prefill chunks share iterations (vLLM,
	// TensorRT-LLM).
	SeparatePrefill bool
}

// NewWorker builds a worker from c.
func NewWorker(c Config) *Worker {
	block := c.BlockSize
	if block <= 0 {
		block = 16
	}
	w := &Worker{step: c.Step, isl: c.InputTokens, osl: c.OutputTokens, budget: c.MaxNumBatchedTokens, maxSeqs: c.MaxNumSeqs,
		slots: c.KVSlots, block: block, prefills: c.Prefills, decodes: c.Decodes, separate: c.SeparatePrefill, alone: map[int][]chunked{}}
	if len(c.Classes) == 0 {
		hits := c.Hits
		if len(hits) == 0 {
			hits = []Hit{{Prob: 1}}
		}
		for _, h := range hits {
			w.cases = append(w.cases, Class{Prob: h.Prob, InputTokens: c.InputTokens, OutputTokens: c.OutputTokens, CachedTokens: h.Cached})
		}
		w.outMean = float64(c.OutputTokens)
		return w
	}
	w.lengths = true
	total := 0.0
	for _, k := range c.Classes {
		total += k.Prob
	}
	for _, k := range c.Classes {
		k.Prob /= total
		k.CachedTokens = max(0, min(k.CachedTokens, k.InputTokens-1))
		w.cases = append(w.cases, k)
		w.outMean += k.Prob * float64(k.OutputTokens)
	}
	w.needMean = w.seatNeed()
	if c.Decodes {
		w.ctxQ = decodeContexts(w.cases, 256)
	}
	return w
}

// need is the KV slots a running sequence of class k reserves: the blocks
// of its whole prompt and output (a decode worker) or of its prompt (a
// prefill worker).
func (w *Worker) need(k Class) int64 {
	n := k.InputTokens
	if w.decodes {
		n += k.OutputTokens
	}
	return int64((n + w.block - 1) / w.block * w.block)
}

// seatNeed is the mean KV of the sequences running at once: each class
// holds its seat in proportion to how long it runs, its output tokens on a
// decoding worker (its prompt's on a prefill worker), so the mean weighs
// each class's need by probability × that time.
func (w *Worker) seatNeed() int64 {
	var sum, wt float64
	for _, k := range w.cases {
		t := float64(max(1, k.OutputTokens))
		if !w.decodes {
			t = float64(max(1, k.InputTokens-k.CachedTokens))
		}
		sum += k.Prob * t * float64(w.need(k))
		wt += k.Prob * t
	}
	return int64(math.Ceil(sum / wt))
}

// decodeContexts is the quantile function of a decoding sequence's context,
// at n points (i + ½)/n: a sequence of class k decodes for its output
// tokens with its context running from its prompt to prompt + output, so
// the context is a mixture of uniforms weighted by probability × output.
func decodeContexts(cases []Class, n int) []float64 {
	type seg struct{ lo, hi, w float64 }
	var segs []seg
	total := 0.0
	lo, hi := math.Inf(1), 0.0
	for _, k := range cases {
		s := seg{float64(k.InputTokens), float64(k.InputTokens + k.OutputTokens), k.Prob * float64(max(1, k.OutputTokens))}
		segs = append(segs, s)
		total += s.w
		lo, hi = math.Min(lo, s.lo), math.Max(hi, s.hi)
	}
	cdf := func(x float64) float64 {
		c := 0.0
		for _, s := range segs {
			switch {
			case x >= s.hi:
				c += s.w
			case x > s.lo:
				c += s.w * (x - s.lo) / (s.hi - s.lo)
			}
		}
		return c / total
	}
	out := make([]float64, n)
	for i := range out {
		u := (float64(i) + 0.5) / float64(n)
		a, b := lo, hi
		for range 50 {
			m := (a + b) / 2
			if cdf(m) < u {
				a = m
			} else {
				b = m
			}
		}
		out[i] = (a + b) / 2
	}
	return out
}

// NeedSlots is the KV slots a running sequence reserves: the blocks of its
// whole prompt and output (a decode worker) or of its prompt (a prefill
// worker); with a length distribution, the mean over the sequences running
// at once (seatNeed).
func (w *Worker) NeedSlots() int64 {
	if w.lengths {
		return w.needMean
	}
	n := w.isl
	if w.decodes {
		n += w.osl
	}
	return int64((n + w.block - 1) / w.block * w.block)
}

// MaxNeedSlots is the most KV slots one request of the workload reserves.
func (w *Worker) MaxNeedSlots() int64 {
	var m int64
	for _, k := range w.cases {
		m = max(m, w.need(k))
	}
	return m
}

// Classes returns the request classes the worker was built with (one per
// hit case without a length distribution), their probabilities summing to 1.
func (w *Worker) Classes() []Class { return w.cases }

// OutputMean is the mean output tokens of a request.
func (w *Worker) OutputMean() float64 { return w.outMean }

// BatchCap is the most sequences the worker runs at once: max_num_seqs, or
// as many as the KV slots hold, whichever is smaller.
func (w *Worker) BatchCap() int {
	return int(min(int64(w.maxSeqs), w.slots/w.NeedSlots()))
}

// DecodeStepMS is the time of an iteration that advances b decoding
// sequences, their contexts spread evenly over the output (isl + (j + ½) ×
// osl / b tokens), so their mean is isl + osl/2.
func (w *Worker) DecodeStepMS(b int) float64 {
	if b <= 0 {
		return 0
	}
	for len(w.dec) <= b {
		w.dec = append(w.dec, math.NaN())
	}
	if v := w.dec[b]; !math.IsNaN(v) {
		return v
	}
	v := w.step.StepMS(nil, nil, w.contexts(b))
	w.dec[b] = v
	return v
}

func (w *Worker) contexts(b int) []int {
	if cap(w.ctxBuf) < b {
		w.ctxBuf = make([]int, b, 2*b)
	}
	ctx := w.ctxBuf[:b]
	if w.lengths {
		// The b sequences at the quantiles (j + ½)/b of the context.
		n := float64(len(w.ctxQ))
		for j := range ctx {
			x := (float64(j)+0.5)/float64(b)*n - 0.5
			i := min(max(int(math.Floor(x)), 0), len(w.ctxQ)-1)
			v := w.ctxQ[i]
			if fr := x - float64(i); fr > 0 && i+1 < len(w.ctxQ) {
				v += fr * (w.ctxQ[i+1] - v)
			}
			ctx[j] = int(v)
		}
		return ctx
	}
	for j := range ctx {
		ctx[j] = w.isl + int((float64(j)+0.5)*float64(w.osl)/float64(b))
	}
	return ctx
}

// prefill returns, per case, a prompt's prefill with b sequences decoding
// in the same iterations (b = 0 on a prefill worker).
func (w *Worker) prefill(b int) []chunked {
	if w.separate {
		b = 0 // prefill batches run alone
	}
	if c, ok := w.alone[b]; ok {
		return c
	}
	if w.lengths {
		if lo, hi := gridAround(b); lo != hi {
			// With a length distribution the prompts are many and long:
			// between batches on a grid of ratio about √2, interpolated.
			out := interpolateChunked(w.prefill(lo), w.prefill(hi), float64(b-lo)/float64(hi-lo))
			w.alone[b] = out
			return out
		}
	}
	var dctx []int
	if b > 0 {
		dctx = append([]int(nil), w.contexts(b)...)
	}
	room := max(1, w.budget-b) // every decoding sequence takes one token of the budget
	out := make([]chunked, len(w.cases))
	done := map[[2]int]int{} // (input, cached) → the case computed first
	for i, h := range w.cases {
		key := [2]int{h.InputTokens, h.CachedTokens}
		if j, ok := done[key]; ok {
			out[i] = out[j]
			continue
		}
		done[key] = i
		p := h.InputTokens - h.CachedTokens
		var c chunked
		full, lastN, lastCtx := 0.0, 0, 0 // the full chunks' time; the last chunk
		for ctx, left := h.CachedTokens, p; left > 0; {
			n := min(left, room)
			w.oneTok[0], w.oneCtx[0] = n, ctx
			t := w.step.StepMS(w.oneTok[:], w.oneCtx[:], dctx)
			c.aloneMS += t
			if n == room && left > n {
				full += t
			}
			lastN, lastCtx = n, ctx
			c.chunks++
			ctx += n
			left -= n
		}
		c.packedMS = c.aloneMS
		switch {
		case p > room && w.lengths:
			// Long prompts of many sizes: the full chunks as they are, the
			// last one's share of a full iteration at its context.
			w.oneTok[0], w.oneCtx[0] = room, lastCtx
			c.packedMS = full + float64(lastN)/float64(room)*w.step.StepMS(w.oneTok[:], w.oneCtx[:], dctx)
		case p > room:
			// Queued prompts fill every iteration to the budget: a prompt's
			// last, short chunk shares its iteration with the next prompt,
			// so a prompt costs p/room full chunks at its mean context.
			w.oneTok[0], w.oneCtx[0] = room, h.CachedTokens+max(0, p-room)/2
			c.packedMS = float64(p) / float64(room) * w.step.StepMS(w.oneTok[:], w.oneCtx[:], dctx)
		}
		if k := room / max(1, p); k > 1 {
			// Prompts that queue share iterations: k of them fill the budget.
			w.packTok, w.packCtx = w.packTok[:0], w.packCtx[:0]
			c.batchMS = make([]float64, 0, min(k, 64))
			for n := 1; n <= k; n++ {
				w.packTok, w.packCtx = append(w.packTok, p), append(w.packCtx, h.CachedTokens)
				if n <= 64 || n == k {
					c.batchMS = append(c.batchMS, w.step.StepMS(w.packTok, w.packCtx, dctx))
				}
			}
			c.packedMS = c.batchMS[len(c.batchMS)-1] / float64(k)
		}
		out[i] = c
	}
	w.alone[b] = out
	return out
}

// gridAround is the batches of the prefill grid around b: b itself up to
// 8, then 8, 12, 16, 24, 32, 48, ... (2^k and 1.5 × 2^k).
func gridAround(b int) (lo, hi int) {
	if b <= 8 {
		return b, b
	}
	lo = 8
	for {
		next := lo * 3 / 2
		if lo&(lo-1) != 0 { // 1.5 × 2^k: the next is 2^(k+1)
			next = lo / 3 * 4
		}
		if next > b {
			if lo == b {
				return b, b
			}
			return lo, next
		}
		lo = next
	}
}

// interpolateChunked is a's and b's prefills mixed f of the way to b.
func interpolateChunked(a, b []chunked, f float64) []chunked {
	out := make([]chunked, len(a))
	for i := range a {
		c := chunked{aloneMS: a[i].aloneMS*(1-f) + b[i].aloneMS*f, packedMS: a[i].packedMS*(1-f) + b[i].packedMS*f,
			chunks: a[i].chunks, batchMS: a[i].batchMS}
		if f >= 0.5 {
			c.chunks, c.batchMS = b[i].chunks, b[i].batchMS
		}
		out[i] = c
	}
	return out
}

// DecodeStepAt is DecodeStepMS at a fractional batch b.
func (w *Worker) DecodeStepAt(b float64) float64 { return interp(w.DecodeStepMS, b) }

// interp evaluates f, defined on whole batches, at a fractional batch x by
// linear interpolation.
func interp(f func(int) float64, x float64) float64 {
	lo := int(math.Floor(x))
	fr := x - float64(lo)
	if fr == 0 {
		return f(lo)
	}
	return f(lo)*(1-fr) + f(lo+1)*fr
}

// Prefill is the mean of the hit cases of a prompt's prefill at batch b.
type Prefill struct {
	AloneMS    float64 // the prompt's own prefill: its chunks' iterations, summed
	ChunkMS    float64 // one of its chunk iterations
	PackedMS   float64 // GPU time per prompt when prompts queue (iterations packed to the budget)
	PackedCV2  float64 // squared coefficient of variation of PackedMS over the hit cases
	AloneP95MS float64 // the slowest case at least 5% of prompts take
}

// BatchedPrefill is a prompt's own prefill time on a prefill worker where
// prompts queue at lam per ms (the rate that finds the worker busy):
// prompts short enough to share an iteration do, n of them at a time,
// n = 1 + lam × T(n) (those that queue during an iteration join the next),
// at most what the budget holds; the prompt's time is then that
// iteration's, T(n), not its time alone.
func (w *Worker) BatchedPrefill(lam float64) (mean, p95 float64) {
	ts := w.BatchedPrefillMS(lam)
	if len(ts) == 1 {
		return ts[0], ts[0]
	}
	for i, t := range ts {
		mean += w.cases[i].Prob * t
	}
	return mean, w.Quantile(ts, 0.95)
}

// BatchedPrefillMS is BatchedPrefill per case: each case's prompt time.
func (w *Worker) BatchedPrefillMS(lam float64) []float64 {
	cs := w.prefill(0)
	out := make([]float64, len(cs))
	for i, c := range cs {
		t := c.aloneMS
		if len(c.batchMS) > 1 {
			at := func(n float64) float64 {
				n = math.Min(n, float64(len(c.batchMS)))
				lo := int(math.Floor(n))
				fr := n - float64(lo)
				if lo >= len(c.batchMS) {
					return c.batchMS[len(c.batchMS)-1]
				}
				v := c.batchMS[lo-1]
				if fr > 0 {
					v = v*(1-fr) + c.batchMS[lo]*fr
				}
				return v
			}
			n := 1.0
			for range 50 {
				next := math.Min(float64(len(c.batchMS)), 1+lam*at(n))
				if math.Abs(next-n) < 1e-6 {
					break
				}
				n = next
			}
			t = at(n)
		}
		out[i] = t
	}
	return out
}

// Quantile is the q-quantile of a per-case figure (one value per case, as
// the cases' probabilities weigh them): the largest value whose upper tail,
// itself included, holds at least 1 − q of the mass.
func (w *Worker) Quantile(values []float64, q float64) float64 {
	idx := make([]int, len(values))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return values[idx[a]] > values[idx[b]] })
	tail, v := 0.0, 0.0
	for _, i := range idx {
		tail += w.cases[i].Prob
		v = values[i]
		if tail >= 1-q {
			break
		}
	}
	return v
}

// PrefillMS is each case's prefill alone with b sequences decoding in the
// same iterations, and the iterations it takes.
func (w *Worker) PrefillMS(b int) (aloneMS []float64, chunks []int) {
	for _, c := range w.prefill(b) {
		aloneMS = append(aloneMS, c.aloneMS)
		chunks = append(chunks, c.chunks)
	}
	return aloneMS, chunks
}

// PackedMS is each case's GPU time per prompt when prompts queue, with b
// sequences decoding in the same iterations.
func (w *Worker) PackedMS(b int) []float64 {
	var out []float64
	for _, c := range w.prefill(b) {
		out = append(out, c.packedMS)
	}
	return out
}

// PrefillAt is a prompt's prefill, averaged over the cases, with b
// sequences decoding in the same iterations. A chunk iteration's mean is
// the time of the chunk iterations over their number (Σ p × alone / Σ p ×
// chunks), as a share of time spent in them turns into iterations.
func (w *Worker) PrefillAt(b int) Prefill {
	cs := w.prefill(b)
	var m Prefill
	var sq, chunks float64
	for i, c := range cs {
		p := w.cases[i].Prob
		m.AloneMS += p * c.aloneMS
		chunks += p * float64(max(1, c.chunks))
		m.PackedMS += p * c.packedMS
		sq += p * c.packedMS * c.packedMS
	}
	if chunks > 0 {
		m.ChunkMS = m.AloneMS / chunks
	}
	if m.PackedMS > 0 {
		m.PackedCV2 = math.Max(0, sq/(m.PackedMS*m.PackedMS)-1)
	}
	if len(cs) == 1 {
		m.AloneP95MS = cs[0].aloneMS
		return m
	}
	alone := make([]float64, len(cs))
	for i, c := range cs {
		alone[i] = c.aloneMS
	}
	m.AloneP95MS = w.Quantile(alone, 0.95)
	return m
}

func (w *Worker) prefillAtF(x float64) Prefill {
	lo := int(math.Floor(x))
	fr := x - float64(lo)
	a := w.PrefillAt(lo)
	if fr == 0 {
		return a
	}
	b := w.PrefillAt(lo + 1)
	mix := func(u, v float64) float64 { return u*(1-fr) + v*fr }
	return Prefill{mix(a.AloneMS, b.AloneMS), mix(a.ChunkMS, b.ChunkMS), mix(a.PackedMS, b.PackedMS),
		mix(a.PackedCV2, b.PackedCV2), mix(a.AloneP95MS, b.AloneP95MS)}
}

// Load is a worker at a request rate: the steady state of its batch
// and what a request sees.
type Load struct {
	RatePerS float64
	Stable   bool
	Limit    string // why it is not stable: LimitPrefill, LimitDecode or LimitKV

	Batch    float64 // mean decoding sequences (Little: rate × (osl − 1) × ITL)
	BatchCap int     // max_num_seqs or what the KV slots hold
	KVBound  bool    // the KV slots, not max_num_seqs, set BatchCap

	ITLMeanMS, ITLP95MS float64
	MixedShare          float64 // share of a sequence's tokens that come from iterations carrying prefill

	Prefill        Prefill // at the mean batch
	PrefillUtil    float64 // rate × packed prefill time: the GPU time prefill takes
	Admission      Wait    // waiting for a batch seat (KV slots or max_num_seqs)
	SlotsInUse     float64 // mean KV slots held by running sequences, tokens
	DecodeInFlight float64 // mean iteration in flight when a request arrives (half an ITL)
}

// Why a worker has no steady state at a rate (Load.Limit).
const (
	LimitPrefill = "prefill compute" // prefill alone takes all the GPU's time
	LimitDecode  = "decode ITL"      // the batch the rate needs makes iterations too slow to carry it
	LimitKV      = "KV slots"        // the KV slots seat fewer sequences than the rate keeps running
)

// Solve finds the worker's steady state at ratePerS requests per second.
//
// Decode: a request decodes for osl − 1 iterations after its first token,
// so by Little's law the mean number decoding is B = λ (osl − 1) × ITL
// (with a length distribution, the mean osl),
// while ITL is the mean iteration a decoding sequence sees. A sequence sees
// the others as Poisson(B) (the arrival theorem of an infinite-server
// queue), so its batch is 1 + B on average. On a worker that also
// prefills, a share u of the time goes to iterations that carry prefill
// chunks (each the prompt's chunk time S_m); the rest are decode-only
// (S_d): u = max(λ × packed prefill, 1 − exp(−λ × prefill alone)), the
// first term the GPU time prefill needs when prompts queue, the second the
// chance that a prompt is in progress when they do not, and
//
//	ITL = 1 / (u / S_m + (1 − u) / S_d).
//
// B is the root of λ (osl − 1) ITL(B) − B, found by bisection; when it
// lies beyond the batch cap the worker cannot hold the load.
func (w *Worker) Solve(ratePerS float64) Load { return w.SolveWith(ratePerS, 0) }

// SolveWith is Solve for arrivals whose gaps have squared coefficient of
// variation arrivalCV2 (0 = 1, Poisson): the wait for a batch seat sees it.
func (w *Worker) SolveWith(ratePerS, arrivalCV2 float64) Load {
	lam := ratePerS / 1000
	ld := Load{RatePerS: ratePerS, BatchCap: w.BatchCap()}
	ld.KVBound = w.slots/w.NeedSlots() < int64(w.maxSeqs)
	if ld.BatchCap < 1 {
		ld.Limit = LimitKV
		return ld
	}
	if !w.decodes {
		return w.solvePrefillOnly(ld, lam)
	}
	itl := func(B float64) (itlMS, share float64, pm Prefill, prefillOK bool) {
		b := 1 + B
		sd := interp(w.DecodeStepMS, b)
		if !w.prefills {
			return sd, 0, Prefill{}, true
		}
		pm = w.prefillAtF(B) // the prompt shares iterations with B decoding sequences
		if lam*pm.PackedMS >= 1 {
			return math.Inf(1), 1, pm, false
		}
		u := math.Min(1, math.Max(lam*pm.PackedMS, -math.Expm1(-lam*pm.AloneMS)))
		if w.separate {
			// Decoding waits while prefill runs: tokens come only from the
			// decode iterations, (1 − u)/S_d of them per ms, and a share of
			// the gaps holds a prefill iteration.
			if u >= 1 {
				return math.Inf(1), 1, pm, false
			}
			itlMS = sd / (1 - u)
			return itlMS, math.Min(1, u/pm.ChunkMS*sd/(1-u)), pm, true
		}
		rate := u/pm.ChunkMS + (1-u)/sd
		itlMS = 1 / rate
		return itlMS, u / pm.ChunkMS * itlMS, pm, true
	}
	g := func(B float64) float64 {
		t, _, _, ok := itl(B)
		if !ok {
			return math.Inf(1)
		}
		return lam*(w.outMean-1)*t - B
	}
	// The smallest root: scan up in doubling steps for the first batch at
	// which the load is carried (g ≤ 0), then bisect. Past the root g turns
	// positive again where bigger batches squeeze the prefill budget, which
	// is the unstable branch.
	top := float64(ld.BatchCap - 1)
	B, lo, hi := 0.0, 0.0, -1.0
	if g(0) > 0 {
		for x := 1.0; ; x *= 2 {
			x = math.Min(x, top)
			if g(x) <= 0 {
				hi = x
				break
			}
			lo = x
			if x == top {
				break
			}
		}
	} else {
		hi = 0
	}
	switch {
	case hi < 0:
		// No steady state below the cap: the load needs more seats than the
		// worker has, or more compute than it has at any batch.
		B = top
		ld.Limit = w.saturation(g, itl, lam, top)
	case hi == 0:
		B = 0
	default:
		for range 60 {
			mid := (lo + hi) / 2
			if g(mid) > 0 {
				lo = mid
			} else {
				hi = mid
			}
			if hi-lo < 1e-7 {
				break
			}
		}
		B = hi
	}
	ld.Batch = B
	t, share, pm, ok := itl(B)
	ld.ITLMeanMS, ld.MixedShare, ld.Prefill = t, share, pm
	if w.prefills {
		ld.PrefillUtil = lam * pm.PackedMS
	}
	if !ok || ld.Limit != "" {
		if ld.Limit == "" {
			ld.Limit = LimitPrefill
		}
		ld.ITLMeanMS, ld.ITLP95MS = math.Inf(1), math.Inf(1)
		return ld
	}
	ld.ITLP95MS = w.itlP95(B, share, ld.BatchCap)
	ld.DecodeInFlight = t / 2
	// Seats: a request holds its seat (and KV) from admission to its last token.
	seat := (w.outMean-1)*t + pm.AloneMS
	seatCV2 := 0.0
	ld.SlotsInUse = lam * seat * float64(w.NeedSlots())
	if w.lengths {
		// Each class holds its seat for its own output and prefill: the
		// seats see the variance of that time, and hold each class's KV.
		alone := make([]float64, len(w.cases))
		if w.prefills {
			alone, _ = w.PrefillMS(int(math.Round(B)))
		}
		var sq, held float64
		for i, k := range w.cases {
			si := float64(k.OutputTokens-1)*t + alone[i]
			sq += k.Prob * (si - seat) * (si - seat)
			held += k.Prob * si * float64(w.need(k))
		}
		seatCV2 = sq / (seat * seat)
		ld.SlotsInUse = lam * held
	}
	ld.Admission = Queue{RatePerS: ratePerS, Servers: ld.BatchCap, ServiceMS: seat, ServiceCV2: seatCV2, ArrivalCV2: arrivalCV2}.Wait()
	if !ld.Admission.Stable {
		ld.Limit = LimitKV
		if !ld.KVBound {
			ld.Limit = LimitDecode
		}
		return ld
	}
	ld.Stable = true
	return ld
}

// saturation says why a worker has no steady state below its batch cap
// top: prefill compute when prefill alone fills the GPU, the seats (KV slots,
// or max_num_seqs) when a bigger batch would carry the load, else decode
// compute (ITL grows faster than the batch it serves).
func (w *Worker) saturation(g func(float64) float64, itl func(float64) (float64, float64, Prefill, bool), lam, top float64) string {
	_, share, pm, ok := itl(top)
	if !ok || lam*pm.PackedMS >= 1 {
		return LimitPrefill
	}
	most := 64 * (top + 1)
	if w.lengths && w.prefills {
		// Past the token budget the decodes alone fill an iteration: no
		// bigger batch carries a load there.
		most = math.Min(most, float64(w.budget-1))
	}
	for x := 2 * (top + 1); x <= most; x *= 2 {
		if g(x) <= 0 {
			if w.slots/w.NeedSlots() < int64(w.maxSeqs) {
				return LimitKV
			}
			return LimitDecode
		}
	}
	if share > 0.5 {
		return LimitPrefill
	}
	return LimitDecode
}

// solvePrefillOnly is a prefill worker: prompts one after another (packed
// when they are short), nothing decoding alongside.
func (w *Worker) solvePrefillOnly(ld Load, lam float64) Load {
	pm := w.PrefillAt(0)
	ld.Prefill = pm
	ld.PrefillUtil = lam * pm.PackedMS
	if ld.PrefillUtil >= 1 {
		ld.Limit = LimitPrefill
		return ld
	}
	ld.Stable = true
	return ld
}

// itlP95 is the 95th percentile of the gaps between a sequence's tokens
// (ITLQuantiles).
func (w *Worker) itlP95(B, share float64, batchCap int) float64 {
	w.q95[0] = 0.95
	return w.itlQuantiles(B, share, batchCap, w.q95[:], w.p95[:])[0]
}

// ITLQuantiles are percentiles of the gaps between a sequence's tokens at
// batch B: a gap is an iteration of 1 + N sequences, N ~ Poisson(B) capped
// at the batch cap, which carries a prefill chunk with probability share
// (with SeparatePrefill, a prefill iteration runs before it instead). A
// chunk-carrying gap is a chunk iteration of one case's prompt, the cases
// weighed by how many chunk iterations each makes (probability × chunks).
// The q-quantile is the largest gap whose upper tail holds at least 1 − q of
// the gaps.
func (w *Worker) ITLQuantiles(B, share float64, batchCap int, qs []float64) []float64 {
	return w.itlQuantiles(B, share, batchCap, qs, make([]float64, len(qs)))
}

func (w *Worker) itlQuantiles(B, share float64, batchCap int, qs, out []float64) []float64 {
	top := min(batchCap-1, PoissonQuantile(B, 0.9999)+1)
	pmf := make([]float64, top+1)
	PoissonPMF(B, pmf)
	type gap struct{ ms, p float64 }
	gaps := make([]gap, 0, (1+len(w.cases))*len(pmf))
	var chunkW []float64 // each case's share of chunk iterations
	if share > 0 && len(w.cases) > 1 {
		cs := w.prefill(0)
		chunkW = make([]float64, len(cs))
		tot := 0.0
		for i, c := range cs {
			chunkW[i] = w.cases[i].Prob * float64(max(1, c.chunks))
			tot += chunkW[i]
		}
		for i := range chunkW {
			chunkW[i] /= tot
		}
	}
	for n, p := range pmf {
		if p <= 0 {
			continue
		}
		b := 1 + n
		gaps = append(gaps, gap{w.DecodeStepMS(b), p * (1 - share)})
		if share <= 0 {
			continue
		}
		if len(w.cases) == 1 {
			// One case: its chunk iteration, as PrefillAt gives it.
			if w.separate {
				gaps = append(gaps, gap{w.DecodeStepMS(b) + w.PrefillAt(0).ChunkMS, p * share})
			} else {
				gaps = append(gaps, gap{w.PrefillAt(b).ChunkMS, p * share})
			}
			continue
		}
		at := b
		if w.separate {
			at = 0
		}
		for i, c := range w.prefill(at) {
			ms := c.aloneMS / float64(max(1, c.chunks))
			if w.separate {
				ms += w.DecodeStepMS(b)
			}
			gaps = append(gaps, gap{ms, p * share * chunkW[i]})
		}
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].ms > gaps[j].ms })
	for k, q := range qs {
		out[k] = gaps[len(gaps)-1].ms
		tail := 0.0
		for _, g := range gaps {
			tail += g.p
			if tail >= 1-q {
				out[k] = g.ms
				break
			}
		}
	}
	return out
}
