package sim

import (
	"reflect"
	"strings"
	"testing"
)

// TestHandWorked checks exact counts on small sequential workloads, worked
// out by hand in the comments. Block size 16, no output tokens and no
// partial blocks, so a request pins only its own blocks; 2 workers.
func TestHandWorked(t *testing.T) {
	// Workload 1, capacity 4 blocks: A A B B A B (A = 3 blocks, B = 2).
	// Input tokens: 3×48 + 3×32 = 240. Full-block references: 3+3+2+2+3+2 =
	// 15; repeated ones: r2 3 + r4 2 + r5 3 + r6 2 = 10. Repeats: r2 r4 r5 r6.
	//
	// round-robin: r1 A→w0, r2 A→w1 (miss), r3 B→w0: w0 holds a1 a2 a3 with
	// LRU order a3 a2 a1 (released tail first), 1 free slot, so b1 takes it
	// and b2 evicts a3. r4 B→w1: w1 holds A, b2 evicts a3 again: miss.
	// r5 A→w0: a1 a2 cached, a3 not: overlap 2 of 3 seen, 2×2 ≥ 3: hit; a3
	// evicts the LRU block, b2. r6 B→w1: b1 b2 cached: hit.
	// Hits 2, cached tokens (2+2)×16 = 64, evictions 3.
	//
	// kv-aware: Dynamo's cost max(0, (booked + prompt tokens)/16 − overlap)
	// + active blocks + new blocks; nothing is in flight between sequential
	// requests, so it is max(0, blocks − overlap) + blocks. r1 A: 6 on
	// both, tie → w0. r2 A: w0 0 + 3, w1 6 → w0, hit. r3 B: 4 on both,
	// tie, w1 has fewer requests → w1. r4 B → w1, r5 A → w0, r6 B → w1,
	// all hits with full overlap. Hits 4, cached (3+2+3+2)×16 = 160, no
	// evictions.
	//
	// least-loaded: nothing is in flight at routing time, so the tie-break
	// on requests routed so far alternates w0 w1 like round-robin; and
	// kv-aware-no-events sees no overlap, so its cost is the same on both
	// workers and the same tie-break decides.
	w1seq := []testReq{reqA, reqA, reqB, reqB, reqA, reqB}

	// Workload 2, capacity 2 blocks: A' B C A' C with A' = a1 a2.
	// kv-aware: r1 → w0, r2 B → w1 (fewer requests), r3 C: no overlap,
	// tie, requests 1/1 → w0, evicting a2 then a1. r4 A': no overlap
	// anywhere, w1 has fewer requests → w1 (evicts b2 b1): miss. r5 C →
	// w0 (overlap 2): hit. Repeats 2, hits 1, cached 32 of 160, evictions 4.
	// kv-aware-approx remembers A' on w0 and ignores the eviction: r4 A' →
	// w0 (believed overlap 2): miss, evicting C; r5 C → w0 (believed
	// overlap 2): miss again. Hits 0, evictions 6.
	// round-robin: w0 w1 w0 w1 w0, the same placement as kv-aware.
	reqA2 := testReq{keys: []uint64{a1, a2}}
	w2seq := []testReq{reqA2, reqB, reqC, reqA2, reqC}

	type want struct {
		repeats, hits  int
		cached, input  int64
		evictions      int64
		refs, repeated int64
		shares         [2]float64
	}
	cases := []struct {
		name     string
		policy   string
		capacity int
		reqs     []testReq
		want     want
	}{
		{"A A B B A B", RoundRobin, 4, w1seq, want{4, 2, 64, 240, 3, 15, 10, [2]float64{0.5, 0.5}}},
		{"A A B B A B", LeastLoaded, 4, w1seq, want{4, 2, 64, 240, 3, 15, 10, [2]float64{0.5, 0.5}}},
		{"A A B B A B", KVAwareNoEvents, 4, w1seq, want{4, 2, 64, 240, 3, 15, 10, [2]float64{0.5, 0.5}}},
		{"A A B B A B", KVAware, 4, w1seq, want{4, 4, 160, 240, 0, 15, 10, [2]float64{0.5, 0.5}}},
		{"A A B B A B", KVAwareApprox, 4, w1seq, want{4, 4, 160, 240, 0, 15, 10, [2]float64{0.5, 0.5}}},
		{"A' B C A' C", KVAware, 2, w2seq, want{2, 1, 32, 160, 4, 10, 4, [2]float64{0.6, 0.4}}},
		{"A' B C A' C", KVAwareApprox, 2, w2seq, want{2, 0, 0, 160, 6, 10, 4, [2]float64{0.8, 0.2}}},
		{"A' B C A' C", RoundRobin, 2, w2seq, want{2, 1, 32, 160, 4, 10, 4, [2]float64{0.6, 0.4}}},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/"+tc.policy, func(t *testing.T) {
			src := &sliceSource{bs: 16, reqs: tc.reqs}
			r, err := Run(src, Config{Workers: 2, CapacityBlocks: tc.capacity, Policy: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			got := want{r.RepeatRequests, r.HitRequests, r.CachedTokens, r.InputTokens, r.Evictions,
				r.BlocksReferenced, r.RepeatedBlocks, [2]float64{r.Workers[0].RequestShare, r.Workers[1].RequestShare}}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if r.Name != tc.policy || r.Requests != len(tc.reqs) {
				t.Errorf("name %q requests %d", r.Name, r.Requests)
			}
			if wantRatio := float64(tc.want.cached) / float64(tc.want.input); r.CachedTokenRatio != wantRatio {
				t.Errorf("cached_token_ratio %v, want %v", r.CachedTokenRatio, wantRatio)
			}
		})
	}
}

// TestConcurrencyAndLoad checks that requests in flight steer kv-aware
// routing through Dynamo's cost: prefill_load_scale × max(0, (prefill
// tokens booked + prompt) / block − credit × overlap) + active blocks + the
// request's new blocks, all from the router's own account.
func TestConcurrencyAndLoad(t *testing.T) {
	// Concurrency 2, unbounded cache, block 16, no output. r1 A (48 tokens,
	// 3 blocks) → w0 (all 0: tie, lower index); the router books 48 prefill
	// tokens and 3 blocks on w0. r2 B (32, 2): w0 (48+32)/16 + 3+2 = 10, w1
	// 32/16 + 0+2 = 4 → w1. r3 A waits for the earliest event: B's first
	// token at 0.03 × 32 = 0.96 ms, which is also its end (no output), so
	// w1 is empty again; A's prefill on w0 runs to 1.44 ms. r3 A on w0:
	// max(0, (48+48)/16 − 3) + 3 + 0 new (A's blocks are in flight there)
	// = 6; on w1: 48/16 + 0 + 3 = 6. A tie; both have 1 request → w0, a hit.
	src := &sliceSource{bs: 16, reqs: []testReq{reqA, reqB, reqA}}
	r, err := Run(src, Config{Workers: 2, Policy: KVAware, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Workers[0].Requests != 2 || r.Workers[1].Requests != 1 || r.RepeatRequests != 1 || r.HitRequests != 1 {
		t.Fatalf("workers %d/%d repeats %d hits %d, want 2/1 1 1", r.Workers[0].Requests, r.Workers[1].Requests, r.RepeatRequests, r.HitRequests)
	}
	// Concurrency 3, A A A at once. r1 → w0. r2 on w0: max(0, 96/16 − 3) +
	// 3 + 0 = 6 (A is cached there: the cache-only model stores a request's
	// blocks as it starts); on w1 48/16 + 0 + 3 = 6: a tie, and w1 has had
	// fewer requests → w1, a repeat that misses: the prefill backlog on w0
	// outweighs the overlap. r3: both hold A and book 48 tokens and 3
	// blocks: 6 and 6, both have 1 request → w0, a hit.
	src = &sliceSource{bs: 16, reqs: []testReq{reqA, reqA, reqA}}
	r, err = Run(src, Config{Workers: 2, Policy: KVAware, Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Workers[0].Requests != 2 || r.Workers[1].Requests != 1 || r.RepeatRequests != 2 || r.HitRequests != 1 {
		t.Fatalf("A A A: workers %d/%d repeats %d hits %d, want 2/1 2 1", r.Workers[0].Requests, r.Workers[1].Requests, r.RepeatRequests, r.HitRequests)
	}
	// Sequentially the same requests go A→w0, B→w1, A→w0 (overlap 3): a hit.
	src = &sliceSource{bs: 16, reqs: []testReq{reqA, reqB, reqA}}
	r, err = Run(src, Config{Workers: 2, Policy: KVAware, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Workers[0].Requests != 2 || r.HitRequests != 1 {
		t.Fatalf("sequential: w0 requests %d hits %d, want 2 1", r.Workers[0].Requests, r.HitRequests)
	}
}

// TestTimestamps follows arrival times: a request still running when the
// next arrives keeps its blocks pinned.
func TestTimestamps(t *testing.T) {
	// One worker of 3 blocks. r1 A (3 blocks, output 10) arrives at 0 and
	// ends at 0.03×48 + 20×10 = 201.44 ms. r2 B arrives at 100 ms: all 3
	// blocks pinned, so both of B's blocks overflow. r3 A' = a1 a2 arrives
	// at 300 ms, after r1 ended: a1 a2 cached, a hit.
	// Output tokens need scratch blocks: r1 has 48+10 = 58 tokens → 4
	// blocks, 3 stored + 1 scratch, which overflows too. r2: 32 tokens → 2
	// blocks, no scratch. r3: 32+10 = 42 → 3 blocks, 2 stored + 1 scratch,
	// which evicts a3 (LRU: a3 a2 a1, a1 a2 then pinned).
	reqs := []testReq{
		{arrivalMS: 0, keys: []uint64{a1, a2, a3}, output: 10},
		{arrivalMS: 100, keys: []uint64{b1, b2}},
		{arrivalMS: 300, keys: []uint64{a1, a2}, output: 10},
	}
	r, err := Run(&sliceSource{bs: 16, timed: true, reqs: reqs}, Config{Workers: 1, CapacityBlocks: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.OverflowBlocks != 3 || r.HitRequests != 1 || r.CachedTokens != 32 || r.Evictions != 1 {
		t.Fatalf("overflow %d hits %d cached %d evictions %d, want 3 1 32 1", r.OverflowBlocks, r.HitRequests, r.CachedTokens, r.Evictions)
	}
	// With Concurrency 1 the timestamps are ignored and r2 finds room.
	r, err = Run(&sliceSource{bs: 16, timed: true, reqs: reqs}, Config{Workers: 1, CapacityBlocks: 3, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.OverflowBlocks != 1 {
		t.Fatalf("sequential overflow %d, want 1 (r1's scratch block)", r.OverflowBlocks)
	}
}

func TestConfigErrors(t *testing.T) {
	src := func() Source { return &sliceSource{bs: 16, reqs: []testReq{reqA}} }
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Workers: 0}, "workers: 0"},
		{Config{Workers: 1, BlockSize: 32}, "block size: config says 32"},
		{Config{Workers: 1, Policy: "kv-awre"}, `did you mean "kv-aware"`},
		{Config{Workers: 1, Policy: AllPolicies}, "use RunAll"},
		{Config{Workers: 1, Concurrency: -1}, "concurrency"},
	}
	for _, tc := range cases {
		_, err := Run(src(), tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want it to contain %q", tc.cfg, err, tc.want)
		}
	}
	bad := &sliceSource{bs: 16, reqs: []testReq{{keys: []uint64{1}, partial: 20}}}
	if _, err := Run(bad, Config{Workers: 1}); err == nil || !strings.Contains(err.Error(), "request 1: 1 full block ids for 36 input tokens") {
		t.Errorf("inconsistent request: %v", err)
	}
}

func TestRunAllDeterministicAndProgress(t *testing.T) {
	syn := Synthetic{Prefixes: 5, PrefixTokens: 300, Repeats: 4, TailTokens: 8, Seed: 3}
	open := func() (Source, error) { return syn.Open() }
	var calls []int
	cfg := Config{Workers: 3, CapacityBlocks: 40, Seed: 9, Progress: func(d int) { calls = append(calls, d) }}
	first, err := RunAll(open, cfg, []string{AllPolicies})
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != len(Policies()) {
		t.Fatalf("%d results, want %d", len(first), len(Policies()))
	}
	// One pass of 20 requests, fewer than 4,096, so one call at the end,
	// counting the requests of every policy: 6 × 20.
	if want := []int{120}; !reflect.DeepEqual(calls, want) {
		t.Fatalf("progress calls %v, want %v", calls, want)
	}
	cfg.Progress = nil
	second, err := RunAll(open, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("results differ between identical runs:\n%+v\n%+v", first, second)
	}
	// Another seed changes the random policy's routing (and the order).
	cfg.Seed = 10
	third, err := RunAll(open, cfg, []string{Random})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(third[0].Workers, first[1].Workers) {
		t.Fatalf("random policy ignored the seed: %+v", third[0].Workers)
	}
}
