package capacity_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kvplan/kvplan/openloop"
	. "github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/units"
)

// TestVerifyIsBoundedBySampling: --gpus 100000 verified in 49.5 s and 21.5
// GB, replaying every worker; a pool of more than 64 workers is now
// replayed as 64 identical workers at the rate that gives each the load it
// has in the whole pool, and the result says so.
func TestVerifyIsBoundedBySampling(t *testing.T) {
	cat := testCatalog(t)
	q := exampleQuery(t, cat)
	q.Links = nil
	q.RatePerS = 2000 // hundreds of aggregated workers
	res, err := Search(q)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := q.Verify(res, 3, 2000, 1); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Verify took %v", took)
	}
	c := res.Best
	n := c.Workers()[0]
	if n <= 64 || c.Simulated == nil {
		t.Fatalf("%s: %d workers, simulated %+v", c.Describe(), n, c.Simulated)
	}
	s := c.Simulated
	// 64 of n workers at 2,000 × 64 / n requests/s.
	if len(s.SampledWorkers) != 1 || s.SampledWorkers[0] != 64 || math.Abs(s.SampleRatePerS-2000*64/float64(n)) > 1e-9 {
		t.Errorf("sampled %v at %g/s, want [64] at %g/s", s.SampledWorkers, s.SampleRatePerS, 2000*64/float64(n))
	}
	said := false
	for _, note := range res.Notes {
		said = said || strings.HasPrefix(note, c.Describe()+": the timed simulator replayed a sample of identical workers (64 of ")
	}
	if !said {
		t.Errorf("no note says the sample: %q", res.Notes)
	}
}

// TestSampleAgreesWithWholePool: the sample stands for the pool. A pool of
// about 150 workers replayed whole and as 64 of them, with the same
// requests a worker, gives the same ITL within 5% and TTFT p95 within 15%
// (the Erlang-n arrivals of round-robin over 64 workers are a little
// burstier than over 150). Measured: ITL equal, TTFT p95 3.5% apart.
func TestSampleAgreesWithWholePool(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 150 workers")
	}
	cat := testCatalog(t)
	q := exampleQuery(t, cat)
	q.Links = nil
	q.RatePerS = 600
	res, err := Search(q)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Best
	if n := c.Workers()[0]; n <= 64 || n > 400 {
		t.Fatalf("%s: want 65 to 400 workers", c.Describe())
	}
	if err := q.Verify(res, 1, 6000, 1); err != nil {
		t.Fatal(err)
	}
	sampled := *c.Simulated
	defer SetMaxSimWorkers(SetMaxSimWorkers(100_000))
	defer SetMaxVerifyTokens(SetMaxVerifyTokens(1 << 40))
	c.Simulated = nil
	// The same requests a worker: 6,000 over 64, n × 6,000 / 64 over n.
	if err := q.Verify(res, 1, c.Workers()[0]*6000/64, 1); err != nil {
		t.Fatal(err)
	}
	whole := c.Simulated
	t.Logf("%s: analytic ITL %.2f TTFT p95 %.1f; whole ITL %.2f TTFT p95 %.1f; sample of 64 ITL %.2f TTFT p95 %.1f", c.Describe(), c.ITLMeanMS, c.TTFTP95MS, whole.ITLMeanMS, whole.TTFTP95MS, sampled.ITLMeanMS, sampled.TTFTP95MS)
	if whole.SampledWorkers != nil || len(sampled.SampledWorkers) == 0 {
		t.Fatalf("whole %v, sample %v", whole.SampledWorkers, sampled.SampledWorkers)
	}
	if d := math.Abs(sampled.ITLMeanMS/whole.ITLMeanMS - 1); d > 0.05 {
		t.Errorf("ITL differs by %.1f%%", d*100)
	}
	if d := math.Abs(sampled.TTFTP95MS/whole.TTFTP95MS - 1); d > 0.15 {
		t.Errorf("TTFT p95 differs by %.1f%%", d*100)
	}
}

// TestOneDecodeWorkerFewerMissesITL: a disaggregated candidate is the
// cheapest that meets the SLO, and its decode pool the smallest whose ITL
// does: one decode worker fewer misses its ITL target, or cannot seat the
// batch at all.
func TestOneDecodeWorkerFewerMissesITL(t *testing.T) {
	cat := testCatalog(t)
	forEngineModels(t, cat, func(t *testing.T, timers TimerFactory) {
		for _, rate := range []float64{5, 20, 80} {
			q := exampleQuery(t, cat)
			q.Timers, q.RatePerS = timers, rate
			res, err := Search(q)
			if err != nil {
				t.Fatal(err)
			}
			c := res.BestDisaggregated
			if c == nil || !c.MeetsSLO {
				t.Fatalf("%g/s: no disaggregated candidate meets the SLO", rate)
			}
			w := c.Workers()
			if w[1] < 2 {
				continue // one decode worker: none fewer
			}
			fewer := q.At(c, []int{w[0], w[1] - 1}, rate)
			t.Logf("%g/s: %s ITL p95 %.2f ms; with %d decode workers %.2f ms (SLO %g), limited by %q, misses %q", rate, c.Describe(), c.ITLP95MS, w[1]-1, fewer.ITLP95MS, q.ITLP95MS, fewer.LimitedBy, fewer.Misses)
			// It misses on the decode pool: its ITL passes the target, or
			// the batch the rate needs no longer fits the decode workers'
			// iterations or KV slots (then ITL has no finite p95: 0).
			decodeFails := fewer.LimitedBy == openloop.LimitDecode || fewer.LimitedBy == openloop.LimitKV
			if fewer.MeetsSLO || !decodeFails || (fewer.ITLP95MS != 0 && !(fewer.ITLP95MS > q.ITLP95MS)) {
				t.Errorf("%g/s: %s with one decode worker fewer: meets %v, limited by %q, ITL p95 %.2f ms against %g", rate, c.Describe(), fewer.MeetsSLO, fewer.LimitedBy, fewer.ITLP95MS, q.ITLP95MS)
			}
		}
	})
}

// TestPredictionAtTheSLOMeetsIt: an SLO is met when the prediction is at
// most the target, so a target set exactly to a candidate's predicted
// TTFT and ITL p95 is met by it.
func TestPredictionAtTheSLOMeetsIt(t *testing.T) {
	cat := testCatalog(t)
	forEngineModels(t, cat, func(t *testing.T, timers TimerFactory) {
		q := exampleQuery(t, cat)
		q.Timers = timers
		res, err := Search(q)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []*Candidate{res.BestAggregated, res.BestDisaggregated} {
			if c == nil {
				continue
			}
			exact := q
			exact.TTFTP95MS, exact.ITLP95MS = c.TTFTP95MS, c.ITLP95MS // the shorthands and the SLO they fold into
			exact.SLO.TTFTMS, exact.SLO.ITLMS = c.TTFTP95MS, c.ITLP95MS
			at := exact.At(c, c.Workers(), q.RatePerS)
			if at.TTFTP95MS != c.TTFTP95MS || at.ITLP95MS != c.ITLP95MS {
				t.Fatalf("%s: the figures moved: %v %v", c.Describe(), at.TTFTP95MS, at.ITLP95MS)
			}
			if !at.MeetsSLO {
				t.Errorf("%s: TTFT p95 %v and ITL p95 %v exactly at the SLO do not meet it (%s)", c.Describe(), at.TTFTP95MS, at.ITLP95MS, at.Misses)
			}
			// A hair under either target misses it.
			under := exact
			under.ITLP95MS = math.Nextafter(c.ITLP95MS, 0)
			under.SLO.ITLMS = under.ITLP95MS
			if under.At(c, c.Workers(), q.RatePerS).MeetsSLO {
				t.Errorf("%s: ITL p95 %v meets a target just under it", c.Describe(), c.ITLP95MS)
			}
		}
	})
}

// TestVerifyTokenBudget: --sim-requests 1,000,000 of 4,512 tokens each on
// every candidate would replay billions of tokens; the requests of one
// verification carry at most 100,000,000 tokens (here 5,000,000, to keep
// the test short), split evenly, and a note says how many each replayed.
func TestVerifyTokenBudget(t *testing.T) {
	cat := testCatalog(t)
	q := exampleQuery(t, cat)
	res, err := Search(q)
	if err != nil {
		t.Fatal(err)
	}
	defer SetMaxVerifyTokens(SetMaxVerifyTokens(5_000_000))
	start := time.Now()
	if err := q.Verify(res, 3, 1_000_000, 1); err != nil {
		t.Fatal(err)
	}
	t.Logf("took %v", time.Since(start))
	var k int
	var note string
	for _, n := range res.Notes {
		if strings.HasPrefix(n, "the timed simulator replayed ") {
			note = n
			fmt.Sscanf(n[strings.Index(n, ": ")+2:], "%d candidates", &k)
		}
	}
	if k == 0 {
		t.Fatalf("no note on the budget: %q", res.Notes)
	}
	// 5,000,000 / k candidates / (4,000 + 512) tokens, rounded down.
	want := 5_000_000 / k / 4512
	if !strings.Contains(note, fmt.Sprintf("replayed %s requests a candidate", units.Thousands(int64(want)))) {
		t.Errorf("note %q, want %d requests", note, want)
	}
	for _, c := range []*Candidate{res.Best, res.BestAggregated, res.BestDisaggregated} {
		if c != nil && c.Simulated != nil && c.Simulated.Requests+c.Simulated.Rejected > want {
			t.Errorf("%s replayed %d requests", c.Describe(), c.Simulated.Requests)
		}
	}
}
