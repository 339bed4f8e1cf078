package sim

// table is an open-addressing hash map from a non-zero block id to an int32,
// with linear probing and backward-shift deletion (no tombstones). Keys come
// out of mix already well spread, so a key's home slot is its top bits.
// The table doubles when it passes its maximum load, so probes stay short;
// growth is its only allocation.
type table struct {
	ents  []entry
	mask  uint64
	shift uint
	n     int
	limit int // grow when n would exceed it
	// loadShift sets the maximum load to 1/2^loadShift. Sparse tables have
	// short probe runs, which matters most for the small, delete-heavy cache
	// indexes.
	loadShift uint
}

type entry struct {
	key uint64
	val int32
}

// newTable returns a table sized for expected keys at a load of at most
// 1/2^loadShift (loadShift ≥ 1).
func newTable(expected int, loadShift uint) table {
	size := 16
	for size>>loadShift < expected {
		size <<= 1
	}
	return makeTable(size, loadShift)
}

func makeTable(size int, loadShift uint) table {
	shift := uint(64)
	for s := size; s > 1; s >>= 1 {
		shift--
	}
	return table{ents: make([]entry, size), mask: uint64(size - 1), shift: shift, limit: size >> loadShift, loadShift: loadShift}
}

func (t *table) home(k uint64) uint64 { return k >> t.shift }

// get returns the value stored for k and whether k is present.
func (t *table) get(k uint64) (int32, bool) {
	for i := t.home(k); ; i = (i + 1) & t.mask {
		e := &t.ents[i]
		if e.key == k {
			return e.val, true
		}
		if e.key == 0 {
			return 0, false
		}
	}
}

// has reports whether k is present.
func (t *table) has(k uint64) bool {
	_, ok := t.get(k)
	return ok
}

// put stores v for k, replacing any previous value.
func (t *table) put(k uint64, v int32) {
	if t.n >= t.limit {
		t.grow()
	}
	for i := t.home(k); ; i = (i + 1) & t.mask {
		e := &t.ents[i]
		if e.key == k {
			e.val = v
			return
		}
		if e.key == 0 {
			e.key, e.val = k, v
			t.n++
			return
		}
	}
}

// insertNew stores v for k, which must be absent.
func (t *table) insertNew(k uint64, v int32) {
	if t.n >= t.limit {
		t.grow()
	}
	i := t.home(k)
	for t.ents[i].key != 0 {
		i = (i + 1) & t.mask
	}
	t.ents[i] = entry{key: k, val: v}
	t.n++
}

// del removes k if present, shifting later members of its probe run back so
// that no tombstone is needed.
func (t *table) del(k uint64) {
	i := t.home(k)
	for {
		kk := t.ents[i].key
		if kk == 0 {
			return
		}
		if kk == k {
			break
		}
		i = (i + 1) & t.mask
	}
	t.n--
	// i is the hole. An entry at j may move into it unless its home lies
	// cyclically in (i, j], i.e. unless (j - home) < (j - i) mod size.
	j := i
	for {
		j = (j + 1) & t.mask
		e := t.ents[j]
		if e.key == 0 {
			break
		}
		if (j-t.home(e.key))&t.mask >= (j-i)&t.mask {
			t.ents[i] = e
			i = j
		}
	}
	t.ents[i] = entry{}
}

func (t *table) grow() {
	old := t.ents
	*t = makeTable(2*len(old), t.loadShift)
	for _, e := range old {
		if e.key != 0 {
			t.put(e.key, e.val)
		}
	}
}
