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

	"github.com/kvplan/kvplan/catalog"
)

// ImportConfig reads a Hugging Face config.json (its bytes; file names it in
// errors and in the entry's source) and returns a catalog entry, with notes
// for the user on every choice the config left open (a head_dim that differs
// from hidden/heads, a missing dtype, a sliding window that is switched off).
// name overrides the entry's name; "" derives it from _name_or_path or the
// file name ("Qwen--Qwen3-0.6B.json" → "qwen3-0.6b").
//
// A config it cannot interpret is an *ImportError naming the missing or
// contradictory field; malformed JSON names file:line:col. It never guesses
// silently. The entry it returns passes catalog validation.
//
// Conventions:
//   - Layers counts the layers that hold a KV cache or a state: attention,
//     linear-attention and Mamba layers. MLP- or MoE-only blocks of hybrid
//     patterns (Nemotron-H '-' and 'E') hold none and are left out (a note
//     says so). Multi-token-prediction layers go to MTPLayers, not Layers.
//   - The KV dtype is the model's torch_dtype (a quantized checkpoint keeps a
//     16-bit KV cache); a linear or Mamba layer's state is in the KV dtype,
//     except its recurrent part when mamba_ssm_cache_dtype is given.
//   - For MLA, KVHeads and HeadDim describe the decompressed attention
//     (num_key_value_heads × (qk_nope_head_dim + qk_rope_head_dim)); the cache
//     holds one latent of kv_lora_rank + qk_rope_head_dim.
//   - Parameters follow params.go; ParamsActive is set for MoE models only.
func ImportConfig(data []byte, file string, name string) (*catalog.Model, []string, error) {
	c, err := parseConfig(data, file)
	if err != nil {
		return nil, nil, err
	}
	imp := &importer{c: c, a: &arch{}}
	m, err := imp.run(name)
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
	kvBytes     int64 // bytes of one KV element
	ssmBytes    int64 // bytes of one recurrent-state element

	mla   *mlaDims
	lin   *linearDims
	mamba *mambaDims
	specs []layerSpec
	mtp   int

	ffn ffnDims
}

// mlaDims are the multi-head latent attention ranks and head dimensions.
type mlaDims struct {
	qLoraRank, kvLoraRank, qkNope, qkRope, vHead int
}

type importer struct {
	c            *hfConfig
	a            *arch
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
	if a.layers, err = c.positive("num_hidden_layers", "n_layer", "num_layers"); err != nil {
		return nil, err
	}
	if a.layers > maxLayers {
		return nil, c.errf("num_hidden_layers", "is %d; no real model has more than %d layers", a.layers, maxLayers)
	}
	if a.hidden, err = c.positive("hidden_size", "n_embd", "d_model"); err != nil {
		return nil, err
	}
	if a.heads, err = c.positive("num_attention_heads", "n_head", "num_heads"); err != nil {
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
	if err := imp.headGeometry(); err != nil {
		return nil, err
	}
	if err := imp.buildLayers(); err != nil {
		return nil, err
	}
	if err := imp.readStateDims(); err != nil {
		return nil, err
	}
	layout, cacheLayers := a.catalogLayout()
	if cacheLayers == 0 {
		return nil, c.errf("num_hidden_layers", "none of the %d layers is an attention, linear-attention or Mamba layer", a.layers)
	}
	if a.mla != nil && len(layout) > 0 {
		return nil, c.errf("kv_lora_rank", "MLA together with sliding-window, linear or Mamba layers (%s) is not supported", describeGroups(layout))
	}
	if cacheLayers != a.layers {
		imp.note("%d of %d blocks are MLP- or MoE-only and hold no cache; layers = %d counts the attention and Mamba layers", a.layers-cacheLayers, a.layers, cacheLayers)
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
		m.MLA = &catalog.MLA{KVLoraRank: a.mla.kvLoraRank, QKRopeHeadDim: a.mla.qkRope}
	}
	if err := imp.weightsBytes(m, p); err != nil {
		return nil, err
	}
	if err := imp.name(m, name); err != nil {
		return nil, err
	}
	return m, nil
}

// maxLayers bounds num_hidden_layers.
const maxLayers = 100_000

// paramsOverflow reports whether a rough float estimate of the parameters
// exceeds 10^15, far beyond any model and safely inside int64.
func (a *arch) paramsOverflow() bool {
	f := a.ffn
	H, L := float64(a.hidden), float64(a.layers)
	width := float64(max(f.intermediate, f.expertI, f.sharedI, a.heads*a.headDim, 1))
	for _, s := range a.specs {
		width = max(width, float64(s.headDim)*float64(a.heads))
	}
	perLayer := H * width * (8 + 3*float64(f.experts))
	if a.lin != nil {
		perLayer += H * float64(a.lin.vHeads*a.lin.vDim+a.lin.kHeads*a.lin.kDim) * 4
	}
	if a.mamba != nil {
		perLayer += H * float64(a.mamba.heads*a.mamba.headDim+a.mamba.groups*a.mamba.state) * 4
	}
	return L*perLayer+2*float64(a.vocab)*H > 1e15
}

// unsupported lists model types whose KV layout the importer cannot read
// from config.json, with the reason.
var unsupported = map[string]string{
	"jamba":           "Jamba's attn_layer_period/attn_layer_offset layout and Mamba-1 state",
	"falcon_h1":       "Falcon-H1 runs attention and Mamba in parallel in every layer",
	"zamba":           "Zamba's shared attention blocks",
	"zamba2":          "Zamba2's shared attention blocks",
	"mamba":           "a pure Mamba-1 model",
	"falcon_mamba":    "a pure Mamba-1 model",
	"rwkv":            "an RWKV model",
	"recurrent_gemma": "RecurrentGemma's RG-LRU layers",
	"minimax":         "MiniMax's lightning-attention layout",
	"deepseek_v32":    "DeepSeek-V3.2's sparse-attention indexer cache",
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

	q, field, err := c.object("quantization_config")
	if err != nil || q == nil {
		return err
	}
	method, _ := q["quant_method"].(string)
	qerr := func(format string, args ...any) error {
		return c.errAt(field, format, args...)
	}
	num := func(k string) int {
		if v, ok := q[k]; ok {
			if n, ok := v.(interface{ Int64() (int64, error) }); ok {
				i, _ := n.Int64()
				return int(i)
			}
		}
		return 0
	}
	switch method {
	case "fp8", "fbgemm_fp8":
		a.weightDtype = "fp8"
	case "mxfp4":
		a.weightDtype = "mxfp4"
	case "gptq", "awq", "auto-round", "autoround":
		switch bits := num("bits"); bits {
		case 4:
			a.weightDtype = "int4"
		case 8:
			a.weightDtype = "int8"
		default:
			return qerr("quant_method %q with bits %d; expected bits 4 or 8", method, bits)
		}
	case "bitsandbytes":
		switch {
		case q["load_in_4bit"] == true:
			a.weightDtype = "int4"
		case q["load_in_8bit"] == true:
			a.weightDtype = "int8"
		default:
			return qerr("bitsandbytes without load_in_4bit or load_in_8bit")
		}
	case "compressed-tensors":
		dt, err := compressedTensorsDtype(q)
		if err != nil {
			return qerr("%v", err)
		}
		a.weightDtype = dt
	case "modelopt":
		algo, _ := q["quant_algo"].(string)
		if strings.ToUpper(algo) != "FP8" {
			return qerr("modelopt quant_algo %q is not supported; only FP8 is", algo)
		}
		a.weightDtype = "fp8"
	case "":
		return qerr("has no quant_method")
	default:
		return qerr("quant_method %q is not supported; expected fp8, fbgemm_fp8, mxfp4, gptq, awq, auto-round, bitsandbytes, compressed-tensors or modelopt (FP8)", method)
	}
	if a.weightDtype != "mxfp4" {
		imp.note("weights are %s (quantization_config %s); the KV cache stays %s. Scales and unquantized layers are not counted in weight bytes", a.weightDtype, method, a.kvDtype)
	}
	return nil
}

// compressedTensorsDtype reads the weight format of the first config group.
func compressedTensorsDtype(q map[string]any) (string, error) {
	groups, _ := q["config_groups"].(map[string]any)
	names := make([]string, 0, len(groups))
	for k := range groups {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		g, _ := groups[k].(map[string]any)
		w, _ := g["weights"].(map[string]any)
		if w == nil {
			continue
		}
		bits := 0
		if n, ok := w["num_bits"].(interface{ Int64() (int64, error) }); ok {
			i, _ := n.Int64()
			bits = int(i)
		}
		typ, _ := w["type"].(string)
		switch {
		case bits == 8 && typ == "float":
			return "fp8", nil
		case bits == 8 && typ == "int":
			return "int8", nil
		case bits == 4 && typ == "int":
			return "int4", nil
		}
		return "", fmt.Errorf("compressed-tensors weights of %d-bit %s are not supported; expected 8-bit float, 8-bit int or 4-bit int", bits, typ)
	}
	return "", fmt.Errorf("compressed-tensors without config_groups.*.weights")
}

// readMLA reads multi-head latent attention, when kv_lora_rank is set.
func (imp *importer) readMLA() error {
	c := imp.c
	kvRank, ok, err := c.optPositive("kv_lora_rank")
	if err != nil || !ok {
		return err
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
	imp.a.mla = m
	imp.note("MLA: each layer caches one latent of kv_lora_rank %d + qk_rope_head_dim %d = %d elements per token, not split by tensor parallelism",
		kvRank, m.qkRope, kvRank+m.qkRope)
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
			if a.mla == nil {
				imp.note("num_key_value_heads missing: kv_heads = num_attention_heads %d (MHA)", a.heads)
			}
		}
		kvKey = "num_key_value_heads"
	}
	if kv > a.heads {
		return c.errf(kvKey, "%d is more than num_attention_heads %d", kv, a.heads)
	}
	if a.heads%kv != 0 {
		return c.errf(kvKey, "%d does not divide num_attention_heads %d", kv, a.heads)
	}
	a.kvHeads = kv
	return nil
}

// weightsBytes estimates the checkpoint size of mixed-precision mxfp4
// models: routed experts in mxfp4 (4.25 bits), the rest in the model dtype.
func (imp *importer) weightsBytes(m *catalog.Model, p paramCount) error {
	if m.WeightDtype != "mxfp4" {
		return nil
	}
	a := imp.a
	rest, _ := catalog.DtypeBytes(imp.restDtype())
	if a.ffn.experts == 0 {
		imp.note("mxfp4 weights without MoE experts: every weight is counted as mxfp4; set weights_bytes by hand if the checkpoint keeps some in 16 bits")
		return nil
	}
	mx, _ := catalog.DtypeBytes("mxfp4")
	m.WeightsBytes = int64(float64(p.Experts)*mx + float64(p.Total()-p.Experts)*rest)
	imp.note("mxfp4: weights_bytes %d estimates %d routed-expert parameters at 4.25 bits and the other %d in %s",
		m.WeightsBytes, p.Experts, p.Total()-p.Experts, imp.restDtype())
	return nil
}

// restDtype is the dtype of the weights a quantization leaves alone.
func (imp *importer) restDtype() string { return imp.a.baseDtype }

var (
	hfIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)
	namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._+-]*$`)
)

// name sets the entry's name, hf_id and aliases: from the name given, else
// from _name_or_path when it is a Hugging Face id, else from the file name
// ("Qwen--Qwen3-0.6B.json", or the model directory of a "config.json",
// including a Hugging Face cache's models--Org--Name directory).
func (imp *importer) name(m *catalog.Model, given string) error {
	hfID, base := "", ""
	nop, _ := imp.c.top["_name_or_path"].(string)
	switch {
	case hfIDPattern.MatchString(nop):
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
		if hfIDPattern.MatchString(given) {
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
	if !namePattern.MatchString(name) {
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
