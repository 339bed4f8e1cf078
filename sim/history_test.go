package sim

import (
	"math"
	"reflect"
	"runtime"
	"testing"
)

// uniqueHeavy is a workload whose distinct blocks grow with its length:
// every request has 50 blocks of its own after a 10-block shared prefix.
func uniqueHeavy(repeats int) Synthetic {
	return Synthetic{Prefixes: 20, PrefixTokens: 960, Repeats: repeats, TailTokens: 800, BlockSize: 16, Seed: 1}
}

// TestHistoryBound: history never holds more than SeenBlocks ids (two
// generations of SeenBlocks/2, plus at most one request), however many
// distinct ids pass through, and it keeps whatever is referenced again.
func TestHistoryBound(t *testing.T) {
	const seenBlocks = 1000
	h := newHistory(seenBlocks, 0)
	defer h.release()
	hot := []uint64{mix(chainRoot, 1), 0}
	hot[1] = mix(hot[0], 2)
	ids := make([]uint64, 60)
	for r := range 2000 {
		id := hot[1]
		copy(ids, hot)
		for j := 2; j < len(ids); j++ {
			id = mix(id, uint64(r)<<8|uint64(j))
			ids[j] = id
		}
		h.begin(len(ids))
		seen := h.observe(ids)
		if r > 0 && seen != 2 {
			t.Fatalf("request %d: seen run %d, want 2 (the hot prefix)", r, seen)
		}
		if n := h.cur.n + h.prev.n; n > seenBlocks+len(ids) {
			t.Fatalf("request %d: %d ids held, want at most %d", r, n, seenBlocks+len(ids))
		}
		// Slots: each generation at most half full, so a table never
		// exceeds the next power of two of 2 × (limit + one request), or
		// the initial size.
		if s, want := h.cur.slots()+h.prev.slots(), 2*max(idTableMinSlots, 2048); s > want {
			t.Fatalf("request %d: %d slots, want at most %d", r, s, want)
		}
	}
	// The first request's tail was forgotten long ago.
	if h.has(mix(hot[1], 2)) {
		t.Fatal("an id from 2,000 requests ago is still remembered past the bound")
	}
}

// TestSeenBlocksExactWithinBound: below the bound results do not depend on
// it, nor do they when history rotates once without dropping anything;
// past it, forgetting can only lose repeats, never invent them.
// kv-aware-approx runs with 3 workers (binary searches for overlaps) and 20
// (one walk a request).
func TestSeenBlocksExactWithinBound(t *testing.T) {
	syn := uniqueHeavy(30) // 600 requests, 30,200 distinct blocks
	for _, workers := range []int{3, 20} {
		for _, pol := range Policies() {
			run := func(seen int) Result {
				src, err := syn.Open()
				if err != nil {
					t.Fatal(err)
				}
				r, err := Run(src, Config{Workers: workers, CapacityBlocks: 500, Policy: pol, Seed: 1, Concurrency: 4, SeenBlocks: seen})
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			exact := run(-1)
			if got := run(0); !reflect.DeepEqual(got, exact) {
				t.Errorf("%s, %d workers: default bound changed the result:\n%+v\nwant\n%+v", pol, workers, got, exact)
			}
			if got := run(70000); !reflect.DeepEqual(got, exact) {
				t.Errorf("%s, %d workers: a bound above the distinct blocks changed the result", pol, workers)
			}
			// 20,000 ids a generation: one rotation, after which the
			// remaining ~10,000 new blocks never fill cur again.
			if got := run(40000); !reflect.DeepEqual(got, exact) {
				t.Errorf("%s, %d workers: rotating without forgetting changed the result:\n%+v\nwant\n%+v", pol, workers, got, exact)
			}
			small := run(20000) // forgets some of the distinct blocks
			if small.RepeatedBlocks > exact.RepeatedBlocks || small.RepeatRequests > exact.RepeatRequests {
				t.Errorf("%s, %d workers: bounded history found more repeats (%d blocks, %d requests) than exact (%d, %d)",
					pol, workers, small.RepeatedBlocks, small.RepeatRequests, exact.RepeatedBlocks, exact.RepeatRequests)
			}
			// The shared 10-block prefixes come back every 20 requests or
			// so, far more often than the bound forgets (a generation holds
			// about 160 requests' blocks), so they stay repeats.
			if small.RepeatRequests != exact.RepeatRequests {
				t.Errorf("%s, %d workers: bounded history lost hot prefixes: %d repeat requests, want %d",
					pol, workers, small.RepeatRequests, exact.RepeatRequests)
			}
		}
	}
}

// TestMemoryBoundedByTraceLength: with a bound, a run eight times longer
// (eight times the distinct blocks) allocates about the same memory; with
// no bound it allocates far more.
func TestMemoryBoundedByTraceLength(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 40,000 requests")
	}
	allocated := func(pol string, repeats, seen int) uint64 {
		src, err := uniqueHeavy(repeats).Open()
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := Run(src, Config{Workers: 8, CapacityBlocks: 500, Policy: pol, Seed: 1, SeenBlocks: seen}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	const bound = 1 << 14 // 16,384 ids: two tables of at most 32,768 slots
	for _, pol := range []string{KVAware, KVAwareApprox} {
		short, long := allocated(pol, 250, bound), allocated(pol, 2000, bound) // 250,000 and 2,000,000 distinct blocks
		t.Logf("%s: %d bytes for 5,000 requests, %d for 40,000 (bound %d ids)", pol, short, long, bound)
		if long > short+(1<<20) {
			t.Errorf("%s: allocated %d bytes for 5,000 requests but %d for 40,000 with SeenBlocks %d; want within 1 MiB",
				pol, short, long, bound)
		}
		if unbounded := allocated(pol, 2000, -1); unbounded < 8*long {
			t.Errorf("%s: unbounded run allocated %d bytes, bounded %d; the test workload no longer exercises the bound", pol, unbounded, long)
		}
	}
}

// TestExplicitZero: DefaultConfig lets OverlapCredit (and the other cost
// and timing fields) be exactly 0, while a Config literal's 0 still means
// the default.
func TestExplicitZero(t *testing.T) {
	// Request 2 is request 1's first block alone: one block of 4 tokens,
	// cached on w0; nothing is in flight. Dynamo's cost is
	// max(0, 4/4 − credit × overlap) + 1 new block: with credit 1 it is 1
	// on w0 (overlap 1) and 2 on w1, so w0 wins and the block is a hit;
	// with credit 0 both cost 2 and the tie goes to the less used w1.
	reqs := []testReq{reqA, {keys: []uint64{a1}}}
	run := func(cfg Config) Result {
		t.Helper()
		res, err := Run(&sliceSource{bs: 4, reqs: reqs}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	lit := Config{Workers: 2, Concurrency: 1}
	def := DefaultConfig()
	def.Workers, def.Concurrency = 2, 1
	zero := def
	zero.OverlapCredit = 0
	for _, c := range []struct {
		name   string
		cfg    Config
		cached int64
	}{{"literal", lit, 4}, {"DefaultConfig", def, 4}, {"credit 0", zero, 0}} {
		if got := run(c.cfg).CachedTokens; got != c.cached {
			t.Errorf("%s: cached tokens %d, want %d", c.name, got, c.cached)
		}
	}

	src := &sliceSource{bs: 4}
	got, _, err := Config{Workers: 1, ExplicitZero: true}.settle(src)
	if err != nil {
		t.Fatal(err)
	}
	if got.PrefillLoadScale != 0 || got.OverlapCredit != 0 || got.PrefillMSPerToken != 0 || got.DecodeMSPerToken != 0 {
		t.Errorf("ExplicitZero: settled to %+v, want the zeros kept", got)
	}
	got, _, _ = Config{Workers: 1}.settle(src)
	if got.PrefillLoadScale != DefaultPrefillLoadScale || got.OverlapCredit != DefaultOverlapCredit ||
		got.PrefillMSPerToken != DefaultPrefillMSPerToken || got.DecodeMSPerToken != DefaultDecodeMSPerToken {
		t.Errorf("literal: settled to %+v, want the defaults", got)
	}
	d := DefaultConfig()
	if d.PrefillLoadScale != DefaultPrefillLoadScale || d.OverlapCredit != DefaultOverlapCredit ||
		d.PrefillMSPerToken != DefaultPrefillMSPerToken || d.DecodeMSPerToken != DefaultDecodeMSPerToken ||
		d.SeenBlocks != DefaultSeenBlocks || !d.ExplicitZero || d.Workers != 1 || d.Policy != KVAware {
		t.Errorf("DefaultConfig() = %+v", d)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		c := DefaultConfig()
		c.OverlapCredit = bad
		if _, _, err := c.settle(src); err == nil {
			t.Errorf("overlap credit %v: no error", bad)
		}
	}
}

// TestRepeatCountExactPastTheBound: the repeat count comes from a record of
// first blocks apart from the bounded block history, so it stays exact when
// the history forgets (which the result says), and when that record is full
// too the result says by how much the count may be short.
func TestRepeatCountExactPastTheBound(t *testing.T) {
	// 200 prefixes × 640 tokens (40 blocks of 16) × 10 sends, the last 16
	// tokens changed: 39 shared blocks a prefix and one of each send's own,
	// 200 × 39 + 2,000 = 9,800 distinct blocks. 2,000 requests, of which
	// 200 × 9 = 1,800 repeat an earlier send's prefix.
	syn := Synthetic{Prefixes: 200, PrefixTokens: 640, Repeats: 10, TailTokens: 16, Seed: 4}
	run := func(seen int) Result {
		src, err := syn.Open()
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(src, Config{Workers: 2, CapacityBlocks: 300, Seed: 1, SeenBlocks: seen})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	exact := run(-1)
	if exact.RepeatRequests != 1800 || exact.ForgottenBlockIDs != 0 || exact.RepeatUncertain != 0 {
		t.Fatalf("unbounded: repeats %d forgotten %d uncertain %d, want 1800 0 0", exact.RepeatRequests, exact.ForgottenBlockIDs, exact.RepeatUncertain)
	}
	// 2,000 ids: generations of 1,000 ids, a fifth of the distinct blocks,
	// so the history forgets; the first-block record (500 ids ≥ 200) does not.
	r := run(2000)
	if r.ForgottenBlockIDs == 0 {
		t.Fatal("a history of 2,000 ids forgot nothing of 9,800 distinct blocks")
	}
	if r.RepeatRequests != 1800 || r.RepeatUncertain != 0 {
		t.Errorf("bound 2,000: repeats %d uncertain %d, want exactly 1800 and 0", r.RepeatRequests, r.RepeatUncertain)
	}
	if r.RepeatedBlocks >= exact.RepeatedBlocks {
		t.Errorf("bound 2,000: %d repeated blocks, want fewer than the exact %d (it forgot)", r.RepeatedBlocks, exact.RepeatedBlocks)
	}
	// 400 ids: the first-block record holds 100 of the 200 prefixes. The
	// other 100 prefixes' first sends are new and uncertain, so at least 100
	// are uncertain, and the true count lies in [repeats, repeats + uncertain].
	r = run(400)
	if r.RepeatUncertain < 100 || r.RepeatRequests > 1800 || r.RepeatRequests+r.RepeatUncertain < 1800 {
		t.Errorf("bound 400: repeats %d uncertain %d; want repeats ≤ 1800 ≤ repeats + uncertain and uncertain ≥ 100", r.RepeatRequests, r.RepeatUncertain)
	}
}
