package hfimport

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/units"
)

// Mixers: what a decoder layer (block) attends with.
const (
	mixerFull       = "full"       // full attention
	mixerSliding    = "sliding"    // sliding-window (or chunked) attention
	mixerCompressed = "compressed" // compressed attention: 1 entry per ratio tokens + a window (DeepSeek-V4)
	mixerLinear     = "linear"     // linear attention (Gated DeltaNet)
	mixerKDA        = "kda"        // Kimi Delta Attention (Kimi Linear)
	mixerMamba      = "mamba"      // Mamba-2 state-space layer
	mixerMamba1     = "mamba1"     // Mamba-1 state-space layer (Jamba, Falcon-Mamba)
	mixerProj       = "proj"       // attention replaced by one linear map: no cache (Llama-Nemotron)
	mixerNone       = ""           // no mixer: an MLP- or MoE-only block (Nemotron-H '-' and 'E', Llama-Nemotron no_op)
)

// attends reports whether a mixer keeps a KV cache.
func attends(mixer string) bool {
	return mixer == mixerFull || mixer == mixerSliding || mixer == mixerCompressed
}

// stateful reports whether a mixer keeps a constant state per request.
func stateful(mixer string) bool {
	return mixer == mixerLinear || mixer == mixerKDA || mixer == mixerMamba || mixer == mixerMamba1
}

// Feed-forward parts of a layer (block).
const (
	ffnNone  = ""
	ffnDense = "dense" // one gated MLP of intermediate_size
	ffnMoE   = "moe"   // routed experts (+ shared experts)
	ffnBoth  = "both"  // a dense MLP and an MoE block side by side (Gemma-4)
	ffnProj  = "proj"  // the FFN replaced by one hidden × hidden linear map (Llama-Nemotron)
)

// layerSpec is one decoder layer as the config describes it.
type layerSpec struct {
	mixer    string
	window   int   // sliding and compressed
	ratio    int   // compressed: tokens per entry
	indexer  bool  // a sparse-attention indexer keeps its own key cache here
	indexB   int64 // its bytes per indexed entry; 0 = indexKeyBytes(index_head_dim)
	kvHeads  int   // 0 = the model's
	headDim  int   // 0 = the model's
	noV      bool
	ffn      string
	ffnWidth int // this layer's dense MLP width; 0 = the model's (Llama-Nemotron)
}

// linearDims are the Gated DeltaNet dimensions of a linear-attention layer.
type linearDims struct {
	kHeads, vHeads, kDim, vDim, kernel int
}

// kdaDims are the Kimi Delta Attention dimensions (linear_attn_config).
type kdaDims struct {
	heads, headDim, kernel int
}

// mambaDims are the dimensions of a Mamba-2 layer.
type mambaDims struct {
	heads, headDim, state, groups, kernel int
}

// mamba1Dims are the dimensions of a Mamba-1 layer.
type mamba1Dims struct {
	inner, state, kernel, dtRank int
}

// buildLayers reads the per-layer layout from whichever encoding the config
// uses, in this order: a family's own encoding (familyLayers: DeepSeek-V4's
// compress_ratios, Llama-Nemotron's block_configs, Kimi Linear's
// linear_attn_config, Jamba's attention period, pure Mamba), layer_types, hybrid_override_pattern,
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

	handled, err := imp.familyLayers(specs, window)
	switch {
	case err != nil:
		return err
	case handled:
	case hasTypes:
		if len(types) != n {
			return c.errf("layer_types", "has %d entries but num_hidden_layers is %d", len(types), n)
		}
		sliding := 0
		for i, t := range types {
			switch t {
			case "full_attention", "attention", "deepseek_sparse_attention":
				specs[i].mixer = mixerFull // DSA layers: MLA, and an indexer where markIndexers says
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
			// transformers' Llama4TextConfig: no_rope_layers[i] =
			// int((i + 1) % no_rope_layer_interval != 0), interval 4: every
			// 4th layer is a NoPE layer with global attention.
			if !strings.HasPrefix(a.modelType, "llama4") {
				return c.errf("no_rope_layers", "missing, but attention_chunk_size %d needs it to tell chunked layers from global ones", chunk)
			}
			interval, has, err := c.optPositive("no_rope_layer_interval")
			if err != nil {
				return err
			}
			if !has {
				interval = 4
			}
			rope = make([]int, n)
			for i := range rope {
				if (i+1)%interval != 0 {
					rope[i] = 1
				}
			}
			imp.note("no_rope_layers missing: every %d-th layer is a global (NoPE) layer and the others chunked, transformers' Llama4TextConfig default (no_rope_layer_interval %d)", interval, interval)
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

// readStateDims reads the linear-attention and Mamba dimensions the layers
// need, and the dtype the config pins for their recurrent state.
func (imp *importer) readStateDims() error {
	c, a := imp.c, imp.a
	has := map[string]bool{}
	for _, s := range a.specs {
		has[s.mixer] = true
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
	if has[mixerLinear] {
		a.lin = &linearDims{
			vHeads: get("linear_num_value_heads"),
			kHeads: get("linear_num_key_heads"),
			kDim:   get("linear_key_head_dim"),
			vDim:   get("linear_value_head_dim"),
			kernel: get("linear_conv_kernel_dim"),
		}
	}
	if has[mixerMamba] && err == nil {
		a.mamba = &mambaDims{
			heads:   get("mamba_num_heads", "mamba_n_heads"),
			headDim: get("mamba_head_dim", "mamba_d_head"),
			state:   get("ssm_state_size", "mamba_d_state"),
			groups:  get("n_groups", "mamba_n_groups", "mamba_num_groups"),
			kernel:  get("conv_kernel", "mamba_d_conv"),
		}
	}
	if has[mixerMamba1] && err == nil {
		err = imp.readMamba1()
	}
	if err != nil {
		return err
	}
	if has[mixerLinear] || has[mixerKDA] || has[mixerMamba] || has[mixerMamba1] {
		return imp.ssmDtype(has[mixerKDA])
	}
	return nil
}

// readMamba1 reads a Mamba-1 layer's dimensions: the inner width
// (mamba_expand × hidden for Jamba, whose intermediate_size is its MLP's;
// intermediate_size, else expand × hidden, for Falcon-Mamba and Mamba), the
// SSM state size, the conv kernel and the dt rank ("auto" = ceil(hidden / 16)).
func (imp *importer) readMamba1() error {
	c, a := imp.c, imp.a
	m := &mamba1Dims{}
	var err error
	switch {
	case a.modelType == "jamba":
		var e int
		if e, err = c.positive("mamba_expand"); err != nil {
			return err
		}
		m.inner = e * a.hidden
	case c.has("intermediate_size"):
		if m.inner, err = c.positive("intermediate_size"); err != nil {
			return err
		}
	default:
		var e int
		if e, err = c.positive("expand"); err != nil {
			return err
		}
		m.inner = e * a.hidden
	}
	if m.inner > maxDim {
		return c.errf("intermediate_size", "the Mamba inner width %d is above %d", m.inner, maxDim)
	}
	if m.state, err = c.positive("state_size", "mamba_d_state", "ssm_state_size"); err != nil {
		return err
	}
	if m.kernel, err = c.positive("conv_kernel", "mamba_d_conv"); err != nil {
		return err
	}
	for _, k := range []string{"time_step_rank", "mamba_dt_rank"} {
		v, _, _ := c.lookup(k)
		if s, ok := v.(string); ok && s == "auto" {
			m.dtRank = (a.hidden + 15) / 16
			break
		}
		if c.has(k) {
			if m.dtRank, err = c.positive(k); err != nil {
				return err
			}
			break
		}
	}
	if m.dtRank == 0 {
		m.dtRank = (a.hidden + 15) / 16
	}
	a.mamba1 = m
	return nil
}

// ssmDtype sets the dtype the config pins for the recurrent state, which
// both engines honour: mamba_ssm_cache_dtype (vLLM's NemotronH hook),
// mamba_ssm_dtype (vLLM's Qwen3.5 hook, SGLang's mamba2_state_dtype); with
// neither, vLLM's NemotronH default float32 for model_type nemotron_h, and
// float32 for Kimi Delta Attention, whose recurrent state vLLM always keeps
// in float32 (MambaStateDtypeCalculator.kda_state_dtype).
func (imp *importer) ssmDtype(kda bool) error {
	c, a := imp.c, imp.a
	for _, key := range []string{"mamba_ssm_cache_dtype", "mamba_ssm_dtype"} {
		v, err := c.str(key)
		if err != nil {
			return err
		}
		if v == "" {
			continue
		}
		d, ok := hfDtypes[v]
		if !ok {
			return c.errf(key, "%q is not one of %s", v, hfDtypeList())
		}
		a.ssmDtype = d
		imp.note("the recurrent (SSM) state is kept in %s, as %s pins it", d, key)
		return nil
	}
	switch {
	case kda:
		a.ssmDtype = "fp32"
		imp.note("Kimi Delta Attention: the recurrent state is kept in fp32 (vLLM's kda_state_dtype; SGLang's default)")
	case a.modelType == "nemotron_h":
		a.ssmDtype = "fp32"
		imp.note("model_type nemotron_h without mamba_ssm_cache_dtype: the SSM state is kept in fp32, vLLM's NemotronH default (and SGLang's)")
	}
	return nil
}

// stateDims is a stateful layer's conv channels, kernel and recurrent state
// elements:
//
//	Gated DeltaNet  conv 2·k_heads·k_dim + v_heads·v_dim, state v_heads·k_dim·v_dim
//	Kimi Delta      conv 3·heads·head_dim (q, k, v), state heads·head_dim²
//	Mamba-2         conv heads·head_dim + 2·groups·state, state heads·head_dim·state
//	Mamba-1         conv inner, state inner·state
func (a *arch) stateDims(mixer string) (conv, kernel int, ssm int64) {
	switch mixer {
	case mixerLinear:
		l := a.lin
		return 2*l.kHeads*l.kDim + l.vHeads*l.vDim, l.kernel, int64(l.vHeads) * int64(l.kDim) * int64(l.vDim)
	case mixerKDA:
		k := a.kda
		return 3 * k.heads * k.headDim, k.kernel, int64(k.heads) * int64(k.headDim) * int64(k.headDim)
	case mixerMamba:
		m := a.mamba
		return m.heads*m.headDim + 2*m.groups*m.state, m.kernel, int64(m.heads) * int64(m.headDim) * int64(m.state)
	case mixerMamba1:
		m := a.mamba1
		return m.inner, m.kernel, int64(m.inner) * int64(m.state)
	}
	return 0, 0, 0
}

// catalogLayout groups the layers that hold a cache into the catalog's
// layer groups, in order of first appearance. It returns nil when every
// cache layer is full attention with the model's geometry and no indexer.
func (a *arch) catalogLayout() (groups []catalog.LayerGroup, cacheLayers int) {
	plain := true
	for _, s := range a.specs {
		if !attends(s.mixer) && !stateful(s.mixer) {
			continue
		}
		cacheLayers++
		g := catalog.LayerGroup{Kind: s.mixer, Count: 1, Window: s.window, Ratio: s.ratio, KVHeads: s.kvHeads, HeadDim: s.headDim}
		if s.indexer {
			g.IndexBytes = s.indexB
			if g.IndexBytes == 0 {
				g.IndexBytes = indexKeyBytes(a.indexDim)
			}
		}
		switch s.mixer {
		case mixerLinear, mixerKDA:
			g.Kind = catalog.LayerLinear
		case mixerMamba, mixerMamba1:
			g.Kind = catalog.LayerMamba
		case mixerCompressed:
			g.StateBytes = compressorStateBytes(s.ratio, a.mla.kvLoraRank+a.mla.qkRope, a.indexDim, s.indexer)
		}
		if stateful(s.mixer) {
			g.ConvDim, g.ConvKernel, g.SSMStateElements = a.stateDims(s.mixer)
			g.SSMDtype = a.ssmDtype
			g.KVHeads, g.HeadDim = 0, 0
		}
		if g.Kind != catalog.LayerFull || g.KVHeads != 0 || g.HeadDim != 0 || g.IndexBytes != 0 {
			plain = false
		}
		found := false
		for i := range groups {
			x := groups[i]
			x.Count = g.Count
			if x == g {
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
		switch {
		case g.Ratio > 0:
			s += fmt.Sprintf(" (ratio %d, window %d)", g.Ratio, g.Window)
		case g.Window > 0:
			s += fmt.Sprintf(" (window %d)", g.Window)
		}
		if g.IndexBytes > 0 {
			s += " + indexer"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// stateNotes says what the linear and Mamba layers' state comes to per
// request under each engine's convention, opts.Engine's first.
func (imp *importer) stateNotes(m *catalog.Model) {
	stateful := false
	for _, g := range m.Layout {
		stateful = stateful || g.SSMStateElements > 0
	}
	if !stateful {
		return
	}
	first := models.StateConventionFor(imp.opts.Engine)
	engines := []string{first.Engine}
	for _, e := range models.StateConventions {
		if e != first.Engine {
			engines = append(engines, e)
		}
	}
	var parts []string
	for _, e := range engines {
		kv, err := models.NewKV(m, models.KVOptions{Engine: e})
		if err != nil {
			return
		}
		parts = append(parts, fmt.Sprintf("%s %d B (%s)", e, kv.StateBytesPerRequest(), units.Bytes(kv.StateBytesPerRequest())))
	}
	imp.note("linear/Mamba state per request, by engine convention: %s; the entry keeps the dimensions, and kvplan applies the engine's convention (--engine; %s: %s)",
		strings.Join(parts, ", "), first.Engine, first.Brief())
	if first.Note != "" {
		imp.note("%s", first.Note)
	}
}
