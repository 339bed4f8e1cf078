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
