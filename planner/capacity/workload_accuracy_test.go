package capacity_test

import (
	"math"
	"os"
	"slices"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/perf"
	. "github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/workload"
)

// fullMooncake is the Mooncake conversation trace beside the repository
// (../shared), used when KVPLAN_ACCURACY is set and it is there.
const fullMooncake = "../../../shared/traces/mooncake/conversation_trace.jsonl"

// TestMooncakeTTFTAccuracy sizes deployments for requests drawn from the
// Mooncake conversation trace (the 200-line excerpt in testdata; with
// KVPLAN_ACCURACY=1 also the whole trace when ../shared has it) and replays
// the top candidates of each search in the timed simulator, the lengths as
// the trace has them and Poisson arrivals at the rate: the analytic TTFT p95
// against the simulated one (KVPLAN_ACCURACY=1 go test ./planner/capacity
// -run MooncakeTTFT -v). Without the variable it runs one cell.
func TestMooncakeTTFTAccuracy(t *testing.T) {
	cat := testCatalog(t)
	type cell struct {
		model, gpu string
		rate       float64
		ttft, tpot float64
	}
	grid := []cell{
		{"llama-3.1-8b", "h100-sxm", 2, 5000, 50},
		{"llama-3.1-8b", "h100-sxm", 6, 3000, 40},
		{"qwen3-8b", "h100-sxm", 4, 4000, 40},
		{"llama-3.1-8b", "a100-80gb", 2, 8000, 60},
		{"llama-3.1-70b", "h100-sxm", 1, 8000, 60},
	}
	traces := []string{"../../testdata/sim/conversation_excerpt.jsonl"}
	perCell, requests := 4, 2000
	if os.Getenv("KVPLAN_ACCURACY") == "" {
		grid, perCell, requests = grid[:1], 2, 1000
	} else if _, err := os.Stat(fullMooncake); err == nil {
		traces = append(traces, fullMooncake)
	}
	var diffs []float64
	for _, path := range traces {
		w, err := workload.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range grid {
			m, _ := cat.Model(g.model)
			gpu, _ := cat.GPU(g.gpu)
			e, _ := cat.Engine("vllm")
			q := Query{Model: m, Engine: e, RatePerS: g.rate, Workload: w, GPUOptions: []*catalog.GPU{gpu}, Path: perf.Frontend(13), Timers: fittedTimers(cat)}
			q.SLO.TTFTMS, q.SLO.TPOTMeanMS = g.ttft, g.tpot
			res, err := Search(q)
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Verify(res, perCell, requests, 7); err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Candidates {
				s := c.Simulated
				if s == nil {
					continue
				}
				t.Logf("%-24s %-13s %-9s %3g/s %-36s TTFT p95 %6.0f sim %6.0f (%+4.0f%%)  TPOT mean %5.1f sim %5.1f",
					path[max(0, len(path)-24):], g.model, g.gpu, g.rate, c.Describe(), c.TTFTP95MS, s.TTFTP95MS, s.TTFTDiff*100, c.TPOTMeanMS, s.TPOTMeanMS)
				diffs = append(diffs, math.Abs(s.TTFTDiff))
			}
		}
	}
	slices.Sort(diffs)
	within := 0
	for _, d := range diffs {
		if d <= 0.25 {
			within++
		}
	}
	t.Logf("%d deployments: TTFT p95 |analytic − simulated| / simulated median %.0f%%, worst %.0f%%, %d within 25%%",
		len(diffs), diffs[len(diffs)/2]*100, diffs[len(diffs)-1]*100, within)
	if diffs[len(diffs)/2] > 0.25 {
		t.Errorf("median TTFT p95 disagreement %.0f%%, above 25%%", diffs[len(diffs)/2]*100)
	}
}
