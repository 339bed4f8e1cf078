package sim

// table is an open-addressing hash map from a non-zero block id to an int32,
// with linear probing and backward-shift deletion (no tombstones). Keys come
// out of mix already well spread, so a key's home slot is its top bits.
// Keys and values are kept in separate arrays, so probes read only keys.
// The table doubles when it passes its maximum load, so probes stay short;
// growth is its only allocation.
type table struct {
	keys  []uint64 // 0 marks an empty slot
	vals  []int32
	mask  uint64
	shift uint
	n     int
	limit int // grow when n would exceed it
	// loadShift sets the maximum load to 1/2^loadShift. Sparse tables have
	// short probe runs, which matters most for the small, delete-heavy cache
	// indexes.
	loadShift uint
}

// newTable returns a table sized for expected keys at a load of at most
// 1/2^loadShift (loadShift ≥ 1).
func newTable(expected int, loadShift uint) table {
	return makeTable(openSize(expected, loadShift), loadShift)
}

func makeTable(size int, loadShift uint) table {
	return table{keys: make([]uint64, size), vals: make([]int32, size), mask: uint64(size - 1), shift: homeShift(size), limit: size >> loadShift, loadShift: loadShift}
}

// openSize is the size of an open-addressing table (a power of two, at
// least 16) that holds expected keys at a load of at most 1/2^loadShift.
func openSize(expected int, loadShift uint) int {
	size := 16
	for size>>loadShift < expected {
		size <<= 1
	}
	return size
}

// homeShift is the shift that takes a key's top bits to a position in a
// table of size (a power of two).
func homeShift(size int) uint {
	shift := uint(64)
	for s := size; s > 1; s >>= 1 {
		shift--
	}
	return shift
}

func (t *table) home(k uint64) uint64 { return k >> t.shift }

// get returns the value stored for k and whether k is present.
func (t *table) get(k uint64) (int32, bool) {
	for i := t.home(k); ; i = (i + 1) & t.mask {
		kk := t.keys[i]
		if kk == k {
			return t.vals[i], true
		}
		if kk == 0 {
			return 0, false
		}
	}
}

// find returns k's position and true, or the empty position where its
// probe ended and false; setAt can fill that position if the table has not
// changed since.
func (t *table) find(k uint64) (uint64, bool) {
	for i := t.home(k); ; i = (i + 1) & t.mask {
		kk := t.keys[i]
		if kk == k {
			return i, true
		}
		if kk == 0 {
			return i, false
		}
	}
}

// setAt stores v for k, absent, at position i from find. It does not grow
// the table: a caller that adds a key this way (not replacing one it then
// deletes) checks the load first.
func (t *table) setAt(i, k uint64, v int32) {
	t.keys[i], t.vals[i] = k, v
	t.n++
}

// has reports whether k is present.
func (t *table) has(k uint64) bool {
	for i := t.home(k); ; i = (i + 1) & t.mask {
		kk := t.keys[i]
		if kk == k {
			return true
		}
		if kk == 0 {
			return false
		}
	}
}

// put stores v for k, replacing any previous value.
func (t *table) put(k uint64, v int32) {
	if t.n >= t.limit {
		t.grow()
	}
	for i := t.home(k); ; i = (i + 1) & t.mask {
		kk := t.keys[i]
		if kk == k {
			t.vals[i] = v
			return
		}
		if kk == 0 {
			t.keys[i], t.vals[i] = k, v
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
	for t.keys[i] != 0 {
		i = (i + 1) & t.mask
	}
	t.keys[i], t.vals[i] = k, v
	t.n++
}

// del removes k if present, shifting later members of its probe run back so
// that no tombstone is needed.
func (t *table) del(k uint64) {
	i := t.home(k)
	for {
		kk := t.keys[i]
		if kk == 0 {
			return
		}
		if kk == k {
			break
		}
		i = (i + 1) & t.mask
	}
	t.delAt(i)
}

// delAt removes the key at position i (from find).
func (t *table) delAt(i uint64) {
	t.n--
	// i is the hole. An entry at j may move into it unless its home lies
	// cyclically in (i, j], i.e. unless (j - home) < (j - i) mod size.
	j := i
	for {
		j = (j + 1) & t.mask
		kj := t.keys[j]
		if kj == 0 {
			break
		}
		if (j-t.home(kj))&t.mask >= (j-i)&t.mask {
			t.keys[i], t.vals[i] = kj, t.vals[j]
			i = j
		}
	}
	t.keys[i] = 0
}

// clear removes every key.
func (t *table) clear() {
	clear(t.keys)
	t.n = 0
}

func (t *table) grow() {
	oldK, oldV := t.keys, t.vals
	*t = makeTable(2*len(oldK), t.loadShift)
	for i, k := range oldK {
		if k != 0 {
			t.insertNew(k, oldV[i])
		}
	}
}
