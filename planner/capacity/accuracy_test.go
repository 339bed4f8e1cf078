package capacity_test

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	. "github.com/kvplan/kvplan/planner/capacity"
)

// TestAccuracyAgainstSimulator measures the analytic queueing model against
// the timed simulator (an independent discrete-event implementation: real
// batches, chunked prefill, seats, link sharing) on the same step-time
// model, over a grid of models, workloads and loads, for the top candidates
// of each search: the table the README quotes
// (KVPLAN_ACCURACY=1 go test ./planner/capacity -run Accuracy -v). Without
// the variable it runs the first two cells only, to keep go test fast.
func TestAccuracyAgainstSimulator(t *testing.T) {
	cat := testCatalog(t)
	forEngineModels(t, cat, func(t *testing.T, timers TimerFactory) { accuracy(t, cat, timers) })
}

func accuracy(t *testing.T, cat *catalog.Catalog, timers TimerFactory) {
	// The agreement of two models, not the command's cost: every request
	// is replayed (the grid's 8 candidates × 3,000 requests × up to 8,512
	// tokens pass plan's budget of a verification).
	defer SetMaxVerifyTokens(SetMaxVerifyTokens(1 << 40))
	type cell struct {
		model     string
		isl, osl  int
		rate      float64
		ttft, itl float64
	}
	grid := []cell{
		{"llama-3.1-70b", 4000, 512, 20, 1000, 50},
		{"llama-3.1-70b", 1000, 256, 20, 500, 40},
		{"llama-3.1-8b", 2000, 256, 8, 500, 30},
		{"llama-3.1-8b", 8000, 512, 10, 2000, 40},
		{"llama-3.1-8b", 500, 1000, 30, 300, 25},
		{"qwen3-8b", 3000, 300, 15, 800, 30},
	}
	perCell := 6
	if os.Getenv("KVPLAN_ACCURACY") == "" {
		grid, perCell = grid[:2], 2
	}
	var ttft, itl []float64
	var ttftAgg, ttftDis []float64
	for _, g := range grid {
		q := exampleQuery(t, cat)
		q.Timers = timers
		q.Model, _ = cat.Model(g.model)
		q.InputTokens, q.OutputTokens, q.RatePerS, q.TTFTP95MS, q.ITLP95MS = g.isl, g.osl, g.rate, g.ttft, g.itl
		h100, _ := cat.GPU("h100-sxm")
		l40s, _ := cat.GPU("l40s")
		q.GPUOptions = []*catalog.GPU{h100, l40s}
		res, err := Search(q)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Verify(res, perCell, 3000, 7); err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Candidates {
			s := c.Simulated
			if s == nil {
				continue
			}
			t.Logf("%-14s %5d/%-4d %4g/s %-62s TTFT p95 %6.0f sim %6.0f (%+4.0f%%)  ITL mean %5.1f sim %5.1f (%+4.0f%%)",
				g.model, g.isl, g.osl, g.rate, c.Describe(), c.TTFTP95MS, s.TTFTP95MS, s.TTFTDiff*100, c.ITLMeanMS, s.ITLMeanMS, s.ITLDiff*100)
			ttft = append(ttft, math.Abs(s.TTFTDiff))
			itl = append(itl, math.Abs(s.ITLDiff))
			if c.Mode == ModeAggregated {
				ttftAgg = append(ttftAgg, math.Abs(s.TTFTDiff))
			} else {
				ttftDis = append(ttftDis, math.Abs(s.TTFTDiff))
			}
		}
	}
	med := func(v []float64) float64 {
		if len(v) == 0 {
			return 0
		}
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	worst := func(v []float64) float64 { return slices.Max(v) }
	t.Logf("%d deployments: TTFT p95 |diff| median %.0f%% worst %.0f%% (aggregated median %.0f%%, disaggregated %.0f%%); ITL mean |diff| median %.0f%% worst %.0f%%",
		len(ttft), med(ttft)*100, worst(ttft)*100, med(ttftAgg)*100, med(ttftDis)*100, med(itl)*100, worst(itl)*100)
	if med(ttft) > DisagreeAbove || med(itl) > DisagreeAbove {
		t.Errorf("median disagreement above %.0f%%", DisagreeAbove*100)
	}
}

// TestAccuracyAgainstSimulatorLayouts is the same comparison on workers of
// data- and expert-parallel layouts (issue sim27): DeepSeek-V3 as tp1 dp8
// ep8 and as tp8 ep8 on 8 H200s, Qwen3-235B-A22B as tp4 ep4 on 4 H200s (its
// bf16 weights do not fit 4 H100s), each the highest-rate search's first
// aggregated candidate of that layout, 3,000 requests (KVPLAN_ACCURACY=1).
func TestAccuracyAgainstSimulatorLayouts(t *testing.T) {
	if os.Getenv("KVPLAN_ACCURACY") == "" {
		t.Skip("KVPLAN_ACCURACY=1 runs it")
	}
	cat := testCatalog(t)
	defer SetMaxVerifyTokens(SetMaxVerifyTokens(1 << 40))
	type cell struct {
		model, gpu, layout string
		isl, osl           int
		gpus               int
		ttft, itl          float64
	}
	grid := []cell{
		{"deepseek-v3", "h200", "tp1 dp8 ep8 h200", 2000, 500, 8, 2000, 50},
		{"deepseek-v3", "h200", "tp8 ep8 h200", 2000, 500, 8, 2000, 50},
		{"qwen3-235b-a22b", "h200", "tp4 ep4 h200", 2000, 500, 4, 2000, 50},
	}
	// The engine model only: the tests' stand-in prices tensor parallelism alone.
	timers := engineModels(cat)[1].timers
	{
		var ttft, itl []float64
		for _, g := range grid {
			q := exampleQuery(t, cat)
			q.Timers = timers
			q.Model, _ = cat.Model(g.model)
			gpu, _ := cat.GPU(g.gpu)
			q.GPUOptions = []*catalog.GPU{gpu}
			q.InputTokens, q.OutputTokens, q.RatePerS, q.GPUs, q.TTFTP95MS, q.ITLP95MS = g.isl, g.osl, 0, g.gpus, g.ttft, g.itl
			res, err := Search(q)
			if err != nil {
				t.Fatal(err)
			}
			// Only the first aggregated candidate of the layout is replayed.
			var pick []*Candidate
			for _, c := range res.Candidates {
				if c.Mode == ModeAggregated && c.MeetsSLO && strings.HasSuffix(c.Describe(), "× "+g.layout) {
					pick = append(pick, c)
					break
				}
			}
			if len(pick) == 0 {
				t.Errorf("%s %s: no aggregated candidate of that layout meets the SLO", g.model, g.layout)
				continue
			}
			res.Candidates, res.BestAggregated, res.BestDisaggregated, res.Best = pick, nil, nil, pick[0]
			if err := q.Verify(res, 1, 3000, 7); err != nil {
				t.Fatal(err)
			}
			c, s := pick[0], pick[0].Simulated
			if s == nil {
				t.Errorf("%s: not simulated", c.Describe())
				continue
			}
			t.Logf("%-16s %5d/%-4d %5.3g/s %-36s TTFT p95 %6.0f sim %6.0f (%+4.0f%%)  ITL mean %5.1f sim %5.1f (%+4.0f%%)",
				g.model, g.isl, g.osl, c.RatePerS, c.Describe(), c.TTFTP95MS, s.TTFTP95MS, s.TTFTDiff*100, c.ITLMeanMS, s.ITLMeanMS, s.ITLDiff*100)
			ttft = append(ttft, math.Abs(s.TTFTDiff))
			itl = append(itl, math.Abs(s.ITLDiff))
		}
		if len(ttft) > 0 {
			t.Logf("%d layout deployments: TTFT p95 |diff| worst %.0f%%; ITL mean |diff| worst %.0f%%", len(ttft), slices.Max(ttft)*100, slices.Max(itl)*100)
		}
		if len(ttft) > 0 && slices.Max(ttft) > DisagreeAbove {
			t.Errorf("a layout deployment's TTFT p95 disagrees by more than %.0f%%", DisagreeAbove*100)
		}
	}
}
