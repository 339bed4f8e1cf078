package hfimport

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/catalog"
)

// Mixers: what a decoder layer (block) attends with.
const (
	mixerFull    = "full"    // full attention
	mixerSliding = "sliding" // sliding-window (or chunked) attention
	mixerLinear  = "linear"  // linear attention (Gated DeltaNet)
	mixerMamba   = "mamba"   // Mamba-2 state-space layer
	mixerNone    = ""        // an MLP- or MoE-only block (Nemotron-H '-' and 'E')
)

// Feed-forward parts of a layer (block).
const (
	ffnNone  = ""
	ffnDense = "dense" // one gated MLP of intermediate_size
	ffnMoE   = "moe"   // routed experts (+ shared experts)
	ffnBoth  = "both"  // a dense MLP and an MoE block side by side (Gemma-4)
)

// layerSpec is one decoder layer as the config describes it.
type layerSpec struct {
	mixer   string
	window  int // sliding only
	kvHeads int // 0 = the model's
	headDim int // 0 = the model's
	noV     bool
	ffn     string
}

// linearDims are the Gated DeltaNet dimensions of a linear-attention layer.
type linearDims struct {
	kHeads, vHeads, kDim, vDim, kernel int
}

// mambaDims are the dimensions of a Mamba-2 layer.
type mambaDims struct {
	heads, headDim, state, groups, kernel int
}

// buildLayers reads the per-layer layout from whichever encoding the config
// uses, in this order: layer_types, hybrid_override_pattern,
// layers_block_type, full_attention_interval, sliding_window_pattern,
// attention_chunk_size (+ no_rope_layers), Gemma-2's implicit alternation,
// use_sliding_window (+ max_window_layers), and a bare sliding_window.
func (imp *importer) buildLayers() error {
	c, a := imp.c, imp.a
	n := a.layers
	window, _, _, err := c.intAlias("sliding_window")
	if err != nil {
		return err
	}
	if window < 0 {
		return c.errf("sliding_window", "must be > 0 or null (got %d)", window)
	}
	specs := make([]layerSpec, n)
	full := func() {
		for i := range specs {
			specs[i].mixer = mixerFull
		}
	}
	needWindow := func(from string, count int) error {
		if window == 0 {
			return c.errf("sliding_window", "missing or null, but %s has %d sliding layers", from, count)
		}
		return nil
	}
	chunk, _, err := c.optPositive("attention_chunk_size")
	if err != nil {
		return err
	}
	useSW, hasUseSW, err := c.bool("use_sliding_window")
	if err != nil {
		return err
	}
	interval, hasInterval, err := c.optPositive("full_attention_interval")
	if err != nil {
		return err
	}

	types, hasTypes, err := c.strList("layer_types")
	if err != nil {
		return err
	}
	pattern, err := c.str("hybrid_override_pattern")
	if err != nil {
		return err
	}
	blocks, hasBlocks, err := c.strList("layers_block_type")
	if err != nil {
		return err
	}
	swPattern, hasSWPattern, err := c.optPositive("sliding_window_pattern")
	if err != nil {
		return err
	}

	switch {
	case hasTypes:
		if len(types) != n {
			return c.errf("layer_types", "has %d entries but num_hidden_layers is %d", len(types), n)
		}
		sliding := 0
		for i, t := range types {
			switch t {
			case "full_attention", "attention":
				specs[i].mixer = mixerFull
			case "sliding_attention":
				specs[i].mixer, specs[i].window = mixerSliding, window
				sliding++
			case "chunked_attention":
				if chunk == 0 {
					return c.errf("attention_chunk_size", "missing or null, but layer_types entry %d is chunked_attention", i)
				}
				specs[i].mixer, specs[i].window = mixerSliding, chunk
			case "linear_attention":
				specs[i].mixer = mixerLinear
			case "mamba":
				specs[i].mixer = mixerMamba
			default:
				return c.errf("layer_types", "entry %d is %q; expected full_attention, sliding_attention, chunked_attention, linear_attention or mamba", i, t)
			}
		}
		if sliding > 0 {
			if hasUseSW && !useSW {
				return c.errf("layer_types", "has %d sliding_attention layers but use_sliding_window is false", sliding)
			}
			if err := needWindow("layer_types", sliding); err != nil {
				return err
			}
		}
		if hasInterval {
			for i, s := range specs {
				want := mixerLinear
				if (i+1)%interval == 0 {
					want = mixerFull
				}
				if s.mixer != want && (s.mixer == mixerFull || s.mixer == mixerLinear) {
					return c.errf("layer_types", "entry %d is %s attention, but full_attention_interval %d makes it %s", i, s.mixer, interval, want)
				}
			}
		}
		if chunk > 0 && !strings.Contains(strings.Join(types, ","), "chunked_attention") {
			imp.note("attention_chunk_size %d is not used: layer_types has no chunked_attention layer", chunk)
		}
	case pattern != "":
		if len(pattern) != n {
			return c.errf("hybrid_override_pattern", "has %d entries but num_hidden_layers is %d", len(pattern), n)
		}
		for i, ch := range pattern {
			switch ch {
			case 'M':
				specs[i].mixer = mixerMamba
			case '*':
				specs[i].mixer = mixerFull
			case '-':
				specs[i].ffn = ffnDense
			case 'E':
				specs[i].ffn = ffnMoE
			default:
				return c.errf("hybrid_override_pattern", "entry %d is %q; expected M (Mamba), * (attention), - (MLP) or E (MoE)", i, ch)
			}
		}
		imp.blockPattern = true
	case hasBlocks:
		if len(blocks) != n {
			return c.errf("layers_block_type", "has %d entries but num_hidden_layers is %d", len(blocks), n)
		}
		for i, b := range blocks {
			switch b {
			case "mamba":
				specs[i].mixer = mixerMamba
			case "attention":
				specs[i].mixer = mixerFull
			case "mlp":
				specs[i].ffn = ffnDense
			case "moe":
				specs[i].ffn = ffnMoE
			default:
				return c.errf("layers_block_type", "entry %d is %q; expected mamba, attention, mlp or moe", i, b)
			}
		}
		imp.blockPattern = true
	case hasInterval:
		for i := range specs {
			specs[i].mixer = mixerLinear
			if (i+1)%interval == 0 {
				specs[i].mixer = mixerFull
			}
		}
	case hasSWPattern:
		// Gemma-3, Cohere2: every Nth layer (1-based) is global.
		for i := range specs {
			specs[i].mixer, specs[i].window = mixerSliding, window
			if (i+1)%swPattern == 0 {
				specs[i].mixer, specs[i].window = mixerFull, 0
			}
		}
		if err := needWindow("sliding_window_pattern", n-n/swPattern); err != nil {
			return err
		}
	case chunk > 0:
		// Llama-4: layers that use RoPE attend in chunks of attention_chunk_size;
		// the NoPE layers (no_rope_layers entry 0) attend globally.
		rope, ok, err := c.intList("no_rope_layers")
		if err != nil {
			return err
		}
		if !ok {
			return c.errf("no_rope_layers", "missing, but attention_chunk_size %d needs it to tell chunked layers from global ones", chunk)
		}
		if len(rope) != n {
			return c.errf("no_rope_layers", "has %d entries but num_hidden_layers is %d", len(rope), n)
		}
		for i, r := range rope {
			specs[i].mixer = mixerFull
			if r != 0 {
				specs[i].mixer, specs[i].window = mixerSliding, chunk
			}
		}
		imp.note("chunked attention (attention_chunk_size %d) is counted as a sliding window of %d tokens", chunk, chunk)
	case strings.HasPrefix(a.modelType, "gemma2") && window > 0 && !(hasUseSW && !useSW):
		// Gemma-2's config has no pattern: even layers (from 0) are local.
		for i := range specs {
			specs[i].mixer = mixerFull
			if i%2 == 0 {
				specs[i].mixer, specs[i].window = mixerSliding, window
			}
		}
		imp.note("model_type %s: layers alternate sliding (window %d) and full, starting with sliding, as Gemma-2 does", a.modelType, window)
	case hasUseSW:
		full()
		if !useSW {
			if window > 0 {
				imp.note("use_sliding_window is false: sliding_window %d is not used, every layer is full attention", window)
			}
			break
		}
		mwl, ok, err := c.int("max_window_layers")
		if err != nil {
			return err
		}
		if !ok {
			return c.errf("max_window_layers", "missing, but use_sliding_window is true; it says how many bottom layers keep full attention")
		}
		if mwl < 0 {
			return c.errf("max_window_layers", "must be >= 0 (got %d)", mwl)
		}
		if mwl < n {
			if err := needWindow("use_sliding_window", n-mwl); err != nil {
				return err
			}
		}
		for i := mwl; i < n; i++ {
			specs[i].mixer, specs[i].window = mixerSliding, window
		}
	case window > 0:
		for i := range specs {
			specs[i].mixer, specs[i].window = mixerSliding, window
		}
		imp.note("sliding_window %d with no layer pattern: every layer is a sliding window (as Mistral-7B-v0.1)", window)
	default:
		full()
	}
	a.specs = specs
	return imp.globalGeometry()
}

// globalGeometry applies the full-attention layers' own KV geometry
// (Gemma-4: global_head_dim, and num_global_key_value_heads when
// attention_k_eq_v), and refuses KV sharing across layers.
func (imp *importer) globalGeometry() error {
	c, a := imp.c, imp.a
	shared, err := c.nonNeg("num_kv_shared_layers")
	if err != nil {
		return err
	}
	if shared > 0 {
		return c.errf("num_kv_shared_layers", "is %d: layers that reuse another layer's KV cache are not supported by the catalog's layout", shared)
	}
	gdim, hasGDim, err := c.optPositive("global_head_dim")
	if err != nil {
		return err
	}
	kEqV, _, err := c.bool("attention_k_eq_v")
	if err != nil {
		return err
	}
	gheads, hasGHeads, err := c.optPositive("num_global_key_value_heads")
	if err != nil {
		return err
	}
	if hasGHeads && !kEqV {
		imp.note("num_global_key_value_heads %d is not used: attention_k_eq_v is not true, so full layers keep num_key_value_heads %d", gheads, a.kvHeads)
	}
	fullLayers := 0
	for i := range a.specs {
		s := &a.specs[i]
		if s.mixer != mixerFull {
			continue
		}
		fullLayers++
		if hasGDim {
			s.headDim = gdim
		}
		if kEqV {
			s.noV = true
			if hasGHeads {
				s.kvHeads = gheads
			}
		}
	}
	if fullLayers == 0 {
		return nil
	}
	if kEqV {
		for _, s := range a.specs {
			if s.mixer == mixerFull && s.kvHeads > 0 && (s.kvHeads > a.heads || a.heads%s.kvHeads != 0) {
				return c.errf("num_global_key_value_heads", "%d does not divide num_attention_heads %d", s.kvHeads, a.heads)
			}
		}
		imp.note("attention_k_eq_v: full-attention layers have no v_proj (V is taken from the K projection), " +
			"but K is normed and rotated while V is only normed, so the cache keeps both: KV bytes are not halved")
	}
	if hasGDim || (kEqV && hasGHeads) {
		h, d := a.kvHeads, a.headDim
		if hasGDim {
			d = gdim
		}
		if kEqV && hasGHeads {
			h = gheads
		}
		imp.note("full-attention layers use their own KV geometry: %d kv heads × head_dim %d", h, d)
	}
	return nil
}

// readStateDims reads the linear-attention or Mamba dimensions the layers need.
func (imp *importer) readStateDims() error {
	c, a := imp.c, imp.a
	var hasLinear, hasMamba bool
	for _, s := range a.specs {
		hasLinear = hasLinear || s.mixer == mixerLinear
		hasMamba = hasMamba || s.mixer == mixerMamba
	}
	var err error
	get := func(aliases ...string) int {
		if err != nil {
			return 0
		}
		var v int
		v, err = c.positive(aliases...)
		return v
	}
	if hasLinear {
		a.lin = &linearDims{
			vHeads: get("linear_num_value_heads"),
			kHeads: get("linear_num_key_heads"),
			kDim:   get("linear_key_head_dim"),
			vDim:   get("linear_value_head_dim"),
			kernel: get("linear_conv_kernel_dim"),
		}
	}
	if hasMamba && err == nil {
		a.mamba = &mambaDims{
			heads:   get("mamba_num_heads", "mamba_n_heads"),
			headDim: get("mamba_head_dim", "mamba_d_head"),
			state:   get("ssm_state_size", "mamba_d_state"),
			groups:  get("n_groups", "mamba_n_groups", "mamba_num_groups"),
			kernel:  get("conv_kernel", "mamba_d_conv"),
		}
	}
	if err != nil {
		return err
	}
	if hasLinear || hasMamba {
		ssm, err := c.str("mamba_ssm_cache_dtype")
		if err != nil {
			return err
		}
		a.ssmBytes = a.kvBytes
		if ssm != "" {
			d, ok := hfDtypes[ssm]
			if !ok {
				return c.errf("mamba_ssm_cache_dtype", "%q is not one of %s", ssm, hfDtypeList())
			}
			b, _ := catalog.DtypeBytes(d)
			a.ssmBytes = int64(b)
		}
	}
	return nil
}

// stateBytes is the constant per-request state of one linear or Mamba layer:
//
//	linear (Gated DeltaNet): recurrent v_heads × k_dim × v_dim
//	                         + conv (kernel − 1) × (2·k_heads·k_dim + v_heads·v_dim)
//	Mamba-2:                 SSM heads × head_dim × state
//	                         + conv (kernel − 1) × (heads·head_dim + 2·groups·state)
//
// The recurrent/SSM part is in mamba_ssm_cache_dtype when the config gives
// one, else in the KV dtype; the conv part is in the KV dtype.
func (a *arch) stateBytes(mixer string) int64 {
	switch mixer {
	case mixerLinear:
		l := a.lin
		rec := int64(l.vHeads) * int64(l.kDim) * int64(l.vDim)
		conv := int64(l.kernel-1) * int64(2*l.kHeads*l.kDim+l.vHeads*l.vDim)
		return rec*a.ssmBytes + conv*a.kvBytes
	case mixerMamba:
		m := a.mamba
		ssm := int64(m.heads) * int64(m.headDim) * int64(m.state)
		conv := int64(m.kernel-1) * int64(m.heads*m.headDim+2*m.groups*m.state)
		return ssm*a.ssmBytes + conv*a.kvBytes
	}
	return 0
}

// catalogLayout groups the layers that hold a cache into the catalog's
// layer groups, in order of first appearance. It returns nil when every
// cache layer is full attention with the model's geometry.
func (a *arch) catalogLayout() (groups []catalog.LayerGroup, cacheLayers int) {
	plain := true
	for _, s := range a.specs {
		if s.mixer == mixerNone {
			continue
		}
		cacheLayers++
		g := catalog.LayerGroup{Kind: s.mixer, Count: 1, Window: s.window, KVHeads: s.kvHeads, HeadDim: s.headDim}
		switch s.mixer {
		case mixerLinear, mixerMamba:
			g.Kind = catalog.LayerLinear
			g.StateBytes = a.stateBytes(s.mixer)
			g.KVHeads, g.HeadDim = 0, 0
		}
		if g.Kind != catalog.LayerFull || g.KVHeads != 0 || g.HeadDim != 0 {
			plain = false
		}
		found := false
		for i := range groups {
			x := groups[i]
			if x.Kind == g.Kind && x.Window == g.Window && x.KVHeads == g.KVHeads && x.HeadDim == g.HeadDim && x.StateBytes == g.StateBytes {
				groups[i].Count++
				found = true
				break
			}
		}
		if !found {
			groups = append(groups, g)
		}
	}
	if plain {
		return nil, cacheLayers
	}
	return groups, cacheLayers
}

func describeGroups(groups []catalog.LayerGroup) string {
	var parts []string
	for _, g := range groups {
		s := fmt.Sprintf("%d %s", g.Count, g.Kind)
		if g.Window > 0 {
			s += fmt.Sprintf(" (window %d)", g.Window)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
