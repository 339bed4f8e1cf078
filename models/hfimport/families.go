package hfimport

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Layer encodings that belong to one model family each.

// classDefaults are the defaults of transformers' config classes for the
// keys that published config.json files leave out because the class has
// them: google/gemma-3-*-it's text_config gives neither vocab_size nor
// sliding_window_pattern. Each default read is a note.
var classDefaults = map[string]struct {
	class string
	keys  map[string]any
}{
	"gemma3_text": {"Gemma3TextConfig", map[string]any{
		"vocab_size": json.Number("262208"), "max_position_embeddings": json.Number("131072"),
		"sliding_window_pattern": json.Number("6"), "sliding_window": json.Number("4096"),
		"head_dim": json.Number("256"), "num_key_value_heads": json.Number("4"),
	}},
}

// useClassDefaults lets the config read its class's defaults.
func (imp *importer) useClassDefaults() {
	if d, ok := classDefaults[imp.a.modelType]; ok {
		imp.c.defaults = d.keys
	}
}

// defaultNotes names every class default the import read.
func (imp *importer) defaultNotes() {
	d, ok := classDefaults[imp.a.modelType]
	if !ok || len(imp.c.usedDefaults) == 0 {
		return
	}
	var used []string
	for k := range imp.c.usedDefaults {
		used = append(used, fmt.Sprintf("%s %v", k, d.keys[k]))
	}
	sort.Strings(used)
	imp.note("the config leaves out %s: transformers' %s defaults", strings.Join(used, ", "), d.class)
}

// familyLayers reads the layer encodings of single model families into
// specs, and reports whether one applied.
func (imp *importer) familyLayers(specs []layerSpec, window int) (bool, error) {
	c, a := imp.c, imp.a
	switch {
	case c.has("compress_ratios"):
		return true, imp.compressedLayers(specs, window)
	case c.has("block_configs"):
		return true, imp.blockConfigLayers(specs)
	case c.has("linear_attn_config"):
		return true, imp.kimiLinearLayers(specs)
	case c.has("attn_layer_period"):
		return true, imp.jambaLayers(specs)
	case a.modelType == "mamba" || a.modelType == "falcon_mamba":
		// Every block is a Mamba-1 mixer and nothing else.
		for i := range specs {
			specs[i].mixer = mixerMamba1
		}
		imp.blockPattern = true
		return true, nil
	}
	return false, nil
}

// compressedLayers reads DeepSeek-V4's compressed attention: compress_ratios
// gives each layer the number of tokens that share one compressed entry (0:
// none, the layer keeps only its sliding window). Every layer keeps the last
// sliding_window tokens uncompressed; the ratio-4 layers also run an indexer
// with its own compressed key cache. Entries beyond num_hidden_layers belong
// to the MTP layers.
func (imp *importer) compressedLayers(specs []layerSpec, window int) error {
	c, a := imp.c, imp.a
	ratios, _, err := c.intList("compress_ratios")
	if err != nil {
		return err
	}
	n := len(specs)
	if len(ratios) < n {
		return c.errf("compress_ratios", "has %d entries but num_hidden_layers is %d", len(ratios), n)
	}
	if len(ratios) > n {
		imp.note("compress_ratios has %d entries for %d layers: the last %d belong to the MTP layers and are not counted", len(ratios), n, len(ratios)-n)
	}
	if window == 0 {
		return c.errf("sliding_window", "missing or null, but compressed attention (compress_ratios) keeps a window of uncompressed tokens in every layer")
	}
	counts := map[int]int{}
	for i := range specs {
		r := ratios[i]
		switch {
		case r < 0 || r > maxDim:
			return c.errf("compress_ratios", "entry %d is %d; expected 0 (no compression) or tokens per compressed entry", i, r)
		case r <= 1:
			specs[i].mixer, specs[i].window = mixerSliding, window
		default:
			specs[i].mixer, specs[i].window, specs[i].ratio = mixerCompressed, window, r
			specs[i].indexer = r == 4 && c.has("index_head_dim")
		}
		counts[r]++
	}
	var keys []int
	for r := range counts {
		keys = append(keys, r)
	}
	sort.Ints(keys)
	desc := ""
	for _, r := range keys {
		if desc != "" {
			desc += ", "
		}
		if r <= 1 {
			desc += fmt.Sprintf("%d with only the window", counts[r])
		} else {
			desc += fmt.Sprintf("%d compressing %d tokens into one entry", counts[r], r)
		}
	}
	imp.note("compressed attention (compress_ratios): every layer keeps its last %d tokens; %s. The ratio-4 layers also keep an indexer key per entry (vLLM deepseek_v4_attention.py)", window, desc)
	a.compressed = true
	return nil
}

// blockConfigLayers reads Llama-Nemotron's (DeciLM, nemotron-nas) per-layer
// block_configs: each layer's attention has its own kv-head count
// (num_attention_heads / n_heads_in_group), or is a no_op (no attention, no
// cache) or a plain linear map; each FFN has its own width
// (ffn_mult: 2 × ffn_mult × hidden / 3, rounded up to a multiple of 256, as
// DeciLM's _ffn_mult_to_intermediate_size) or is a no_op.
func (imp *importer) blockConfigLayers(specs []layerSpec) error {
	c, a := imp.c, imp.a
	blocks, _, err := c.list("block_configs")
	if err != nil {
		return err
	}
	if len(blocks) != len(specs) {
		return c.errf("block_configs", "has %d entries but num_hidden_layers is %d", len(blocks), len(specs))
	}
	bad := func(i int, format string, args ...any) error {
		return c.errf("block_configs", "entry %d: %s", i, fmt.Sprintf(format, args...))
	}
	for i, b := range blocks {
		bc, ok := b.(map[string]any)
		if !ok {
			return bad(i, "is %s; expected an object with attention and ffn", jsonType(b))
		}
		att, _ := bc["attention"].(map[string]any)
		ffn, _ := bc["ffn"].(map[string]any)
		if att == nil || ffn == nil {
			return bad(i, "needs an attention and an ffn object")
		}
		s := &specs[i]
		switch {
		case att["no_op"] == true:
			s.mixer = mixerNone
		case att["replace_with_linear"] == true:
			s.mixer = mixerProj
		default:
			g, err := jsonInt(att["n_heads_in_group"])
			if err != nil || g <= 0 || a.heads%g != 0 {
				return bad(i, "attention.n_heads_in_group is %v; expected a divisor of num_attention_heads %d", att["n_heads_in_group"], a.heads)
			}
			s.mixer, s.kvHeads = mixerFull, a.heads/g
			if w, err := jsonInt(att["window_length"]); err == nil && w > 0 {
				s.mixer, s.window = mixerSliding, w
			}
		}
		switch {
		case ffn["no_op"] == true:
			s.ffn = ffnNone
		case ffn["replace_with_linear"] == true:
			s.ffn = ffnProj
		default:
			mult, ok := jsonFloat(ffn["ffn_mult"])
			if !ok || mult <= 0 || mult > 1000 {
				return bad(i, "ffn.ffn_mult is %v; expected a number > 0", ffn["ffn_mult"])
			}
			w := int(2 * mult * float64(a.hidden) / 3)
			s.ffn, s.ffnWidth = ffnDense, (w+255)/256*256
		}
	}
	// One kv-head count for every attention layer is the model's.
	common := 0
	for _, s := range specs {
		if attends(s.mixer) && (common == 0 || s.kvHeads == common) {
			common = s.kvHeads
		} else if attends(s.mixer) {
			common = -1
		}
	}
	if common > 0 {
		a.kvHeads = common
		for i := range specs {
			specs[i].kvHeads = 0
		}
	}
	imp.blockPattern = true
	return nil
}

// kimiLinearLayers reads Kimi Linear's linear_attn_config: full_attn_layers
// (MLA) and kda_layers (Kimi Delta Attention), numbered from 1 as the
// modeling code does ((layer_idx + 1) in kda_layers).
func (imp *importer) kimiLinearLayers(specs []layerSpec) error {
	c, a := imp.c, imp.a
	cfg, field, err := c.object("linear_attn_config")
	if err != nil {
		return err
	}
	n := len(specs)
	list := func(key string) ([]int, error) {
		raw, _ := cfg[key].([]any)
		out := make([]int, 0, len(raw))
		for j, x := range raw {
			v, err := jsonInt(x)
			if err != nil || v < 1 || v > n {
				return nil, c.errAt(field, "%s entry %d is %v; expected a layer number from 1 to %d", key, j, x, n)
			}
			out = append(out, v)
		}
		return out, nil
	}
	full, err := list("full_attn_layers")
	if err != nil {
		return err
	}
	kda, err := list("kda_layers")
	if err != nil {
		return err
	}
	for _, l := range full {
		specs[l-1].mixer = mixerFull
	}
	for _, l := range kda {
		if specs[l-1].mixer != "" {
			return c.errAt(field, "layer %d is in both full_attn_layers and kda_layers", l)
		}
		specs[l-1].mixer = mixerKDA
	}
	for i, s := range specs {
		if s.mixer == "" {
			return c.errAt(field, "layer %d is in neither full_attn_layers nor kda_layers", i+1)
		}
	}
	num := func(key string) (int, error) {
		v, err := jsonInt(cfg[key])
		if err != nil || v <= 0 || v > maxDim {
			return 0, c.errAt(field, "%s is %v; expected an integer > 0", key, cfg[key])
		}
		return v, nil
	}
	k := &kdaDims{}
	if k.heads, err = num("num_heads"); err != nil {
		return err
	}
	if k.headDim, err = num("head_dim"); err != nil {
		return err
	}
	if k.kernel, err = num("short_conv_kernel_size"); err != nil {
		return err
	}
	a.kda = k
	return nil
}

// jambaLayers reads Jamba's layout: layer i is attention when
// i % attn_layer_period == attn_layer_offset, else Mamba-1.
func (imp *importer) jambaLayers(specs []layerSpec) error {
	c := imp.c
	period, err := c.positive("attn_layer_period")
	if err != nil {
		return err
	}
	offset, err := c.nonNeg("attn_layer_offset")
	if err != nil {
		return err
	}
	if offset >= period {
		return c.errf("attn_layer_offset", "%d is not below attn_layer_period %d", offset, period)
	}
	for i := range specs {
		specs[i].mixer = mixerMamba1
		if i%period == offset {
			specs[i].mixer = mixerFull
		}
	}
	return nil
}

// markIndexers marks the layers whose sparse-attention indexer keeps its own
// key cache (DeepSeek-V3.2, GLM-5: index_topk with index_head_dim). GLM-5.2
// shares one indexer's top-k across layers; a layer runs its own indexer per
// indexer_types ("full"), else index_topk_pattern (not 'S'), else
// max(i − index_skip_topk_offset + 1, 0) % index_topk_freq == 0 with
// defaults 2 and 1: every layer (vLLM deepseek_v32 attention).
func (imp *importer) markIndexers() error {
	c, a := imp.c, imp.a
	if a.compressed || !c.has("index_topk") {
		return nil
	}
	if a.mla == nil {
		return c.errf("index_topk", "a sparse-attention indexer without MLA (kv_lora_rank) is not supported")
	}
	if _, err := c.positive("index_head_dim"); err != nil {
		return err
	}
	types, hasTypes, err := c.strList("indexer_types")
	if err != nil {
		return err
	}
	pattern, err := c.str("index_topk_pattern")
	if err != nil {
		return err
	}
	freq, hasFreq, err := c.optPositive("index_topk_freq")
	if err != nil {
		return err
	}
	if !hasFreq {
		freq = 1
	}
	offset, _, hasOffset, err := c.intAlias("index_skip_topk_offset")
	if err != nil {
		return err
	}
	if !hasOffset {
		offset = 2
	}
	n := len(a.specs)
	switch {
	case hasTypes && len(types) != n:
		return c.errf("indexer_types", "has %d entries but num_hidden_layers is %d", len(types), n)
	case !hasTypes && pattern != "" && len(pattern) != n:
		return c.errf("index_topk_pattern", "has %d entries but num_hidden_layers is %d", len(pattern), n)
	}
	count := 0
	for i := range a.specs {
		s := &a.specs[i]
		if !attends(s.mixer) {
			continue
		}
		switch {
		case hasTypes:
			switch types[i] {
			case "full":
				s.indexer = true
			case "shared":
			default:
				return c.errf("indexer_types", "entry %d is %q; expected full or shared", i, types[i])
			}
		case pattern != "":
			s.indexer = pattern[i] != 'S'
		default:
			s.indexer = max(i-offset+1, 0)%freq == 0
		}
		if s.indexer {
			count++
		}
	}
	imp.note("sparse attention: %d of %d layers keep an indexer key of index_head_dim %d in fp8 with an fp32 scale per 128 (%d B per token), beside the MLA latent",
		count, n, imp.indexHeadDim(), indexKeyBytes(imp.indexHeadDim()))
	return nil
}

func (imp *importer) indexHeadDim() int {
	d, _, _, _ := imp.c.intAlias("index_head_dim")
	return d
}

// indexKeyBytes is one indexer key as vLLM and SGLang store it: fp8 values
// and one fp32 scale per 128 (vLLM DeepseekV32IndexerCache, SGLang
// DSATokenToKVPool: index_head_dim + index_head_dim / 128 × 4).
func indexKeyBytes(dim int) int64 {
	return int64(dim) + int64((dim+127)/128)*4
}

// compressorStateBytes is one DeepSeek-V4 compressed layer's compressor
// state per request, as vLLM keeps it (deepseek_compressor.py): a window of
// coff × ratio tokens of 2 × coff × head_dim fp32 values (kv and score),
// coff = 2 for ratio 4 (overlapping windows) else 1; an indexer layer adds
// its own compressor over index_head_dim.
func compressorStateBytes(ratio, headDim, indexDim int, indexer bool) int64 {
	coff := 1
	if ratio == 4 {
		coff = 2
	}
	b := int64(coff*ratio) * int64(2*coff*headDim) * 4
	if indexer {
		b += int64(coff*ratio) * int64(2*coff*indexDim) * 4
	}
	return b
}

// jsonInt reads an integer JSON value.
func jsonInt(v any) (int, error) {
	f, ok := jsonFloat(v)
	if !ok || f != float64(int64(f)) || f > 1<<53 || f < -(1<<53) {
		return 0, fmt.Errorf("not an integer")
	}
	return int(f), nil
}

// jsonFloat reads a JSON number.
func jsonFloat(v any) (float64, bool) {
	n, ok := v.(interface{ Float64() (float64, error) })
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// markMiniMaxSparse marks MiniMax-M3's sparse-attention layers
// (sparse_attention_config.sparse_attention_freq 1), whose indexer keeps
// sparse_index_dim keys, and values too unless sparse_disable_index_value,
// in the model dtype, as SGLang's MiniMaxSparseKVPool sizes them.
func (imp *importer) markMiniMaxSparse() error {
	c, a := imp.c, imp.a
	cfg, field, err := c.object("sparse_attention_config")
	if err != nil || cfg == nil || cfg["use_sparse_attention"] != true {
		return err
	}
	n := len(a.specs)
	list := func(key string) ([]int, error) {
		raw, ok := cfg[key].([]any)
		if !ok || len(raw) != n {
			return nil, c.errAt(field, "%s must list %d layers (one 0 or 1 each)", key, n)
		}
		out := make([]int, n)
		for i, x := range raw {
			v, err := jsonInt(x)
			if err != nil || (v != 0 && v != 1) {
				return nil, c.errAt(field, "%s entry %d is %v; expected 0 or 1", key, i, x)
			}
			out[i] = v
		}
		return out, nil
	}
	sparse, err := list("sparse_attention_freq")
	if err != nil {
		return err
	}
	noValue, err := list("sparse_disable_index_value")
	if err != nil {
		return err
	}
	dim, err := jsonInt(cfg["sparse_index_dim"])
	if err != nil || dim <= 0 || dim > maxDim {
		return c.errAt(field, "sparse_index_dim is %v; expected an integer > 0", cfg["sparse_index_dim"])
	}
	count := 0
	for i := range a.specs {
		s := &a.specs[i]
		if sparse[i] == 0 || !attends(s.mixer) {
			continue
		}
		vectors := int64(2 - noValue[i])
		s.indexer, s.indexB = true, vectors*int64(dim)*a.kvBytes
		count++
	}
	imp.note("sparse attention (sparse_attention_config): %d layers keep an index cache of sparse_index_dim %d in the model dtype, keys only where sparse_disable_index_value (SGLang MiniMaxSparseKVPool)", count, dim)
	return nil
}
