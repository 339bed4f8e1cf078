package sim

import "sync"

// idSet is a set of non-zero block ids: open addressing with linear probing,
// keys only, no deletion. It remembers every full block the workload has
// referenced, so it is the largest structure of a run; it stays at most half
// full and is recycled between runs (seenPool) so that RunAll grows it once.
type idSet struct {
	keys  []uint64
	mask  uint64
	shift uint
	n     int
}

var seenPool sync.Pool // of *idSet

func getIDSet() *idSet {
	if s, ok := seenPool.Get().(*idSet); ok {
		s.clear()
		return s
	}
	s := &idSet{}
	s.resize(1 << 14)
	return s
}

func putIDSet(s *idSet) { seenPool.Put(s) }

func (s *idSet) resize(size int) {
	shift := uint(64)
	for x := size; x > 1; x >>= 1 {
		shift--
	}
	s.keys, s.mask, s.shift, s.n = make([]uint64, size), uint64(size-1), shift, 0
}

func (s *idSet) clear() {
	clear(s.keys)
	s.n = 0
}

func (s *idSet) has(k uint64) bool {
	for i := k >> s.shift; ; i = (i + 1) & s.mask {
		switch s.keys[i] {
		case k:
			return true
		case 0:
			return false
		}
	}
}

// add inserts k.
func (s *idSet) add(k uint64) {
	if 2*(s.n+1) > len(s.keys) {
		old := s.keys
		s.resize(2 * len(old))
		for _, x := range old {
			if x != 0 {
				s.add(x)
			}
		}
	}
	for i := k >> s.shift; ; i = (i + 1) & s.mask {
		switch s.keys[i] {
		case k:
			return
		case 0:
			s.keys[i] = k
			s.n++
			return
		}
	}
}
