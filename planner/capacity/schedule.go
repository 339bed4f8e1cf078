package capacity

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvplan/kvplan/workload"
)

// Scale-up lead time defaults, from the 59 vLLM 0.19.0 start-up logs of
// llm-d-incubation/llm-d-planner (one H100 80GB, TP 1 to 4; commit
// d3121e059da8, accuracy/results/v0.19.0/logs/; the figures are in
// testdata/plan/vllm-startup.csv): each rank loaded its weights at a median
// of 1.00 GiB/s ("Model loading took X GiB memory and Y seconds"; the
// spread is 0.06 to 3.28 GiB/s: the storage decides), and the engine then
// took a median of 25.7 s to profile, allocate its KV cache and warm up
// ("init engine (profile, create kv cache, warmup model) took N seconds").
const (
	DefaultLoadBytesPerS = 1 << 30 // per rank
	DefaultWarmupS       = 25.7
)

// LeadTime is how long a worker takes from being asked for to serving: its
// weights loaded over the link to storage, then the engine's warm-up.
type LeadTime struct {
	S                   float64 `json:"s"`
	WeightsBytesPerRank int64   `json:"weights_bytes_per_rank"` // the largest worker's
	LoadBytesPerS       float64 `json:"load_bytes_per_s"`       // per rank
	LoadS               float64 `json:"load_s"`
	WarmupS             float64 `json:"warmup_s"`
	Source              string  `json:"source"`
}

// PoolWorkers is one pool's workers in a period.
type PoolWorkers struct {
	Role    string `json:"role"`
	GPU     string `json:"gpu"`
	TP      int    `json:"tp"`
	Workers int    `json:"workers"`
}

// SchedulePeriod is one period of a day's plan: the workers it needs and
// what they cost.
type SchedulePeriod struct {
	Start      string        `json:"start"` // HH:MM
	LengthS    float64       `json:"length_s"`
	RatePerS   float64       `json:"requests_per_s"`
	Pools      []PoolWorkers `json:"pools"`
	GPUs       int           `json:"gpus"`
	USDPerHour *float64      `json:"usd_per_hour"` // null when a price is unknown
	MeetsSLO   bool          `json:"meets_slo"`
	TTFTP95MS  float64       `json:"ttft_p95_ms"`
	ITLP95MS   float64       `json:"itl_p95_ms"`
	TPOTMeanMS float64       `json:"tpot_mean_ms"`
	// ScaleUpFrom is when the workers this period adds start loading: the
	// lead time before its start ("" when it adds none).
	ScaleUpFrom string `json:"scale_up_from,omitempty"`

	workers []int
}

// DayPlan is the deployment planned period by period through a day, as an
// autoscaler would run it: the peak's best shape (GPU, tp, chunk budget,
// link), its workers per pool sized for each period's rate, every worker a
// period needs up and warm a lead time before the period starts.
type DayPlan struct {
	Profile   string           `json:"profile"`
	Peak      string           `json:"peak"` // the start of the peak period
	Schedule  []SchedulePeriod `json:"schedule"`
	LeadTime  LeadTime         `json:"scale_up_lead_time"`
	USDPerDay *float64         `json:"usd_per_day"` // the schedule's, lead times included
	// USDPerDayStaticPeak is the peak's deployment all day.
	USDPerDayStaticPeak *float64 `json:"usd_per_day_static_peak"`
	Saving              *float64 `json:"saving"` // 1 − usd_per_day / usd_per_day_static_peak
	Notes               []string `json:"notes,omitempty"`
}

// PlanDay plans a day's traffic (q.Profile): the search at the peak period's
// rate, then the best's shape sized for every period. The result is the
// peak's search with the day plan in Result.DayPlan; when nothing meets the
// SLO at the peak, it is nil and the verdict names the peak period.
func PlanDay(q Query, p *workload.Profile) (*Result, error) {
	if p == nil || len(p.Periods) == 0 {
		return nil, fmt.Errorf("no rate profile")
	}
	if q.GPUs > 0 {
		return nil, fmt.Errorf("a rate profile plans each period's rate: give it without --gpus")
	}
	peak := p.Peak()
	q.RatePerS = p.Periods[peak].RatePerS
	res, err := Search(q)
	if err != nil {
		return nil, err
	}
	if err := q.Check(); err != nil { // the query as Search saw it, defaults filled
		return nil, err
	}
	if res.Best == nil {
		res.Verdict = fmt.Sprintf("the peak period, %s at %.4g requests/s, has no deployment that meets the SLO: %s", p.Periods[peak].Start(), q.RatePerS, res.Verdict)
		return res, nil
	}
	res.DayPlan = q.planDay(res.Best, p, peak)
	return res, nil
}

// planDay sizes best's shape for every period and prices the day.
func (q *Query) planDay(best *Candidate, p *workload.Profile, peak int) *DayPlan {
	s := best.shape
	d := &DayPlan{Profile: p.Source, Peak: p.Periods[peak].Start(), LeadTime: q.leadTime(s)}
	priced := map[string]*Candidate{}
	priceOf := func(ws []int, rate float64) *Candidate {
		key := fmt.Sprint(ws)
		if c, ok := priced[key]; ok {
			return c
		}
		c := q.candidate(s, q.evaluate(s, ws, rate))
		priced[key] = c
		return c
	}
	for i, per := range p.Periods {
		pq := *q
		pq.RatePerS = per.RatePerS
		var c *Candidate
		switch {
		case i == peak:
			c = best
		case per.RatePerS <= 0:
			c = pq.candidate(s, pq.evaluate(s, slices.Repeat([]int{1}, len(s.roles)), 0))
		default:
			c = pq.sizeAtRate(s)
			if c == nil || !c.MeetsSLO {
				c = pq.candidate(s, pq.evaluate(s, best.load.workers, per.RatePerS))
				d.Notes = append(d.Notes, fmt.Sprintf("%s: no smaller size of the shape meets the SLO at %.4g requests/s; the peak's workers are kept", per.Start(), per.RatePerS))
			}
		}
		sp := SchedulePeriod{Start: per.Start(), LengthS: p.LengthS(i), RatePerS: per.RatePerS, GPUs: c.GPUs, USDPerHour: c.USDPerHour,
			MeetsSLO: c.MeetsSLO, TTFTP95MS: c.TTFTP95MS, ITLP95MS: c.ITLP95MS, TPOTMeanMS: c.TPOTMeanMS, workers: c.load.workers}
		for k, pl := range c.Pools {
			sp.Pools = append(sp.Pools, PoolWorkers{Role: pl.Role, GPU: pl.GPU, TP: pl.TP, Workers: pl.Workers})
			_ = k
		}
		priced[fmt.Sprint(c.load.workers)] = c
		d.Schedule = append(d.Schedule, sp)
	}
	// Scale-ups start a lead time ahead: from start − lead to start, the
	// deployment runs the larger of the two sizes (pool by pool).
	lead := d.LeadTime.S
	n := len(d.Schedule)
	for i := range d.Schedule {
		prev := d.Schedule[(i-1+n)%n]
		if grows(d.Schedule[i].workers, prev.workers) {
			d.Schedule[i].ScaleUpFrom = clockOf(p.Periods[i].StartS - lead)
		}
	}
	usd, known := q.dayCost(d, p, lead, priceOf)
	peakUSD := best.USDPerHour
	if known && peakUSD != nil {
		static := *peakUSD * 24
		d.USDPerDay, d.USDPerDayStaticPeak = &usd, &static
		if static > 0 {
			saving := 1 - usd/static
			d.Saving = &saving
		}
	}
	if lead > 0 {
		for i := range p.Periods {
			if d.Schedule[i].LengthS < lead {
				d.Notes = append(d.Notes, fmt.Sprintf("the period at %s (%.0f s) is shorter than the %.0f s a worker takes to start: the schedule cannot follow it", d.Schedule[i].Start, d.Schedule[i].LengthS, lead))
				break
			}
		}
	}
	return d
}

// grows reports whether a needs more workers than b in some pool.
func grows(a, b []int) bool {
	for i := range a {
		if a[i] > b[i] {
			return true
		}
	}
	return false
}

// clockOf formats seconds into the day, wrapped to [0, 24 h).
func clockOf(s float64) string {
	s = math.Mod(s, workload.DaySeconds)
	if s < 0 {
		s += workload.DaySeconds
	}
	return workload.Period{StartS: s}.Start()
}

// dayCost adds up the day: over every stretch between period starts and
// lead-time marks, the deployment runs, pool by pool, the most workers of
// its own period and of every period starting within a lead time after it;
// each stretch is priced at that size.
func (q *Query) dayCost(d *DayPlan, p *workload.Profile, lead float64, priceOf func([]int, float64) *Candidate) (float64, bool) {
	day := float64(workload.DaySeconds)
	t0 := p.Periods[0].StartS
	marks := []float64{t0, t0 + day}
	for _, per := range p.Periods {
		for _, t := range []float64{per.StartS, per.StartS - lead} {
			for t < t0 {
				t += day
			}
			for t >= t0+day {
				t -= day
			}
			marks = append(marks, t)
		}
	}
	slices.Sort(marks)
	marks = slices.Compact(marks)
	// period(t) is the index of the period running at t (t in [t0, t0 + day)).
	period := func(t float64) int {
		i := 0
		for j, per := range p.Periods {
			if per.StartS <= t {
				i = j
			}
		}
		return i
	}
	usd := 0.0
	for k := 0; k+1 < len(marks); k++ {
		a, b := marks[k], marks[k+1]
		if b <= a {
			continue
		}
		m := (a + b) / 2
		i := period(m)
		ws := slices.Clone(d.Schedule[i].workers)
		rate := p.Periods[i].RatePerS
		for j, per := range p.Periods {
			start := per.StartS
			for start <= m {
				start += day
			}
			if start-m <= lead {
				for r := range ws {
					ws[r] = max(ws[r], d.Schedule[j].workers[r])
				}
				rate = math.Max(rate, per.RatePerS)
			}
		}
		c := priceOf(ws, rate)
		if c.USDPerHour == nil {
			return 0, false
		}
		usd += *c.USDPerHour * (b - a) / 3600
	}
	return usd, true
}

// leadTime is a worker's start-up: its weights per rank over the storage
// link (each rank its share of a node-wide link) and the engine's warm-up,
// or the lead time given.
func (q *Query) leadTime(s *shape) LeadTime {
	if q.ScaleUpLeadS > 0 {
		return LeadTime{S: q.ScaleUpLeadS, Source: "--scale-up-lead"}
	}
	lt := LeadTime{LoadBytesPerS: DefaultLoadBytesPerS, WarmupS: DefaultWarmupS,
		Source: "weights per rank at the median 1.00 GiB/s a rank loaded them in 59 vLLM 0.19 start-ups, then their median 25.7 s of profiling and warm-up (llm-d-planner logs)"}
	var worst float64
	for _, r := range s.roles {
		if r.memory == nil {
			continue
		}
		rate := float64(DefaultLoadBytesPerS)
		if l := q.StorageLink; l != nil {
			rate = l.EffectiveBytesPerS
			if l.RatePer != "gpu" {
				rate /= float64(r.tp) // the ranks of a worker share their node's link
			}
		}
		if t := float64(r.memory.WeightsBytes) / rate; t >= worst {
			worst, lt.WeightsBytesPerRank, lt.LoadBytesPerS = t, r.memory.WeightsBytes, rate
		}
	}
	if l := q.StorageLink; l != nil {
		lt.Source = fmt.Sprintf("weights per rank over %s (%s per %s), then the median 25.7 s of profiling and warm-up of 59 vLLM 0.19 start-ups (llm-d-planner logs)", l.Name, strings.TrimSpace(fmt.Sprintf("%.4g GB/s", l.EffectiveBytesPerS/1e9)), l.RatePer)
	}
	lt.LoadS = worst
	lt.S = lt.LoadS + lt.WarmupS
	return lt
}
