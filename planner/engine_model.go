package planner

import (
	"fmt"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/perf"
)

// engineModel builds the engine model (package perf) of model m on tp GPUs
// of kind g under engine (vllm when the engine model does not know it), with
// the catalog's efficiencies for GPU × engine × the model's weight dtype.
func engineModel(cat *catalog.Catalog, engine string, m *catalog.Model, g *catalog.GPU, tp int, eager bool) (*perf.Model, error) {
	if cat == nil {
		return nil, fmt.Errorf("no catalog to take the engine model's efficiencies from")
	}
	if _, ok := perf.Schedules[engine]; !ok {
		engine = "vllm"
	}
	return perf.New(perf.Spec{Model: m, GPU: g, Engine: engine, TP: max(1, tp), EnforceEager: eager, Catalog: cat})
}

// prefillBudget is the engine's default tokens per iteration on g (vLLM's
// max_num_batched_tokens, SGLang's chunked_prefill_size, TensorRT-LLM's
// max_num_tokens), from its newest catalog profile; 8192 when the catalog
// has none.
func prefillBudget(cat *catalog.Catalog, engine string, g *catalog.GPU) int {
	e, _, err := cat.EngineVersion(engine, "")
	if err != nil {
		return 8192
	}
	if e.IsLargeGPU(g.Name, g.MemoryBytes) {
		return e.LargeMaxNumBatchedTokens
	}
	return e.DefaultMaxNumBatchedTokens
}

// EstimatePrefillMS is the prefill time of one request of tokens tokens on
// an idle worker of tp GPUs of kind g, from the engine model: the request's
// chunks of at most the engine's default budget run one iteration each
// (fixed costs, GEMMs at the fitted efficiency of the weight dtype, causal
// attention, all-reduces; kvplan perf --explain shows the terms). It adds
// its figures to d.
func EstimatePrefillMS(cat *catalog.Catalog, engine string, m *catalog.Model, g *catalog.GPU, tokens, tp int, d *Derivation) (float64, error) {
	em, err := engineModel(cat, engine, m, g, tp, false)
	if err != nil {
		return 0, err
	}
	budget := prefillBudget(cat, engine, g)
	ms := em.PrefillMS(tokens, budget)
	first := em.Step([]int{min(tokens, budget)}, nil, nil)
	d.Add("prefill_ms", ms, "ms",
		"Σ over chunks of ≤ max_num_batched_tokens of the engine model's iteration: fixed + dense + experts + lm_head + attention + kv_read + allreduce",
		"%d tokens in chunks of ≤ %d on %d × %s (%s, %s weights); first chunk %.3f + %.3f + %.3f + %.3f + %.3f + %.3f + %.3f",
		tokens, budget, max(1, tp), g.Name, engine, em.WeightDtype, first.FixedMS, first.DenseMS, first.ExpertsMS, first.LMHeadMS,
		first.AttentionMS, first.KVReadMS, first.AllReduceMS)
	note := "efficiencies " + em.Efficiency.Key() + ": " + em.Efficiency.Source
	if em.Fallback != "" {
		note = em.Fallback + "; " + note
	}
	d.Note(note)
	return ms, nil
}
