package sim

import (
	"reflect"
	"testing"
)

// TestCacheAccountMatchesTable: the cache-only simulation keeps the
// kv-aware family's account of blocks in flight in its caches' pins
// (active.go); it must route exactly as the table of references does, the
// account the timed simulation keeps (checked by hand in TestDynamoCost).
// The loads overlap requests (trace timestamps, closed loops, Poisson) and
// some caches are too small for what is pinned, so blocks overflow and a
// worker's account moves into its table and back.
func TestCacheAccountMatchesTable(t *testing.T) {
	loads := passLoads()
	cfgs := []Config{
		{Workers: 4, CapacityBlocks: 400, Seed: 3},
		{Workers: 3, CapacityBlocks: 2000, Seed: 3, Concurrency: 8},
		{Workers: 2, CapacityBlocks: 120, Seed: 3, Concurrency: 16}, // overflows
		{Workers: 3, CapacityBlocks: 60, Seed: 1},                   // overflows at the trace's timestamps
		{Workers: 2, CapacityBlocks: 500, Seed: 7, RatePerS: 20},
		{Workers: 5, Seed: 7, Concurrency: 32}, // unbounded
	}
	policies := []string{KVAware, KVAwareNoEvents, KVAwareApprox}
	overflowed := false
	for _, l := range loads {
		for ci, cfg := range cfgs {
			inCache, err := RunAll(l.open, cfg, policies)
			if err != nil {
				t.Fatal(err)
			}
			accountInCache = false
			inTable, err := RunAll(l.open, cfg, policies)
			accountInCache = true
			if err != nil {
				t.Fatal(err)
			}
			for i, pol := range policies {
				if !reflect.DeepEqual(inCache[i], inTable[i]) {
					t.Errorf("%s config %d %s: account in the cache\n%+v\nin the table\n%+v", l.name, ci, pol, inCache[i], inTable[i])
				}
				if inCache[i].OverflowBlocks > 0 {
					overflowed = true
				}
			}
		}
	}
	if !overflowed {
		t.Error("no load overflowed a cache: the table fallback went untested")
	}
}
