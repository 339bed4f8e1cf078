package capacity

import (
	"fmt"
	"github.com/kvplan/kvplan/openloop"
	"math"
	"slices"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planner"
)

// tpOptions are the tensor-parallel sizes offered: the GPUs of one node.
var tpOptions = []int{1, 2, 4, 8}

// chunkOptions are the token budgets (max_num_batched_tokens) offered to an
// aggregated pool below the engine's default: a smaller budget chunks
// prefill finer, so the decodes that share its iterations wait less.
var chunkOptions = []int{4096, 2048, 1024, 512}

// role is one pool's worker, everything but how many.
type role struct {
	name        string // planfile role: aggregated, prefill, decode
	gpu         *catalog.GPU
	tp          int
	par         models.Parallelism // the worker's layout, normalized; par.TP = tp
	gpus        int                // GPUs of one worker: par.GPUs() (tp × dp × pp)
	network     *catalog.Link      // between the worker's NVLink domains; nil = it fits one
	budget      int                // max_num_batched_tokens
	maxSeqs     int
	maxModelLen int
	block       int
	slots       int64
	timer       StepTimer
	note        string
	usd         float64
	priceOK     bool
	priceSource string
	memory      *planner.MemoryPlan
	smaller     bool   // budget lowered below the engine's default
	fits        bool   // the weights fit and leave room for one request's KV
	memoryWhy   string // why not

	models map[int]*openloop.Worker // by quantized prefix-hit probability
}

// workerBudget and workerSeqs are the tokens and sequences a whole worker
// runs in one iteration: each data-parallel rank schedules the engine's
// max_num_batched_tokens and max_num_seqs of its own.
func (r *role) workerBudget() int { return r.budget * max(1, r.par.DP) }
func (r *role) workerSeqs() int   { return r.maxSeqs * max(1, r.par.DP) }

// shape is a candidate without its worker counts.
type shape struct {
	mode        string
	weightDtype string
	kvDtype     string
	model       *catalog.Model // with the weight dtype applied
	link        *catalog.Link
	roles       []*role // aggregated: one; disaggregated: prefill, decode
	kv          *models.KV
}

func (s *shape) name() string {
	if s.mode == ModeAggregated {
		r := s.roles[0]
		return fmt.Sprintf("aggregated %s %s budget %d", r.gpu.Name, r.par, r.budget)
	}
	p, d := s.roles[0], s.roles[1]
	return fmt.Sprintf("disaggregated %s %s → %s %s over %s", p.gpu.Name, p.par, d.gpu.Name, d.par, s.link.Name)
}

// worker returns the role's worker model for the given hit cases.
func (s *shape) worker(q *Query, r *role, hits []openloop.Hit) *openloop.Worker {
	key := -1
	if len(hits) > 0 {
		key = int(math.Round(hits[0].Prob * 256))
	}
	if w, ok := r.models[key]; ok {
		return w
	}
	w := openloop.NewWorker(openloop.Config{Step: r.timer, InputTokens: q.InputTokens, OutputTokens: q.OutputTokens,
		MaxNumBatchedTokens: r.workerBudget(), MaxNumSeqs: r.workerSeqs(), KVSlots: r.slots, BlockSize: r.block,
		Prefills: r.name != roleDecode, Decodes: r.name != rolePrefill, Hits: hits, Classes: q.workerClasses(hits), SeparatePrefill: q.SeparatePrefill})
	r.models[key] = w
	return w
}

// Planfile roles.
const (
	roleAggregated = "aggregated"
	rolePrefill    = "prefill"
	roleDecode     = "decode"
)

// withWeightDtype returns m served with weights of dtype (a quantized
// checkpoint of the same architecture): its checkpoint size no longer
// applies, so the bytes follow params × dtype.
func withWeightDtype(m *catalog.Model, dtype string) *catalog.Model {
	if dtype == "" || dtype == m.WeightDtype {
		return m
	}
	c := *m
	c.WeightDtype, c.WeightsBytes = dtype, 0
	return &c
}

// maxModelLen is the context the workers are started with: the workload's
// request rounded up to 1,024 tokens, within the model's context.
func (q *Query) maxModelLen() int {
	n := (q.largestRequest() + 1023) / 1024 * 1024
	if q.Model.MaxContext > 0 {
		n = min(n, q.Model.MaxContext)
	}
	return max(n, q.largestRequest())
}

// newRole sizes one worker's memory and engine model.
func (q *Query) newRole(name string, m *catalog.Model, g *catalog.GPU, tp, budget int, wdtype, kvdtype string) (*role, error) {
	return q.newRoleFor(name, m, g, models.Parallelism{TP: tp}, budget, wdtype, kvdtype)
}

// newRoleFor sizes one worker of layout par (data, expert and pipeline
// ranks beyond its tp).
func (q *Query) newRoleFor(name string, m *catalog.Model, g *catalog.GPU, par models.Parallelism, budget int, wdtype, kvdtype string) (*role, error) {
	return q.newRoleOver(name, m, g, par, nil, budget, wdtype, kvdtype)
}

// newRoleOver is newRoleFor of a worker whose NVLink domains network
// joins (nil: it fits one domain).
func (q *Query) newRoleOver(name string, m *catalog.Model, g *catalog.GPU, par models.Parallelism, network *catalog.Link, budget int, wdtype, kvdtype string) (*role, error) {
	par = par.Norm()
	tp := par.TP
	timer, note, err := q.Timers(EngineSpec{Model: m, GPU: g, Engine: q.Engine.Name, TP: tp, Parallel: par, Link: network, WeightDtype: wdtype, KVDtype: kvdtype})
	if err != nil {
		return nil, err
	}
	r := &role{name: name, gpu: g, tp: tp, par: par, gpus: par.GPUs(), network: network, budget: budget, maxModelLen: q.maxModelLen(), block: q.Engine.DefaultBlockSize,
		timer: timer, note: note, models: map[int]*openloop.Worker{}}
	r.usd, r.priceSource, r.priceOK = q.perGPU(g, r.gpus)
	mp, err := planner.PlanMemory(planner.MemoryScenario{
		Model: m, KV: models.KVOptions{KVDtype: kvdtype, TP: tp}, GPU: g, Engine: q.Engine,
		// GPUUtil 0: the engine's default for its version, as kvplan memory takes it.
		MaxModelLen: r.maxModelLen, BlockSize: r.block, MaxNumBatchedTokens: budget,
		Parallel: models.Parallelism{TP: par.TP, DP: par.DP, EP: par.EP, PP: par.PP}, PP: par.PP,
	})
	if err != nil {
		return nil, err
	}
	// The budget and sequence limit are each data-parallel rank's (the
	// engine's arguments); the slots are the whole worker's.
	r.memory, r.budget, r.maxSeqs, r.slots = mp, mp.MaxNumBatchedTokens, mp.MaxNumSeqs, planner.WorkerKVSlots(mp)
	need := int64(q.largestRequest())
	switch {
	case !mp.ModelFits:
		r.memoryWhy = fmt.Sprintf("%s weights (%s per GPU at %s) leave no room for a KV cache on %s", m.Name, gib(mp.WeightsBytes), explainLayout(par), g.Name)
	case mp.KVSlotsTokens < need:
		r.memoryWhy = fmt.Sprintf("%d KV slots per worker on %s at %s hold less than one request (%d tokens)", r.slots, g.Name, explainLayout(par), need)
	default:
		r.fits = true
	}
	return r, nil
}

func gib(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

// shapes enumerates every candidate the query offers, without worker
// counts. Combinations the engine cannot run (tp not dividing the heads) are
// left out and said in notes.
func (q *Query) shapes() ([]*shape, []string, error) {
	var out []*shape
	var notes []string
	noted := map[string]bool{}
	note := func(s string) {
		if !noted[s] {
			noted[s] = true
			notes = append(notes, s)
		}
	}
	var tps []int
	for _, tp := range tpOptions {
		if err := models.CheckTP(q.Model, tp); err != nil {
			note(fmt.Sprintf("tp %d is not offered: %v", tp, err))
			continue
		}
		tps = append(tps, tp)
	}
	for _, wd := range q.WeightDtypes {
		m := withWeightDtype(q.Model, wd)
		for _, kd := range q.KVDtypes {
			kvr, err := models.NewKV(m, models.KVOptions{KVDtype: kd})
			if err != nil {
				return nil, nil, err
			}
			// Roles by GPU and layout, built once and shared by the shapes.
			type key struct {
				role   string
				gpu    string
				layout string
				b      int
			}
			roles := map[key]*role{}
			get := func(name string, g *catalog.GPU, lo layoutOpt, budget int) *role {
				k := key{name, g.Name, lo.key(), budget}
				if r, ok := roles[k]; ok {
					return r
				}
				r, err := q.newRoleOver(name, m, g, lo.par, lo.network, budget, wd, kd)
				switch {
				case err != nil:
					note(fmt.Sprintf("%s at %s on %s is not offered: %v", m.Name, explainLayout(lo.par), g.Name, err))
				case !lo.par.Plain() && !r.fits:
					// A layout beyond tp that does not fit is left out (the
					// plain tp sizes say what does not fit), keeping the
					// search's shapes few.
					r = nil
				}
				roles[k] = r
				return r
			}
			layouts := map[string][]layoutOpt{}
			for _, g := range q.GPUOptions {
				layouts[g.Name] = q.layoutOptions(m, g, tps, note)
			}
			for _, g := range q.GPUOptions {
				for _, lo := range layouts[g.Name] {
					base := get(roleAggregated, g, lo, 0)
					if base == nil {
						continue
					}
					budgets := []int{base.budget}
					for _, c := range chunkOptions {
						if c < base.budget && c >= 1 {
							budgets = append(budgets, c)
						}
					}
					for _, b := range budgets {
						r := base
						if b != base.budget {
							if r = get(roleAggregated, g, lo, b); r == nil {
								continue
							}
							r.smaller = true
						}
						out = append(out, &shape{mode: ModeAggregated, weightDtype: m.WeightDtype, kvDtype: kvr.KVDtype, model: m, roles: []*role{r}, kv: kvr})
					}
				}
			}
			for _, l := range q.Links {
				for _, gp := range q.GPUOptions {
					for _, lp := range layouts[gp.Name] {
						if lp.network != nil && lp.network != l {
							continue // a multi-node worker's nodes are joined by the shape's link
						}
						p := get(rolePrefill, gp, lp, 0)
						if p == nil {
							continue
						}
						for _, gd := range q.GPUOptions {
							for _, ld := range layouts[gd.Name] {
								if ld.network != nil && ld.network != l {
									continue
								}
								d := get(roleDecode, gd, ld, 0)
								if d == nil {
									continue
								}
								if (!lp.par.Plain() || !ld.par.Plain()) && (gp != gd || !p.fits || !d.fits) {
									// A layout beyond tp pairs with workers of its own
									// GPU that fit (as the wide-EP deployments run),
									// which keeps the search's pairs few: the plain
									// pairs already show every GPU mix and what does
									// not fit.
									continue
								}
								kvp, err := models.NewKV(m, models.KVOptions{KVDtype: kd, TP: lp.par.Norm().TP})
								if err != nil {
									return nil, nil, err
								}
								out = append(out, &shape{mode: ModeDisaggregated, weightDtype: m.WeightDtype, kvDtype: kvr.KVDtype, model: m,
									link: l, roles: []*role{p, d}, kv: kvp})
							}
						}
					}
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *shape) int {
		if a.mode != b.mode {
			if a.mode == ModeAggregated {
				return -1
			}
			return 1
		}
		return 0
	})
	return out, notes, nil
}
