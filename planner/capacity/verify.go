package capacity

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/sim"
	"github.com/kvplan/kvplan/slo"
	"github.com/kvplan/kvplan/units"
)

// DisagreeAbove is the relative difference between the analytic and the
// simulated figure above which a candidate's figures are said to disagree.
const DisagreeAbove = 0.20

// simPolicy routes the simulated requests without prefix reuse; with
// prefixes, kv-aware routing (Dynamo's KV router) keeps them apart.
var simPolicy = "round-robin"

// SimulatedWithin is how far a simulated figure may be beyond its target
// and still count as met, when the analytic figure meets it: 10% (of the
// share allowed to miss, for goodput).
const SimulatedWithin = 0.10

// moreVerified bounds the candidates Verify simulates past the first n
// when none of those meets every target in the simulation.
const moreVerified = 8

// Verify runs the timed simulator (sim) on the first n candidates that meet
// the SLO and on the best of each mode, at the candidate's rate, with the
// query's arrivals (Poisson, gamma with its burstiness, or the trace's
// times) and its workload (every request the same, or the lengths
// replayed), seeded, through the same step-time models, and records both
// figures. Percentiles come from every simulated request (TTFT, TPOT, E2E)
// and every gap between tokens (ITL), nearest-rank, the frontend overhead
// the simulator leaves out added. A simulated candidate meets the SLO when
// each target is met, a figure within 10% beyond its target counting as met
// (the analytic one meets it). When the best does not, the best becomes the
// next candidate that meets every target in both, simulating up to 8 more
// to find one; when none does, the best stays and a note says so.
//
// The replay is bounded by cost, so that every flag value kvplan accepts
// verifies in seconds (--gpus 100,000 took 49.5 s and 21.5 GB): a pool of
// more than maxSimWorkers workers is replayed as a sample of identical
// workers at the rate that gives each the same load (sample), and the
// requests of all candidates together carry at most maxVerifyTokens tokens.
// Both are said in res.Notes when they apply.
func (q *Query) Verify(res *Result, n, requests int, seed uint64) error {
	if n <= 0 {
		return nil
	}
	var todo []*Candidate
	for _, c := range res.Candidates {
		if len(todo) >= n {
			break
		}
		if c.MeetsSLO {
			todo = append(todo, c)
		}
	}
	// The best of each mode too, so the side-by-side comparison has both figures.
	for _, c := range []*Candidate{res.BestAggregated, res.BestDisaggregated} {
		if c != nil && c.Simulated == nil && !slices.Contains(todo, c) {
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	perRequest := q.meanRequestTokens()
	if most := int(float64(maxVerifyTokens) / float64(len(todo)) / perRequest); most < requests {
		requests = max(minVerifyRequests, most)
		res.Notes = append(res.Notes, fmt.Sprintf("the timed simulator replayed %s requests a candidate: %d candidates × %s tokens a request is at most %s tokens, the most one verification replays",
			units.Thousands(int64(requests)), len(todo), units.Thousands(int64(perRequest)), units.Thousands(int64(maxVerifyTokens))))
	}
	for _, c := range todo {
		if err := q.verifyOne(res, c, requests, seed); err != nil {
			return err
		}
	}
	if res.Best == nil || res.Best.Simulated == nil || res.Best.Simulated.MeetsSLO {
		return nil
	}
	if res.Question == QuestionMaxRate {
		// The highest rate is where the analytic figures touch a target;
		// where the simulation misses there, the same deployment at the
		// rate the simulation verifies is the answer.
		ok, err := q.backOff(res, res.Best, requests, seed)
		if err != nil || ok {
			return err
		}
	}
	// The best misses a target in the simulation: the next that meets
	// every one in both, simulating more when none of those simulated does.
	first := res.Best
	extra := 0
	for _, c := range res.Candidates {
		if !c.MeetsSLO {
			continue
		}
		if c.Simulated == nil {
			if extra >= moreVerified {
				break
			}
			extra++
			if err := q.verifyOne(res, c, requests, seed); err != nil {
				return err
			}
		}
		if c.Simulated != nil && c.Simulated.MeetsSLO {
			res.Best = c
			break
		}
	}
	if res.Best == first {
		res.Notes = append(res.Notes, fmt.Sprintf("the best, %s, misses in the simulation: %s; no other candidate simulated meets every target in both (simulated within %.0f%%): treat the plan as at its limit",
			first.Describe(), first.Simulated.Misses, SimulatedWithin*100))
		return nil
	}
	res.Notes = append(res.Notes, fmt.Sprintf("the analytic best, %s, misses in the simulation (%s): the best is the next candidate that meets every target in both, %s",
		first.Describe(), first.Simulated.Misses, res.Best.Describe()))
	res.Verdict = q.verdict(res)
	return nil
}

// verifyOne simulates c (every worker, or a sample of identical ones) and
// records the figures; res.Notes says when it sampled or could not.
func (q *Query) verifyOne(res *Result, c *Candidate, requests int, seed uint64) error {
	smp, why := q.sample(c)
	if why != "" {
		res.Notes = append(res.Notes, fmt.Sprintf("%s is not simulated: %s", c.Describe(), why))
		return nil
	}
	sv, err := q.simulate(c, smp, requests, seed)
	if err != nil {
		return fmt.Errorf("simulate %s: %w", c.Describe(), err)
	}
	if smp.note != "" {
		res.Notes = append(res.Notes, fmt.Sprintf("%s: %s", c.Describe(), smp.note))
	}
	c.Simulated = sv
	return nil
}

// The bounds of a verification's cost. A worker of the timed simulator
// holds its own cache tables and batch, so memory and time grow with the
// workers (1,000 workers took 1.6 GB); its time grows with the tokens of
// the requests (about 20 million tokens/s on this project's machine, busy).
var (
	maxSimWorkers   = 64          // workers of one replayed candidate, both roles together
	maxVerifyTokens = 100_000_000 // requests × (input + output tokens), all candidates together
)

const minVerifyRequests = 20 // requests a candidate replays however long they are

// sample is what the simulator replays of a candidate: every worker, or a
// sample of identical workers with the rate scaled so that each worker
// gets the load it gets in the whole pool.
type sample struct {
	workers  []int // per role
	rate     float64
	prefixes int // distinct prefixes (q.Prefixes), scaled with the workers that cache them
	sampled  bool
	note     string
}

// sample picks the workers to replay c on, or says why c cannot be
// replayed within maxSimWorkers.
func (q *Query) sample(c *Candidate) (sample, string) {
	e := c.load
	all := 0
	for _, n := range e.workers {
		all += n
	}
	if all <= maxSimWorkers {
		return sample{workers: e.workers, rate: e.rate, prefixes: q.Prefixes}, ""
	}
	var smp sample
	if len(e.workers) == 1 {
		n := e.workers[0]
		smp = sample{workers: []int{maxSimWorkers}, rate: e.rate * float64(maxSimWorkers) / float64(n)}
	} else {
		// Prefill exact (rate' / P' = rate / P), decode as close as the
		// sample allows: the P' and D' with P' + D' ≤ maxSimWorkers whose
		// decode load is nearest, the larger sample on a tie.
		p, d := e.workers[0], e.workers[1]
		bestErr := math.Inf(1)
		for ps := 1; ps < maxSimWorkers; ps++ {
			ds := int(math.Round(float64(ps) * float64(d) / float64(p)))
			if ds < 1 || ps+ds > maxSimWorkers {
				continue
			}
			if err := math.Abs(float64(d*ps)/float64(p*ds) - 1); err <= bestErr {
				bestErr, smp.workers = err, []int{ps, ds}
			}
		}
		if smp.workers == nil || bestErr > maxSampleLoadError {
			return sample{}, fmt.Sprintf("%d prefill and %d decode workers have no sample of at most %d workers whose every worker gets the load it gets in the whole deployment (within %.0f%%)",
				p, d, maxSimWorkers, maxSampleLoadError*100)
		}
		smp.rate = e.rate * float64(smp.workers[0]) / float64(p)
	}
	frac := smp.rate / e.rate
	if q.Prefixes > 0 {
		smp.prefixes = max(1, int(math.Round(float64(q.Prefixes)*frac)))
	}
	smp.sampled = true
	desc := make([]string, len(e.workers))
	for i := range e.workers {
		desc[i] = fmt.Sprintf("%s of %s", units.Thousands(int64(smp.workers[i])), units.Thousands(int64(e.workers[i])))
	}
	smp.note = fmt.Sprintf("the timed simulator replayed a sample of identical workers (%s) at %.4g requests/s, so that each gets the load it gets in the whole pool; at most %d workers are replayed",
		strings.Join(desc, " and "), smp.rate, maxSimWorkers)
	if q.Prefixes > 0 {
		smp.note += fmt.Sprintf(", and %s of the %s prefixes", units.Thousands(int64(smp.prefixes)), units.Thousands(int64(q.Prefixes)))
	}
	return smp, ""
}

// maxSampleLoadError bounds how far a sampled decode worker's load may be
// from the whole deployment's.
const maxSampleLoadError = 0.05

// observed collects the simulated requests and gaps.
type observed struct {
	ttft, tpot, e2e []float64
	gaps            []gap
	gapN            float64
	gapSum          float64
	request         perf.RequestCost // what each request pays before its worker (Query.Path)
	perTTFT         float64          // per-request targets, for goodput (0 = none)
	perTPOT         float64
	perE2E          float64
	good            int
}

type gap struct {
	ms float64
	n  float64
}

func (o *observed) Request(r sim.RequestTiming) {
	req := o.request.MS(float64(r.InputTokens))
	ttft, e2e := r.TTFTMS+req, r.E2EMS+req
	o.ttft = append(o.ttft, ttft)
	o.e2e = append(o.e2e, e2e)
	tpot := r.TPOTMS()
	if r.OutputTokens >= 2 {
		o.tpot = append(o.tpot, tpot)
	}
	if (o.perTTFT == 0 || ttft <= o.perTTFT) && (o.perTPOT == 0 || tpot <= o.perTPOT) && (o.perE2E == 0 || e2e <= o.perE2E) {
		o.good++
	}
}

func (o *observed) Gaps(ms float64, n int) {
	o.gaps = append(o.gaps, gap{ms, float64(n)})
	o.gapN += float64(n)
	o.gapSum += ms * float64(n)
}

// rank is the nearest-rank q-percentile of vs (sorted).
func rank(vs []float64, q float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	return vs[min(len(vs), max(1, int(math.Ceil(q*float64(len(vs))))))-1]
}

// gapRank is the nearest-rank q-percentile of the gaps (sorted), each
// counted as many times as it occurred.
func gapRank(gs []gap, total, q float64) float64 {
	want := math.Ceil(q * total)
	c := 0.0
	for _, g := range gs {
		c += g.n
		if c >= want {
			return g.ms
		}
	}
	if len(gs) == 0 {
		return 0
	}
	return gs[len(gs)-1].ms
}

func (q *Query) simulate(c *Candidate, smp sample, requests int, seed uint64) (*Simulated, error) {
	s, e := c.shape, c.load
	block := s.roles[0].block
	var src sim.Source
	over := 0
	if q.Workload != nil {
		var err error
		if src, over, err = q.replay(block, requests, smp.rate); err != nil {
			return nil, err
		}
	} else {
		syn := sim.Synthetic{Prefixes: requests, PrefixTokens: q.InputTokens, Repeats: 1, TailTokens: q.InputTokens,
			OutputTokens: q.OutputTokens, BlockSize: block, Seed: seed}
		switch {
		case q.CachedFraction > 0:
			shared := int(math.Round(q.CachedFraction * float64(q.InputTokens)))
			syn.Prefixes, syn.Repeats, syn.TailTokens = 1, requests, q.InputTokens-shared
		case q.Prefixes > 0:
			syn.Prefixes, syn.Repeats = smp.prefixes, max(1, requests/smp.prefixes)
			syn.TailTokens = q.InputTokens - q.PrefixTokens
		}
		var err error
		if src, err = syn.Open(); err != nil {
			return nil, err
		}
	}
	first := s.roles[0]
	cfg := sim.DefaultConfig()
	cfg.Workers, cfg.BlockSize, cfg.Policy, cfg.Seed, cfg.RatePerS = smp.workers[0], block, q.routerPolicy(), seed, smp.rate
	if q.TraceArrivals {
		cfg.RatePerS = 0 // the replay's times, at the candidate's rate
	} else if q.Burstiness > 0 {
		cfg.Burstiness = q.Burstiness
	}
	cfg.CapacityBlocks = int(first.slots / int64(block))
	obs := &observed{request: q.requestCost(first)}
	obs.perTTFT, obs.perTPOT, obs.perE2E = q.SLO.PerRequest()
	// A worker of data-parallel ranks schedules each rank's budget and
	// sequences: the whole worker's are dp times the engine's arguments.
	eng := &sim.Engine{Step: first.timer, MaxNumBatchedTokens: first.workerBudget(), MaxNumSeqs: first.workerSeqs(), Observer: obs}
	note := ""
	if s.mode == ModeDisaggregated {
		d := s.roles[1]
		eng.DecodeWorkers, eng.DecodeStep = smp.workers[1], d.timer
		eng.DecodeCapacityBlocks = int(d.slots / int64(block))
		eng.DecodeMaxNumBatchedTokens, eng.DecodeMaxNumSeqs = d.workerBudget(), d.workerSeqs()
		t := e.transfer
		// One path per worker pair, as the analytic model has: a transfer
		// shares only its decode worker's path.
		pairs := t.pairs
		if smp.sampled {
			pairs = max(1, min(smp.workers[0], smp.workers[1]))
		}
		eng.Link = sim.Link{BytesPerS: s.link.EffectiveBytesPerS, LatencyMS: s.link.LatencyMS,
			BytesPerToken: float64(t.pathBytes) / float64(q.InputTokens), Dedicated: !s.link.Shared, Paths: pairs}
		if pairs < smp.workers[1] {
			note = fmt.Sprintf("decode worker i receives over path i mod %d, one path a worker pair", pairs)
		}
	}
	cfg.Engine = eng
	r, err := sim.Run(src, cfg)
	if err != nil {
		return nil, err
	}
	if r.Timing == nil {
		return nil, fmt.Errorf("the simulator returned no timing")
	}
	tm := r.Timing
	slices.Sort(obs.ttft)
	slices.Sort(obs.tpot)
	slices.Sort(obs.e2e)
	slices.SortFunc(obs.gaps, func(a, b gap) int { return cmpFloat(a.ms, b.ms) })
	sv := &Simulated{Requests: tm.Completed, Rejected: tm.Rejected, OverContext: over, Note: note,
		SampledWorkers: sampledWorkers(smp), SampleRatePerS: sampleRate(smp),
		TTFTP50MS: rank(obs.ttft, 0.5), TTFTP90MS: rank(obs.ttft, 0.9), TTFTP95MS: rank(obs.ttft, 0.95), TTFTP99MS: rank(obs.ttft, 0.99),
		ITLP50MS: gapRank(obs.gaps, obs.gapN, 0.5), ITLP90MS: gapRank(obs.gaps, obs.gapN, 0.9),
		ITLP95MS: gapRank(obs.gaps, obs.gapN, 0.95), ITLP99MS: gapRank(obs.gaps, obs.gapN, 0.99),
		TPOTMeanMS: tm.TPOTMS.Mean, TPOTP90MS: rank(obs.tpot, 0.9), TPOTP99MS: rank(obs.tpot, 0.99),
		E2EP95MS: rank(obs.e2e, 0.95), TransferMeanMS: tm.TransferMS.Mean}
	if obs.gapN > 0 {
		sv.ITLMeanMS = obs.gapSum / obs.gapN
	}
	if obs.perTTFT > 0 || obs.perTPOT > 0 || obs.perE2E > 0 {
		g := 0.0
		if n := len(obs.ttft); n > 0 {
			g = float64(obs.good) / float64(n)
		}
		sv.Goodput = &g
	}
	sv.TTFTDiff = relDiff(c.TTFTP95MS, sv.TTFTP95MS)
	sv.ITLDiff = relDiff(c.ITLMeanMS, sv.ITLMeanMS)
	sv.Disagree = math.Abs(sv.TTFTDiff) > DisagreeAbove || math.Abs(sv.ITLDiff) > DisagreeAbove
	sv.MeetsSLO, sv.Misses = q.simulatedMeets(c, sv)
	return sv, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// simulatedMeets checks every target against the simulated figure: met
// when within it, or within 10% beyond it while the analytic figure meets
// it (for goodput, 10% more of the requests missing than the target
// allows).
func (q *Query) simulatedMeets(c *Candidate, sv *Simulated) (bool, string) {
	ok := true
	var misses []string
	for _, g := range q.SLO.Given() {
		v, known := sv.Figure(g.Target)
		if !known {
			continue
		}
		a, _ := c.Figure(g.Target)
		analyticOK := c.MeetsSLO
		var r float64
		if g.Metric == slo.Goodput {
			r = (1 - v) / math.Max(1-g.Value, 1e-9)
		} else {
			r = v / g.Value
		}
		if r <= 1 || analyticOK && r <= 1+SimulatedWithin {
			continue
		}
		ok = false
		if g.Metric == slo.Goodput {
			misses = append(misses, fmt.Sprintf("goodput %.1f%% simulated < %.4g%% (analytic %.1f%%)", v*100, g.Value*100, a*100))
		} else {
			misses = append(misses, fmt.Sprintf("%s %.4g ms simulated > %.4g ms (analytic %.4g ms)", g.Label(), v, g.Value, a))
		}
	}
	return ok, strings.Join(misses, "; ")
}

// relDiff is (analytic − simulated) / simulated, 0 when both are 0.
func relDiff(analytic, simulated float64) float64 {
	if simulated == 0 {
		if analytic == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return (analytic - simulated) / simulated
}

// routerPolicy is the router the plan assumes: round-robin without prefix
// reuse, Dynamo's KV router with it (it sends a prefix back to the worker
// that holds it).
func (q *Query) routerPolicy() string {
	if q.CachedFraction > 0 || q.Prefixes > 0 || q.PrefixRouting == "kv" {
		return "kv-aware"
	}
	return simPolicy
}

// meanRequestTokens is a request's input and output tokens on average:
// the query's lengths, or its workload's mean when the query was not
// checked (Check sets the lengths from the workload); at least 1.
func (q *Query) meanRequestTokens() float64 {
	n := float64(q.InputTokens + q.OutputTokens)
	if w := q.Workload; n < 1 && w != nil && len(w.Requests) > 0 {
		sum := 0.0
		for _, r := range w.Requests {
			sum += float64(r.InputTokens + r.OutputTokens)
		}
		n = sum / float64(len(w.Requests))
	}
	return max(1, n)
}

// sampledWorkers and sampleRate are the sample's figures for JSON: nil and
// 0 (left out) when every worker was replayed.
func sampledWorkers(smp sample) []int {
	if !smp.sampled {
		return nil
	}
	return smp.workers
}

func sampleRate(smp sample) float64 {
	if !smp.sampled {
		return 0
	}
	return smp.rate
}

// backOffSteps bounds the bisection of backOff: the rate it finds is within
// 1/2⁶ of half the analytic rate below the highest one the simulation
// verifies.
const backOffSteps = 6

// backOff is for a question of the highest rate on a number of GPUs whose
// best, c, misses a target in the simulation at its analytic rate (a
// percentile at its edge: ITL p95 meets its target while fewer than 5% of
// the gaps carry a prefill chunk, and in the simulation a few more do). It
// bisects the rate between half of it and it, each rate's analytic figures
// and simulation computed as the search's, and when the simulation meets
// every target at some rate it makes c that rate's candidate and says so.
func (q *Query) backOff(res *Result, c *Candidate, requests int, seed uint64) (bool, error) {
	if c.shape == nil || c.load == nil || c.RatePerS <= 0 {
		return false, nil
	}
	analytic := c.RatePerS
	lo, hi := analytic/2, analytic
	var found *Candidate
	for range backOffSteps {
		mid := (lo + hi) / 2
		t := q.candidateAt(c.shape, c.load.workers, mid)
		if !t.MeetsSLO {
			hi = mid
			continue
		}
		if err := q.verifyOne(&Result{}, t, requests, seed); err != nil {
			return false, err
		}
		if t.Simulated != nil && t.Simulated.MeetsSLO {
			found, lo = t, mid
		} else {
			hi = mid
		}
	}
	if found == nil {
		return false, nil
	}
	misses := c.Simulated.Misses
	if c.Derivation != nil {
		q.explain(found)
	}
	*c = *found
	res.Notes = append(res.Notes, fmt.Sprintf("at the analytic highest rate, %.3g requests/s, %s misses in the simulation (%s): the rate given is the highest the simulation verifies, %.3g requests/s (bisected in %d steps between half the analytic rate and it)",
		analytic, c.Describe(), misses, c.RatePerS, backOffSteps))
	res.Verdict = q.verdict(res)
	return true, nil
}
