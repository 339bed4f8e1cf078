package capacity

import (
	"fmt"
	"math"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/slo"
)

// Load sources of a DisaggAtLoad.
const (
	LoadFromRate        = "request_rate"
	LoadFromConcurrency = "concurrency"
)

// disaggAtLoad compares the disaggregated shape s, with workers per role,
// at rate requests per second with the same GPUs serving aggregated (the
// decode GPU at the decode tp, as many workers as the GPUs make): mean ITL
// each way, the decode time the split frees per request, and the transfer
// at that load. Both are held to stability only: which one meets an SLO is
// kvplan plan's question.
func (q *Query) disaggAtLoad(s *shape, workers []int, rate float64, source string) (*planner.DisaggAtLoad, error) {
	st := *q
	st.SLO, st.TTFTP95MS, st.ITLP95MS = slo.SLO{}, 0, 0 // stability only
	d := s.roles[1]
	a := &planner.DisaggAtLoad{RequestsPerS: rate, LoadSource: source, AggWorkers: max(1, s.gpus(workers)/d.gpus)}
	split := st.evaluate(s, workers, rate)
	ar, err := st.newRoleFor(roleAggregated, s.model, d.gpu, d.par, 0, "", s.kvDtype)
	if err != nil {
		return nil, err
	}
	agg := &shape{mode: ModeAggregated, weightDtype: s.weightDtype, kvDtype: s.kvDtype, model: s.model, roles: []*role{ar}, kv: s.kv}
	whole := st.evaluate(agg, []int{a.AggWorkers}, rate)
	a.DisaggCarries, a.AggCarries = split.ok, whole.ok
	if split.ok {
		a.ITLDisaggMS, a.TTFTDisaggP95MS, a.TransferMS = split.itlMeanMS, split.ttftP95MS, split.transfer.meanMS
	}
	if whole.ok {
		a.ITLAggMS, a.TTFTAggP95MS = whole.itlMeanMS, whole.ttftP95MS
	}
	if split.ok && whole.ok {
		// A split that decodes no faster frees nothing (its decode worker
		// carries the whole load alone, so its batch can even be larger).
		a.DecodeStallFreedMS = math.Max(0, float64(q.OutputTokens-1)*(a.ITLAggMS-a.ITLDisaggMS))
		a.TransferExceedsGain = a.TransferMS >= a.DecodeStallFreedMS
	}
	a.Note = fmt.Sprintf("aggregated: %d × %s %s with the engine's default chunk budget; the gain counted is decode time only (sizing the pools apart is kvplan plan's question)",
		a.AggWorkers, d.par, d.gpu.Name)
	return a, nil
}

// DisaggAtLoad compares the split of sc (one prefill and one decode worker)
// with the same GPUs serving aggregated at a load: ratePerS requests per
// second, or, when it is 0, sc.Concurrency requests kept in flight, whose
// rate follows by Little's law (rate = concurrency / (TTFT + (output − 1) ×
// ITL), solved by fixed-point iteration).
func DisaggAtLoad(sc planner.DisaggScenario, engine *catalog.Engine, ratePerS float64, em EngineModel) (*planner.DisaggAtLoad, error) {
	switch {
	case sc.Model == nil || sc.Link == nil || sc.PrefillGPU == nil || sc.DecodeGPU == nil || engine == nil:
		return nil, fmt.Errorf("the comparison at a load needs a model, a link, both GPUs and an engine")
	case sc.OutputTokens < 1:
		return nil, fmt.Errorf("the comparison at a load needs at least one output token")
	}
	q := &Query{Model: sc.Model, Engine: engine, InputTokens: sc.InputTokens, OutputTokens: sc.OutputTokens,
		Path: sc.Path, Timers: em.Timers, Pricing: PricingOnDemand,
		SeparatePrefill: em.separate(engine.Name)}
	dtp := sc.DecodeTP
	if dtp == 0 {
		dtp = sc.TP
	}
	p, err := q.newRole(rolePrefill, sc.Model, sc.PrefillGPU, max(1, sc.TP), 0, "", sc.KVDtype)
	if err != nil {
		return nil, err
	}
	d, err := q.newRole(roleDecode, sc.Model, sc.DecodeGPU, max(1, dtp), 0, "", sc.KVDtype)
	if err != nil {
		return nil, err
	}
	kv, err := models.NewKV(sc.Model, models.KVOptions{KVDtype: sc.KVDtype, TP: max(1, sc.TP)})
	if err != nil {
		return nil, err
	}
	s := &shape{mode: ModeDisaggregated, weightDtype: sc.Model.WeightDtype, kvDtype: kv.KVDtype, model: sc.Model, link: sc.Link,
		roles: []*role{p, d}, kv: kv}
	for _, r := range s.roles {
		if !r.fits {
			return nil, fmt.Errorf("%s", r.memoryWhy)
		}
	}
	workers := []int{1, 1}
	source := LoadFromRate
	if ratePerS <= 0 {
		source = LoadFromConcurrency
		ratePerS, err = q.rateOfConcurrency(s, workers, max(1, sc.Concurrency))
		if err != nil {
			return nil, err
		}
	}
	return q.disaggAtLoad(s, workers, ratePerS, source)
}

// rateOfConcurrency is the rate at which c requests are in flight on s,
// by Little's law: c = rate × (mean TTFT + (output − 1) × mean ITL).
func (q *Query) rateOfConcurrency(s *shape, workers []int, c int) (float64, error) {
	st := *q
	st.SLO, st.TTFTP95MS, st.ITLP95MS = slo.SLO{}, 0, 0 // stability only
	lo, hi := 0.0, 0.0
	inFlight := func(rate float64) float64 {
		e := st.evaluate(s, workers, rate)
		if !e.ok {
			return float64(c) + 1 // beyond saturation: more than c in flight
		}
		return rate * (e.ttftMeanMS + float64(q.OutputTokens-1)*e.itlMeanMS) / 1000
	}
	hi = 1e-3
	for inFlight(hi) < float64(c) {
		lo, hi = hi, hi*2
		if hi > maxRate {
			return 0, fmt.Errorf("no rate puts %d requests in flight", c)
		}
	}
	for range 50 {
		mid := (lo + hi) / 2
		if inFlight(mid) < float64(c) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// SizeAtLoad answers `kvplan disagg --rate` as `kvplan plan` answers for
// the same GPUs: it sizes the split (prefill workers on the prefill GPU at
// sc.TP, decode workers on the decode GPU at the decode tp) and the
// aggregated pool (workers on the decode GPU at the decode tp, the engine's
// default chunk budget) to serve ratePerS within the SLO (a 0 objective is
// none: stability only), each with plan's own sizing (the fewest workers,
// then the cheapest split), and compares them. Their figures are those of
// plan's candidates of the same shapes.
func SizeAtLoad(sc planner.DisaggScenario, engine *catalog.Engine, ratePerS, ttftP95MS, itlP95MS float64, em EngineModel) (*planner.DisaggAtLoad, error) {
	switch {
	case sc.Model == nil || sc.Link == nil || sc.PrefillGPU == nil || sc.DecodeGPU == nil || engine == nil:
		return nil, fmt.Errorf("the comparison at a load needs a model, a link, both GPUs and an engine")
	case sc.OutputTokens < 1 || sc.InputTokens < 1:
		return nil, fmt.Errorf("the comparison at a load needs at least one input and one output token")
	case !(ratePerS > 0) || ratePerS > maxRate:
		return nil, fmt.Errorf("rate %g requests/s: must be above 0 and at most %d", ratePerS, maxRate)
	}
	target := slo.SLO{TTFTMS: max(0, ttftP95MS), ITLMS: max(0, itlP95MS)} // 0 = no such target, as in a plan file's [slo]
	target.Normalize()
	sloName := target.String()
	if target.Empty() {
		sloName = "" // stability only
	}
	q := &Query{Model: sc.Model, Engine: engine, InputTokens: sc.InputTokens, OutputTokens: sc.OutputTokens, RatePerS: ratePerS,
		SLO: target, TTFTP95MS: target.TTFTMS, ITLP95MS: target.ITLMS, Path: sc.Path, Timers: em.Timers, Pricing: PricingOnDemand,
		SeparatePrefill: em.separate(engine.Name)}
	dtp := sc.DecodeTP
	if dtp == 0 {
		dtp = sc.TP
	}
	p, err := q.newRole(rolePrefill, sc.Model, sc.PrefillGPU, max(1, sc.TP), 0, "", sc.KVDtype)
	if err != nil {
		return nil, err
	}
	d, err := q.newRole(roleDecode, sc.Model, sc.DecodeGPU, max(1, dtp), 0, "", sc.KVDtype)
	if err != nil {
		return nil, err
	}
	ar, err := q.newRole(roleAggregated, sc.Model, sc.DecodeGPU, max(1, dtp), 0, "", sc.KVDtype)
	if err != nil {
		return nil, err
	}
	kv, err := models.NewKV(sc.Model, models.KVOptions{KVDtype: sc.KVDtype, TP: max(1, sc.TP)})
	if err != nil {
		return nil, err
	}
	split := &shape{mode: ModeDisaggregated, weightDtype: sc.Model.WeightDtype, kvDtype: kv.KVDtype, model: sc.Model, link: sc.Link,
		roles: []*role{p, d}, kv: kv}
	agg := &shape{mode: ModeAggregated, weightDtype: sc.Model.WeightDtype, kvDtype: kv.KVDtype, model: sc.Model, roles: []*role{ar}, kv: kv}
	cs, ca := q.sizeAtRate(split), q.sizeAtRate(agg)
	if cs == nil || ca == nil {
		return nil, fmt.Errorf("no worker count of these GPUs can be sized (more than %d GPUs per role)", maxWorkers)
	}
	a := &planner.DisaggAtLoad{RequestsPerS: ratePerS, LoadSource: LoadFromRate, AggWorkers: ca.Pools[0].Workers,
		Split: atLoad(q, cs, sloName), Aggregated: atLoad(q, ca, sloName), AggCarries: ca.MeetsSLO, DisaggCarries: cs.MeetsSLO}
	if cs.MeetsSLO {
		a.ITLDisaggMS, a.TTFTDisaggP95MS, a.TransferMS = cs.ITLMeanMS, cs.TTFTP95MS, cs.TransferMS
	}
	if ca.MeetsSLO {
		a.ITLAggMS, a.TTFTAggP95MS = ca.ITLMeanMS, ca.TTFTP95MS
	}
	if cs.MeetsSLO && ca.MeetsSLO {
		a.DecodeStallFreedMS = math.Max(0, float64(q.OutputTokens-1)*(a.ITLAggMS-a.ITLDisaggMS))
		a.TransferExceedsGain = a.TransferMS >= a.DecodeStallFreedMS
	}
	a.Note = "each side sized as kvplan plan sizes it: the fewest workers (the split: the cheapest prefill and decode counts) that carry the rate within " +
		map[bool]string{true: "the SLO given", false: "stability alone (no --ttft-p95 or --itl-p95)"}[sloName != ""] +
		"; aggregated on the decode GPU at the decode tp with the engine's default chunk budget (kvplan plan also tries smaller chunks and other tp)"
	return a, nil
}
