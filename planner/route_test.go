package planner

import (
	"math"
	"testing"
)

// The router experiment of FACTS §5: 12 prefixes × 1,500 tokens, 6 sends
// each, 2 workers of 14,816 slots, block 16.
func TestPlanRouteRouterExperiment(t *testing.T) {
	p, err := PlanRoute(RouteScenario{Workers: 2, SlotsPerWorker: 14816, BlockSize: 16, Prefixes: 12, PrefixTokens: 1500, Repeats: 6, TailTokens: 24})
	if err != nil {
		t.Fatal(err)
	}
	// ceil(1500/16) = 94 blocks a prefix; 12 × 94 = 1,128 blocks = 18,048 slots > 14,816.
	if p.WorkingSetBlocks != 1128 || p.WorkingSetTokens != 18000 || p.FitsOneWorker {
		t.Errorf("working set %d blocks / %d tokens, fits one %v; want 1128, 18000, false", p.WorkingSetBlocks, p.WorkingSetTokens, p.FitsOneWorker)
	}
	// KV-aware: ceil(12/2) = 6 prefixes × 1,504 slots = 9,024 ≤ 14,816.
	if !p.FitsPool || p.Policies[2].PerWorkerWorkingTokens != 9024 || p.Policies[2].ExpectedHitRate != 1 {
		t.Errorf("kv-aware: %+v, fits pool %v", p.Policies[2], p.FitsPool)
	}
	// floor(14816 / 1504) = 9 prefixes a worker; ceil(12 / 9) = 2 workers.
	if p.MinWorkersKVAware != 2 {
		t.Errorf("min workers %d, want 2", p.MinWorkersKVAware)
	}
	// Random: coverage 1 − 0.5^6 = 0.984375; share ceil(0.984375 × 12 × 1504) = 17,766.
	// Same worker: mean(0.5, 0.75, 0.875, 0.9375, 0.96875) = 0.80625.
	// Hit ≈ 0.80625 × 14816/17766 = 0.67237.
	rnd := p.Policies[1]
	if rnd.PerWorkerWorkingTokens != 17766 || rnd.Fits || math.Abs(rnd.ExpectedHitRate-0.67237) > 1e-4 {
		t.Errorf("random: %+v", rnd)
	}
	if p.Policies[3].ExpectedHitRate != rnd.ExpectedHitRate {
		t.Error("kv-aware-no-events should equal random")
	}
}

func TestPlanRouteVerdicts(t *testing.T) {
	cases := []struct {
		name       string
		sc         RouteScenario
		oneWorker  bool
		pool       bool
		minWorkers int
	}{
		// 6 × 1,504 = 9,024 slots fit one worker of 14,816.
		{"fits one", RouteScenario{2, 14816, 16, 6, 1500, 6, 24}, true, true, 1},
		// 40 prefixes: 9 a worker → ceil(40/9) = 5 workers; 2 hold 18 < 40.
		{"needs more workers", RouteScenario{2, 14816, 16, 40, 1500, 6, 24}, false, false, 5},
		// A 20,000-token prefix (1,250 blocks = 20,000 slots) exceeds 14,816: no pool fits.
		{"prefix too large", RouteScenario{4, 14816, 16, 2, 20000, 3, 0}, false, false, 0},
	}
	for _, c := range cases {
		p, err := PlanRoute(c.sc)
		if err != nil {
			t.Fatal(err)
		}
		if p.FitsOneWorker != c.oneWorker || p.FitsPool != c.pool || p.MinWorkersKVAware != c.minWorkers {
			t.Errorf("%s: one %v pool %v min %d; want %v %v %d", c.name, p.FitsOneWorker, p.FitsPool, p.MinWorkersKVAware, c.oneWorker, c.pool, c.minWorkers)
		}
	}
	if _, err := PlanRoute(RouteScenario{Workers: 0, SlotsPerWorker: 1, BlockSize: 16, Prefixes: 1, PrefixTokens: 1, Repeats: 1}); err == nil {
		t.Error("zero workers accepted")
	}
}
