package sim

import (
	"math/bits"
	"sync"
)

// DefaultSeenBlocks is the default Config.SeenBlocks: 8,388,608 block ids
// in two tables of at most 8,388,608 slots (64 MiB of keys) each, plus for
// kv-aware-approx a byte a slot per 8 workers. The full Mooncake
// conversation trace (12,031 requests) references 170,899 distinct blocks at
// 512 tokens a block and 1,411,425 at 64, far below the bound; at 16 tokens
// it references 5,662,916, rotates once and still forgets nothing it meets
// again (its results equal an unbounded run's; a bound of 4,194,304 would
// change them).
const DefaultSeenBlocks = 1 << 23

// history remembers the full-block ids of earlier requests, to classify
// repeats, and for kv-aware-approx the workers each id was sent to (a bit
// mask, so one probe answers for every worker).
//
// Bound. Ids live in two generations, cur and prev. Every request's ids are
// put in cur (moved there from prev if need be) before the next request, and
// when cur cannot take another request within limit ids, prev is forgotten,
// cur becomes prev and cur starts empty. limit is SeenBlocks/2, so history
// holds at most SeenBlocks ids (plus a request's worth if a request is
// longer than limit), each table at most half full. A run that references
// fewer than limit − (longest request) distinct blocks never rotates, so
// forgets nothing and its results are exact. A longer run forgets only ids
// not referenced during a whole generation: at least limit − (longest
// request) insertions into cur, an insertion being an id's first reference
// or its first since the last rotation. Forgetting never invents a match,
// it only loses one: a request whose leading blocks were forgotten counts as
// new (not a repeat), and kv-aware-approx forgets where they went, like
// Dynamo's approximate indexer expiring its predictions.
//
// Invariant: rotation happens only between requests and a request puts all
// of its ids in cur, so cur and cur ∪ prev each hold, with an id, every id of
// its prefix. Seen blocks therefore form a leading run of any request, and a
// worker's sent set is prefix-closed too.
type history struct {
	cur, prev *idTable
	words     int // mask bytes per id: ceil(workers/8) for kv-aware-approx, else 0
	limit     int // most ids per generation; 0 = unbounded
	// pos holds, after walk, the slot in cur of each id of the request.
	pos    []int
	walked bool    // overlaps walked, so pos is valid
	alive  []uint8 // walk's scratch
	// moved counts the ids of prev put in cur this generation; forgotten
	// counts the ids dropped at rotations (those of prev never moved), so 0
	// means the history is exact.
	moved, forgotten int64
}

func newHistory(seenBlocks int, words int) *history {
	limit := 0
	if seenBlocks > 0 {
		limit = max(seenBlocks/2, 1)
	}
	return &history{cur: getIDTable(words, limit), prev: getIDTable(words, limit), words: words, limit: limit}
}

// release returns the tables to the pool.
func (h *history) release() {
	putIDTable(h.cur)
	putIDTable(h.prev)
	h.cur, h.prev = nil, nil
}

// begin prepares for a request of n ids: it rotates the generations if cur
// might overflow its limit and makes room in cur, so that slots stay put
// until the request is recorded.
func (h *history) begin(n int) {
	if h.limit > 0 && h.cur.n > 0 && h.cur.n+n > h.limit {
		h.forgotten += int64(h.prev.n) - h.moved
		h.moved = 0
		h.prev, h.cur = h.cur, h.prev
		h.cur.clear()
	}
	h.cur.reserve(n)
}

func (h *history) has(k uint64) bool {
	return h.cur.find(k) >= 0 || (h.prev.n > 0 && h.prev.find(k) >= 0)
}

// seenRun returns how many leading ids of ids are remembered.
func (h *history) seenRun(ids []uint64) int {
	lo, hi := 0, len(ids)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if h.has(ids[m]) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// observe returns how many leading ids of ids are remembered and records
// ids. With one generation it is a single pass that probes every id once
// (independent probes, which overlap in memory, where a binary search would
// make dependent ones); the first id not found is inserted where its probe
// ended, and so are all after it, which cannot be remembered either.
func (h *history) observe(ids []uint64) int {
	if h.prev.n > 0 {
		seen := h.seenRun(ids)
		h.record(ids, seen)
		return seen
	}
	t := h.cur
	for j, id := range ids {
		for i := id >> t.shift; ; i = (i + 1) & t.mask {
			k := t.keys[i]
			if k == id {
				break
			}
			if k == 0 {
				t.keys[i] = id
				t.n++
				for _, id := range ids[j+1:] {
					t.insertNew(id)
				}
				return j
			}
		}
	}
	return len(ids)
}

// record puts ids in cur; the first seen of them are remembered already.
// Without masks only the ids not yet in cur need inserting: those after the
// leading run that cur holds.
func (h *history) record(ids []uint64, seen int) {
	c := seen
	if h.prev.n > 0 {
		lo, hi := 0, seen
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if h.cur.find(ids[m]) >= 0 {
				lo = m + 1
			} else {
				hi = m
			}
		}
		c = lo
		h.moved += int64(seen - c)
	}
	for _, id := range ids[c:] {
		h.cur.insertNew(id)
	}
}

// overlaps finds the seen run of ids and each worker's overlap, the leading
// ids sent to it, into ov (one entry per worker). A worker's sent ids are
// prefix-closed, so its bit is set on a leading run of the seen ids and a
// binary search finds its end. Those probes depend on each other, while a
// linear walk's overlap in memory, so unless the request is long next to
// workers × log2 of its length (4 × that, measured on the benchmarks), one
// walk that reads every mask once is cheaper. Slots found on the walk are kept for recordSent.
func (h *history) overlaps(ids []uint64, ov []int) int {
	h.walked = 4*len(ov)*bits.Len(uint(len(ids))) >= len(ids)
	if !h.walked {
		seen := h.seenRun(ids)
		for w := range ov {
			b, bit := w/8, uint8(1)<<uint(w%8)
			lo, hi := 0, seen
			for lo < hi {
				m := int(uint(lo+hi) >> 1)
				if h.mask(ids[m])[b]&bit != 0 {
					lo = m + 1
				} else {
					hi = m
				}
			}
			ov[w] = lo
		}
		return seen
	}
	return h.walk(ids, ov)
}

// mask returns the payload of a remembered id, from cur if it is there.
func (h *history) mask(k uint64) []uint8 {
	pb := h.words
	if p := h.cur.find(k); p >= 0 {
		return h.cur.pay[p*pb : (p+1)*pb]
	}
	q := h.prev.find(k)
	return h.prev.pay[q*pb : (q+1)*pb]
}

// walk is overlaps by one pass over ids that also puts them all in cur
// (moving seen ids from prev with their masks; an unseen id goes where its
// probe ended, and so do all after it, which cannot be seen either), keeping
// every id's slot in h.pos for recordSent to set one bit in.
func (h *history) walk(ids []uint64, ov []int) int {
	h.pos = h.pos[:0]
	alive := h.alive[:0] // workers whose run has not broken, 8 to a byte
	for b := 0; b < h.words; b++ {
		n := min(len(ov)-b*8, 8)
		alive = append(alive, uint8(0xff>>uint(8-n)))
	}
	h.alive = alive
	nAlive := len(ov)
	cur, prev := h.cur, h.prev
	pb := h.words
	seen := len(ids)
	for j, id := range ids {
		p, found := cur.findOrInsert(id)
		if !found {
			q := -1
			if prev.n > 0 {
				q = prev.find(id)
			}
			if q < 0 {
				h.pos = append(h.pos, p)
				for _, id := range ids[j+1:] {
					h.pos = append(h.pos, cur.insertNew(id))
				}
				seen = j
				break
			}
			copy(cur.pay[p*pb:(p+1)*pb], prev.pay[q*pb:(q+1)*pb])
			h.moved++
		}
		h.pos = append(h.pos, p)
		if nAlive == 0 {
			continue // only the seen run is still wanted
		}
		for b, x := range cur.pay[p*pb : (p+1)*pb] {
			d := alive[b] &^ x
			if d == 0 {
				continue
			}
			alive[b] &^= d
			for ; d != 0; d &= d - 1 {
				ov[b*8+bits.TrailingZeros8(d)] = j
				nAlive--
			}
		}
	}
	for b, a := range alive {
		for ; a != 0; a &= a - 1 {
			ov[b*8+bits.TrailingZeros8(a)] = seen
		}
	}
	return seen
}

// recordSent puts ids in cur, marked as sent to worker w, whose overlap
// (from overlaps) is ov: the first ov ids have w's bit already, wherever
// they are, so only ids from ov on need it set, and seen ids still only in
// prev need moving to cur.
func (h *history) recordSent(ids []uint64, seen, ov, w int) {
	cur, prev := h.cur, h.prev
	pb := h.words
	b, bit := w/8, uint8(1)<<uint(w%8)
	if h.walked { // every id is in cur already, at h.pos
		for _, p := range h.pos[ov:] {
			cur.pay[p*pb+b] |= bit
		}
		return
	}
	c := seen // ids[:c] are in cur
	if prev.n > 0 {
		lo, hi := 0, seen
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if cur.find(ids[m]) >= 0 {
				lo = m + 1
			} else {
				hi = m
			}
		}
		c = lo
	}
	for j := ov; j < c; j++ {
		cur.pay[cur.find(ids[j])*pb+b] |= bit
	}
	h.moved += int64(seen - c)
	for j := c; j < seen; j++ {
		q, p := prev.find(ids[j]), cur.insertNew(ids[j])
		copy(cur.pay[p*pb:(p+1)*pb], prev.pay[q*pb:(q+1)*pb])
		cur.pay[p*pb+b] |= bit
	}
	for _, id := range ids[seen:] {
		cur.pay[cur.insertNew(id)*pb+b] |= bit
	}
}

// idTable is a set of non-zero block ids, each with pb bytes of payload:
// open addressing with linear probing, no deletion, at most half full. A
// zero key marks an empty slot, whose payload is zero too.
type idTable struct {
	keys  []uint64
	pay   []uint8 // slot i's payload is pay[i*pb : (i+1)*pb]
	pb    int
	mask  uint64 // slots − 1
	shift uint
	n     int
}

const idTableMinSlots = 1 << 14

var idTablePool sync.Pool // of *idTable

// getIDTable returns an empty table, recycled if possible so that RunAll
// grows it once. A recycled table larger than limit needs is dropped.
func getIDTable(pb, limit int) *idTable {
	if t, ok := idTablePool.Get().(*idTable); ok {
		if limit == 0 || t.slots() <= max(idTableMinSlots, 4*limit) {
			t.clear()
			if t.pb != pb {
				// RunAll alternates masked and unmasked runs: keep the
				// keys, resize the (zero) payload.
				n := t.slots() * pb
				if cap(t.pay) >= n {
					t.pay = t.pay[:n]
					clear(t.pay)
				} else {
					t.pay = make([]uint8, n)
				}
				t.pb = pb
			}
			return t
		}
	}
	t := &idTable{}
	t.init(idTableMinSlots, pb)
	return t
}

func putIDTable(t *idTable) {
	if t != nil {
		idTablePool.Put(t)
	}
}

func (t *idTable) slots() int { return len(t.keys) }

func (t *idTable) init(slots, pb int) {
	t.keys = make([]uint64, slots)
	t.pay = nil
	if pb > 0 {
		t.pay = make([]uint8, slots*pb)
	}
	t.pb = pb
	t.mask = uint64(slots - 1)
	t.shift = uint(64 - bits.TrailingZeros(uint(slots)))
	t.n = 0
}

func (t *idTable) clear() {
	if t.n > 0 {
		clear(t.keys)
		clear(t.pay)
		t.n = 0
	}
}

// findOrInsert returns k's slot and whether k was there; if not, it is
// inserted (room must have been reserved).
func (t *idTable) findOrInsert(k uint64) (int, bool) {
	for i := k >> t.shift; ; i = (i + 1) & t.mask {
		switch t.keys[i] {
		case k:
			return int(i), true
		case 0:
			t.keys[i] = k
			t.n++
			return int(i), false
		}
	}
}

// find returns k's slot, or -1.
func (t *idTable) find(k uint64) int {
	for i := k >> t.shift; ; i = (i + 1) & t.mask {
		switch t.keys[i] {
		case k:
			return int(i)
		case 0:
			return -1
		}
	}
}

// insertNew adds k, which must be absent, and returns its slot. Room must
// have been reserved.
func (t *idTable) insertNew(k uint64) int {
	i := k >> t.shift
	for t.keys[i] != 0 {
		i = (i + 1) & t.mask
	}
	t.keys[i] = k
	t.n++
	return int(i)
}

// reserve grows the table so that n more ids keep it at most half full.
func (t *idTable) reserve(n int) {
	if 2*(t.n+n) <= t.slots() {
		return
	}
	size := t.slots()
	for 2*(t.n+n) > size {
		size *= 2
	}
	oldK, oldP, pb := t.keys, t.pay, t.pb
	t.init(size, pb)
	for i, k := range oldK {
		if k != 0 {
			p := t.insertNew(k)
			copy(t.pay[p*pb:(p+1)*pb], oldP[i*pb:(i+1)*pb])
		}
	}
}
