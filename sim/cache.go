package sim

// cache is one worker's KV cache at block granularity.
//
// Blocks are named by chained ids (see Request.Blocks), so a cached id stands
// for its whole prefix. The cache holds at most capacity blocks, counting two
// kinds:
//
//   - stored blocks: full prompt blocks, indexed by id, matchable by later
//     requests, pinned (reference-counted) while a request that uses them runs
//     and kept after it completes until evicted;
//   - scratch blocks: the request's trailing partial prompt block and the
//     blocks its output tokens grow into. They occupy capacity while the
//     request runs and are never matched while they fill (a partial block's
//     content changes as tokens are appended, so vLLM and Dynamo never share
//     it). When the request completes, the ones that filled up stay cached
//     as evictable blocks, as vLLM hashes every full block of a sequence,
//     generated tokens included; only the last, partial one is freed. Their
//     content is the request's own output, which no later prompt in a trace
//     names, so they are kept unindexed (id 0): they take capacity and are
//     evicted like any block, but never match.
//
// Eviction is LRU over stored blocks with no pins. The LRU list orders blocks
// by the time their last pin was released; blocks released at the same moment
// by one request are ordered tail first (the request's last block becomes
// least recent, its first block most recent), as vLLM frees them, so that a
// shared prefix outlives the unique tails hanging off it. Between requests the
// order is that of release, which is deterministic.
//
// When a block must be stored or a scratch block granted but every block is
// pinned, the block is not cached: the request proceeds without it (its
// tokens are computed, nothing is stored) and the block is counted in
// overflow. A capacity of 0 or less means unbounded.
type cache struct {
	capacity int // blocks; <= 0 means unbounded
	index    slotIndex
	slots    []slot
	free     []int32
	lruHead  int32 // least recently used unpinned stored block, or -1
	lruTail  int32 // most recently used, or -1

	stored    int // slots holding an id
	scratch   int // scratch blocks granted to running requests
	pinned    int // stored blocks with ref > 0
	peak      int // max of stored + scratch
	evictions int64
	overflow  int64
}

type slot struct {
	id         uint64 // 0: a filled output block, cached but never matched
	prev, next int32
	ref        int32
}

const nilSlot = -1

// preallocMax caps the slots reserved up front for a very large capacity;
// beyond it the cache grows as blocks arrive.
const preallocMax = 1 << 20

// sparseMax is the largest capacity whose index is kept at most 1/8 full
// (4 bytes × 8 = 32 bytes a block, 2 MiB at 65,536 blocks); larger or
// unbounded caches keep theirs at most half full.
const sparseMax = 1 << 16

func newCache(capacityBlocks int) *cache {
	n := capacityBlocks
	if n <= 0 || n > preallocMax {
		n = 1024
	}
	loadShift := uint(1)
	if capacityBlocks > 0 && capacityBlocks <= sparseMax {
		loadShift = 3
	}
	return &cache{
		capacity: capacityBlocks,
		index:    newSlotIndex(n, loadShift),
		slots:    make([]slot, 0, n),
		free:     make([]int32, 0, n),
		lruHead:  nilSlot,
		lruTail:  nilSlot,
	}
}

// active is the number of blocks pinned by running requests (Dynamo's
// decode_blocks for this worker).
func (c *cache) active() int { return c.pinned + c.scratch }

// match returns the number of leading blocks of ids that are stored.
func (c *cache) match(ids []uint64) int {
	for i, id := range ids {
		if !c.index.has(id, c.slots) {
			return i
		}
	}
	return len(ids)
}

// pinnedRun returns the number of leading blocks of ids that are stored and
// pinned by a running request.
func (c *cache) pinnedRun(ids []uint64) int {
	for i, id := range ids {
		if s, ok := c.index.get(id, c.slots); !ok || c.slots[s].ref == 0 {
			return i
		}
	}
	return len(ids)
}

// matchPinned returns match(ids) and pinnedRun(ids) in one walk.
func (c *cache) matchPinned(ids []uint64) (stored, pinned int) {
	pinned = -1
	for i, id := range ids {
		s, ok := c.index.get(id, c.slots)
		if !ok {
			if pinned < 0 {
				pinned = i
			}
			return i, pinned
		}
		if pinned < 0 && c.slots[s].ref == 0 {
			pinned = i
		}
	}
	if pinned < 0 {
		pinned = len(ids)
	}
	return len(ids), pinned
}

// acquire admits a request on this cache: it pins the request's stored
// blocks, stores the missing ones (evicting as needed) and grants extra
// scratch blocks. It appends the pinned slots to pins, in block order, and
// returns them with the overlap (leading blocks that were already stored,
// i.e. the prefix-cache hit) and the scratch blocks granted. Blocks after the
// first miss that happen to be stored are pinned and reused but do not count
// in the overlap, since the engine recomputes everything after a miss.
func (c *cache) acquire(ids []uint64, extra int, pins []int32) (overlap int, granted int, out []int32) {
	overlap = len(ids)
	for i, id := range ids {
		at, s, ok := c.index.find(id, c.slots)
		if ok {
			c.pin(s)
			pins = append(pins, s)
			continue
		}
		if i < overlap {
			overlap = i
		}
		if c.capacity > 0 && c.stored+c.scratch >= c.capacity {
			// Full: the LRU block's slot takes the new block (evict and
			// alloc in one). The new id goes where its probe ended before
			// the old one is deleted, whose shifting keeps both in place;
			// the old entry is found from the old id's home, and the
			// shifting reads the slot's new id.
			s = c.lruHead
			if s == nilSlot {
				c.overflow++
				continue
			}
			c.unlink(s)
			old := c.slots[s].id
			c.slots[s] = slot{id: id, prev: nilSlot, next: nilSlot, ref: 1}
			c.index.setAt(at, s)
			if old != 0 {
				c.index.del(c.index.home(old), s, c.slots)
			}
			c.evictions++
		} else {
			s = c.alloc() // not full: nothing is evicted, at stays valid
			c.stored++
			c.slots[s] = slot{id: id, prev: nilSlot, next: nilSlot, ref: 1}
			if c.index.n < c.index.limit {
				c.index.setAt(at, s)
			} else {
				c.index.insertNew(s, c.slots) // grows
			}
		}
		c.pinned++
		pins = append(pins, s)
	}
	for range extra {
		if !c.room() {
			c.overflow++
			continue
		}
		c.scratch++
		granted++
	}
	if u := c.stored + c.scratch; u > c.peak {
		c.peak = u
	}
	return overlap, granted, pins
}

// release unpins a completed request's blocks, tail first, and frees its
// scratch blocks except the first keep of them, which filled up: those stay
// cached as evictable unindexed blocks, released before the prompt blocks
// (they come after them in the sequence, and vLLM frees a request's blocks
// last first).
func (c *cache) release(pins []int32, scratch, keep int) {
	c.scratch -= scratch
	for range keep {
		s := c.takeSlot()
		c.slots[s] = slot{prev: nilSlot, next: nilSlot}
		c.stored++
		c.pushMRU(s)
	}
	for i := len(pins) - 1; i >= 0; i-- {
		s := pins[i]
		sl := &c.slots[s]
		sl.ref--
		if sl.ref == 0 {
			c.pinned--
			c.pushMRU(s)
		}
	}
}

// room makes space for one more block, evicting the LRU block if the cache
// is full, and reports whether there is space.
func (c *cache) room() bool {
	if c.capacity <= 0 || c.stored+c.scratch < c.capacity {
		return true
	}
	if c.lruHead == nilSlot {
		return false
	}
	c.evict(c.lruHead)
	return true
}

// alloc returns a free slot, evicting if needed, or nilSlot when every block
// is pinned.
func (c *cache) alloc() int32 {
	if !c.room() {
		return nilSlot
	}
	return c.takeSlot()
}

// takeSlot returns an unused slot without checking capacity.
func (c *cache) takeSlot() int32 {
	if n := len(c.free); n > 0 {
		s := c.free[n-1]
		c.free = c.free[:n-1]
		return s
	}
	c.slots = append(c.slots, slot{})
	return int32(len(c.slots) - 1)
}

func (c *cache) evict(s int32) {
	c.unlink(s)
	if id := c.slots[s].id; id != 0 {
		c.index.del(c.index.home(id), s, c.slots)
	}
	c.slots[s].id = 0
	c.free = append(c.free, s)
	c.stored--
	c.evictions++
}

func (c *cache) pin(s int32) {
	sl := &c.slots[s]
	if sl.ref == 0 {
		c.unlink(s)
		c.pinned++
	}
	sl.ref++
}

func (c *cache) unlink(s int32) {
	sl := &c.slots[s]
	if sl.prev != nilSlot {
		c.slots[sl.prev].next = sl.next
	} else {
		c.lruHead = sl.next
	}
	if sl.next != nilSlot {
		c.slots[sl.next].prev = sl.prev
	} else {
		c.lruTail = sl.prev
	}
	sl.prev, sl.next = nilSlot, nilSlot
}

func (c *cache) pushMRU(s int32) {
	sl := &c.slots[s]
	sl.prev, sl.next = c.lruTail, nilSlot
	if c.lruTail != nilSlot {
		c.slots[c.lruTail].next = s
	} else {
		c.lruHead = s
	}
	c.lruTail = s
}

// The timed simulation admits a request only when its blocks fit, so it
// never overflows; it uses the cache through the methods below.

// available is the blocks a request could still take: free ones and
// cached blocks no running request pins (evictable).
func (c *cache) available() int { return c.capacity - c.pinned - c.scratch }

// pinCost is how many blocks pinning or storing ids would take from
// available: each id not stored, or stored but pinned by nobody.
func (c *cache) pinCost(ids []uint64) int {
	n := 0
	for _, id := range ids {
		if s, ok := c.index.get(id, c.slots); !ok || c.slots[s].ref == 0 {
			n++
		}
	}
	return n
}

// pinOrStore pins id if it is stored, or stores and pins it, evicting the
// least recently used block if the cache is full (there must be room, see
// available), and returns its slot.
func (c *cache) pinOrStore(id uint64) int32 {
	if s, ok := c.index.get(id, c.slots); ok {
		c.pin(s)
		return s
	}
	s := c.alloc()
	c.stored++
	c.slots[s] = slot{id: id, prev: nilSlot, next: nilSlot, ref: 1}
	c.index.insertNew(s, c.slots)
	c.pinned++
	c.notePeak()
	return s
}

// grant takes n scratch blocks (there must be room, see available).
func (c *cache) grant(n int) {
	for range n {
		c.room()
		c.scratch++
	}
	c.notePeak()
}

func (c *cache) notePeak() {
	if u := c.stored + c.scratch; u > c.peak {
		c.peak = u
	}
}
