package sim

import (
	"slices"
	"testing"
)

// The cache does not care whether ids are chained, so these tests use small
// raw ids (1, 2, 3 ...) and read "block 3" as the third block of a request.

func stored(c *cache, ids ...uint64) []uint64 {
	var in []uint64
	for _, id := range ids {
		if c.index.has(id, c.slots) {
			in = append(in, id)
		}
	}
	return in
}

// lruOrder lists unpinned stored ids from least to most recently used.
func lruOrder(c *cache) []uint64 {
	var out []uint64
	for s := c.lruHead; s != nilSlot; s = c.slots[s].next {
		out = append(out, c.slots[s].id)
	}
	return out
}

func TestCacheReleaseTailFirst(t *testing.T) {
	c := newCache(4)
	ov, granted, pins := c.acquire([]uint64{1, 2, 3}, 0, nil)
	if ov != 0 || granted != 0 || len(pins) != 3 {
		t.Fatalf("first acquire: overlap %d granted %d pins %d, want 0 0 3", ov, granted, len(pins))
	}
	if c.active() != 3 || len(lruOrder(c)) != 0 {
		t.Fatalf("while running: active %d, lru %v; want 3 active and nothing evictable", c.active(), lruOrder(c))
	}
	c.release(pins, 0, 0)
	// Released tail first: 3 is least recent, 1 most recent.
	if got, want := lruOrder(c), []uint64{3, 2, 1}; !slices.Equal(got, want) {
		t.Fatalf("lru after release %v, want %v", got, want)
	}
	// A 2-block request: one free slot, then the LRU block 3 goes.
	_, _, pins = c.acquire([]uint64{4, 5}, 0, nil)
	if got, want := stored(c, 1, 2, 3, 4, 5), []uint64{1, 2, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	if c.evictions != 1 {
		t.Fatalf("evictions %d, want 1", c.evictions)
	}
	c.release(pins, 0, 0)
	// 2 and 1 were released before 5 and 4.
	if got, want := lruOrder(c), []uint64{2, 1, 5, 4}; !slices.Equal(got, want) {
		t.Fatalf("lru %v, want %v", got, want)
	}
	// Reusing 1 and 2 takes them off the list; on release they become the
	// most recent, 2 before 1.
	ov, _, pins = c.acquire([]uint64{1, 2}, 0, nil)
	if ov != 2 {
		t.Fatalf("overlap %d, want 2", ov)
	}
	c.release(pins, 0, 0)
	if got, want := lruOrder(c), []uint64{5, 4, 2, 1}; !slices.Equal(got, want) {
		t.Fatalf("lru %v, want %v", got, want)
	}
	if c.peak != 4 {
		t.Fatalf("peak %d, want 4", c.peak)
	}
}

func TestCachePinnedBlocksAreNotEvicted(t *testing.T) {
	c := newCache(3)
	_, _, pinsA := c.acquire([]uint64{1, 2}, 0, nil) // running
	// Block 3 takes the last free slot; block 4 finds every block pinned
	// and overflows: the request runs, block 4 is not cached.
	ov, _, pinsB := c.acquire([]uint64{3, 4}, 0, nil)
	if ov != 0 || len(pinsB) != 1 || c.overflow != 1 || c.evictions != 0 {
		t.Fatalf("overlap %d pins %d overflow %d evictions %d, want 0 1 1 0", ov, len(pinsB), c.overflow, c.evictions)
	}
	if got, want := stored(c, 1, 2, 3, 4), []uint64{1, 2, 3}; !slices.Equal(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	if c.active() != 3 {
		t.Fatalf("active %d, want 3", c.active())
	}
	// A third request shares block 1 while A still runs: refcount 2.
	ov, _, pinsC := c.acquire([]uint64{1}, 0, nil)
	if ov != 1 {
		t.Fatalf("overlap %d, want 1", ov)
	}
	c.release(pinsA, 0, 0)
	// Block 1 is still pinned by C; only 2 became evictable.
	if got, want := lruOrder(c), []uint64{2}; !slices.Equal(got, want) {
		t.Fatalf("lru %v, want %v", got, want)
	}
	c.release(pinsB, 0, 0)
	c.release(pinsC, 0, 0)
	if got, want := lruOrder(c), []uint64{2, 3, 1}; !slices.Equal(got, want) {
		t.Fatalf("lru %v, want %v", got, want)
	}
	if c.active() != 0 {
		t.Fatalf("active %d after all releases, want 0", c.active())
	}
}

func TestCacheScratchBlocks(t *testing.T) {
	c := newCache(3)
	// One stored block and 3 scratch blocks (partial block plus output) on
	// 3 slots: 2 scratch granted, 1 overflows.
	_, granted, pins := c.acquire([]uint64{1}, 3, nil)
	if granted != 2 || c.overflow != 1 || c.peak != 3 || c.active() != 3 {
		t.Fatalf("granted %d overflow %d peak %d active %d, want 2 1 3 3", granted, c.overflow, c.peak, c.active())
	}
	c.release(pins, granted, 0)
	// Scratch is freed, the stored block stays cached.
	if c.stored != 1 || c.scratch != 0 || c.active() != 0 {
		t.Fatalf("after release stored %d scratch %d active %d, want 1 0 0", c.stored, c.scratch, c.active())
	}
	// Scratch can evict cached blocks when the cache is full.
	_, _, p2 := c.acquire([]uint64{2, 3}, 0, nil)
	c.release(p2, 0, 0)
	_, granted, _ = c.acquire(nil, 1, nil)
	if granted != 1 || c.evictions != 1 {
		t.Fatalf("granted %d evictions %d, want 1 1", granted, c.evictions)
	}
	// LRU was [1, 3, 2]: 1 was released first.
	if got, want := stored(c, 1, 2, 3), []uint64{2, 3}; !slices.Equal(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
}

func TestCacheOverlapStopsAtFirstMiss(t *testing.T) {
	c := newCache(10)
	_, _, p := c.acquire([]uint64{1, 2, 3}, 0, nil)
	c.release(p, 0, 0)
	if got := c.match([]uint64{1, 9, 3}); got != 1 {
		t.Fatalf("match %d, want 1", got)
	}
	// 3 is stored and gets reused (no new slot), but the engine recomputes
	// after the miss at 9, so the overlap is 1.
	ov, _, p := c.acquire([]uint64{1, 9, 3}, 0, nil)
	if ov != 1 || c.stored != 4 || len(p) != 3 {
		t.Fatalf("overlap %d stored %d pins %d, want 1 4 3", ov, c.stored, len(p))
	}
}

func TestCacheUnbounded(t *testing.T) {
	c := newCache(0)
	ids := make([]uint64, 5000)
	for i := range ids {
		ids[i] = uint64(i + 1)
	}
	_, granted, p := c.acquire(ids, 7, nil)
	c.release(p, granted, 0)
	if c.stored != 5000 || c.evictions != 0 || c.overflow != 0 || c.peak != 5007 {
		t.Fatalf("stored %d evictions %d overflow %d peak %d, want 5000 0 0 5007", c.stored, c.evictions, c.overflow, c.peak)
	}
	if got := c.match(ids); got != 5000 {
		t.Fatalf("match %d, want 5000", got)
	}
}

// TestCacheKeepsFilledOutputBlocks: when a request completes, the scratch
// blocks its output filled stay cached (evictable, never matched), released
// before its prompt blocks; the last, partial one is freed.
func TestCacheKeepsFilledOutputBlocks(t *testing.T) {
	c := newCache(4)
	// Blocks of 4 tokens: a prompt of 6 tokens (block 1 and 2 tokens more)
	// and 7 output tokens hold KV for 6 + 7 − 1 = 12 tokens: 3 blocks, so 2
	// scratch blocks, both full at the end (12 = 3 × 4): keep 2.
	_, granted, pins := c.acquire([]uint64{1}, 2, nil)
	if granted != 2 {
		t.Fatalf("granted %d, want 2", granted)
	}
	c.release(pins, granted, 2)
	if c.stored != 3 || c.scratch != 0 || c.active() != 0 {
		t.Fatalf("stored %d scratch %d active %d, want 3 0 0", c.stored, c.scratch, c.active())
	}
	// LRU: the two output blocks (id 0) first, then the prompt block.
	if got, want := lruOrder(c), []uint64{0, 0, 1}; !slices.Equal(got, want) {
		t.Fatalf("lru %v, want %v", got, want)
	}
	// Two new blocks take the free slot and evict one output block; a third
	// evicts the other output block, and block 1 survives.
	_, _, pins = c.acquire([]uint64{7, 8, 9}, 0, nil)
	if c.evictions != 2 || c.match([]uint64{1}) != 1 {
		t.Fatalf("evictions %d, block 1 cached %v; want 2 and true", c.evictions, c.match([]uint64{1}) == 1)
	}
	c.release(pins, 0, 0)
	// Full of 1, 9, 8, 7 (LRU first). Two scratch blocks evict 1 and 9;
	// keeping 1 of them and freeing the other leaves 8, 7 and the kept one,
	// most recent.
	_, granted, pins = c.acquire(nil, 2, nil)
	c.release(pins, granted, 1)
	if c.stored != 3 || c.scratch != 0 || c.evictions != 4 {
		t.Fatalf("stored %d scratch %d evictions %d, want 3 0 4", c.stored, c.scratch, c.evictions)
	}
	if got, want := lruOrder(c), []uint64{8, 7, 0}; !slices.Equal(got, want) {
		t.Fatalf("lru %v, want %v", got, want)
	}
}
