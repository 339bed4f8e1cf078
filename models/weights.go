package models

import (
	"fmt"
	"math"

	"github.com/kvplan/kvplan/catalog"
)

// TiedEmbeddingsConvention states how tied embeddings enter the weight bytes.
const TiedEmbeddingsConvention = "params_total counts a tied embedding matrix once, as the checkpoint stores it; " +
	"the engine shares the one matrix between the input embedding and the lm_head, so no bytes are added"

// Weights is a model's weight memory, whole and per tensor-parallel rank.
type Weights struct {
	Params          int64   // parameters counted (params_total)
	BytesPerParam   float64 // of the weight dtype; 0 when WeightsBytes came from the catalog
	TotalBytes      int64   // all ranks
	TP              int     // tensor-parallel ranks (≥ 1)
	PerRankBytes    int64   // ceil(TotalBytes / TP)
	FromCatalog     bool    // TotalBytes is the catalog's weights_bytes, not params × dtype
	Dtype           string  // weight dtype
	TiedEmbeddings  bool
	EmbeddingParams int64 // vocab_size × hidden_size, counted once when tied, twice otherwise
}

// NewWeights computes a model's weight bytes: the catalog's weights_bytes when
// set (mixed precision checkpoints), else params_total × bytes of the weight
// dtype (bf16 2, fp8 1, int4 0.5, mxfp4 4.25 bits). Tied embeddings are
// already counted once in params_total (TiedEmbeddingsConvention). Under
// tensor parallelism every rank holds 1/tp of the weights: linear layers are
// split by rows or columns, embeddings and the lm_head by vocabulary; only
// the norms are replicated, which is negligible.
func NewWeights(m *catalog.Model, tp int) (*Weights, error) {
	if tp < 1 {
		tp = 1
	}
	w := &Weights{Params: m.ParamsTotal, TP: tp, Dtype: m.WeightDtype, TiedEmbeddings: m.TiedEmbeddings}
	emb := int64(m.VocabSize) * int64(m.HiddenSize)
	if m.TiedEmbeddings {
		w.EmbeddingParams = emb
	} else {
		w.EmbeddingParams = 2 * emb
	}
	if m.WeightsBytes > 0 {
		w.TotalBytes, w.FromCatalog = m.WeightsBytes, true
	} else {
		b, ok := catalog.DtypeBytes(m.WeightDtype)
		if !ok {
			return nil, fmt.Errorf("model %s: weight dtype %q is not one of fp32, bf16, fp16, fp8, int8, int4, mxfp4, nvfp4, fp4", m.Name, m.WeightDtype)
		}
		w.BytesPerParam = b
		w.TotalBytes = int64(math.Ceil(float64(m.ParamsTotal) * b))
	}
	w.PerRankBytes = (w.TotalBytes + int64(tp) - 1) / int64(tp)
	return w, nil
}

// MLPWidth estimates the number of elements a gated MLP materialises per
// token in one decoder layer (gate_up and its activated half: 3 ×
// intermediate_size, all active experts for a mixture of experts), from the
// parameters alone, since the catalog holds no intermediate size:
//
//	per-layer params = (params_active − embedding params) / layers
//	attention params = hidden × head_dim × (2 × attention_heads + 2 × kv_heads)   (q, k, v, o)
//	MLP width        = (per-layer params − attention params) / hidden
//
// For MLA models the attention projections are not in the catalog and are
// left in the MLP width, which over-estimates it (conservative). It returns
// 0 when hidden_size or layers is unknown.
func MLPWidth(m *catalog.Model) float64 {
	if m.HiddenSize <= 0 || m.Layers <= 0 {
		return 0
	}
	params := m.ParamsActive
	if params == 0 {
		params = m.ParamsTotal
	}
	emb := int64(m.VocabSize) * int64(m.HiddenSize)
	if !m.TiedEmbeddings {
		emb *= 2
	}
	perLayer := float64(params-emb) / float64(m.Layers)
	var attn float64
	if m.MLA == nil && m.AttentionHeads > 0 {
		attn = float64(m.HiddenSize) * float64(m.HeadDim) * float64(2*m.AttentionHeads+2*m.KVHeads)
	}
	width := (perLayer - attn) / float64(m.HiddenSize)
	if width < 0 {
		return 0
	}
	return width
}
