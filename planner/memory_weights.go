package planner

import (
	"fmt"
	"math"
	"sort"

	"github.com/kvplan/kvplan/catalog"
)

// unquantizedDtypes are the --dtype choices: bytes of a weight and of an
// activation element.
var unquantizedDtypes = map[string]float64{"fp32": 4, "fp16": 2, "bf16": 2}

// quantLayout is how a quantized checkpoint stores its linear layers: bits of
// a weight plus its share of the scales. Embeddings and the lm_head stay in
// the activation dtype (bf16/fp16), as the quantizers (llm-compressor,
// AutoAWQ, GPTQ, ModelOpt) leave them.
type quantLayout struct {
	bytesPerWeight func(group int) float64
	formula        string
}

var quantLayouts = map[string]quantLayout{
	"fp8":   {func(int) float64 { return 1 }, "1 B per weight (per-channel or per-tensor scales are negligible)"},
	"int8":  {func(int) float64 { return 1 }, "1 B per weight (per-channel scales are negligible)"},
	"int4":  {func(g int) float64 { return 0.5 + 2/float64(g) }, "0.5 B per weight + a 2-byte fp16 scale per group"},
	"gptq":  {func(g int) float64 { return 0.5 + 2/float64(g) }, "0.5 B per weight + a 2-byte fp16 scale per group (symmetric)"},
	"awq":   {func(g int) float64 { return 0.5 + 2.5/float64(g) }, "0.5 B per weight + a 2-byte scale and a 4-bit zero per group"},
	"nvfp4": {func(int) float64 { return 0.5 + 1.0/16 }, "0.5 B per weight + a 1-byte fp8 scale per 16 weights"},
	"mxfp4": {func(int) float64 { return 0.5 + 1.0/32 }, "0.5 B per weight + a 1-byte e8m0 scale per 32 weights"},
}

// weightDtypeQuant maps a catalog weight_dtype that is a quantized layout to
// the layout.
var weightDtypeQuant = map[string]string{"fp8": "fp8", "int8": "int8", "int4": "int4", "mxfp4": "mxfp4", "nvfp4": "nvfp4"}

func quantNames() []string {
	var n []string
	for k := range quantLayouts {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// weightLayout is a model's weight memory split into the parts that land on
// different pipeline stages, in bytes for the whole model (all tp ranks).
type weightLayout struct {
	embedBytes   float64 // one vocab × hidden matrix
	layersBytes  float64 // every decoder layer (attention, MLP or experts, norms; vision towers too)
	lmHeadBytes  float64 // 0 when tied (the embedding matrix serves); with pp > 1 the last stage holds a copy
	tied         bool
	dtype        string  // what the weights are stored as: bf16, fp32, fp8, int4 ...
	quant        string  // the quantized layout, or ""
	actBytes     float64 // bytes of an activation element
	fromCheckpt  bool    // from the catalog's weights_bytes
	formula      string
	values       string
	totalBytes   float64
	linearParams int64
	embedParams  int64
	linearBytes  float64 // bytes of one linear-layer weight (the routed experts' too)
}

// planWeights lays out a model's weights under the flags: the catalog's
// weights_bytes (a checkpoint's size) when set and nothing overrides it,
// else params × bytes of the dtype, or, for a quantized layout, its linear
// layers at the layout's width and the embeddings at 16 bits.
func planWeights(m *catalog.Model, dtype, quant string, group int) (*weightLayout, error) {
	if group == 0 {
		group = 128
	}
	emb := int64(m.VocabSize) * int64(m.HiddenSize)
	mats := int64(2)
	if m.TiedEmbeddings {
		mats = 1
	}
	w := &weightLayout{tied: m.TiedEmbeddings, embedParams: emb}
	w.linearParams = max(0, m.ParamsTotal-mats*emb)
	if quant == "" && dtype == "" {
		quant = weightDtypeQuant[m.WeightDtype]
	}
	w.actBytes = 2
	switch {
	case quant != "":
		q, ok := quantLayouts[quant]
		if !ok {
			return nil, fmt.Errorf("quantization %q is not one of %v", quant, quantNames())
		}
		b := q.bytesPerWeight(group)
		w.quant, w.dtype = quant, quant
		w.layersBytes = float64(w.linearParams) * b
		w.linearBytes = b
		w.embedBytes = float64(emb) * 2
		w.formula = fmt.Sprintf("(params_total − embedding matrices) × %s + embedding matrices × 2 B", q.formula)
		w.values = fmt.Sprintf("(%d − %d × %d) × %.5g + %d × %d × 2", m.ParamsTotal, mats, emb, b, mats, emb)
	case dtype != "" || m.WeightsBytes == 0:
		if dtype == "" {
			dtype = m.WeightDtype
		}
		b, ok := unquantizedDtypes[dtype]
		if !ok {
			if b, ok = catalog.DtypeBytes(dtype); !ok {
				return nil, fmt.Errorf("model %s: weight dtype %q is not one of fp32, bf16, fp16, fp8, int8, int4, mxfp4", m.Name, dtype)
			}
		}
		w.dtype = dtype
		if dtype == "fp32" {
			w.actBytes = 4
		}
		w.layersBytes = float64(w.linearParams) * b
		w.linearBytes = b
		w.embedBytes = float64(emb) * b
		w.formula = "params_total × bytes per weight"
		w.values = fmt.Sprintf("%d × %g", m.ParamsTotal, b)
	default:
		w.dtype, w.fromCheckpt = m.WeightDtype, true
		// Spread the checkpoint's bytes over the parts by parameter share.
		per := float64(m.WeightsBytes) / float64(max(1, m.ParamsTotal))
		w.layersBytes = float64(w.linearParams) * per
		w.linearBytes = per
		w.embedBytes = float64(emb) * per
		w.formula = "the catalog's weights_bytes (the checkpoint's size)"
		w.values = fmt.Sprintf("%d", m.WeightsBytes)
	}
	if !w.tied {
		w.lmHeadBytes = w.embedBytes
	}
	w.totalBytes = w.layersBytes + w.embedBytes + w.lmHeadBytes
	return w, nil
}

// stageBytes is the weight memory of one rank of pipeline stage s (of pp),
// which holds layers of the model's total: the first stage holds the
// embedding, the last the lm_head (a copy of the embedding when tied and pp >
// 1). Tensor parallelism splits every part over tp ranks (vocab-parallel
// embeddings, row/column-parallel linear layers; the norms it replicates are
// negligible).
func (w *weightLayout) stageBytes(layers, total, s, pp, tp int) int64 {
	b := w.layersBytes * float64(layers) / float64(total)
	if s == 0 {
		b += w.embedBytes
	}
	if s == pp-1 {
		switch {
		case !w.tied:
			b += w.lmHeadBytes
		case pp > 1:
			b += w.embedBytes
		}
	}
	return int64(math.Ceil(b / float64(tp)))
}

// stageLayers splits layers over pp stages as vLLM's get_pp_indices does:
// layers / pp each, the remainder one more on the stages before the last.
func stageLayers(layers, pp int) []int {
	out := make([]int, pp)
	for i := range out {
		out[i] = layers / pp
	}
	for i := 0; i < layers%pp; i++ {
		out[pp-2-i%max(1, pp-1)]++
	}
	return out
}
