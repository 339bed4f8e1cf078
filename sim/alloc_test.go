package sim

import "testing"

// TestSteadyStateAllocations: a run allocates its setup (caches, tables,
// result) and grows a few slices early on, but nothing per request, so four
// times the requests cost about the same allocations.
func TestSteadyStateAllocations(t *testing.T) {
	allocs := func(repeats int) float64 {
		syn := Synthetic{Prefixes: 50, PrefixTokens: 1500, Repeats: repeats, TailTokens: 24, Seed: 1}
		return testing.AllocsPerRun(3, func() {
			src, err := syn.Open()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Run(src, Config{Workers: 2, CapacityBlocks: 926, Concurrency: 4}); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(20), allocs(80) // 1,000 and 4,000 requests
	// The seen set doubles about twice more for the larger run (3,000 more
	// unique tail blocks), so allow a handful of allocations, far below
	// one per request.
	t.Logf("allocations: %v for 1,000 requests, %v for 4,000", small, large)
	if large-small > 10 {
		t.Fatalf("allocations: %v for 1,000 requests, %v for 4,000; want the same within 10", small, large)
	}
}
