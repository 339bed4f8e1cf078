package hfimport

import (
	"fmt"
	"strings"
)

// Parameter count of a decoder, derived from its config.json.
//
// With H = hidden_size, V = vocab_size, A = num_attention_heads, K = kv heads
// and d = head_dim of the layer (full layers may have their own K and d):
//
//	embeddings  V·H, and V·H again for the LM head unless tie_word_embeddings
//	attention   q H·A·d (×2 with an output gate, Qwen3-Next), k H·K·d, v H·K·d
//	            (none when attention_k_eq_v, Gemma-4 full layers), o A·d·H;
//	            with attention_bias, A·d + 2·K·d + H more; q/k norms 2·d (Qwen3,
//	            Gemma-3/4, OLMo-2)
//	MLA         q: H·q_lora_rank + q_lora_rank + q_lora_rank·A·(qk_nope + qk_rope)
//	               (H·A·(qk_nope + qk_rope) without q_lora_rank),
//	            kv: H·(kv_lora_rank + qk_rope) + kv_lora_rank
//	                + kv_lora_rank·A·(qk_nope + v_head_dim),
//	            o: A·v_head_dim·H
//	indexer     (DSA, n = index_n_heads, i = index_head_dim) q_lora_rank·n·i,
//	            k H·i + 2·i (norm), weights H·n
//	V4 latent   (DeepSeek-V4, d = head_dim, g = o_groups, r = o_lora_rank)
//	            q H·q_lora_rank + q_lora_rank + q_lora_rank·A·d, kv H·d + d,
//	            o A·d·r + g·r·H, sink A; a compressed layer's compressor
//	            2·H·c·d + ratio·c·d + d (c = 2 for ratio 4 else 1), and its
//	            indexer q_lora_rank·n·i + H·n + the same compressor over i
//	linear      (Gated DeltaNet, kd = k_heads·k_dim, vd = v_heads·v_dim)
//	            in H·(2·kd + 2·vd) + H·2·v_heads, conv (2·kd + vd)·kernel,
//	            2·v_heads (A_log, dt_bias), v_dim (norm), out vd·H
//	Kimi Delta  (hd = heads·head_dim) q, k, v, o 4·H·hd, gates f and g
//	            2·H·hd, beta H·heads, conv 3·hd·kernel, A_log heads,
//	            dt_bias hd, norm head_dim
//	Mamba-2     (di = heads·head_dim, gs = groups·state)
//	            in H·(2·di + 2·gs + heads), conv (di + 2·gs)·kernel, 3·heads,
//	            di (norm), out di·H
//	Mamba-1     (di = inner, s = state, r = dt rank) in H·2·di, conv di·kernel
//	            + di, x di·(r + 2·s), dt r·di + di, A di·s, D di, out di·H
//	MLP         m·H·intermediate_size, m = 3 for a gated MLP (gate, up, down),
//	            2 for a plain one (Nemotron's relu², GPT-2 style)
//	MoE layer   experts·m·H·moe_intermediate_size (intermediate_size when no
//	            moe_intermediate_size: Mixtral, gpt-oss), router H·experts,
//	            shared experts m·H·shared_size (n_shared_experts ×
//	            moe_intermediate_size, or shared_expert_intermediate_size plus
//	            a gate of H; Llama-4: one of intermediate_size); latent MoE
//	            (moe_latent_size, routed_expert_hidden_size L) runs the routed
//	            experts at width L: experts·m·L·I + 2·H·L
//	norms       2·H per layer (H per single-purpose block), H final
//
// Which layers are MoE: every layer, except the first first_k_dense_replace
// layers and the layers off moe_layer_freq (DeepSeek; a list marks each
// layer, MiniMax-M3), the layers off decoder_sparse_step or in
// mlp_only_layers (Qwen), the layers off interleave_moe_layer_step
// (Llama-4) or expert_layer_period / expert_layer_offset (Jamba); Gemma-4's
// enable_moe_block puts a dense MLP and an MoE block side by side in every
// layer; hybrid block patterns say it per block ('E' / "moe").
//
// Active parameters (MoE only) are what one token computes with: the total
// minus the routed experts it does not use (experts − num_experts_per_tok per
// MoE layer) minus the input embedding when it is not tied (a lookup, no
// FLOPs). This is the convention of gpt-oss's published 5.1B; Mixtral's
// 12.9B and DeepSeek-V3's 37B include the input embedding, about 1% more.
//
// Left out, each under 0.1% of the total: biases other than attention_bias,
// attention sinks, router biases, hyper-connection mixing weights
// (DeepSeek-V4's hc_mult), the MTP layers (not counted, as in the published
// totals), and vision or audio towers of multimodal models.
type paramCount struct {
	Embedding     int64 // input embedding
	LMHead        int64 // output projection; 0 when tied
	Attention     int64 // attention, MLA, linear-attention and Mamba mixers
	DenseMLP      int64
	Experts       int64 // every routed expert of every MoE layer
	ExpertsActive int64 // num_experts_per_tok routed experts of every MoE layer
	Shared        int64 // shared experts
	Router        int64
	Norms         int64

	// modules lists the weights by module, named as Hugging Face
	// checkpoints name them (without the "model." prefix), for the weight
	// bytes of a quantization that treats modules differently.
	modules []module
}

// Parts of a parameter count.
const (
	partEmbedding = "embedding"
	partLMHead    = "lm_head"
	partAttention = "attention"
	partDense     = "dense_mlp"
	partExperts   = "experts"
	partShared    = "shared_experts"
	partRouter    = "router"
	partNorms     = "norms"
)

// module is one weight (or a group of alike weights, such as a layer's
// routed experts) of a checkpoint.
type module struct {
	name   string // "layers.3.self_attn.q_proj", "lm_head", "embed_tokens"
	part   string
	linear bool // a Linear layer that weight quantization may convert
	params int64
}

// add counts n parameters of module name in part.
func (p *paramCount) add(part, name string, linear bool, n int64) {
	if n == 0 {
		return
	}
	p.modules = append(p.modules, module{name: name, part: part, linear: linear, params: n})
	switch part {
	case partEmbedding:
		p.Embedding += n
	case partLMHead:
		p.LMHead += n
	case partAttention:
		p.Attention += n
	case partDense:
		p.DenseMLP += n
	case partExperts:
		p.Experts += n
	case partShared:
		p.Shared += n
	case partRouter:
		p.Router += n
	case partNorms:
		p.Norms += n
	}
}

// Total is every parameter.
func (p paramCount) Total() int64 {
	return p.Embedding + p.LMHead + p.Attention + p.DenseMLP + p.Experts + p.Shared + p.Router + p.Norms
}

// Active is the parameters one token computes with (see above).
func (p paramCount) Active() int64 {
	n := p.Total() - (p.Experts - p.ExpertsActive)
	if p.LMHead > 0 {
		n -= p.Embedding
	}
	return n
}

// ffnDims are the feed-forward dimensions of a config.
type ffnDims struct {
	intermediate int  // dense MLP width
	gated        bool // gate, up and down projections
	experts      int  // routed experts; 0 = dense
	topK         int
	expertI      int // one routed expert's width
	sharedI      int // total width of the shared experts; 0 = none
	sharedGate   bool
	latent       int // latent MoE: the routed experts' model width; 0 = hidden
}

// nonGated lists model types whose MLP has no gate projection.
var nonGated = map[string]bool{
	"nemotron": true, "nemotron_h": true, "gpt2": true, "gpt_neox": true, "gptj": true, "opt": true,
	"bloom": true, "falcon": true, "phi": true, "starcoder2": true, "gpt_bigcode": true, "mpt": true,
}

// gatedPrefixes are model-type families known to use a gated MLP.
var gatedPrefixes = []string{"llama", "mistral", "mixtral", "qwen", "deepseek", "kimi", "gemma", "gpt_oss",
	"phi3", "olmo", "granite", "glm", "cohere", "exaone", "internlm", "hunyuan", "ernie", "smollm", "minicpm", "yi",
	"minimax", "nemotron-nas", "jamba"}

// readFFN reads the MLP and MoE dimensions and marks each layer's FFN.
func (imp *importer) readFFN() error {
	c, a := imp.c, imp.a
	f := &a.ffn
	act1, err := c.str("mlp_hidden_act")
	if err != nil {
		return err
	}
	act2, err := c.str("hidden_act")
	if err != nil {
		return err
	}
	f.gated = !(nonGated[a.modelType] || act1 == "relu2" || act2 == "relu2")
	if f.gated && !pureMamba(a.modelType) {
		known := false
		for _, p := range gatedPrefixes {
			known = known || strings.HasPrefix(a.modelType, p)
		}
		if !known {
			imp.note("model_type %q: the MLP is taken as gated (gate, up and down projections) in the parameter count", a.modelType)
		}
	}
	if err := imp.readExperts(); err != nil {
		return err
	}

	needDense := false
	if imp.blockPattern {
		for _, s := range a.specs {
			switch s.ffn {
			case ffnDense:
				needDense = needDense || s.ffnWidth == 0
			case ffnMoE:
				if f.experts == 0 {
					return c.errf("n_routed_experts", "missing, but the block pattern has MoE blocks")
				}
			}
		}
	} else {
		both, _, err := c.bool("enable_moe_block")
		if err != nil {
			return err
		}
		isMoE, err := imp.moeLayers()
		if err != nil {
			return err
		}
		for i := range a.specs {
			s := &a.specs[i]
			switch {
			case f.experts > 0 && both:
				s.ffn = ffnBoth
				needDense = true
			case f.experts > 0 && isMoE(i):
				s.ffn = ffnMoE
			default:
				s.ffn = ffnDense
				needDense = true
			}
		}
	}
	if needDense {
		return imp.denseWidth()
	}
	return nil
}

// readExperts reads the routed and shared experts of an MoE config.
func (imp *importer) readExperts() error {
	c, a := imp.c, imp.a
	f := &a.ffn
	experts, _, hasExperts, err := c.intAlias("num_experts", "num_local_experts", "n_routed_experts")
	if err != nil {
		return err
	}
	if hasExperts && experts < 0 {
		return c.errf("num_experts", "must be >= 0 (got %d)", experts)
	}
	if experts == 0 {
		return nil
	}
	f.experts = experts
	if f.topK, err = c.positive("num_experts_per_tok", "experts_per_token", "top_k_experts", "moe_topk", "num_experts_per_token"); err != nil {
		return err
	}
	if f.topK > experts {
		return c.errf("num_experts_per_tok", "%d is more than the %d experts", f.topK, experts)
	}
	ei, ok, err := c.optPositive("moe_intermediate_size")
	if err != nil {
		return err
	}
	if !ok {
		if ei, err = c.positive("intermediate_size"); err != nil {
			return err
		}
	}
	f.expertI = ei
	if f.latent, _, _, err = c.intAlias("moe_latent_size", "routed_expert_hidden_size"); err != nil {
		return err
	}
	if f.latent < 0 || f.latent > maxDim {
		return c.errf("moe_latent_size", "must be between 0 and %d (got %d)", maxDim, f.latent)
	}
	if f.latent > 0 {
		imp.note("latent MoE: the routed experts run at width %d, projected from and to hidden_size %d", f.latent, a.hidden)
	}
	si, key, ok, err := c.intAlias("shared_expert_intermediate_size", "moe_shared_expert_intermediate_size", "shared_intermediate_size")
	if err != nil {
		return err
	}
	switch {
	case ok && si > 0:
		f.sharedI, f.sharedGate = si, key == "shared_expert_intermediate_size"
	case ok && si < 0:
		return c.errf(key, "must be >= 0 (got %d)", si)
	case strings.HasPrefix(a.modelType, "llama4"):
		// Llama4TextMoe: one shared expert of intermediate_size beside the routed ones.
		if f.sharedI, err = c.positive("intermediate_size"); err != nil {
			return err
		}
	default:
		ns, err := c.nonNeg("n_shared_experts", "num_shared_experts")
		if err != nil {
			return err
		}
		f.sharedI = ns * ei
	}
	return nil
}

// denseWidth reads the dense MLP width: Llama-4's intermediate_size_mlp and
// MiniMax-M3's dense_intermediate_size name it apart from the experts'; GPT-2's
// n_inner null means 4 × n_embd.
func (imp *importer) denseWidth() error {
	c, a := imp.c, imp.a
	var err error
	for _, key := range []string{"intermediate_size_mlp", "dense_intermediate_size"} {
		if c.has(key) {
			a.ffn.intermediate, err = c.positive(key)
			return err
		}
	}
	if !c.has("intermediate_size") && !c.has("ffn_hidden_size") && !c.has("n_inner") {
		if _, _, present := c.lookup("n_inner"); present || a.modelType == "gpt2" {
			a.ffn.intermediate = 4 * a.hidden
			imp.note("n_inner is null: the MLP is 4 × n_embd = %d wide, as GPT-2 defines it", a.ffn.intermediate)
			return nil
		}
	}
	a.ffn.intermediate, err = c.positive("intermediate_size", "ffn_hidden_size", "n_inner")
	return err
}

// moeLayers returns which layers (0-based) hold routed experts.
func (imp *importer) moeLayers() (func(int) bool, error) {
	c := imp.c
	firstDense, err := c.nonNeg("first_k_dense_replace")
	if err != nil {
		return nil, err
	}
	var freq int
	var hasFreq bool
	var freqList []int
	if v, _, _ := c.lookup("moe_layer_freq"); v != nil {
		if _, isList := v.([]any); isList {
			if freqList, _, err = c.intList("moe_layer_freq"); err != nil {
				return nil, err
			}
			if len(freqList) != len(imp.a.specs) {
				return nil, c.errf("moe_layer_freq", "has %d entries but num_hidden_layers is %d", len(freqList), len(imp.a.specs))
			}
			for i, x := range freqList {
				if x != 0 && x != 1 {
					return nil, c.errf("moe_layer_freq", "entry %d is %d; expected 1 (MoE) or 0 (dense)", i, x)
				}
			}
		} else if freq, hasFreq, err = c.optPositive("moe_layer_freq"); err != nil {
			return nil, err
		}
	}
	step, hasStep, err := c.optPositive("decoder_sparse_step")
	if err != nil {
		return nil, err
	}
	inter, hasInter, err := c.optPositive("interleave_moe_layer_step")
	if err != nil {
		return nil, err
	}
	period, hasPeriod, err := c.optPositive("expert_layer_period")
	if err != nil {
		return nil, err
	}
	offset, err := c.nonNeg("expert_layer_offset")
	if err != nil {
		return nil, err
	}
	only, _, err := c.intList("mlp_only_layers")
	if err != nil {
		return nil, err
	}
	dense := map[int]bool{}
	for _, i := range only {
		dense[i] = true
	}
	return func(i int) bool {
		switch {
		case freqList != nil:
			return freqList[i] == 1
		case i < firstDense || dense[i]:
			return false
		case hasFreq && i%freq != 0:
			return false
		case hasStep && (i+1)%step != 0:
			return false
		case hasInter && (i+1)%inter != 0:
			return false
		case hasPeriod && i%period != offset:
			return false
		}
		return true
	}, nil
}

// countParams counts the parameters by module and part (see the formula
// above).
func (a *arch) countParams() paramCount {
	var p paramCount
	H, V := int64(a.hidden), int64(a.vocab)
	p.add(partEmbedding, "embed_tokens", false, V*H)
	if !a.tied {
		p.add(partLMHead, "lm_head", true, V*H)
	}
	f := a.ffn
	m := int64(2)
	if f.gated {
		m = 3
	}
	mlp := func(part, prefix string, width int64) {
		if f.gated {
			p.add(part, prefix+".gate_proj", true, H*width)
		}
		p.add(part, prefix+".up_proj", true, H*width)
		p.add(part, prefix+".down_proj", true, width*H)
	}
	for i, s := range a.specs {
		l := fmt.Sprintf("layers.%d.", i)
		a.mixerParams(&p, l, s)
		if s.ffn == ffnDense || s.ffn == ffnBoth {
			w := int64(f.intermediate)
			if s.ffnWidth > 0 {
				w = int64(s.ffnWidth)
			}
			mlp(partDense, l+"mlp", w)
		}
		if s.ffn == ffnProj {
			p.add(partDense, l+"mlp.linear", true, H*H)
		}
		if s.ffn == ffnMoE || s.ffn == ffnBoth {
			width := H
			if f.latent > 0 {
				width = int64(f.latent)
				p.add(partExperts, l+"mlp.fc1_latent_proj", true, H*width)
				p.add(partExperts, l+"mlp.fc2_latent_proj", true, width*H)
				p.ExpertsActive += 2 * H * width
			}
			one := m * width * int64(f.expertI)
			p.add(partExperts, l+"mlp.experts", true, int64(f.experts)*one)
			p.ExpertsActive += int64(f.topK) * one
			p.add(partRouter, l+"mlp.gate", false, H*int64(f.experts))
			if f.sharedGate {
				mlp(partShared, l+"mlp.shared_expert", int64(f.sharedI))
				p.add(partShared, l+"mlp.shared_expert_gate", false, H)
			} else if f.sharedI > 0 {
				mlp(partShared, l+"mlp.shared_experts", int64(f.sharedI))
			}
		}
		if s.mixer != mixerNone && s.ffn != ffnNone {
			p.add(partNorms, l+"norms", false, 2*H)
		} else {
			p.add(partNorms, l+"norms", false, H)
		}
	}
	p.add(partNorms, "norm", false, H)
	return p
}

// mixerParams counts one layer's mixer: attention, MLA, linear attention or
// Mamba, under the module names of the checkpoints.
func (a *arch) mixerParams(p *paramCount, l string, s layerSpec) {
	H := int64(a.hidden)
	att := func(name string, n int64) { p.add(partAttention, l+name, true, n) }
	small := func(name string, n int64) { p.add(partAttention, l+name, false, n) }
	switch s.mixer {
	case mixerFull, mixerSliding, mixerCompressed:
		a.attentionParams(p, l, s)
	case mixerProj:
		att("self_attn.linear_attn", H*H)
	case mixerLinear:
		lin := a.lin
		kd, vd := int64(lin.kHeads*lin.kDim), int64(lin.vHeads*lin.vDim)
		att("linear_attn.in_proj_qkv", H*(2*kd+vd))
		att("linear_attn.in_proj_z", H*vd)
		att("linear_attn.in_proj_b", H*int64(lin.vHeads))
		att("linear_attn.in_proj_a", H*int64(lin.vHeads))
		small("linear_attn.conv1d", (2*kd+vd)*int64(lin.kernel))
		small("linear_attn.A_log", 2*int64(lin.vHeads)) // A_log and dt_bias
		small("linear_attn.norm", int64(lin.vDim))
		att("linear_attn.out_proj", vd*H)
	case mixerKDA:
		k := a.kda
		hd := int64(k.heads * k.headDim)
		for _, n := range []string{"q_proj", "k_proj", "v_proj", "f_proj", "g_proj"} {
			att("self_attn."+n, H*hd)
		}
		att("self_attn.b_proj", H*int64(k.heads))
		small("self_attn.conv1d", 3*hd*int64(k.kernel))
		small("self_attn.A_log", int64(k.heads)+hd) // A_log and dt_bias
		small("self_attn.o_norm", int64(k.headDim))
		att("self_attn.o_proj", hd*H)
	case mixerMamba:
		mb := a.mamba
		di, gs := int64(mb.heads*mb.headDim), int64(mb.groups*mb.state)
		att("mixer.in_proj", H*(2*di+2*gs+int64(mb.heads)))
		small("mixer.conv1d", (di+2*gs)*int64(mb.kernel))
		small("mixer.A_log", 3*int64(mb.heads)) // A_log, D, dt_bias
		small("mixer.norm", di)
		att("mixer.out_proj", di*H)
	case mixerMamba1:
		mb := a.mamba1
		di, st, r := int64(mb.inner), int64(mb.state), int64(mb.dtRank)
		att("mixer.in_proj", H*2*di)
		small("mixer.conv1d", di*int64(mb.kernel)+di)
		att("mixer.x_proj", di*(r+2*st))
		att("mixer.dt_proj", r*di+di)
		small("mixer.A_log", di*st+di) // A_log and D
		att("mixer.out_proj", di*H)
	}
}

// attentionParams counts one attention layer's projections.
func (a *arch) attentionParams(p *paramCount, l string, s layerSpec) {
	H, A := int64(a.hidden), int64(a.heads)
	att := func(name string, n int64) { p.add(partAttention, l+"self_attn."+name, true, n) }
	small := func(name string, n int64) { p.add(partAttention, l+"self_attn."+name, false, n) }
	if ml := a.mla; ml != nil && ml.v4 {
		a.v4Params(p, l, s)
		return
	}
	if ml := a.mla; ml != nil {
		qk := int64(ml.qkNope + ml.qkRope)
		if ml.qLoraRank > 0 {
			r := int64(ml.qLoraRank)
			att("q_a_proj", H*r)
			small("q_a_layernorm", r)
			att("q_b_proj", r*A*qk)
		} else {
			att("q_proj", H*A*qk)
		}
		r := int64(ml.kvLoraRank)
		att("kv_a_proj_with_mqa", H*(r+int64(ml.qkRope)))
		small("kv_a_layernorm", r)
		att("kv_b_proj", r*A*int64(ml.qkNope+ml.vHead))
		att("o_proj", A*int64(ml.vHead)*H)
		if s.indexer {
			n, i := int64(a.indexHeads), int64(a.indexDim)
			qIn := int64(ml.qLoraRank)
			if qIn == 0 {
				qIn = H
			}
			att("indexer.wq_b", qIn*n*i)
			att("indexer.wk", H*i)
			small("indexer.k_norm", 2*i)
			small("indexer.weights_proj", H*n)
		}
		return
	}
	K, d := int64(a.kvHeads), int64(a.headDim)
	if s.kvHeads > 0 {
		K = int64(s.kvHeads)
	}
	if s.headDim > 0 {
		d = int64(s.headDim)
	}
	q := H * A * d
	if a.qGate {
		q *= 2
	}
	att("q_proj", q)
	att("k_proj", H*K*d)
	if !s.noV {
		att("v_proj", H*K*d)
	}
	att("o_proj", A*d*H)
	if a.attnBias {
		kv := int64(2)
		if s.noV {
			kv = 1
		}
		small("bias", A*d+kv*K*d+H)
	}
	if a.qkNorm {
		small("q_norm", 2*d)
	}
}

// v4Params counts one DeepSeek-V4 attention layer (see the formula above).
func (a *arch) v4Params(p *paramCount, l string, s layerSpec) {
	H, A := int64(a.hidden), int64(a.heads)
	ml := a.mla
	d := int64(ml.kvLoraRank + ml.qkRope)
	att := func(name string, n int64) { p.add(partAttention, l+"self_attn."+name, true, n) }
	small := func(name string, n int64) { p.add(partAttention, l+"self_attn."+name, false, n) }
	qr := int64(ml.qLoraRank)
	if qr > 0 {
		att("wq_a", H*qr)
		small("q_norm", qr)
		att("wq_b", qr*A*d)
	} else {
		att("wq", H*A*d)
	}
	att("wkv", H*d)
	small("kv_norm", d)
	if g, r := int64(ml.oGroups), int64(ml.oLoraRank); g > 0 && r > 0 {
		att("wo_a", A*d*r)
		att("wo_b", g*r*H)
	} else {
		att("wo", A*d*H)
	}
	small("attn_sink", A)
	if s.mixer != mixerCompressed {
		return
	}
	compressor := func(prefix string, dim int64) {
		coff := int64(1)
		if s.ratio == 4 {
			coff = 2
		}
		small(prefix+"compressor.wkv_wgate", 2*H*coff*dim) // not quantized: quant_config None in vLLM
		small(prefix+"compressor.ape", int64(s.ratio)*coff*dim)
		small(prefix+"compressor.norm", dim)
	}
	compressor("", d)
	if s.indexer {
		n, i := int64(a.indexHeads), int64(a.indexDim)
		qIn := qr
		if qIn == 0 {
			qIn = H
		}
		att("indexer.wq_b", qIn*n*i)
		small("indexer.weights_proj", H*n)
		compressor("indexer.", i)
	}
}
