package planner

import (
	"fmt"
	"math"

	"github.com/kvplan/kvplan/models"
)

// parallelStageWeights is one rank's weights of stage s under attention data
// parallelism and expert parallelism. The routed experts (every MoE layer)
// are spread over the TP × DP GPUs of the stage: each of the EP ranks holds
// (E + redundant) / EP experts, each split MoE TP = TP × DP / EP ways, so a
// GPU holds routed × (E + R) / E / (TP × DP). Everything else (attention,
// dense MLPs, shared experts, norms, embeddings) is split over TP and
// replicated on every DP rank.
func (p *MemoryPlan) parallelStageWeights(sc MemoryScenario, w *weightLayout, st *MemoryStage, s int, d *Derivation, name func(string) string) {
	m := sc.Model
	lay := sc.Parallel.Norm()
	tp, pp := p.TP, p.PP
	routed, _ := models.RoutedExpertParams(m)
	routedBytes := float64(routed) * w.linearBytes
	if routedBytes > w.layersBytes {
		routedBytes = w.layersBytes
	}
	share := float64(st.Layers) / float64(m.Layers)
	rest := (w.layersBytes-routedBytes)*share + embedShare(w, s, pp)
	restRank := rest / float64(tp)
	var routedRank, E, R float64
	if routed > 0 {
		E, R = float64(m.MoE.Experts), float64(sc.RedundantExperts)
		routedRank = routedBytes * share * (E + R) / E / float64(tp*lay.DP)
	}
	st.WeightsBytes = int64(math.Ceil(restRank + routedRank))
	if s == 0 || routedRank > float64(p.RoutedWeightsBytes) {
		p.RoutedWeightsBytes = int64(math.Ceil(routedRank))
	}
	if routed == 0 {
		d.Add(name("weights_bytes"), float64(st.WeightsBytes), "B",
			"ceil((decoder layers' share + embedding on the first stage + lm_head on the last) / tp), on each of the dp ranks (a dense model's dp ranks are replicas)",
			"ceil((%.0f × %d/%d + %.0f) / %d)", w.layersBytes, st.Layers, m.Layers, embedShare(w, s, pp), tp)
		return
	}
	d.Add(name("routed_expert_bytes"), routedBytes, "B", "routed expert params (models.RoutedExpertParams) × bytes per linear weight",
		"%d × %.5g", routed, w.linearBytes)
	d.Add(name("weights_bytes"), float64(st.WeightsBytes), "B",
		"ceil(((layers − routed experts) × stage share + embedding/lm_head) / tp + routed experts × stage share × (experts + redundant) / experts / (tp × dp))",
		"ceil((%.0f × %d/%d + %.0f) / %d + %.0f × %d/%d × (%.0f + %.0f) / %.0f / (%d × %d))",
		w.layersBytes-routedBytes, st.Layers, m.Layers, embedShare(w, s, pp), tp, routedBytes, st.Layers, m.Layers, E, R, E, tp, lay.DP)
}

// embedShare is the embedding and lm_head bytes pipeline stage s of pp holds
// (the first the embedding, the last the lm_head, or the embedding again
// when they are tied and the stages are apart).
func embedShare(w *weightLayout, s, pp int) float64 {
	var b float64
	if s == 0 {
		b += w.embedBytes
	}
	if s == pp-1 {
		if !w.tied {
			b += w.lmHeadBytes
		} else if pp > 1 {
			b += w.embedBytes
		}
	}
	return b
}

// checkParallel checks the memory scenario's layout against the model.
func (sc *MemoryScenario) checkParallel() error {
	lay := sc.Parallel
	if lay.TP != 0 && sc.KV.TP != 0 && lay.TP != sc.KV.TP {
		return fmt.Errorf("parallel layout %s disagrees with tp %d", lay, sc.KV.TP)
	}
	if lay.PP != 0 && lay.PP != max(1, sc.PP) {
		return fmt.Errorf("parallel layout %s disagrees with pp %d", lay, sc.PP)
	}
	lay.TP, lay.PP = max(1, sc.KV.TP), 1 // pp is checked with its own message
	if sc.RedundantExperts < 0 {
		return fmt.Errorf("redundant experts must be >= 0 (got %d)", sc.RedundantExperts)
	}
	mc := *sc.Model
	if sc.RedundantExperts > 0 {
		if mc.MoE == nil || mc.MoE.Experts <= 0 {
			return fmt.Errorf("redundant experts need a mixture-of-experts model; %s is dense", mc.Name)
		}
		moe := *mc.MoE
		moe.Experts += sc.RedundantExperts
		mc.MoE = &moe
	}
	lay.SpeculativeTokens, lay.AcceptanceLength = 0, 0
	return lay.Check(&mc)
}
