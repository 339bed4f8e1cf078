package sim

// slotIndex is a cache's index of its stored blocks: open addressing with
// linear probing and backward-shift deletion, like table, but it holds only
// slot numbers (4 bytes an entry); an entry's id is its slot's. A probe
// that meets an entry reads that slot, which a hit reads anyway to pin it,
// so a hit touches the index and its slot instead of the index's keys,
// then its values, then the slot; and deleting a slot's entry compares
// slot numbers, not ids. It takes a third of table's memory at the same
// load.
type slotIndex struct {
	at    []int32 // slot number + 1; 0 marks an empty position
	mask  uint64
	shift uint
	n     int
	limit int // grow when n would exceed it
	// loadShift sets the maximum load to 1/2^loadShift, as in table.
	loadShift uint
}

func newSlotIndex(expected int, loadShift uint) slotIndex {
	return makeSlotIndex(openSize(expected, loadShift), loadShift)
}

func makeSlotIndex(size int, loadShift uint) slotIndex {
	return slotIndex{at: make([]int32, size), mask: uint64(size - 1), shift: homeShift(size), limit: size >> loadShift, loadShift: loadShift}
}

func (x *slotIndex) home(id uint64) uint64 { return id >> x.shift }

// find returns the position of id and its slot, or the empty position
// where its probe ended, -1 and false; setAt can fill that position if the
// index has not changed since.
func (x *slotIndex) find(id uint64, slots []slot) (uint64, int32, bool) {
	for i := x.home(id); ; i = (i + 1) & x.mask {
		e := x.at[i]
		if e == 0 {
			return i, -1, false
		}
		if slots[e-1].id == id {
			return i, e - 1, true
		}
	}
}

// get returns id's slot and whether id is present.
func (x *slotIndex) get(id uint64, slots []slot) (int32, bool) {
	_, s, ok := x.find(id, slots)
	return s, ok
}

// has reports whether id is present.
func (x *slotIndex) has(id uint64, slots []slot) bool {
	_, _, ok := x.find(id, slots)
	return ok
}

// setAt enters slot s at position i from find. It does not grow the index:
// a caller that adds an entry this way (not replacing one it then deletes)
// checks the load first.
func (x *slotIndex) setAt(i uint64, s int32) {
	x.at[i] = s + 1
	x.n++
}

// insertNew enters slot s, whose id (slots[s].id) must be absent.
func (x *slotIndex) insertNew(s int32, slots []slot) {
	if x.n >= x.limit {
		x.grow(slots)
	}
	i := x.home(slots[s].id)
	for x.at[i] != 0 {
		i = (i + 1) & x.mask
	}
	x.at[i] = s + 1
	x.n++
}

// del removes slot s's entry, whose probe starts at home (the home of the
// id it was entered under, which slots[s] may no longer hold), shifting
// later members of its probe run back; their homes are read from their
// slots' ids.
func (x *slotIndex) del(home uint64, s int32, slots []slot) {
	i := home
	for x.at[i] != s+1 {
		i = (i + 1) & x.mask
	}
	x.n--
	// i is the hole. An entry at j may move into it unless its home lies
	// cyclically in (i, j], i.e. unless (j - home) < (j - i) mod size.
	j := i
	for {
		j = (j + 1) & x.mask
		e := x.at[j]
		if e == 0 {
			break
		}
		if (j-x.home(slots[e-1].id))&x.mask >= (j-i)&x.mask {
			x.at[i] = e
			i = j
		}
	}
	x.at[i] = 0
}

func (x *slotIndex) grow(slots []slot) {
	old := x.at
	*x = makeSlotIndex(2*len(old), x.loadShift)
	for _, e := range old {
		if e != 0 {
			x.insertNew(e-1, slots)
		}
	}
}
