package models

import "github.com/kvplan/kvplan/catalog"

// PrefillFLOPs estimates the forward FLOPs of a prefill of tokens tokens on
// one sequence (all tensor-parallel ranks together):
//
//	2 × matmul_params × tokens            (every weight is one multiply-add per token)
//	+ 2 × vocab × hidden                  (logits of the last token only, as engines do)
//	+ Σ layers 4 × q_heads × head_dim × pairs
//
// matmul_params are the active parameters less the embedding matrices (see
// MatmulParams): the input embedding is a lookup, not a matmul, and a
// prefill computes logits for its last token alone.
//
// where pairs is the number of (query, key) positions a causal layer
// attends: n(n+1)/2 for full attention, Σ min(i, window) for a sliding layer,
// n²/(2 ratio) more for a compressed layer's entries, and 0 for linear
// attention and Mamba (their cost is linear and sits in the weights term).
// Sparse attention's top-k selection (DSA indexers) is not modelled: its
// layers count as full attention, an over-estimate at long context. QKᵀ and AV are 2 × head_dim FLOPs each per pair and head.
func PrefillFLOPs(m *catalog.Model, tokens int) (weightFLOPs, attnFLOPs float64) {
	weightFLOPs = 2*float64(MatmulParams(m))*float64(tokens) + 2*float64(m.VocabSize)*float64(m.HiddenSize)
	qHeads := m.AttentionHeads
	if qHeads == 0 {
		qHeads = m.KVHeads
	}
	headDim := m.HeadDim
	if headDim == 0 && m.MLA != nil {
		headDim = m.MLA.KVLoraRank / 4 // no head_dim: a conservative stand-in
	}
	n := float64(tokens)
	layout := m.Layout
	if len(layout) == 0 {
		layout = []catalog.LayerGroup{{Kind: catalog.LayerFull, Count: m.Layers}}
	}
	for _, g := range layout {
		d := g.HeadDim
		if d == 0 {
			d = headDim
		}
		var pairs float64
		window := func() float64 {
			w := float64(g.Window)
			if n <= w {
				return n * (n + 1) / 2
			}
			return w*(w+1)/2 + (n-w)*w
		}
		switch g.Kind {
		case catalog.LayerLinear, catalog.LayerMamba:
			continue
		case catalog.LayerSliding:
			pairs = window()
		case catalog.LayerCompressed:
			// The window, and every compressed entry before the query: Σ ⌊i / ratio⌋ ≈ n² / (2 ratio).
			pairs = window() + n*n/(2*float64(g.Ratio))
		default:
			pairs = n * (n + 1) / 2
		}
		attnFLOPs += float64(g.Count) * 4 * float64(qHeads) * float64(d) * pairs
	}
	return weightFLOPs, attnFLOPs
}

// MatmulParams is the number of parameters one token multiplies through in
// the decoder: the active parameters less the embedding matrices. The
// catalog counts a tied embedding once in params_total, an untied model's
// input and output embeddings twice, and for MoE models params_active
// excludes the input embedding but includes the output one (catalog/data
// convention), so exactly one vocab × hidden matrix comes off then.
func MatmulParams(m *catalog.Model) int64 {
	emb := int64(m.VocabSize) * int64(m.HiddenSize)
	active, embeddings := m.ParamsActive, emb
	if active == 0 {
		active = m.ParamsTotal
		if !m.TiedEmbeddings {
			embeddings = 2 * emb
		}
	}
	if active-embeddings <= 0 {
		return active // no vocabulary figures: count every parameter
	}
	return active - embeddings
}
