// Package hfimport reads Hugging Face config.json files into catalog model
// entries: the decoder's layer layout, KV geometry, linear-attention and
// Mamba state dimensions, parameter counts and the weight bytes that a
// quantization block implies. The KV arithmetic itself lives in models.
package hfimport

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/kvplan/kvplan/catalog"
)

// Options are the choices of an import.
type Options struct {
	Name         string // the entry's name; "" derives it from _name_or_path or the file name
	Engine       string // whose linear and Mamba state convention the notes lead with; "" = vllm
	WeightsBytes int64  // the checkpoint's size, when known: it replaces the weight bytes kvplan estimates

	// QuantConfig is a checkpoint's separate hf_quant_config.json (modelopt
	// writes one beside config.json), read when config.json has no
	// quantization_config; QuantFile names it in errors.
	QuantConfig []byte
	QuantFile   string
}

// ImportConfig is Import with only a name.
func ImportConfig(data []byte, file string, name string) (*catalog.Model, []string, error) {
	return Import(data, file, Options{Name: name})
}

// Import reads a Hugging Face config.json (its bytes; file names it in
// errors and in the entry's source) and returns a catalog entry, with notes
// for the user on every choice the config left open (a head_dim that differs
// from hidden/heads, a missing dtype, a sliding window that is switched off).
// opts.Name overrides the entry's name; "" derives it from _name_or_path or
// the file name ("Qwen--Qwen3-0.6B.json" → "qwen3-0.6b").
//
// A config it cannot interpret is an *ImportError naming the missing or
// contradictory field and, where it helps, the family; malformed JSON names
// file:line:col. It never guesses silently. The entry it returns passes
// catalog validation.
//
// Conventions:
//   - Layers counts the layers that hold a KV cache or a state: attention,
//     linear-attention and Mamba layers. MLP- or MoE-only blocks of hybrid
//     patterns (Nemotron-H '-' and 'E'), and Llama-Nemotron's layers whose
//     attention is a no_op, hold none and are left out (a note says so).
//     Multi-token-prediction layers go to MTPLayers, not Layers.
//   - The KV dtype is the model's torch_dtype (a quantized checkpoint keeps a
//     16-bit KV cache) unless the checkpoint declares an fp8 KV cache, or
//     the engines serve the architecture only in fp8 (DeepSeek-V4).
//   - Linear and Mamba layers keep their state's dimensions; the bytes follow
//     the engine's state convention (models.StateConvention); the notes give
//     both vLLM's and SGLang's figures, opts.Engine's first.
//   - For MLA, KVHeads and HeadDim describe the decompressed attention
//     (num_key_value_heads × (qk_nope_head_dim + qk_rope_head_dim)); the cache
//     holds one latent of kv_lora_rank + qk_rope_head_dim.
//   - Parameters follow params.go, weight bytes quant.go; ParamsActive is set
//     for MoE models only.
func Import(data []byte, file string, opts Options) (*catalog.Model, []string, error) {
	c, err := parseConfig(data, file)
	if err != nil {
		return nil, nil, err
	}
	imp := &importer{c: c, a: &arch{}, opts: opts}
	m, err := imp.run(opts.Name)
	if err != nil {
		return nil, nil, err
	}
	// The entry must be one the catalog accepts as it is printed.
	out, err := EncodeTOML(m)
	if err != nil {
		return nil, nil, err
	}
	if _, err := catalog.Parse(file+" (imported entry)", out); err != nil {
		return nil, nil, fmt.Errorf("%s: the imported entry does not validate: %w", file, err)
	}
	imp.stateNotes(m)
	return m, imp.notes, nil
}

// arch is what the importer reads from a config: the decoder's geometry,
// layer by layer, and what the parameter count needs.
type arch struct {
	modelType string
	layers    int // num_hidden_layers: blocks of every kind, MTP excluded
	hidden    int
	heads     int
	kvHeads   int
	headDim   int
	vocab     int
	maxCtx    int
	tied      bool
	attnBias  bool
	qGate     bool // attention output gate: q_proj is twice as wide (Qwen3-Next)
	qkNorm    bool // per-head RMS norms of q and k (Qwen3, Gemma-3/4, OLMo-2)

	baseDtype   string // torch_dtype: the dtype of weights a quantization leaves alone
	weightDtype string
	kvDtype     string
	kvBytes     int64  // bytes of one KV element
	ssmDtype    string // the recurrent state's dtype as the config pins it; "" = the engine's default

	mla        *mlaDims
	lin        *linearDims
	kda        *kdaDims
	mamba      *mambaDims
	mamba1     *mamba1Dims
	specs      []layerSpec
	mtp        int
	compressed bool // DeepSeek-V4's compressed attention (compress_ratios)
	indexDim   int  // a sparse-attention indexer's index_head_dim
	indexHeads int  // its index_n_heads

	ffn ffnDims
}

// mlaDims are the multi-head latent attention ranks and head dimensions.
// DeepSeek-V4 caches one head_dim latent (kvLoraRank = head_dim − rope)
// and projects its output through o_groups low-rank groups.
type mlaDims struct {
	qLoraRank, kvLoraRank, qkNope, qkRope, vHead int
	fp8Entry                                     int // packed fp8 latent bytes (FlashMLA sparse), 0 = one byte an element
	v4                                           bool
	oGroups, oLoraRank                           int
}

type importer struct {
	c            *hfConfig
	a            *arch
	opts         Options
	notes        []string
	blockPattern bool // layers are single-purpose blocks (hybrid_override_pattern, layers_block_type)
}

func (imp *importer) note(format string, a ...any) {
	imp.notes = append(imp.notes, fmt.Sprintf(format, a...))
}

func (imp *importer) run(name string) (*catalog.Model, error) {
	c, a := imp.c, imp.a
	var err error
	if a.modelType, err = c.str("model_type"); err != nil {
		return nil, err
	}
	if c.prefix != "" {
		imp.note("the decoder is read from %s (a multimodal wrapper); other towers are not counted", strings.TrimSuffix(c.prefix, "."))
	}
	if err := imp.refuseUnsupported(); err != nil {
		return nil, err
	}
	imp.useClassDefaults()
	if a.layers, err = imp.layerCount(); err != nil {
		return nil, err
	}
	if a.hidden, err = c.positive("hidden_size", "n_embd", "d_model"); err != nil {
		return nil, err
	}
	if pureMamba(a.modelType) {
		// No attention anywhere: heads are optional.
		if a.heads, _, err = c.optPositive("num_attention_heads", "n_head", "num_heads"); err != nil {
			return nil, err
		}
	} else if a.heads, err = c.positive("num_attention_heads", "n_head", "num_heads"); err != nil {
		return nil, err
	}
	if a.vocab, err = c.positive("vocab_size", "padded_vocab_size"); err != nil {
		return nil, err
	}
	if a.maxCtx, err = c.nonNeg("max_position_embeddings", "n_positions", "seq_length"); err != nil {
		return nil, err
	}
	tied, hasTied, err := c.bool("tie_word_embeddings")
	if err != nil {
		return nil, err
	}
	a.tied = tied
	if !hasTied {
		// transformers' default differs by model class: Gemma, Falcon and
		// GPT-2 tie their embeddings, Llama, Mistral, Qwen and most others not.
		a.tied = tiedByDefault(a.modelType)
		imp.note("tie_word_embeddings missing: taken as %t, the transformers default for model_type %q", a.tied, a.modelType)
	}
	a.qkNorm = qkNormTypes(a.modelType)
	if a.attnBias, _, err = c.bool("attention_bias"); err != nil {
		return nil, err
	}
	gate, hasGate, err := c.bool("attn_output_gate")
	if err != nil {
		return nil, err
	}
	a.qGate = gate || (!hasGate && a.modelType == "qwen3_next")
	if a.mtp, err = c.nonNeg("num_nextn_predict_layers", "mtp_num_hidden_layers"); err != nil {
		return nil, err
	}
	if a.mtp > 0 {
		imp.note("%d multi-token-prediction layer(s) are not counted in layers, KV bytes or parameters (mtp_layers = %d)", a.mtp, a.mtp)
	}
	if err := imp.dtypes(); err != nil {
		return nil, err
	}
	if err := imp.readMLA(); err != nil {
		return nil, err
	}
	if a.heads > 0 {
		if err := imp.headGeometry(); err != nil {
			return nil, err
		}
	}
	if err := imp.buildLayers(); err != nil {
		return nil, err
	}
	if err := imp.markIndexers(); err != nil {
		return nil, err
	}
	if err := imp.markMiniMaxSparse(); err != nil {
		return nil, err
	}
	if err := imp.readIndexer(); err != nil {
		return nil, err
	}
	if err := imp.readStateDims(); err != nil {
		return nil, err
	}
	layout, cacheLayers := a.catalogLayout()
	if cacheLayers == 0 {
		return nil, c.errf("num_hidden_layers", "none of the %d layers is an attention, linear-attention or Mamba layer", a.layers)
	}
	if cacheLayers != a.layers {
		imp.note("%d of %d blocks hold no cache (MLP- or MoE-only, or attention replaced); layers = %d counts the attention, linear-attention and Mamba layers",
			a.layers-cacheLayers, a.layers, cacheLayers)
	}
	if len(layout) > 0 {
		imp.note("layout: %s", describeGroups(layout))
	}
	if err := imp.readFFN(); err != nil {
		return nil, err
	}
	if a.paramsOverflow() {
		return nil, c.errf("num_hidden_layers", "with these dimensions the model would have more than 10^15 parameters; check the config")
	}
	p := a.countParams()
	m := &catalog.Model{
		ParamsTotal:    p.Total(),
		WeightDtype:    a.weightDtype,
		TiedEmbeddings: a.tied,
		VocabSize:      a.vocab,
		HiddenSize:     a.hidden,
		AttentionHeads: a.heads,
		MaxContext:     a.maxCtx,
		Layers:         cacheLayers,
		KVHeads:        a.kvHeads,
		HeadDim:        a.headDim,
		KVDtype:        a.kvDtype,
		MTPLayers:      a.mtp,
		Layout:         layout,
		Source:         fmt.Sprintf("imported from %s by kvplan models import", c.file),
	}
	if a.ffn.experts > 0 {
		m.ParamsActive = p.Active()
	}
	if a.mla != nil {
		m.MLA = &catalog.MLA{KVLoraRank: a.mla.kvLoraRank, QKRopeHeadDim: a.mla.qkRope, FP8EntryBytes: a.mla.fp8Entry}
		if a.heads == 0 {
			m.KVHeads, m.HeadDim = 0, 0
		}
	}
	if err := imp.weights(m, p); err != nil {
		return nil, err
	}
	if m.KVDtype != a.baseDtype {
		m.Dtype = a.baseDtype
	}
	if err := imp.name(m, name); err != nil {
		return nil, err
	}
	imp.defaultNotes()
	return m, nil
}

// maxLayers bounds num_hidden_layers (real models have a few hundred).
const maxLayers = 10_000

// paramsOverflow reports whether a float bound on the parameters exceeds
// 10^15, far beyond any model and safely inside int64, so that no product
// of the parameter count can overflow. The bound takes, per layer, the
// largest product of three dimensions any weight of params.go multiplies,
// times the experts.
func (a *arch) paramsOverflow() bool {
	f := a.ffn
	H, L := float64(a.hidden), float64(a.layers)
	A := float64(max(a.heads, 1))
	widths := []int{f.intermediate, f.expertI, f.sharedI, f.latent, a.heads * a.headDim, a.indexHeads * a.indexDim, 1}
	for _, s := range a.specs {
		widths = append(widths, s.ffnWidth, s.headDim*a.heads)
	}
	if l := a.lin; l != nil {
		widths = append(widths, 2*l.kHeads*l.kDim+2*l.vHeads*l.vDim+2*l.vHeads)
	}
	if k := a.kda; k != nil {
		widths = append(widths, 6*k.heads*k.headDim)
	}
	if m := a.mamba; m != nil {
		widths = append(widths, 2*m.heads*m.headDim+2*m.groups*m.state+m.heads)
	}
	if m := a.mamba1; m != nil {
		widths = append(widths, 2*m.inner, m.inner*(m.dtRank+2*m.state+2)/max(a.hidden, 1)+1)
	}
	width := 1.0
	for _, w := range widths {
		width = max(width, float64(w))
	}
	model := max(H, float64(f.latent))
	perLayer := model * width * (8 + 3*float64(f.experts))
	if m := a.mla; m != nil {
		r := float64(max(m.qLoraRank, m.kvLoraRank, m.oLoraRank, m.oGroups, a.hidden))
		qk := float64(m.qkNope + m.qkRope + m.vHead)
		perLayer += 4 * r * A * qk
	}
	return L*perLayer+2*float64(a.vocab)*H > 1e15
}

// unsupported lists model types whose KV layout the importer cannot read
// from config.json, with the reason.
var unsupported = map[string]string{
	"falcon_h1":       "Falcon-H1 runs attention and Mamba in parallel in every layer",
	"zamba":           "Zamba's shared attention blocks",
	"zamba2":          "Zamba2's shared attention blocks",
	"rwkv":            "an RWKV model",
	"rwkv7":           "an RWKV-7 model",
	"recurrent_gemma": "RecurrentGemma's RG-LRU layers",
	"minimax":         "MiniMax-01's lightning-attention layout",
}

// pureMamba reports whether every layer of a model type is a Mamba mixer.
func pureMamba(modelType string) bool { return modelType == "mamba" || modelType == "falcon_mamba" }

// layerCount is num_hidden_layers (n_layer, num_layers), or, when a config
// gives its layers only as a list (Nemotron-3's layers_block_type), the
// list's length.
func (imp *importer) layerCount() (int, error) {
	c := imp.c
	n, _, ok, err := c.intAlias("num_hidden_layers", "n_layer", "num_layers")
	if err != nil {
		return 0, err
	}
	if !ok {
		for _, key := range []string{"layers_block_type", "block_configs", "layer_types"} {
			l, has, err := c.list(key)
			if err != nil {
				return 0, err
			}
			if has && len(l) > 0 {
				imp.note("num_hidden_layers missing: the %d entries of %s are the layers", len(l), key)
				n, ok = len(l), true
				break
			}
		}
	}
	if !ok {
		return c.positive("num_hidden_layers", "n_layer", "num_layers") // the missing-field error
	}
	if n <= 0 {
		return 0, c.errf("num_hidden_layers", "must be > 0 (got %d)", n)
	}
	if n > maxDim {
		return 0, c.errf("num_hidden_layers", "is %d; no real model has a dimension above %d", n, maxDim)
	}
	if n > maxLayers {
		return 0, c.errf("num_hidden_layers", "is %d; no real model has more than %d layers", n, maxLayers)
	}
	return n, nil
}

func (imp *importer) refuseUnsupported() error {
	if why, ok := unsupported[imp.a.modelType]; ok {
		return imp.c.errf("model_type", "%q is not supported: kvplan cannot read %s from config.json; write the catalog entry by hand", imp.a.modelType, why)
	}
	return nil
}

// tiedByDefault is transformers' tie_word_embeddings default for a model type.
func tiedByDefault(modelType string) bool {
	return strings.HasPrefix(modelType, "gemma") || modelType == "falcon" || modelType == "gpt2"
}

// qkNormTypes reports whether a model type normalises q and k per head.
func qkNormTypes(modelType string) bool {
	for _, p := range []string{"qwen3", "gemma3", "gemma4", "olmo2"} {
		if strings.HasPrefix(modelType, p) {
			return true
		}
	}
	return false
}

// hfDtypes maps config.json dtype names to kvplan's.
var hfDtypes = map[string]string{
	"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
	"bf16": "bf16", "fp16": "fp16", "fp32": "fp32",
}

func hfDtypeList() string {
	var l []string
	for k := range hfDtypes {
		l = append(l, k)
	}
	sort.Strings(l)
	return strings.Join(l, ", ")
}

// dtypes sets the weight and KV dtypes from torch_dtype (or dtype) and
// quantization_config.
func (imp *importer) dtypes() error {
	c, a := imp.c, imp.a
	td, err := c.str("torch_dtype")
	if err != nil {
		return err
	}
	d2, err := c.str("dtype")
	if err != nil {
		return err
	}
	key := "torch_dtype"
	switch {
	case td == "":
		td, key = d2, "dtype"
	case d2 != "" && d2 != td:
		return c.errf("dtype", "is %q but torch_dtype is %q; they name the same thing", d2, td)
	}
	var dtype string
	if td == "" {
		dtype = "bf16"
		imp.note("torch_dtype and dtype are missing: assuming bf16 weights and KV cache")
	} else {
		var ok bool
		if dtype, ok = hfDtypes[td]; !ok {
			return c.errf(key, "%q is not one of %s", td, hfDtypeList())
		}
	}
	if dtype == "fp32" {
		// vLLM's --dtype auto serves a float32 checkpoint in fp16, or in bf16
		// for the models that overflow in fp16 (Gemma-2 and -3).
		served := "fp16"
		if strings.HasPrefix(a.modelType, "gemma") {
			served = "bf16"
		}
		imp.note("%s is float32: weights and KV cache are taken as %s, as vLLM's --dtype auto serves a float32 checkpoint", key, served)
		dtype = served
	}
	a.baseDtype, a.weightDtype, a.kvDtype = dtype, dtype, dtype
	b, _ := catalog.DtypeBytes(a.kvDtype)
	a.kvBytes = int64(b)
	return nil
}

// readMLA reads multi-head latent attention, when kv_lora_rank is set, or
// DeepSeek-V4's latent attention (compress_ratios with one kv head of
// head_dim, K and V in one latent whose last qk_rope_head_dim elements are
// rotated).
func (imp *importer) readMLA() error {
	c, a := imp.c, imp.a
	kvRank, ok, err := c.optPositive("kv_lora_rank")
	if err != nil {
		return err
	}
	if !ok && c.has("compress_ratios") {
		return imp.readV4Latent()
	}
	if !ok {
		return nil
	}
	m := &mlaDims{kvLoraRank: kvRank}
	if m.qkRope, err = c.positive("qk_rope_head_dim"); err != nil {
		return err
	}
	if m.qkNope, err = c.positive("qk_nope_head_dim"); err != nil {
		return err
	}
	if m.vHead, err = c.positive("v_head_dim"); err != nil {
		return err
	}
	if m.qLoraRank, _, err = c.optPositive("q_lora_rank"); err != nil {
		return err
	}
	a.mla = m
	imp.note("MLA: each layer caches one latent of kv_lora_rank %d + qk_rope_head_dim %d = %d elements per token, not split by tensor parallelism",
		kvRank, m.qkRope, kvRank+m.qkRope)
	return nil
}

// readV4Latent reads DeepSeek-V4's latent: head_dim elements per entry, one
// kv head, of which qk_rope_head_dim are rotated. vLLM stores it only in
// fp8 ("DeepseekV4 only supports fp8 kv-cache format", fp8_ds_mla): the
// NoPE part in fp8, the RoPE part in bf16, one ue8m0 scale per 64 NoPE
// elements and a pad byte: (head_dim − rope) + 2 × rope + (head_dim − rope) / 64 + 1.
func (imp *importer) readV4Latent() error {
	c, a := imp.c, imp.a
	dim, err := c.positive("head_dim")
	if err != nil {
		return err
	}
	rope, err := c.positive("qk_rope_head_dim")
	if err != nil {
		return err
	}
	if rope >= dim {
		return c.errf("qk_rope_head_dim", "%d is not below head_dim %d, which holds it", rope, dim)
	}
	if kv, _, ok, err := c.intAlias("num_key_value_heads"); err != nil {
		return err
	} else if ok && kv != 1 {
		return c.errf("num_key_value_heads", "is %d; compressed attention (compress_ratios) caches one latent, one kv head", kv)
	}
	nope := dim - rope
	m := &mlaDims{kvLoraRank: nope, qkRope: rope, qkNope: nope, vHead: dim, v4: true,
		fp8Entry: nope + 2*rope + nope/64 + 1}
	if m.qLoraRank, _, err = c.optPositive("q_lora_rank"); err != nil {
		return err
	}
	if m.oGroups, _, err = c.optPositive("o_groups"); err != nil {
		return err
	}
	if m.oLoraRank, _, err = c.optPositive("o_lora_rank"); err != nil {
		return err
	}
	a.mla = m
	a.kvDtype, a.kvBytes = "fp8", 1
	imp.note("latent attention (compress_ratios): each cached entry is one latent of head_dim %d (K and V in one), not split by tensor parallelism; "+
		"kv_dtype is fp8, the only KV format vLLM serves DeepSeek-V4 in, %d B per entry packed (%d fp8 + %d bf16 RoPE + %d scale bytes; vLLM deepseek_v4_attention.py)",
		dim, m.fp8Entry, nope, rope, nope/64+1)
	return nil
}

// readIndexer reads the dimensions of a sparse-attention indexer when a
// layer keeps one, and the packed fp8 latent of the sparse MLA kernels
// (FlashMLA sparse's fp8_ds_mla: kv_lora_rank fp8 values, one fp32 scale
// per 128 of them, the RoPE part in bf16 — 656 B for 512 + 64).
func (imp *importer) readIndexer() error {
	c, a := imp.c, imp.a
	found := false
	for _, s := range a.specs {
		found = found || (s.indexer && s.indexB == 0)
	}
	if !found {
		return nil
	}
	var err error
	if a.indexDim, err = c.positive("index_head_dim"); err != nil {
		return err
	}
	if a.indexHeads, err = c.positive("index_n_heads"); err != nil {
		return err
	}
	if m := a.mla; m != nil && !m.v4 {
		m.fp8Entry = m.kvLoraRank + (m.kvLoraRank+127)/128*4 + 2*m.qkRope
	}
	return nil
}

// headGeometry sets head_dim and the kv heads of a full-attention layer.
func (imp *importer) headGeometry() error {
	c, a := imp.c, imp.a
	split := 0
	if a.hidden%a.heads == 0 {
		split = a.hidden / a.heads
	}
	hd, hdKey, hasHD, err := c.intAlias("head_dim", "attention_head_dim", "kv_channels")
	if err != nil {
		return err
	}
	switch {
	case a.mla != nil:
		a.headDim = a.mla.qkNope + a.mla.qkRope
	case hasHD:
		if hd <= 0 {
			return c.errf(hdKey, "must be > 0 (got %d)", hd)
		}
		a.headDim = hd
		if hd != split {
			if split == 0 {
				imp.note("%s %d differs from hidden_size/num_attention_heads %d/%d; using %s", hdKey, hd, a.hidden, a.heads, hdKey)
			} else {
				imp.note("%s %d differs from hidden_size/num_attention_heads %d; using %s", hdKey, hd, split, hdKey)
			}
		}
	default:
		if split == 0 {
			return c.errf("head_dim", "missing or null, and hidden_size %d is not divisible by num_attention_heads %d", a.hidden, a.heads)
		}
		a.headDim = split
	}

	aliases := []string{"num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num"}
	if mqa, ok, err := c.bool("multi_query_attention"); err != nil {
		return err
	} else if ok && !mqa {
		aliases = aliases[:3] // ChatGLM: the group count applies only with multi_query_attention
	}
	kv, kvKey, hasKV, err := c.intAlias(aliases...)
	if err != nil {
		return err
	}
	switch {
	case hasKV:
		if kv <= 0 {
			return c.errf(kvKey, "must be > 0 (got %d)", kv)
		}
	default:
		mq, _, err := c.bool("multi_query")
		if err != nil {
			return err
		}
		if mq {
			kv = 1
			imp.note("multi_query is true and no kv-head count is given: 1 kv head (MQA)")
		} else {
			kv = a.heads
			if a.mla == nil && !c.has("block_configs") {
				imp.note("num_key_value_heads missing: kv_heads = num_attention_heads %d (MHA)", a.heads)
			}
		}
		kvKey = "num_key_value_heads"
	}
	if kv > a.heads {
		return c.errf(kvKey, "%d is more than num_attention_heads %d", kv, a.heads)
	}
	if a.mla == nil {
		if v, ok, err := c.optPositive("v_head_dim"); err != nil {
			return err
		} else if ok && v != a.headDim {
			return c.errf("v_head_dim", "is %d but head_dim is %d: model_type %q caches K and V of different widths, which the catalog's layout cannot hold; write the catalog entry by hand", v, a.headDim, a.modelType)
		}
	}
	if a.heads%kv != 0 {
		return c.errf(kvKey, "%d does not divide num_attention_heads %d", kv, a.heads)
	}
	a.kvHeads = kv
	return nil
}

var (
	hfIDPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)
	}) // compiled on first use, not at start-up
	namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._+-]*$`) }) // compiled on first use, not at start-up
)

// name sets the entry's name, hf_id and aliases: from the name given, else
// from _name_or_path when it is a Hugging Face id, else from the file name
// ("Qwen--Qwen3-0.6B.json", or the model directory of a "config.json",
// including a Hugging Face cache's models--Org--Name directory).
func (imp *importer) name(m *catalog.Model, given string) error {
	hfID, base := "", ""
	nop, _ := imp.c.top["_name_or_path"].(string)
	switch {
	case hfIDPattern().MatchString(nop):
		hfID = nop
	default:
		hfID, base = idFromPath(imp.c.file)
		if hfID == "" && base == "" && nop != "" {
			base = filepath.Base(filepath.Clean(nop))
		}
	}
	if hfID != "" {
		base = hfID[strings.Index(hfID, "/")+1:]
	}
	given = strings.TrimSpace(given)
	if given != "" {
		if hfIDPattern().MatchString(given) {
			hfID = given
			base = given[strings.Index(given, "/")+1:]
		} else {
			base = given
		}
	}
	name := strings.ToLower(base)
	if name == "" {
		return &ImportError{File: imp.c.file, Field: "name", Msg: "cannot derive a model name from the file name or _name_or_path; pass --name"}
	}
	if !namePattern().MatchString(name) {
		return &ImportError{File: imp.c.file, Field: "name", Msg: fmt.Sprintf("%q is not a usable catalog name; use lower-case letters, digits, '.', '-', '_' and '+' (pass --name)", name)}
	}
	m.Name, m.HFID = name, hfID
	if hfID != "" && !strings.EqualFold(hfID, name) {
		m.Aliases = []string{hfID}
	}
	return nil
}

// idFromPath derives a Hugging Face id ("Qwen/Qwen3-0.6B") or at least a
// model name from a config file's path.
func idFromPath(file string) (hfID, base string) {
	clean := filepath.ToSlash(filepath.Clean(file))
	parts := strings.Split(clean, "/")
	stem := strings.TrimSuffix(parts[len(parts)-1], filepath.Ext(parts[len(parts)-1]))
	fromStem := func(s string) (string, string) {
		s = strings.TrimPrefix(s, "models--")
		if org, model, ok := strings.Cut(s, "--"); ok && org != "" && model != "" {
			return org + "/" + model, ""
		}
		return "", s
	}
	if stem != "config" {
		return fromStem(stem)
	}
	// .../models--Org--Name/snapshots/<hash>/config.json
	for i := len(parts) - 2; i >= 0; i-- {
		if strings.HasPrefix(parts[i], "models--") {
			return fromStem(parts[i])
		}
	}
	if len(parts) >= 2 {
		dir := parts[len(parts)-2]
		if dir != "." && dir != ".." && dir != "" {
			return fromStem(dir)
		}
	}
	return "", ""
}
