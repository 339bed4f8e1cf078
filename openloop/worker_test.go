package openloop

import (
	"math"
	"testing"
)

// affineStep is a step time simple enough to solve by hand: a fixed cost,
// a cost per prefill token and a cost per decoding sequence; prefillMS, when
// set, replaces the whole time of an iteration that carries prefill.
type affineStep struct {
	fixedMS, perPrefillTokenMS, perDecodeMS float64
	prefillMS                               float64
}

func (s affineStep) StepMS(pt, pc, dc []int) float64 {
	n := 0
	for _, p := range pt {
		n += p
	}
	if n > 0 && s.prefillMS > 0 {
		return s.prefillMS
	}
	if n == 0 && len(dc) == 0 {
		return 0
	}
	return s.fixedMS + s.perPrefillTokenMS*float64(n) + s.perDecodeMS*float64(len(dc))
}

func TestDecodeWorker(t *testing.T) {
	// A decode worker at 10 requests/s, 101 output tokens: λ (osl − 1) = 1
	// sequence per ms of ITL. ITL(B) = 10 + 0.5 (1 + B), so
	// B = 10.5 + 0.5 B → B = 21, ITL = 21 ms. A sequence sees 1 + N,
	// N ~ Poisson(21), whose 95th percentile is 29: ITL p95 = 10 + 0.5 × 30 = 25 ms.
	w := newTestWorker(affineStep{fixedMS: 10, perDecodeMS: 0.5}, 1000, 101, 8192, 1024, 10_000_000, 16, false, true, nil)
	ld := w.Solve(10)
	if !ld.Stable {
		t.Fatalf("want stable, got %+v", ld)
	}
	if math.Abs(ld.Batch-21) > 1e-4 || math.Abs(ld.ITLMeanMS-21) > 1e-4 || ld.ITLP95MS != 25 {
		t.Errorf("batch %g ITL %g p95 %g, want 21, 21, 25", ld.Batch, ld.ITLMeanMS, ld.ITLP95MS)
	}
	// The same worker at 20 requests/s: B = 2 (10.5 + 0.5 B) → B = 21 + B: no
	// steady state at any batch; decode cannot keep up.
	if ld := w.Solve(20); ld.Stable || ld.Limit != LimitDecode {
		t.Errorf("at 20/s want unstable, decode-bound; got %+v", ld)
	}
}

func TestDecodeWorkerKVBound(t *testing.T) {
	// 1,200 slots per sequence (1000 + 101 rounded up to blocks of 100) in
	// 6,000 slots: 5 seats. At 10/s B would be 21: more than the seats.
	w := newTestWorker(affineStep{fixedMS: 10, perDecodeMS: 0.5}, 1000, 101, 8192, 1024, 6000, 100, false, true, nil)
	if got := w.BatchCap(); got != 5 {
		t.Fatalf("batch cap %d, want 5", got)
	}
	if ld := w.Solve(10); ld.Stable || ld.Limit != LimitKV {
		t.Errorf("want KV-bound, got %+v", ld)
	}
	// At 1/s: B = 0.1 × (10.5 + 0.5 B) → B = 1.05/0.95 = 1.1053; 5 seats hold it.
	ld := w.Solve(1)
	if !ld.Stable || math.Abs(ld.Batch-1.05/0.95) > 1e-4 {
		t.Errorf("at 1/s want B = 1.1053, got %+v", ld)
	}
	// Seats as an M/M/5-style queue: a request holds a seat for its decode,
	// 100 × ITL; ITL = 10 + 0.5 × 2.1053 = 11.053 ms, so a = 1/s × 1.1053 s.
	seat := 100 * (10 + 0.5*(1+1.05/0.95))
	if want := ErlangC(5, seat/1000); math.Abs(ld.Admission.PWait-want) > 1e-4 {
		t.Errorf("P(wait for a seat) = %g, want %g", ld.Admission.PWait, want)
	}
}

func TestAggregatedWorker(t *testing.T) {
	// Prefill iterations take 110 ms, decode-only ones 10 + 0.5 × batch;
	// 1,000-token prompts, 101 output tokens, budget 1,500 (one prompt per
	// iteration, so packed = alone = 110 ms), 1 request/s.
	// u = λ × 110 ms = 0.11 of the time carries prefill, so
	//   ITL = 1 / (0.11/110 + 0.89/(10.5 + 0.5 B)),  B = 0.1/ms × ITL,
	// i.e. 0.0005 B² + 0.8505 B − 1.05 = 0.
	w := newTestWorker(affineStep{fixedMS: 10, perDecodeMS: 0.5, prefillMS: 110}, 1000, 101, 1500, 1024, 10_000_000, 16, true, true, nil)
	ld := w.Solve(1)
	B := (-0.8505 + math.Sqrt(0.8505*0.8505+4*0.0005*1.05)) / (2 * 0.0005)
	itl := B / 0.1
	if !ld.Stable || math.Abs(ld.Batch-B) > 1e-5 || math.Abs(ld.ITLMeanMS-itl) > 1e-4 {
		t.Fatalf("batch %g ITL %g, want %g, %g (%+v)", ld.Batch, ld.ITLMeanMS, B, itl, ld)
	}
	// A sequence gets 0.11/110 × ITL of its tokens from prefill iterations:
	// 1.23% < 5%, so the p95 gap is a decode-only iteration of 1 + N, N ~ Poisson(1.233)
	// (95th percentile 3): 10 + 0.5 × 4 = 12 ms.
	if share := 0.001 * itl; math.Abs(ld.MixedShare-share) > 1e-6 || ld.ITLP95MS != 12 {
		t.Errorf("mixed share %g p95 %g, want %g, 12", ld.MixedShare, ld.ITLP95MS, share)
	}
	// At 10/s prefill takes 1.1 s of every second: saturated.
	if ld := w.Solve(10); ld.Stable || ld.Limit != LimitPrefill {
		t.Errorf("at 10/s want prefill-bound, got %+v", ld)
	}
}

func TestPrefillChunks(t *testing.T) {
	// 1,100 uncached tokens (200 cached) on a 300-token budget with 100
	// decoding: 200 tokens of room per iteration, 5 full chunks of
	// 10 + 0.1 × 200 + 0.5 × 100 = 80 ms and one of 100 tokens (70 ms): 470 ms
	// alone. Queued, the short chunk shares its iteration with the next
	// prompt: 1100/200 full chunks = 440 ms of GPU time.
	w := newTestWorker(affineStep{fixedMS: 10, perPrefillTokenMS: 0.1, perDecodeMS: 0.5}, 1300, 10, 300, 1024, 1e9, 16, true, true,
		[]Hit{{Prob: 1, Cached: 200}})
	c := w.prefill(100)[0]
	if c.chunks != 6 || math.Abs(c.aloneMS-470) > 1e-9 || math.Abs(c.packedMS-440) > 1e-9 {
		t.Errorf("got %+v, want 6 chunks, 470 ms alone, 440 ms packed", c)
	}
	// Short prompts pack: 100-token prompts in a 1,000 budget, nothing decoding:
	// 10 of them in one iteration of 10 + 0.1 × 1000 = 110 ms, 11 ms each; alone 20 ms.
	w = newTestWorker(affineStep{fixedMS: 10, perPrefillTokenMS: 0.1}, 100, 10, 1000, 1024, 1e9, 16, true, false, nil)
	if c := w.prefill(0)[0]; c.chunks != 1 || math.Abs(c.aloneMS-20) > 1e-9 || math.Abs(c.packedMS-11) > 1e-9 {
		t.Errorf("got %+v, want alone 20 ms, packed 11 ms", c)
	}
	// Half the prompts hit a 50-token prefix: 15 ms alone, the others 20 ms;
	// the p95 prompt is a miss.
	w = newTestWorker(affineStep{fixedMS: 10, perPrefillTokenMS: 0.1}, 100, 10, 100, 1024, 1e9, 16, true, false,
		[]Hit{{Prob: 0.5, Cached: 50}, {Prob: 0.5}})
	if m := w.PrefillAt(0); math.Abs(m.AloneMS-17.5) > 1e-9 || m.AloneP95MS != 20 {
		t.Errorf("got %+v, want mean 17.5 ms, p95 20 ms", m)
	}
}

// newTestWorker is NewWorker with the configuration in a line.
func newTestWorker(step StepTimer, isl, osl, budget, maxSeqs int, slots int64, block int, prefills, decodes bool, hits []Hit) *Worker {
	return NewWorker(Config{Step: step, InputTokens: isl, OutputTokens: osl, MaxNumBatchedTokens: budget, MaxNumSeqs: maxSeqs,
		KVSlots: slots, BlockSize: block, Prefills: prefills, Decodes: decodes, Hits: hits})
}

func TestSeparatePrefill(t *testing.T) {
	// SGLang's schedule: prefill iterations (110 ms) stop decoding. At 1/s,
	// u = 0.11 of the time is prefill, so ITL = S_d / (1 − u) with
	// S_d = 10 + 0.5 (1 + B) and B = 0.1/ms × ITL:
	// B (1 − 0.11) = 0.1 (10.5 + 0.5 B) → B = 1.05 / 0.84.
	w := NewWorker(Config{Step: affineStep{fixedMS: 10, perDecodeMS: 0.5, prefillMS: 110}, InputTokens: 1000, OutputTokens: 101,
		MaxNumBatchedTokens: 1500, MaxNumSeqs: 1024, KVSlots: 10_000_000, BlockSize: 16, Prefills: true, Decodes: true, SeparatePrefill: true})
	ld := w.Solve(1)
	B := 1.05 / 0.84
	if !ld.Stable || math.Abs(ld.Batch-B) > 1e-5 || math.Abs(ld.ITLMeanMS-(10.5+0.5*B)/0.89) > 1e-4 {
		t.Errorf("batch %g ITL %g, want %g, %g", ld.Batch, ld.ITLMeanMS, B, (10.5+0.5*B)/0.89)
	}
}

func TestLengthClasses(t *testing.T) {
	// Half the requests decode 50 tokens after the first, half 150: the mean
	// is that of 101 output tokens, so Little's law gives the batch of
	// TestDecodeWorker: B = 21, ITL = 21 ms (the step time ignores context).
	classes := []Class{{Prob: 1, InputTokens: 1000, OutputTokens: 51}, {Prob: 1, InputTokens: 1000, OutputTokens: 151}}
	w := NewWorker(Config{Step: affineStep{fixedMS: 10, perDecodeMS: 0.5}, MaxNumBatchedTokens: 8192, MaxNumSeqs: 1024,
		KVSlots: 10_000_000, BlockSize: 100, Decodes: true, Classes: classes})
	ld := w.Solve(10)
	if !ld.Stable || math.Abs(ld.Batch-21) > 1e-4 || math.Abs(ld.ITLMeanMS-21) > 1e-4 {
		t.Fatalf("batch %g ITL %g, want 21, 21 (%+v)", ld.Batch, ld.ITLMeanMS, ld)
	}
	// Seats: 1,100 and 1,200 slots (blocks of 100), held 50 and 150 gaps:
	// (51 × 1100 + 151 × 1200) / 202 = 1174.75 slots a running sequence.
	if got := w.NeedSlots(); got != 1175 {
		t.Errorf("seat need %d, want 1175", got)
	}
	if got := w.MaxNeedSlots(); got != 1200 {
		t.Errorf("largest need %d, want 1200", got)
	}
	// The seat time is 50 × 21 or 150 × 21 ms: mean 2,100, CV² = 1050²/2100² = 0.25.
	want := Queue{RatePerS: 10, Servers: ld.BatchCap, ServiceMS: 2100, ServiceCV2: 0.25}.Wait()
	if math.Abs(ld.Admission.MeanMS-want.MeanMS) > 1e-9 || ld.BatchCap != 1024 {
		t.Errorf("seat wait %+v, want %+v", ld.Admission, want)
	}
	// The slots in use: 10/s × (1.05 s × 1100 + 3.15 s × 1200) / 2 = 24,675.
	if math.Abs(ld.SlotsInUse-24675) > 1e-6 {
		t.Errorf("slots in use %g, want 24675", ld.SlotsInUse)
	}
}

func TestLengthClassesPrefill(t *testing.T) {
	// 90% of prompts are 100 tokens, 10% 1,000: alone 20 ms and 110 ms
	// (10 + 0.1 × tokens). The 95th percentile is the long prompt, the mean
	// 0.9 × 20 + 0.1 × 110 = 29 ms.
	classes := []Class{{Prob: 0.9, InputTokens: 100, OutputTokens: 10}, {Prob: 0.1, InputTokens: 1000, OutputTokens: 10}}
	w := NewWorker(Config{Step: affineStep{fixedMS: 10, perPrefillTokenMS: 0.1}, MaxNumBatchedTokens: 1000, MaxNumSeqs: 1024,
		KVSlots: 1e9, BlockSize: 16, Prefills: true, Classes: classes})
	m := w.PrefillAt(0)
	if math.Abs(m.AloneMS-29) > 1e-9 || m.AloneP95MS != 110 {
		t.Errorf("got %+v, want mean 29 ms, p95 110 ms", m)
	}
	alone, _ := w.PrefillMS(0)
	if q := w.Quantile(alone, 0.5); q != 20 {
		t.Errorf("median prefill %g, want 20", q)
	}
	// Chunk iterations: one each, so their mean is the mean prompt's.
	if math.Abs(m.ChunkMS-29) > 1e-9 {
		t.Errorf("chunk mean %g, want 29", m.ChunkMS)
	}
}

func TestITLQuantiles(t *testing.T) {
	// A decode worker at batch 0 (no others): every gap is 10 + 0.5 = 10.5 ms;
	// with a quarter of the gaps carrying a 110 ms chunk on an aggregated
	// worker, p50 is a decode gap and p90 a chunk gap.
	w := newTestWorker(affineStep{fixedMS: 10, perDecodeMS: 0.5, prefillMS: 110}, 1000, 101, 1500, 1024, 10_000_000, 16, true, true, nil)
	got := w.ITLQuantiles(0, 0.25, 1024, []float64{0.5, 0.9, 0.95})
	if got[0] != 10.5 || got[1] != 110 || got[2] != 110 {
		t.Errorf("ITL p50, p90, p95 = %v, want 10.5, 110, 110", got)
	}
}

func TestGridAround(t *testing.T) {
	for _, c := range []struct{ b, lo, hi int }{{3, 3, 3}, {8, 8, 8}, {9, 8, 12}, {12, 12, 12}, {13, 12, 16}, {20, 16, 24}, {40, 32, 48}, {50, 48, 64}, {64, 64, 64}} {
		if lo, hi := gridAround(c.b); lo != c.lo || hi != c.hi {
			t.Errorf("gridAround(%d) = %d, %d; want %d, %d", c.b, lo, hi, c.lo, c.hi)
		}
	}
}
