package models

import "github.com/kvplan/kvplan/catalog"

// RoutedExpertParams returns the parameters of a mixture-of-experts model's
// routed experts, all MoE layers together: every expert (total) and the
// experts_per_token one token uses (active). Both are 0 for a dense model.
//
// They follow from the catalog's counts: params_total − params_active is the
// routed experts a token does not use, (E − k)/E of them, plus the input
// embedding of an untied model (a lookup, outside params_active), so
//
//	total  = (params_total − params_active − untied input embedding) × E / (E − k)
//	active = total × k / E
func RoutedExpertParams(m *catalog.Model) (total, active int64) {
	if m.MoE == nil || m.ParamsActive == 0 || m.MoE.Experts <= m.MoE.ExpertsPerToken {
		return 0, 0
	}
	unused := m.ParamsTotal - m.ParamsActive
	if !m.TiedEmbeddings {
		unused -= int64(m.VocabSize) * int64(m.HiddenSize)
	}
	if unused <= 0 {
		return 0, 0
	}
	e, k := int64(m.MoE.Experts), int64(m.MoE.ExpertsPerToken)
	total = unused * e / (e - k)
	return total, total * k / e
}
