package capacity_test

import (
	"encoding/csv"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/perf"
	. "github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/slo"
	"github.com/kvplan/kvplan/workload"
)

// l40sQuery is the example: Qwen3-32B on L40S, 2,000 tokens in and
// 300 out at 50 requests/s, TTFT p95 ≤ 500 ms and ITL p95 ≤ 40 ms.
func l40sQuery(t testing.TB, cat *catalog.Catalog) Query {
	t.Helper()
	m, _ := cat.Model("qwen3-32b")
	g, _ := cat.GPU("l40s")
	e, _ := cat.Engine("vllm")
	return Query{Model: m, Engine: e, InputTokens: 2000, OutputTokens: 300, RatePerS: 50, TTFTP95MS: 500, ITLP95MS: 40,
		GPUOptions: []*catalog.GPU{g}, Path: perf.Frontend(13), Timers: fittedTimers(cat)}
}

// TestMeanTPOTTarget: with the p95 targets alone the best's ITL p95 passes
// while its mean is above 40 ms (the finding); with --tpot 40ms the
// best's mean TPOT is within 40 ms, analytically and in the simulator.
func TestMeanTPOTTarget(t *testing.T) {
	cat := testCatalog(t)
	q := l40sQuery(t, cat)
	res, err := Search(q)
	if err != nil || res.Best == nil {
		t.Fatalf("%v %v", err, res)
	}
	if b := res.Best; b.ITLP95MS > 40 || b.ITLMeanMS <= 40 || len(b.PercentileNotes) == 0 {
		t.Errorf("p95 targets only: ITL p95 %.2f, mean %.2f, notes %v; want p95 ≤ 40 < mean and a note saying why", b.ITLP95MS, b.ITLMeanMS, b.PercentileNotes)
	}
	q.SLO.TPOTMeanMS = 40
	res, err = Search(q)
	if err != nil || res.Best == nil {
		t.Fatalf("%v %v", err, res)
	}
	if err := q.Verify(res, 1, 1000, 1); err != nil {
		t.Fatal(err)
	}
	b := res.Best
	if b.TPOTMeanMS > 40 || b.Simulated == nil || b.Simulated.TPOTMeanMS > 40 || !b.Simulated.MeetsSLO {
		t.Errorf("--tpot 40ms: %s TPOT mean %.2f ms analytic, simulated %+v", b.Describe(), b.TPOTMeanMS, b.Simulated)
	}
	t.Logf("%s: TPOT mean %.2f ms analytic, %.2f simulated; %d GPUs", b.Describe(), b.TPOTMeanMS, b.Simulated.TPOTMeanMS, b.GPUs)
}

// TestEveryTargetSizes: each kind of target, made tight, makes the search
// size up (more GPUs than without it), and the best meets it.
func TestEveryTargetSizes(t *testing.T) {
	cat := testCatalog(t)
	base := exampleQuery(t, cat)
	base.Links = nil
	res, err := Search(base)
	if err != nil || res.Best == nil {
		t.Fatal(err)
	}
	b0 := res.Best
	for _, c := range []struct {
		name string
		set  func(*slo.SLO)
	}{
		{"tpot mean", func(s *slo.SLO) { s.TPOTMeanMS = 0.9 * b0.TPOTMeanMS }},
		{"itl p99", func(s *slo.SLO) { s.ITLP99MS = 0.9 * b0.ITLP99MS }},
		{"ttft p99", func(s *slo.SLO) { s.TTFTP99MS = 0.9 * b0.TTFTP99MS }},
		{"e2e p95", func(s *slo.SLO) { s.E2EP95MS = 0.95 * b0.E2EP95MS }},
		{"goodput", func(s *slo.SLO) { s.Goodput = 0.99 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := base
			c.set(&q.SLO)
			res, err := Search(q)
			if err != nil {
				t.Fatal(err)
			}
			b := res.Best
			if b == nil {
				t.Fatalf("nothing meets: %s", res.Verdict)
			}
			for _, g := range q.SLO.Given() {
				v, _ := b.Figure(g.Target)
				met := v <= g.Value
				if g.Metric == slo.Goodput {
					met = v >= g.Value
				}
				if !met {
					t.Errorf("%s: %s %g misses %g", b.Describe(), g.Label(), v, g.Value)
				}
			}
			if c.name != "goodput" && b.GPUs <= b0.GPUs && usdOf(t, res) <= usdOf(t, &Result{Best: b0}) {
				t.Errorf("%s: %d GPUs, no more than without the target (%d)", b.Describe(), b.GPUs, b0.GPUs)
			}
		})
	}
}

// TestGoodputFigure: with a per-request TTFT target the goodput is the
// share of requests within it: at least 95% when the TTFT p95 is within the
// target, below 99% when the p99 is beyond it.
func TestGoodputFigure(t *testing.T) {
	cat := testCatalog(t)
	q := exampleQuery(t, cat)
	q.Links = nil
	res, err := Search(q)
	if err != nil || res.Best == nil {
		t.Fatal(err)
	}
	for _, c := range res.Candidates {
		if !c.MeetsSLO || c.Goodput == nil {
			continue
		}
		// No TPOT or E2E target: the goodput is P(TTFT ≤ 1000 ms).
		g := *c.Goodput
		if g < 0.95 || g > 1 || c.TTFTP99MS > 1000 && g >= 0.99 || c.TTFTP99MS < 1000 && g < 0.99 {
			t.Errorf("%s: goodput %.4f with TTFT p95 %.0f, p99 %.0f against 1000 ms", c.Describe(), g, c.TTFTP95MS, c.TTFTP99MS)
		}
	}
}

func TestSLOErrors(t *testing.T) {
	cat := testCatalog(t)
	for _, c := range []struct {
		set  func(*Query)
		want string
	}{
		{func(q *Query) { q.TTFTP95MS, q.ITLP95MS = 0, 0 }, "no SLO given: set at least one target (--ttft-p50"},
		{func(q *Query) { q.SLO.Goodput = 1.2 }, "--goodput 1.2: want a share of requests in (0, 1]"},
		{func(q *Query) { q.TTFTP95MS, q.SLO.TTFTMS = 500, 400 }, "TTFT p95 SLO given twice"},
		{func(q *Query) { q.TTFTP95MS = 0; q.SLO.Goodput = 0.9 }, "a goodput counts the requests that meet every per-request target"},
		{func(q *Query) { q.Burstiness = -1 }, "burstiness -1"},
		{func(q *Query) { q.TraceArrivals = true }, "arrivals from a trace need a lengths file with timestamps"},
		{func(q *Query) { q.PrefixRouting = "kv" }, "prefix routing kv: the workload has no prefix hashes"},
	} {
		q := exampleQuery(t, cat)
		c.set(&q)
		if c.want == "a goodput counts the requests that meet every per-request target" {
			q.ITLP95MS = 40
		}
		_, err := Search(q)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v; want %q", err, c.want)
		}
	}
}

// TestStartupDefaults: the lead time's defaults are the medians of the 59
// measured start-ups in testdata (per-rank load throughput, warm-up).
func TestStartupDefaults(t *testing.T) {
	f, err := os.Open("../../testdata/plan/vllm-startup.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rate, warm []float64
	for _, row := range rows[1:] {
		gib, _ := strconv.ParseFloat(row[2], 64)
		s, _ := strconv.ParseFloat(row[3], 64)
		w, _ := strconv.ParseFloat(row[4], 64)
		rate, warm = append(rate, gib/s), append(warm, w)
	}
	slices.Sort(rate)
	slices.Sort(warm)
	if len(rate) != 59 {
		t.Fatalf("%d start-ups, want 59", len(rate))
	}
	if med := rate[29]; math.Abs(med-float64(DefaultLoadBytesPerS)/(1<<30)) > 0.005 {
		t.Errorf("median load %.3f GiB/s a rank, the default %.3f", med, float64(DefaultLoadBytesPerS)/(1<<30))
	}
	if med := warm[29]; math.Abs(med-DefaultWarmupS) > 0.05 {
		t.Errorf("median warm-up %.2f s, the default %.2f", med, DefaultWarmupS)
	}
}

func dayQuery(t testing.TB, cat *catalog.Catalog) (Query, *workload.Profile) {
	t.Helper()
	q := exampleQuery(t, cat) // Llama-3.1-70B, 4,000 in and 512 out, TTFT p95 ≤ 1 s, ITL p95 ≤ 50 ms, H100s
	q.RatePerS = 0
	q.SLO.TPOTMeanMS = 45
	q.Links = nil
	p, err := workload.ReadProfile("../../testdata/plan/day-profile.csv")
	if err != nil {
		t.Fatal(err)
	}
	return q, p
}

func TestPlanDay(t *testing.T) {
	cat := testCatalog(t)
	q, p := dayQuery(t, cat)
	res, err := PlanDay(q, p)
	if err != nil || res.DayPlan == nil {
		t.Fatalf("%v, %+v", err, res)
	}
	d := res.DayPlan
	if len(d.Schedule) != 24 || d.Peak != "12:00" {
		t.Fatalf("%d periods, peak %s", len(d.Schedule), d.Peak)
	}
	// More traffic never takes fewer GPUs; every period meets the SLO.
	for i, a := range d.Schedule {
		for _, b := range d.Schedule {
			if b.RatePerS > a.RatePerS && b.GPUs < a.GPUs {
				t.Errorf("%s (%g/s) has %d GPUs, %s (%g/s) %d", b.Start, b.RatePerS, b.GPUs, a.Start, a.RatePerS, a.GPUs)
			}
		}
		if !a.MeetsSLO {
			t.Errorf("period %d misses the SLO", i)
		}
	}
	// The day costs at least the sum of its periods and at most the peak all
	// day: with a lead time of L, each scale-up pays the larger size for L
	// more (bounded here by one hour a scale-up).
	sum := 0.0
	ups := 0
	for _, s := range d.Schedule {
		sum += *s.USDPerHour * s.LengthS / 3600
		if s.ScaleUpFrom != "" {
			ups++
		}
	}
	if *d.USDPerDay < sum-1e-6 || *d.USDPerDay > *d.USDPerDayStaticPeak || *d.USDPerDayStaticPeak != *res.Best.USDPerHour*24 {
		t.Errorf("day $%.2f, periods $%.2f, static $%.2f", *d.USDPerDay, sum, *d.USDPerDayStaticPeak)
	}
	// A lead of 30 minutes: each scale-up pays, for 30 minutes, the next
	// period's size instead of its own: the hand sum over the schedule.
	q.ScaleUpLeadS = 1800
	res, err = PlanDay(q, p)
	if err != nil {
		t.Fatal(err)
	}
	d = res.DayPlan
	want := 0.0
	for i, s := range d.Schedule {
		next := d.Schedule[(i+1)%len(d.Schedule)]
		if next.GPUs > s.GPUs {
			want += *s.USDPerHour*0.5 + *next.USDPerHour*0.5
		} else {
			want += *s.USDPerHour
		}
	}
	if math.Abs(*d.USDPerDay-want) > 1e-6 || d.LeadTime.S != 1800 || d.Schedule[7].ScaleUpFrom != "06:30" {
		t.Errorf("with 30 minutes of lead: $%.4f, want $%.4f; lead %g s, 07:00 scales up from %q", *d.USDPerDay, want, d.LeadTime.S, d.Schedule[7].ScaleUpFrom)
	}
}

func TestPlanDayPeakUnmet(t *testing.T) {
	cat := testCatalog(t)
	q, p := dayQuery(t, cat)
	q.TTFTP95MS = 5 // below any prefill of 4,000 tokens
	res, err := PlanDay(q, p)
	if err != nil {
		t.Fatal(err)
	}
	if res.DayPlan != nil || res.Best != nil || !strings.Contains(res.Verdict, "the peak period, 12:00 at 42 requests/s, has no deployment that meets the SLO") ||
		!strings.Contains(res.Verdict, "TTFT p95") {
		t.Errorf("verdict %q", res.Verdict)
	}
}

// BenchmarkPlanDay24 plans the 24-point day of testdata on the engine model.
func BenchmarkPlanDay24(b *testing.B) {
	cat := testCatalog(b)
	q, p := dayQuery(b, cat)
	q.Timers = fittedTimers(cat)
	for b.Loop() {
		if _, err := PlanDay(q, p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPrefixRoutingKV: with KV-aware routing assumed, a trace's repeated
// leading blocks are found cached: 199 of the excerpt's 200 requests begin
// with a block an earlier one began with (counted in Python), and the
// prefill they save never makes the deployment larger.
func TestPrefixRoutingKV(t *testing.T) {
	cat := testCatalog(t)
	q := mooncakeQuery(t, cat)
	q.Timers = exampleQuery(t, cat).Timers
	plain, err := Search(q)
	if err != nil || plain.Best == nil {
		t.Fatal(err)
	}
	q.PrefixRouting = "kv"
	kv, err := Search(q)
	if err != nil || kv.Best == nil {
		t.Fatal(err)
	}
	if kv.Best.PrefixHitRatio != 0.995 || kv.Best.GPUs > plain.Best.GPUs || kv.Best.TTFTP95MS > plain.Best.TTFTP95MS && kv.Best.GPUs == plain.Best.GPUs {
		t.Errorf("kv: hit %g, %d GPUs TTFT p95 %.0f; plain %d GPUs %.0f", kv.Best.PrefixHitRatio, kv.Best.GPUs, kv.Best.TTFTP95MS, plain.Best.GPUs, plain.Best.TTFTP95MS)
	}
}
