package sim

import (
	"math/rand/v2"
	"testing"
)

// TestTableAgainstMap drives the open-addressing table and a Go map with the
// same random puts and deletes over a small key space, so that probe runs
// collide, wrap around the end and get shifted back on delete.
func TestTableAgainstMap(t *testing.T) {
	for _, loadShift := range []uint{1, 2, 3} {
		rng := rand.New(rand.NewPCG(7, 11))
		tab := newTable(4, loadShift)
		ref := map[uint64]int32{}
		keys := make([]uint64, 300)
		for i := range keys {
			keys[i] = mix(uint64(i), 99)
		}
		// A few keys that share a home slot and sit at the end of the
		// table, to exercise wrap-around.
		keys = append(keys, ^uint64(0), ^uint64(0)-1, ^uint64(0)-2)
		for step := range 200000 {
			k := keys[rng.IntN(len(keys))]
			switch rng.IntN(3) {
			case 0, 1:
				v := int32(step)
				tab.put(k, v)
				ref[k] = v
			case 2:
				tab.del(k)
				delete(ref, k)
			}
			if tab.n != len(ref) {
				t.Fatalf("loadShift=%d step %d: table holds %d keys, map %d", loadShift, step, tab.n, len(ref))
			}
		}
		for _, k := range keys {
			got, ok := tab.get(k)
			want, wok := ref[k]
			if ok != wok || got != want {
				t.Fatalf("loadShift=%d key %x: table (%d, %v), map (%d, %v)", loadShift, k, got, ok, want, wok)
			}
		}
	}
}

// TestSlotIndexAgainstMap drives a cache's slot index and a Go map with the
// same random stores, deletes and in-place replacements (a slot takes a new
// id, entered before the old one is deleted, as cache.acquire evicts) over
// a small id space, so that probe runs collide, wrap around the end, grow
// and get shifted back on delete.
func TestSlotIndexAgainstMap(t *testing.T) {
	for _, loadShift := range []uint{1, 2, 3} {
		rng := rand.New(rand.NewPCG(7, 13))
		x := newSlotIndex(4, loadShift)
		slots := make([]slot, 64)
		ref := map[uint64]int32{} // id → slot
		ids := make([]uint64, 200)
		for i := range ids {
			ids[i] = mix(uint64(i), 99)
		}
		ids = append(ids, ^uint64(0), ^uint64(0)-1, ^uint64(0)-2) // share a home at the end
		check := func(step int) {
			t.Helper()
			if x.n != len(ref) {
				t.Fatalf("loadShift=%d step %d: index holds %d, map %d", loadShift, step, x.n, len(ref))
			}
			for _, id := range ids {
				got, ok := x.get(id, slots)
				want, wok := ref[id]
				if ok != wok || (ok && got != want) {
					t.Fatalf("loadShift=%d step %d id %x: index (%d, %v), map (%d, %v)", loadShift, step, id, got, ok, want, wok)
				}
			}
		}
		for step := range 100000 {
			id := ids[rng.IntN(len(ids))]
			s := int32(rng.IntN(len(slots)))
			_, inMap := ref[id]
			old := slots[s].id
			switch {
			case inMap:
				// Delete id's entry.
				ds := ref[id]
				x.del(x.home(id), ds, slots)
				slots[ds].id = 0
				delete(ref, id)
			case old == 0:
				// Store id in the free slot s.
				slots[s].id = id
				if at, _, ok := x.find(id, slots); !ok && x.n < x.limit {
					x.setAt(at, s)
				} else {
					x.insertNew(s, slots)
				}
				ref[id] = s
			default:
				// Slot s takes id in place of old.
				at, _, _ := x.find(id, slots)
				slots[s].id = id
				x.setAt(at, s)
				x.del(x.home(old), s, slots)
				delete(ref, old)
				ref[id] = s
			}
			if step%997 == 0 {
				check(step)
			}
		}
		check(-1)
	}
}
