package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/kvplan/kvplan/benchresult"
	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/sim"
)

// Figures are a run's figures, measured or predicted: means and
// percentiles in ms, throughputs per second over the whole deployment. A
// nil field is not measured (or not predicted).
type Figures struct {
	TTFTMS    *float64 `json:"ttft_ms,omitempty"`
	TTFTMSP50 *float64 `json:"ttft_ms_p50,omitempty"`
	TTFTMSP90 *float64 `json:"ttft_ms_p90,omitempty"`
	TTFTMSP95 *float64 `json:"ttft_ms_p95,omitempty"`
	TTFTMSP99 *float64 `json:"ttft_ms_p99,omitempty"`
	TPOTMS    *float64 `json:"tpot_ms,omitempty"`
	TPOTMSP50 *float64 `json:"tpot_ms_p50,omitempty"`
	TPOTMSP90 *float64 `json:"tpot_ms_p90,omitempty"`
	TPOTMSP95 *float64 `json:"tpot_ms_p95,omitempty"`
	TPOTMSP99 *float64 `json:"tpot_ms_p99,omitempty"`
	ITLMS     *float64 `json:"itl_ms,omitempty"`
	ITLMSP50  *float64 `json:"itl_ms_p50,omitempty"`
	ITLMSP90  *float64 `json:"itl_ms_p90,omitempty"`
	ITLMSP95  *float64 `json:"itl_ms_p95,omitempty"`
	ITLMSP99  *float64 `json:"itl_ms_p99,omitempty"`
	E2EMS     *float64 `json:"e2e_ms,omitempty"`
	E2EMSP50  *float64 `json:"e2e_ms_p50,omitempty"`
	E2EMSP90  *float64 `json:"e2e_ms_p90,omitempty"`
	E2EMSP95  *float64 `json:"e2e_ms_p95,omitempty"`
	E2EMSP99  *float64 `json:"e2e_ms_p99,omitempty"`

	RequestsPerS     *float64 `json:"requests_per_s,omitempty"`
	OutputTokensPerS *float64 `json:"output_tokens_per_s,omitempty"`
}

// Metric names a figure, as its JSON key and its place.
type Metric struct {
	Key string
	get func(*Figures) **float64
}

// Metrics lists the figures in the order tables show them.
var Metrics = func() []Metric {
	var out []Metric
	add := func(key string, get func(*Figures) **float64) { out = append(out, Metric{key, get}) }
	add("ttft_ms", func(f *Figures) **float64 { return &f.TTFTMS })
	add("ttft_ms_p50", func(f *Figures) **float64 { return &f.TTFTMSP50 })
	add("ttft_ms_p90", func(f *Figures) **float64 { return &f.TTFTMSP90 })
	add("ttft_ms_p95", func(f *Figures) **float64 { return &f.TTFTMSP95 })
	add("ttft_ms_p99", func(f *Figures) **float64 { return &f.TTFTMSP99 })
	add("tpot_ms", func(f *Figures) **float64 { return &f.TPOTMS })
	add("tpot_ms_p50", func(f *Figures) **float64 { return &f.TPOTMSP50 })
	add("tpot_ms_p90", func(f *Figures) **float64 { return &f.TPOTMSP90 })
	add("tpot_ms_p95", func(f *Figures) **float64 { return &f.TPOTMSP95 })
	add("tpot_ms_p99", func(f *Figures) **float64 { return &f.TPOTMSP99 })
	add("itl_ms", func(f *Figures) **float64 { return &f.ITLMS })
	add("itl_ms_p50", func(f *Figures) **float64 { return &f.ITLMSP50 })
	add("itl_ms_p90", func(f *Figures) **float64 { return &f.ITLMSP90 })
	add("itl_ms_p95", func(f *Figures) **float64 { return &f.ITLMSP95 })
	add("itl_ms_p99", func(f *Figures) **float64 { return &f.ITLMSP99 })
	add("e2e_ms", func(f *Figures) **float64 { return &f.E2EMS })
	add("e2e_ms_p50", func(f *Figures) **float64 { return &f.E2EMSP50 })
	add("e2e_ms_p90", func(f *Figures) **float64 { return &f.E2EMSP90 })
	add("e2e_ms_p95", func(f *Figures) **float64 { return &f.E2EMSP95 })
	add("e2e_ms_p99", func(f *Figures) **float64 { return &f.E2EMSP99 })
	add("requests_per_s", func(f *Figures) **float64 { return &f.RequestsPerS })
	add("output_tokens_per_s", func(f *Figures) **float64 { return &f.OutputTokensPerS })
	return out
}()

// Get returns the figure of m, or nil.
func (f *Figures) Get(m Metric) *float64 { return *m.get(f) }

// MeasuredFigures are a run's measured figures, exactly the file's.
func MeasuredFigures(m benchresult.Metrics) Figures {
	var f Figures
	dist := func(d benchresult.Dist, mean, p50, p90, p95, p99 **float64) {
		*mean, *p50, *p90, *p95, *p99 = d.Mean, d.P50, d.P90, d.P95, d.P99
	}
	dist(m.TTFT, &f.TTFTMS, &f.TTFTMSP50, &f.TTFTMSP90, &f.TTFTMSP95, &f.TTFTMSP99)
	dist(m.TPOT, &f.TPOTMS, &f.TPOTMSP50, &f.TPOTMSP90, &f.TPOTMSP95, &f.TPOTMSP99)
	dist(m.ITL, &f.ITLMS, &f.ITLMSP50, &f.ITLMSP90, &f.ITLMSP95, &f.ITLMSP99)
	dist(m.E2E, &f.E2EMS, &f.E2EMSP50, &f.E2EMSP90, &f.E2EMSP95, &f.E2EMSP99)
	f.RequestsPerS, f.OutputTokensPerS = m.RequestsPerS, m.OutputTokensPerS
	return f
}

// Only keeps the figures of f that other has.
func (f Figures) Only(other Figures) Figures {
	var out Figures
	for _, m := range Metrics {
		if other.Get(m) != nil {
			*m.get(&out) = f.Get(m)
		}
	}
	return out
}

// ErrorAgainst is predicted / measured − 1 for every figure both have.
func (f Figures) ErrorAgainst(measured Figures) Figures {
	var out Figures
	for _, m := range Metrics {
		p, ms := f.Get(m), measured.Get(m)
		if p != nil && ms != nil && *ms != 0 {
			*m.get(&out) = ptr(*p / *ms - 1)
		}
	}
	return out
}

func ptr(v float64) *float64 { return &v }

// finite returns v as a figure, or nil when it is not a finite number
// (a prediction with no steady state).
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Methods of prediction (Prediction.Method).
const (
	MethodClosedLoop = "perf closed loop" // kvplan perf's iteration-by-iteration replay (perf.Model.Steady, via planner.PlanPerf)
	MethodTimedSim   = "timed simulator"  // kvplan simulate's timed engine (package sim), every request of the run
	seedSalt         = 0x6b7670_6c616e_24 // the arrival draws' stream
)

// Prediction is what kvplan predicts a run measures.
type Prediction struct {
	Method  string   `json:"method"` // MethodClosedLoop or MethodTimedSim
	How     string   `json:"how"`    // the replay in words: clients per replica, requests and arrivals
	Figures Figures  `json:"-"`
	Notes   []string `json:"notes,omitempty"`
}

// withEfficiency is cat with e as the entry of its key (nil: cat itself).
func withEfficiency(cat *catalog.Catalog, e *catalog.Efficiency) *catalog.Catalog {
	if e == nil {
		return cat
	}
	c := *cat
	c.Efficiencies = make([]*catalog.Efficiency, 0, len(cat.Efficiencies)+1)
	c.Efficiencies = append(c.Efficiencies, e)
	for _, x := range cat.Efficiencies {
		if x.Key() != e.Key() {
			c.Efficiencies = append(c.Efficiencies, x)
		}
	}
	return &c
}

// Predict predicts what the case measures with efficiencies eff (nil:
// the catalog's entry for the set-up). A closed loop with more prompts than
// clients is kvplan perf's closed-loop replay (steady state, per replica);
// a rate, every request at once, or a closed loop whose prompts all fit
// its clients (one burst, which never reaches a steady state) is the timed
// simulator over every request of the run; an offline run (trtllm-bench) is
// the closed loop at the engine's batch cap, as kvplan perf's check against
// NVIDIA's saturated figures runs it.
func (c *Case) Predict(eff *catalog.Efficiency) (Prediction, error) {
	if eff == nil {
		s := &c.Setup
		m, err := s.Catalog.EfficiencyFor(s.GPU.Name, s.Engine, s.WeightDtype)
		if err != nil {
			return Prediction{}, err
		}
		eff = m.Efficiency
	}
	cat := withEfficiency(c.Setup.Catalog, eff)
	ld := c.Load
	switch ld.Kind {
	case benchresult.LoadConcurrency:
		if ld.Prompts > 0 && ld.Prompts <= ld.Concurrency {
			return c.simulate(cat, "its prompts all fit its clients: one burst")
		}
		return c.closedLoop(cat, eff, ld.Concurrency)
	case benchresult.LoadOffline:
		clients := ld.Concurrency * c.Setup.Replicas
		if ld.Prompts > 0 {
			clients = min(clients, ld.Prompts)
		}
		if clients < 1 {
			return Prediction{}, fmt.Errorf("%s: an offline run needs the engine's batch cap (--max-num-seqs)", c.File)
		}
		p, err := c.closedLoop(cat, eff, clients)
		p.How += " (the engine's batch cap: an offline run keeps it full)"
		return p, err
	case benchresult.LoadRate, benchresult.LoadBurst:
		return c.simulate(cat, "")
	}
	return Prediction{}, fmt.Errorf("%s: no load to predict", c.File)
}

// closedLoop is kvplan perf's replay of clients clients spread over the
// replicas round-robin: each replica runs ⌊clients / R⌋ or one more.
func (c *Case) closedLoop(cat *catalog.Catalog, eff *catalog.Efficiency, clients int) (Prediction, error) {
	s := &c.Setup
	R := s.Replicas
	isl, osl := roundTokens(c.Load.InputTokens), roundTokens(c.Load.OutputTokens)
	lo, nHi := clients/R, clients%R
	groups := []struct{ clients, replicas int }{{lo + 1, nHi}, {lo, R - nHi}}
	var rps, ops, ttft, tpot, itl50, weight float64
	var notes []string
	for _, g := range groups {
		if g.clients == 0 || g.replicas == 0 {
			continue
		}
		rig, err := c.rig(planner.PerfScenario{Catalog: cat, Model: s.Model, GPU: s.GPU, Engine: s.Engine, EngineVersion: s.EngineVersion,
			TP: s.TP, WeightDtype: s.WeightDtype, KVDtype: s.KVDtype, InputTokens: isl, OutputTokens: osl, Concurrency: g.clients,
			GPUUtil: s.GPUUtil, MaxNumSeqs: s.MaxNumSeqs, MaxNumBatchedTokens: s.MaxBatchedTok, EnforceEager: s.EnforceEager, CUDAGraphMaxBatch: s.CUDAGraphMaxBatch})
		if err != nil {
			return Prediction{}, err
		}
		p, _, err := rig.Steady(eff)
		if err != nil {
			return Prediction{}, err
		}
		n := float64(g.replicas)
		rps += n * p.RequestsPerS
		ops += n * p.OutputTokensPerS
		w := n * p.RequestsPerS // requests complete in proportion to a replica's rate
		ttft += w * p.TTFTMS
		tpot += w * p.TPOTMS
		itl50 += w * p.ITLP50MS
		weight += w
	}
	if weight <= 0 {
		return Prediction{}, fmt.Errorf("%s: the closed loop completed nothing", c.File)
	}
	ttft, tpot, itl50 = ttft/weight, tpot/weight, itl50/weight
	f := Figures{TTFTMS: finite(ttft), TPOTMS: finite(tpot), ITLMS: finite(tpot), ITLMSP50: finite(itl50),
		E2EMS: finite(ttft + float64(osl-1)*tpot), RequestsPerS: finite(rps), OutputTokensPerS: finite(ops)}
	how := fmt.Sprintf("%d clients over %d replica(s), %d in / %d out tokens", clients, R, isl, osl)
	if len(c.Load.InputLens) > 0 {
		notes = append(notes, "perf's closed loop replays fixed lengths: the file's per-request lengths are taken at their means")
	}
	notes = append(notes, "itl_ms (mean) is predicted as the TPOT mean: the mean gap between tokens")
	return Prediction{Method: MethodClosedLoop, How: how, Figures: f, Notes: notes}, nil
}

func roundTokens(x float64) int { return max(1, int(math.Round(x))) }

// rigs keeps a case's closed-loop replays with their memory model done,
// by client count: the efficiencies change nothing of it, so a fit builds
// each once (planner.PerfRig, what PlanPerf itself runs).
type rigs struct {
	mu sync.Mutex
	by map[int]*planner.PerfRig
}

func (c *Case) rig(sc planner.PerfScenario) (*planner.PerfRig, error) {
	if c.rigs == nil {
		return planner.NewPerfRig(sc)
	}
	c.rigs.mu.Lock()
	defer c.rigs.mu.Unlock()
	if r, ok := c.rigs.by[sc.Concurrency]; ok {
		return r, nil
	}
	r, err := planner.NewPerfRig(sc)
	if err != nil {
		return nil, err
	}
	c.rigs.by[sc.Concurrency] = r
	return r, nil
}

// simulate replays every request of the run in the timed simulator:
// arrivals as the benchmark sent them, lengths per request when the file
// has them, round-robin over the replicas.
func (c *Case) simulate(cat *catalog.Catalog, why string) (Prediction, error) {
	s, ld := &c.Setup, c.Load
	if ld.Prompts < 1 {
		return Prediction{}, fmt.Errorf("%s: the number of prompts is not stated: give --num-prompts", c.File)
	}
	eng, ver, err := cat.EngineVersion(s.Engine, s.EngineVersion)
	if err != nil {
		return Prediction{}, err
	}
	maxLen := roundTokens(ld.InputTokens) + roundTokens(ld.OutputTokens)
	for i := range ld.InputLens {
		maxLen = max(maxLen, ld.InputLens[i]+max(ld.OutputLens[i], 1))
	}
	plan, err := planner.PlanSimulation(planner.SimulationScenario{Catalog: cat, Model: s.Model, GPU: s.GPU, Engine: eng, EngineVersion: ver,
		VersionDefaulted: s.EngineVersion == "", KV: models.KVOptions{KVDtype: s.KVDtype, TP: s.TP}, WeightDtype: s.WeightDtype,
		GPUUtil: s.GPUUtil, EnforceEager: s.EnforceEager, CUDAGraphMaxBatch: s.CUDAGraphMaxBatch, MaxModelLen: maxLen, BlockSize: simBlockTokens, MaxNumBatchedTokens: s.MaxBatchedTok, MaxNumSeqs: s.MaxNumSeqs})
	if err != nil {
		return Prediction{}, err
	}
	bs := plan.Memory.BlockSize
	cfg := sim.DefaultConfig()
	cfg.Workers, cfg.CapacityBlocks, cfg.BlockSize, cfg.Policy = s.Replicas, plan.CapacityBlocks, bs, sim.RoundRobin
	cfg.Engine = &sim.Engine{Step: plan.Step, MaxNumBatchedTokens: plan.MaxNumBatchedTokens, MaxNumSeqs: plan.MaxNumSeqs,
		FrontendMS: plan.FrontendMS, FrontendMSPerToken: plan.FrontendMSPerToken, SeparatePrefill: plan.SeparatePrefill}
	src := newBenchSource(ld, bs, c.seed())
	res, err := sim.Run(src, cfg)
	if err != nil {
		return Prediction{}, err
	}
	t := res.Timing
	if t == nil || t.Completed == 0 {
		return Prediction{}, fmt.Errorf("%s: the simulated run completed no request (%d rejected: longer than a worker's KV)", c.File, res.Timing.Rejected)
	}
	f := Figures{
		TTFTMS: finite(t.TTFTMS.Mean), TTFTMSP50: finite(t.TTFTMS.P50), TTFTMSP90: finite(t.TTFTMS.P90), TTFTMSP99: finite(t.TTFTMS.P99),
		TPOTMS: finite(t.TPOTMS.Mean), TPOTMSP50: finite(t.TPOTMS.P50), TPOTMSP90: finite(t.TPOTMS.P90), TPOTMSP99: finite(t.TPOTMS.P99),
		ITLMS: finite(t.TPOTMS.Mean),
		E2EMS: finite(t.E2EMS.Mean), E2EMSP50: finite(t.E2EMS.P50), E2EMSP90: finite(t.E2EMS.P90), E2EMSP99: finite(t.E2EMS.P99),
		RequestsPerS: finite(t.RequestsPerS), OutputTokensPerS: finite(t.OutputTokensPerS),
	}
	how := fmt.Sprintf("%d requests %s, round-robin over %d replica(s)", ld.Prompts, arrivals(ld), s.Replicas)
	if why != "" {
		how += " (" + why + ")"
	}
	var notes []string
	if len(ld.InputLens) > 0 {
		notes = append(notes, fmt.Sprintf("lengths request by request from the file's %d per-request entries", len(ld.InputLens)))
	}
	if ld.Kind == benchresult.LoadRate && ld.Concurrency > 0 {
		notes = append(notes, fmt.Sprintf("the run's cap of %d requests in flight is not replayed: the simulator sends at the rate alone", ld.Concurrency))
	}
	if t.Rejected > 0 {
		notes = append(notes, fmt.Sprintf("%d requests could never fit a worker's KV and were not simulated", t.Rejected))
	}
	notes = append(notes, "itl_ms (mean) is predicted as the TPOT mean: the mean gap between tokens")
	return Prediction{Method: MethodTimedSim, How: how, Figures: f, Notes: notes}, nil
}

func (c *Case) seed() uint64 { return uint64(c.Run.Index)*0x9e3779b97f4a7c15 ^ seedSalt }

// arrivals says how the requests are sent.
func arrivals(ld Load) string {
	switch {
	case ld.Kind != benchresult.LoadRate:
		return "all at once"
	case ld.EvenGaps:
		return fmt.Sprintf("evenly spaced at %s req/s", fmtRate(ld.RatePerS))
	case ld.Burstiness == 1:
		return fmt.Sprintf("Poisson at %s req/s", fmtRate(ld.RatePerS))
	}
	return fmt.Sprintf("at %s req/s, gamma gaps of burstiness %g", fmtRate(ld.RatePerS), ld.Burstiness)
}

func fmtRate(r float64) string { return strconv.FormatFloat(r, 'g', 6, 64) }

// simBlockTokens is the KV block the timed simulation accounts in. The
// runs' prompts share no prefix, so the block size only rounds each
// request's KV up to a block: 16 tokens (vLLM's default) for every engine,
// SGLang's page of 1 token included, keeps the simulator's block
// bookkeeping 16 times smaller for at most 15 tokens a request.
const simBlockTokens = 16

// benchSource is the run's requests for the timed simulator: as many as
// the run sent, lengths from the file's per-request arrays (in order,
// cycled) or its means, arrivals as vLLM's and SGLang's benchmarks draw
// them (gaps from a gamma distribution of shape burstiness and mean
// 1/rate; burstiness 1 is Poisson), and prompts that share no prefix.
type benchSource struct {
	ld     Load
	bs     int
	i      int
	t      float64
	rng    *rand.Rand
	blocks []uint64
}

func newBenchSource(ld Load, bs int, seed uint64) *benchSource {
	return &benchSource{ld: ld, bs: bs, rng: rand.New(rand.NewPCG(seed, seedSalt))}
}

func (b *benchSource) BlockSize() int { return b.bs }
func (b *benchSource) Timed() bool    { return true }

func (b *benchSource) Next(r *sim.Request) (bool, error) {
	ld := b.ld
	if b.i >= ld.Prompts {
		return false, nil
	}
	in, out := roundTokens(ld.InputTokens), roundTokens(ld.OutputTokens)
	if n := len(ld.InputLens); n > 0 {
		in, out = max(ld.InputLens[b.i%n], 1), max(ld.OutputLens[b.i%n], 1)
	}
	if ld.Kind == benchresult.LoadRate && b.i > 0 {
		b.t += b.gapMS()
	}
	r.ArrivalMS, r.InputTokens, r.OutputTokens = b.t, in, out
	b.blocks = b.blocks[:0]
	for j := 0; j < in/b.bs; j++ {
		b.blocks = append(b.blocks, mix(uint64(b.i)<<20|uint64(j)))
	}
	r.Blocks = b.blocks
	b.i++
	return true, nil
}

// gapMS draws the gap before the next send.
func (b *benchSource) gapMS() float64 {
	mean := 1000 / b.ld.RatePerS
	if b.ld.EvenGaps {
		return mean
	}
	k := b.ld.Burstiness
	return gamma(b.rng, k) * mean / k
}

// gamma draws from a gamma distribution of shape k and scale 1
// (Marsaglia and Tsang, 2000; k < 1 by the boost U^(1/k)).
func gamma(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		return gamma(rng, k+1) * math.Pow(rng.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// mix is splitmix64's finalizer: distinct inputs give distinct ids.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
