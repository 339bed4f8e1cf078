package perf

import (
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

// realistic: efficiencies of the order the fit finds, with fixed costs.
func realistic(rampMS float64) *catalog.Efficiency {
	return &catalog.Efficiency{GEMM: 0.7, Memory: 0.8, Attention: 0.5, MoE: 0.7, Interconnect: 0.6, AllReduceUS: 15,
		StepMS: 2, LayerUS: 5, EagerLayerUS: 40, RequestMS: 10, RampMS: rampMS, Source: "test"}
}

// Steady (runs of decode iterations summed in closed form) matches the
// iteration-by-iteration simulation of the same load, in lock-step (no
// ramp), out of step (a ramp), with prefill apart (SGLang) and when the KV
// slots make requests wait.
func TestSteadyMatchesStepSimulation(t *testing.T) {
	big := int64(10_000_000)
	for _, tc := range []struct {
		name   string
		engine string
		tp     int
		ld     Load
		lim    Limits
		ramp   float64
	}{
		{"lock-step", "vllm", 1, Load{8, 1024, 256, false, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: big}, 0},
		{"out of step", "vllm", 2, Load{32, 2048, 512, false, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: big}, 3000},
		{"chunked long prompts", "trtllm", 1, Load{16, 12000, 128, false, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: big}, 500},
		{"prefill apart", "sglang", 1, Load{64, 1024, 128, false, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: big, SeparatePrefill: true}, 200},
		{"kv-limited", "vllm", 1, Load{48, 2000, 1000, false, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: 16 * 3008}, 1000},
		{"max_num_seqs", "vllm", 1, Load{40, 512, 300, false, RequestPath{}}, Limits{MaxNumSeqs: 24, MaxNumBatchedTokens: 2048, KVSlots: big}, 0},
		{"kv-limited, grow-as-you-go", "vllm", 1, Load{48, 2000, 1000, false, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: 16 * 3008, KVReserveOutput: 0.5}, 1000},
		{"kv-limited, grown with recompute preemption", "vllm", 1, Load{48, 2000, 1000, false, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: 16 * 3008, GrowKV: true}, 1000},
		{"recv interval 30, prefill apart", "sglang", 1, Load{16, 1024, 256, false, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: big, SeparatePrefill: true, RecvInterval: 30}, 200},
		{"recv interval 10, lock-step", "sglang", 1, Load{8, 2048, 128, false, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 16384, KVSlots: big, SeparatePrefill: true, RecvInterval: 10}, 0},
		{"kv-limited, preempted out of step", "vllm", 2, Load{32, 2048, 512, false, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: 16 * 1500, GrowKV: true}, 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eff := realistic(tc.ramp)
			m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: tc.engine, TP: tc.tp, Efficiency: eff})
			got, err := m.Steady(tc.ld, tc.lim)
			if err != nil {
				t.Fatal(err)
			}
			ref := simulate(m, tc.ld, tc.lim, ramp(tc.ld.Concurrency, tc.ramp), RequestsPerClient, WarmRequests)
			if tc.lim.GrowKV && got.Preemptions == 0 {
				t.Errorf("GrowKV with KV for a fraction of the clients and no preemption: the case does not exercise it")
			}
			if !near(got.TTFTMS, ref.ttftMS, 0.05) || !near(got.TPOTMS, ref.tpotMS, 0.03) {
				t.Errorf("Steady TTFT %.1f ms, TPOT %.2f ms; the step simulation %.1f, %.2f ms",
					got.TTFTMS, got.TPOTMS, ref.ttftMS, ref.tpotMS)
			}
			if !near(got.Running, ref.running, 0.05) {
				t.Errorf("running %.1f, the step simulation %.1f", got.Running, ref.running)
			}
			// Little's law on the simulation's own means.
			refX := float64(tc.ld.Concurrency) / (ref.ttftMS + float64(tc.ld.OutputTokens-1)*ref.tpotMS) * 1000
			if !near(got.RequestsPerS, refX, 0.05) {
				t.Errorf("requests/s %.3f, the step simulation %.3f", got.RequestsPerS, refX)
			}
		})
	}
}

// The harness replay (Load.AsHarness: clients start together, every request
// counts, out of phase after the first) matches the iteration-by-iteration
// simulation of the same benchmark, and counting the first wave shows: at
// 64 clients of 1,024-token prompts the first wave queues 64 prefills (8
// iterations of 8,192 tokens), so the harness TTFT is above the out-of-step
// replay's, and below the lock-step one's, where every request queues so.
func TestHarnessMatchesStepSimulation(t *testing.T) {
	big := int64(10_000_000)
	for _, tc := range []struct {
		name   string
		engine string
		ld     Load
		lim    Limits
	}{
		{"vllm 64 clients", "vllm", Load{64, 1024, 256, true, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: big}},
		{"vllm 8 clients", "vllm", Load{8, 2048, 512, true, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: big}},
		{"sglang prefill apart", "sglang", Load{32, 1024, 128, true, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: big, SeparatePrefill: true}},
		{"kv-limited", "vllm", Load{48, 2000, 1000, true, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: 16 * 3008}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: tc.engine, TP: 1, Efficiency: realistic(0)})
			got, err := m.Steady(tc.ld, tc.lim)
			if err != nil {
				t.Fatal(err)
			}
			ref := simulatePhased(m, tc.ld, tc.lim, ramp(tc.ld.Concurrency, 0), HarnessRequestsPerClient, 0, true)
			if !near(got.TTFTMS, ref.ttftMS, 0.05) || !near(got.TPOTMS, ref.tpotMS, 0.03) {
				t.Errorf("Steady TTFT %.1f ms, TPOT %.2f ms; the step simulation %.1f, %.2f ms",
					got.TTFTMS, got.TPOTMS, ref.ttftMS, ref.tpotMS)
			}
		})
	}
	m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: realistic(0)})
	lim := Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: big}
	lock, _ := m.Steady(Load{64, 1024, 256, false, RequestPath{}}, lim)
	harness, _ := m.Steady(Load{64, 1024, 256, true, RequestPath{}}, lim)
	m2 := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: realistic(1e5)})
	spread, _ := m2.Steady(Load{64, 1024, 256, false, RequestPath{}}, lim)
	if !(spread.TTFTMS < harness.TTFTMS && harness.TTFTMS < lock.TTFTMS) {
		t.Errorf("TTFT out of step %.1f, harness %.1f, lock-step %.1f ms: want them in that order", spread.TTFTMS, harness.TTFTMS, lock.TTFTMS)
	}
}

// When only N of C requests fit the KV slots, the others wait: by Little's
// law each waits about (C − N) / N of a request's time in the engine.
func TestKVLimitedWaiting(t *testing.T) {
	eff := realistic(1000)
	m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: eff})
	// 3,008 tokens (188 blocks of 16) per request of 2,000 + 1,000: 10 fit.
	lim := Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: 10 * 3008}
	r, err := m.Steady(Load{Concurrency: 40, InputTokens: 2000, OutputTokens: 1000}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if !r.KVLimited || r.MaxRunning != 10 {
		t.Fatalf("kv_limited %v, max running %d; want true, 10", r.KVLimited, r.MaxRunning)
	}
	inEngine := r.PrefillMS + 999*r.TPOTMS
	want := 30.0 / 10 * inEngine
	if !near(r.WaitingMS, want, 0.1) {
		t.Errorf("waiting %.0f ms, want about (40 − 10) / 10 × %.0f ms = %.0f ms", r.WaitingMS, inEngine, want)
	}
}

// With KVReserveOutput a request's admission counts its prompt and that
// share of its output: 10 requests of 2,000 + 1,000 tokens fill 30,080 slots
// reserved whole (188 blocks of 16 each), but counted at 2,000 + 500 tokens
// (157 blocks, 2,512 slots) floor(30,080 / 2,512) = 11 run at once.
func TestKVReserveOutput(t *testing.T) {
	m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: realistic(1000)})
	for _, tc := range []struct {
		reserve float64
		want    int
	}{{0, 10}, {1, 10}, {0.5, 11}} {
		r, err := m.Steady(Load{40, 2000, 1000, false, RequestPath{}}, Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: 10 * 3008, KVReserveOutput: tc.reserve})
		if err != nil {
			t.Fatal(err)
		}
		if r.MaxRunning != tc.want || !r.KVLimited {
			t.Errorf("reserve %g: max running %d (kv_limited %v), want %d", tc.reserve, r.MaxRunning, r.KVLimited, tc.want)
		}
	}
	// A request that does not fit whole is refused whatever the reserve.
	if _, err := m.Steady(Load{1, 1000, 1000, false, RequestPath{}}, Limits{MaxNumSeqs: 1, MaxNumBatchedTokens: 8192, KVSlots: 1500, KVReserveOutput: 0.5}); err == nil {
		t.Error("a request of 2,000 tokens ran in 1,500 slots")
	}
}

func TestSteadyRejects(t *testing.T) {
	m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: realistic(0)})
	for _, tc := range []struct {
		ld   Load
		lim  Limits
		want string
	}{
		{Load{0, 10, 10, false, RequestPath{}}, Limits{MaxNumSeqs: 1, MaxNumBatchedTokens: 10, KVSlots: 100}, "concurrency must be >= 1"},
		{Load{1, 0, 10, false, RequestPath{}}, Limits{MaxNumSeqs: 1, MaxNumBatchedTokens: 10, KVSlots: 100}, "input tokens"},
		{Load{1, 10, 10, false, RequestPath{}}, Limits{MaxNumSeqs: 1, MaxNumBatchedTokens: 10, KVSlots: 0}, "no KV slots"},
		{Load{1, 1000, 1000, false, RequestPath{}}, Limits{MaxNumSeqs: 1, MaxNumBatchedTokens: 8192, KVSlots: 1500}, "needs 2000 KV slots"},
	} {
		if _, err := m.Steady(tc.ld, tc.lim); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Steady(%+v, %+v): err = %v, want %q", tc.ld, tc.lim, err, tc.want)
		}
	}
}

// The same load gives the same figures.
func TestSteadyDeterministic(t *testing.T) {
	m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "trtllm", TP: 1, Efficiency: realistic(700)})
	ld, lim := Load{24, 1500, 300, false, RequestPath{}}, Limits{MaxNumSeqs: 64, MaxNumBatchedTokens: 8192, KVSlots: 1 << 22}
	a, _ := m.Steady(ld, lim)
	b, _ := m.Steady(ld, lim)
	if a != b {
		t.Errorf("two runs differ:\n%+v\n%+v", a, b)
	}
}

// Attention-DP balancing (Limits.BalanceRanks), as TensorRT-LLM's
// _balance_adp_requests decides it:
//   - 2 clients on 4 ranks: each request goes to an empty rank, and two ranks
//     never have a generating sequence, so nothing is ever held: the same
//     waits as without balancing (by the rule, not by a figure).
//   - 5 clients on 4 ranks (ranks 0–3 get clients 0–3, rank 0 client 4 too):
//     a request is held only while every rank generates and some rank has
//     no request to schedule, and at most the timeout's 50 iterations, so
//     its wait grows by more than nothing and at most 50 decode iterations
//     of 5 sequences (by hand: 50 × DecodeStep(5) at the mean context).
func TestBalanceHold(t *testing.T) {
	m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "trtllm", TP: 1, Efficiency: realistic(3000)})
	ld := Load{Concurrency: 2, InputTokens: 512, OutputTokens: 1000}
	lim := Limits{MaxNumSeqs: 8, MaxNumBatchedTokens: 8192, KVSlots: 1_000_000}
	free, err := m.Steady(ld, lim)
	if err != nil {
		t.Fatal(err)
	}
	lim.BalanceRanks, lim.BalanceTimeoutIters = 4, 50
	held, err := m.Steady(ld, lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("2 clients: waiting %.2f ms held, %.2f ms free", held.WaitingMS, free.WaitingMS)
	if held.WaitingMS != free.WaitingMS || held.TTFTMS != free.TTFTMS {
		t.Errorf("2 clients on 4 ranks: waiting %.3f ms, TTFT %.3f ms with balancing; %.3f, %.3f without (two ranks never generate, so nothing is held)",
			held.WaitingMS, held.TTFTMS, free.WaitingMS, free.TTFTMS)
	}
	ld.Concurrency = 5
	lim.BalanceRanks = 0
	free5, err := m.Steady(ld, lim)
	if err != nil {
		t.Fatal(err)
	}
	lim.BalanceRanks = 4
	held5, err := m.Steady(ld, lim)
	if err != nil {
		t.Fatal(err)
	}
	step := m.DecodeStep(5, 512+500).TotalMS
	extra := held5.WaitingMS - free5.WaitingMS
	t.Logf("5 clients: waiting %.2f ms held, %.2f ms free; 50 decode steps of 5 = %.2f ms", held5.WaitingMS, free5.WaitingMS, 50*step)
	if extra <= 0 || extra > 50*step*1.05 {
		t.Errorf("5 clients on 4 ranks: the hold adds %.2f ms of waiting, want more than 0 and at most 50 × %.3f ms = %.2f ms", extra, step, 50*step)
	}
}

// A data-parallel rank holds 1/BalanceRanks of the worker's KV slots: a
// request of 512 + 1000 tokens (1,520 slots in blocks of 16) fits 4,000
// slots, not a quarter of them (1,000), and says so.
func TestBalanceRankKV(t *testing.T) {
	m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "trtllm", TP: 1, Efficiency: realistic(3000)})
	ld := Load{Concurrency: 4, InputTokens: 512, OutputTokens: 1000}
	lim := Limits{MaxNumSeqs: 8, MaxNumBatchedTokens: 8192, KVSlots: 4000}
	if _, err := m.Steady(ld, lim); err != nil {
		t.Fatalf("one queue: %v", err)
	}
	lim.BalanceRanks, lim.BalanceTimeoutIters = 4, 60
	_, err := m.Steady(ld, lim)
	if err == nil || !strings.Contains(err.Error(), "a data-parallel rank holds 1000") {
		t.Errorf("4 ranks of 1,000 slots: err %v, want the rank's 1000 slots named", err)
	}
}

// Per-rank queues that bind nothing replay what one queue does, byte for
// byte: 8 clients on 4 ranks (least-loaded: 2 a rank), a timeout of 1 (the
// counter reaches it at every unbalanced iteration, so nothing is held), a
// rank's budget of 2 prompts and their decodes, its max_num_seqs 2 and KV
// far from full: every iteration admits every waiting request either way,
// so the batches, and every figure, are the same.
func TestBalanceRanksUnbound(t *testing.T) {
	m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "trtllm", TP: 1, Efficiency: realistic(3000)})
	ld := Load{Concurrency: 8, InputTokens: 512, OutputTokens: 200, AsHarness: true}
	lim := Limits{MaxNumSeqs: 8, MaxNumBatchedTokens: 4 * (2*512 + 2), KVSlots: 1_000_000}
	one, err := m.Steady(ld, lim)
	if err != nil {
		t.Fatal(err)
	}
	lim.BalanceRanks, lim.BalanceTimeoutIters = 4, 1
	ranks, err := m.Steady(ld, lim)
	if err != nil {
		t.Fatal(err)
	}
	if one != ranks {
		t.Errorf("one queue and 4 unbound rank queues differ:\n%+v\n%+v", one, ranks)
	}
}

// TestHeldTokens: what a request counts against the KV slots, by hand.
func TestHeldTokens(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lim      Limits
		isl, osl int
		want     int64
	}{
		{"vLLM, half the output, 16-token blocks: 1000 + 251 = 1251 → 79 blocks", Limits{BlockSize: 16, KVReserveOutput: 0.5}, 1000, 501, 1264},
		{"SGLang, 0.55 of the output, 1-token pages: 1024 + ⌈4505.6⌉", Limits{BlockSize: 1, KVReserveOutput: 0.55}, 1024, 8192, 5530},
		{"TensorRT-LLM reserves all: 2048 + 256, 32-token blocks", Limits{BlockSize: 32, KVReserveOutput: 1}, 2048, 256, 2304},
		{"no reserve set: all of it, default 16-token blocks: 100 + 1 → 7 blocks", Limits{}, 100, 1, 112},
		{"GrowKV: the prompt and half the output, 2000 + 500", Limits{BlockSize: 16, KVReserveOutput: 0.5, GrowKV: true}, 2000, 1000, 2512},
	} {
		if got := tc.lim.HeldTokens(tc.isl, tc.osl); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestRecvInterval: with SGLang's --scheduler-recv-interval a request that
// arrives while the batch decodes waits for the scheduler's next read,
// (RecvInterval − 1) / 2 decode iterations on average. Two clients out of
// phase, each arriving while the other decodes: TTFT grows by 14.5 decode
// iterations at RecvInterval 30 (14 and 15 alternately; within 2 of it, as
// some arrive when nothing decodes), and TPOT barely moves. The wait
// itself by hand: reads due 14, 15, 14 iterations after three arrivals.
func TestRecvInterval(t *testing.T) {
	m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "sglang", TP: 1, Efficiency: realistic(3000)})
	ld := Load{2, 1024, 512, false, RequestPath{}}
	lim := Limits{MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, KVSlots: 1 << 24, SeparatePrefill: true}
	base, err := m.Steady(ld, lim)
	if err != nil {
		t.Fatal(err)
	}
	lim.RecvInterval = 30
	got, err := m.Steady(ld, lim)
	if err != nil {
		t.Fatal(err)
	}
	extra := (got.TTFTMS - base.TTFTMS) / base.DecodeStepMS
	t.Logf("TTFT %.1f → %.1f ms (%.1f decode iterations of %.2f ms), TPOT %.2f → %.2f ms", base.TTFTMS, got.TTFTMS, extra, base.DecodeStepMS, base.TPOTMS, got.TPOTMS)
	if extra < 12.5 || extra > 16.5 {
		t.Errorf("TTFT %.1f → %.1f ms: %.1f decode iterations of %.2f ms more, want about 14.5", base.TTFTMS, got.TTFTMS, extra, base.DecodeStepMS)
	}
	if !near(got.TPOTMS, base.TPOTMS, 0.02) {
		t.Errorf("TPOT %.2f → %.2f ms", base.TPOTMS, got.TPOTMS)
	}
	b := &bench{recvN: 30, readAt: -1}
	for i, want := range []int{2 + 14, 2 + 15, 2 + 14} {
		b.readAt = -1
		if got := b.readStop(2, 100, true); got != want {
			t.Errorf("arrival %d after 2 iterations: read after %d, want %d", i+1, got, want)
		}
	}
	b.readAt = -1
	if got := b.readStop(100, 100, false); got != 100 || b.readAt != -1 {
		t.Errorf("no arrival within the run: stop %d (read due %d), want 100 and none due", got, b.readAt)
	}
}
