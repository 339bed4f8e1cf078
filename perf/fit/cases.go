package fit

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/planner"
)

// Case is a measured row made ready to predict: the model, GPU and limits
// the engine model needs, and what was measured.
type Case struct {
	Row
	Model       *catalog.Model // weight dtype set to the checkpoint's
	GPU         *catalog.GPU
	Dtype       string
	KVDtype     string
	MemFraction float64   // the engine's memory fraction the run used; 0 = the engine's default
	Load        perf.Load // per replica
	Limits      perf.Limits
	Replicas    int
	Group       string // the model the case belongs to for hold-out (catalog name)
	MoE         bool
	g, e, d     int // indices in the Space
	rowsInGroup int
}

// Exclusion counts rows left out of the fit, by reason.
type Exclusion map[string]int

// SameRun is the exclusion of a row that repeats an earlier one: the
// shared file merges InferenceX dumps that overlap (a database dump and
// the dated CSVs hold some runs two or three times, under different ids and
// at times with the layout encoded differently, DeepSeek-R1 named
// DeepSeek-V3 or another patch version; two gap-analysis files copy
// InferenceX runs rounded to 0.01 ms), and a run counts once, in the fit's
// weights and in every median.
const SameRun = "the same run as an earlier row (two benchmark dumps)"

// Contradicted is the exclusion of the rows of a benchmark workflow run that
// another run of the same configuration contradicts: InferenceX's config 99
// (SGLang, DeepSeek-R1 fp4, B200) measured 8k/1k TTFT 2.1–2.9 s at 32–128
// clients on 2025-11-02 (workflow run 103) and 5.6–9.2 s at 4–16 clients on
// 2025-11-10 (run 124), where TTFT cannot fall as clients are added. The
// whole workflow run is left out (its config 88 sweep has the same flat
// 5.5–9 s), and every copy of its rows.
const Contradicted = "a benchmark run that another run of its configuration contradicts (TTFT ≥ 2× at no more clients)"

// contradicted are the runs (SameRun's keys) of the workflow runs that
// another workflow run of one of their configurations contradicts: a row
// whose TTFT is at least twice that of the other run's at the same or more
// clients, for the same lengths.
func contradicted(rows []Row) map[runKey]bool {
	type sweep struct {
		engine, config string
		isl, osl       int
	}
	type point struct {
		workflow string
		clients  int
		ttft     float64
	}
	by := map[sweep][]point{}
	for _, r := range rows {
		if cfg, wf, ok := strings.Cut(r.Run, "/"); ok && wf != "" {
			k := sweep{r.Engine, cfg, r.ISL, r.OSL}
			by[k] = append(by[k], point{wf, r.Concurrency, r.TTFTMS})
		}
	}
	bad := map[string]bool{} // workflow run ids
	for _, ps := range by {
		for _, a := range ps {
			for _, b := range ps {
				if a.workflow != b.workflow && b.clients >= a.clients && b.ttft > 0 && a.ttft >= 2*b.ttft {
					bad[a.workflow] = true
				}
			}
		}
	}
	out := map[runKey]bool{}
	for _, r := range rows {
		if _, wf, ok := strings.Cut(r.Run, "/"); ok && bad[wf] {
			out[keyOf(r)] = true
		}
	}
	return out
}

// runs are the measured runs seen so far. A row repeats an earlier one when
// it has the same engine, GPU, lengths and concurrency and the same TTFT
// and TPOT to 0.01 ms (the copies' rounding): two runs do not measure the
// same two figures to five or six digits.
type runs map[runKey]bool

type runKey struct {
	engine, system        string
	isl, osl, concurrency int
	ttft, tpot            float64
}

func keyOf(r Row) runKey {
	cents := func(ms float64) float64 { return math.Round(ms*100) / 100 }
	return runKey{r.Engine, r.System, r.ISL, r.OSL, r.Concurrency, cents(r.TTFTMS), cents(r.TPOTMS)}
}

func (s runs) again(r Row) bool {
	k := keyOf(r)
	if s[k] {
		return true
	}
	s[k] = true
	return false
}

// Engine limits the measured runs used, from each engine's defaults
// (batch_size is the run's max_num_seqs / max_batch_size setting):
//
//	vllm    max_num_batched_tokens 8192 (vllm/engine/arg_utils.py, GPUs ≥ 70 GiB)
//	sglang  chunked_prefill_size 8192 below 160 GB of GPU memory, 16384 above
//	        (sglang/srt/server_args.py); prefill and decode batches run apart
//	trtllm  max_num_tokens 8192 (tensorrt_llm/llmapi/llm_args.py)
//
// KV slots follow kvplan's memory model (planner.PlanMemory) with the
// engine's profile for the run's version (the newest when the catalog has
// none for it), at the KV dtype and memory fraction the run's benchmark
// script passed (harness.go: every InferenceX row the fit uses), else at the
// engine's default fraction with rowKVDtype's rule (the gap-analysis rows,
// whose launch settings are not published).
// GrowKV replays vLLM rows with KV allocated as sequences grow and
// recompute preemption (perf.Limits.GrowKV) instead of admission against
// the average held; off as shipped (go test ./perf/fit -grow-kv measures it).
var GrowKV bool

func limitsFor(engine string, g *catalog.GPU, batch int) perf.Limits {
	lim := perf.Limits{MaxNumSeqs: batch, MaxNumBatchedTokens: 8192, BlockSize: 16, SeparatePrefill: perf.Schedules[engine].SeparatePrefill,
		KVReserveOutput: perf.Schedules[engine].KVReserveOutput, GrowKV: GrowKV && engine == "vllm"}
	if engine == "sglang" {
		if g.MemoryBytes >= 160e9 {
			lim.MaxNumBatchedTokens = 16384
		}
	}
	return lim
}

// Prepare turns rows into cases over cat (which must hold the models and
// GPUs) and returns the space their combinations span, the cases, and the
// rows left out with why.
func Prepare(cat *catalog.Catalog, rows []Row) (Space, []*Case, Exclusion) {
	ex := Exclusion{}
	var cases []*Case
	engineFor := map[string]*catalog.Engine{}
	seen, contra := runs{}, contradicted(rows)
	for _, r := range datedTwins(rows) {
		reason, c := prepareRow(cat, r, engineFor)
		if reason == "" && contra[keyOf(r)] {
			reason = Contradicted
		}
		if reason == "" && seen.again(r) {
			reason = SameRun
		}
		if reason != "" {
			ex[reason]++
			continue
		}
		cases = append(cases, c)
	}
	var sp Space
	addTo := func(list *[]string, v string) {
		if !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	for _, c := range cases {
		addTo(&sp.Engines, c.Engine)
		addTo(&sp.GPUs, c.GPU.Name)
		if c.Dtype != "bf16" {
			addTo(&sp.Dtypes, c.Dtype)
		}
	}
	sort.Strings(sp.Engines)
	sort.Strings(sp.GPUs)
	for _, name := range sp.GPUs {
		for _, c := range cases {
			if c.GPU.Name == name {
				sp.Links = append(sp.Links, c.GPU.Interconnect)
				addTo(&sp.LinkClasses, c.GPU.Interconnect)
				break
			}
		}
	}
	sort.Strings(sp.LinkClasses)
	sort.Strings(sp.Dtypes)
	sp.Dtypes = append([]string{"bf16"}, sp.Dtypes...)
	count := map[string]int{}
	for _, c := range cases {
		count[c.Group]++
	}
	for _, c := range cases {
		c.g, c.e, c.d = Index(sp.GPUs, c.GPU.Name), Index(sp.Engines, c.Engine), Index(sp.Dtypes, c.Dtype)
		c.rowsInGroup = count[c.Group]
	}
	return sp, cases, ex
}

func prepareRow(cat *catalog.Catalog, r Row, engines map[string]*catalog.Engine) (string, *Case) {
	switch {
	case r.TTFTMS <= 0 || r.TPOTMS <= 0:
		return "no TTFT or TPOT", nil
	case r.PP > 1:
		return "pipeline parallel", nil
	case r.AttentionDP > 1:
		return "attention data parallel", nil
	case r.TP > 8:
		return "tp over 8 (more than one node)", nil
	}
	name, base, g, why := rowModelGPU(cat, r)
	if why != "" {
		return why, nil
	}
	if base.MoE != nil && r.MoETP > 0 && r.MoEEP > 0 && r.MoETP*r.MoEEP != r.TP {
		return "expert parallelism across replicas", nil
	}
	m := *base
	m.WeightDtype, m.WeightsBytes = dtypeOf(r.GemmQuant), 0
	if _, ok := catalog.DtypeBytes(m.WeightDtype); !ok {
		return "unknown quantization", nil
	}
	c := &Case{Row: r, Model: &m, GPU: g, Dtype: m.WeightDtype, Group: name, MoE: base.MoE != nil, Replicas: 1}
	conc := r.Concurrency
	if conc == 0 {
		// 12 aggregated rows (a gap-analysis sweep) do not state their
		// concurrency; taking it as batch_size, as kvplan did, read runs whose
		// TTFT of 17–54 s says the clients far outnumbered the batch as runs
		// without a queue.
		return "concurrency not stated", nil
	}
	if r.BatchSize > 0 && conc > r.BatchSize && conc%r.BatchSize == 0 {
		// batch_size is per replica; the clients spread over conc / batch replicas.
		c.Replicas, conc = conc/r.BatchSize, r.BatchSize
	}
	if conc < 1 {
		return "no concurrency", nil
	}
	isl, osl := harnessLengths(r)
	c.Load = perf.Load{Concurrency: conc, InputTokens: isl, OutputTokens: osl}
	c.Limits = limitsFor(r.Engine, g, max(r.BatchSize, 1))
	c.deployedAs(&m)
	e := rowEngine(cat, engines, r)
	if e == nil {
		return "no engine profile", nil
	}
	mp, err := planner.PlanMemory(planner.MemoryScenario{
		Model: &m, KV: models.KVOptions{KVDtype: c.KVDtype, TP: r.TP}, GPU: g, Engine: e, GPUUtil: c.MemFraction,
		MaxModelLen: r.ISL + r.OSL, MaxNumBatchedTokens: c.Limits.MaxNumBatchedTokens, MaxNumSeqs: c.Limits.MaxNumSeqs,
	})
	if err != nil {
		return "memory model error", nil
	}
	c.Limits.KVSlots = mp.KVSlotsTokens
	if c.Limits.KVSlots < int64(r.ISL+r.OSL) {
		return "weights leave no room for one request (kvplan's memory model)", nil
	}
	return "", c
}

// Predict runs the engine model of c with efficiencies eff.
func (c *Case) Predict(eff *catalog.Efficiency) (perf.Result, error) {
	m, err := c.engineModel(eff)
	if err != nil {
		return perf.Result{}, err
	}
	return m.Steady(c.Load, c.Limits)
}

// engineModel is c's deployment in the engine model, with efficiencies eff.
func (c *Case) engineModel(eff *catalog.Efficiency) (*perf.Model, error) {
	return perf.New(perf.Spec{Model: c.Model, GPU: c.GPU, Engine: c.Engine, TP: c.TP,
		WeightDtype: c.Dtype, KVDtype: c.KVDtype, Efficiency: eff})
}

// rowModelGPU is the catalog's model (its name as the fit groups it) and GPU of a measured row, or why the
// row has none (its model or system not mapped, or not in the catalog).
func rowModelGPU(cat *catalog.Catalog, r Row) (string, *catalog.Model, *catalog.GPU, string) {
	name, ok := modelOf[r.ModelPath]
	if !ok {
		return "", nil, nil, "model not mapped"
	}
	base, err := cat.Model(name)
	if err != nil {
		return "", nil, nil, "model not in catalog"
	}
	gname, ok := gpuOf[r.System]
	if !ok {
		return "", nil, nil, "gpu not mapped"
	}
	g, err := cat.GPU(gname)
	if err != nil {
		return "", nil, nil, "gpu not in catalog"
	}
	return name, base, g, ""
}

// rowEngine is the engine profile of a row's version (the engine's newest
// when the catalog has none of it), memoised in engines; nil when the
// catalog has no profile of the engine.
func rowEngine(cat *catalog.Catalog, engines map[string]*catalog.Engine, r Row) *catalog.Engine {
	key := r.Engine + "@" + r.Version
	if e := engines[key]; e != nil {
		return e
	}
	e, _, err := cat.EngineVersion(r.Engine, r.Version)
	if err != nil {
		if e, _, err = cat.EngineVersion(r.Engine, ""); err != nil {
			return nil
		}
	}
	engines[key] = e
	return e
}

// deployedAs sets the KV dtype, memory fraction, SGLang
// scheduler-recv-interval and prefill token budget c's run used: the
// benchmark script's (harness.go) where it is known, else rowKVDtype's rule
// at the engine's defaults.
func (c *Case) deployedAs(m *catalog.Model) {
	if h, ok := harnessFor(c.Row, c.Group, c.Dtype, c.Measured); ok {
		c.KVDtype, c.MemFraction = h.KVDtype, h.MemFraction
		c.Limits.RecvInterval = h.RecvInterval(c.Concurrency)
		if b := h.TokenBudget(c.ISL, c.Concurrency); b > 0 {
			c.Limits.MaxNumBatchedTokens = b
		}
		return
	}
	c.KVDtype = rowKVDtype(c.Row, m)
}

// datedTwins gives an undated row the day of a dated row of the same run
// (SameRun's key): the dumps' copies of a run do not all carry it.
func datedTwins(rows []Row) []Row {
	day := map[runKey]string{}
	for _, r := range rows {
		if r.Measured != "" {
			day[keyOf(r)] = r.Measured
		}
	}
	out := slices.Clone(rows)
	for i := range out {
		if out[i].Measured == "" {
			out[i].Measured = day[keyOf(out[i])]
		}
	}
	return out
}

// rowKVDtype is the KV dtype a row's run used when no script says: fp8 for
// an fp8 or fp4 checkpoint on vLLM and TensorRT-LLM (the engines take the
// checkpoint's KV scales), the model's otherwise (SGLang keeps bf16 KV
// unless told).
func rowKVDtype(r Row, m *catalog.Model) string {
	if r.Engine != "sglang" && m.WeightDtype != "bf16" && m.WeightDtype != "int4" {
		return "fp8"
	}
	return m.KVDtype
}
