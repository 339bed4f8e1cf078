package models

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/catalog"
)

// MaxListedTP is the largest tensor parallelism CheckTP lists among the
// values that would work.
const MaxListedTP = 64

// TPError is a tensor parallelism the engine refuses for a model.
type TPError struct {
	Model string
	TP    int
	Why   string // "64 attention heads are not divisible by tp 3"
	Valid []int  // tp values up to MaxListedTP that divide the model
}

func (e *TPError) Error() string {
	valid := make([]string, len(e.Valid))
	for i, v := range e.Valid {
		valid[i] = fmt.Sprint(v)
	}
	return fmt.Sprintf("tp %d does not fit %s: %s (vLLM needs attention heads %% tp == 0, and kv heads %% tp == 0 or tp %% kv heads == 0); tp that would: %s",
		e.TP, e.Model, e.Why, strings.Join(valid, ", "))
}

// CheckTP reports whether a model's heads split over tp tensor-parallel
// ranks the way vLLM requires, and returns a *TPError when they do not:
//
//   - attention (query) heads % tp == 0 (vLLM ModelConfig.verify_with_parallel_config:
//     "Total number of attention heads (…) must be divisible by tensor parallel size (…)");
//   - for every MHA/GQA layer group, kv heads % tp == 0 (each rank holds
//     kv heads / tp) or tp % kv heads == 0 (each kv head is replicated on
//     tp / kv heads ranks) (vLLM QKVParallelLinear, which divide()s one by the other);
//   - MLA caches one latent that every rank replicates, so its kv heads do
//     not constrain tp; its query heads do.
//
// Not checked, because the catalog does not hold the figures: the heads of
// linear-attention and Mamba layers, and a mixture of experts' intermediate size,
// which vLLM shards over tp (the expert count constrains only expert
// parallelism, which kvplan does not plan).
func CheckTP(m *catalog.Model, tp int) error {
	if tp < 1 {
		return fmt.Errorf("tp %d: want 1 or more tensor-parallel ranks", tp)
	}
	if why := tpProblem(m, tp); why != "" {
		e := &TPError{Model: m.Name, TP: tp, Why: why}
		for v := 1; v <= MaxListedTP; v++ {
			if tpProblem(m, v) == "" {
				e.Valid = append(e.Valid, v)
			}
		}
		return e
	}
	return nil
}

func tpProblem(m *catalog.Model, tp int) string {
	if m.AttentionHeads > 0 && m.AttentionHeads%tp != 0 {
		return fmt.Sprintf("%d attention heads are not divisible by tp %d", m.AttentionHeads, tp)
	}
	if m.MLA != nil {
		return ""
	}
	layout := m.Layout
	if len(layout) == 0 {
		layout = []catalog.LayerGroup{{Kind: catalog.LayerFull, Count: m.Layers}}
	}
	for _, g := range layout {
		if g.Kind == catalog.LayerLinear || g.Kind == catalog.LayerMamba {
			continue // no kv heads; their own heads are not in the catalog
		}
		kv := g.KVHeads
		if kv == 0 {
			kv = m.KVHeads
		}
		if kv > 0 && kv%tp != 0 && tp%kv != 0 {
			what := "kv heads"
			if len(m.Layout) > 1 {
				what = g.Kind + " layers' kv heads"
			}
			return fmt.Sprintf("%d %s are not divisible by tp %d, nor tp by them", kv, what, tp)
		}
	}
	return ""
}

// CheckContext returns an error naming the model's context when tokens
// exceed its max_context (max_position_embeddings); a model with no
// max_context in the catalog accepts any count.
func CheckContext(m *catalog.Model, tokens int) error {
	if m.MaxContext > 0 && tokens > m.MaxContext {
		return fmt.Errorf("%d tokens are past %s's max context of %d tokens (max_position_embeddings)", tokens, m.Name, m.MaxContext)
	}
	return nil
}
