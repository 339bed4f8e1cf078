package hfimport

import (
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
//	linear      (Gated DeltaNet, kd = k_heads·k_dim, vd = v_heads·v_dim)
//	            in H·(2·kd + 2·vd) + H·2·v_heads, conv (2·kd + vd)·kernel,
//	            2·v_heads (A_log, dt_bias), v_dim (norm), out vd·H
//	Mamba-2     (di = heads·head_dim, gs = groups·state)
//	            in H·(2·di + 2·gs + heads), conv (di + 2·gs)·kernel, 3·heads,
//	            di (norm), out di·H
//	MLP         m·H·intermediate_size, m = 3 for a gated MLP (gate, up, down),
//	            2 for a plain one (Nemotron's relu², GPT-2 style)
//	MoE layer   experts·m·H·moe_intermediate_size (intermediate_size when no
//	            moe_intermediate_size: Mixtral, gpt-oss), router H·experts,
//	            shared experts m·H·shared_size (n_shared_experts ×
//	            moe_intermediate_size, or shared_expert_intermediate_size plus
//	            a gate of H)
//	norms       2·H per layer (H per single-purpose block), H final
//
// Which layers are MoE: every layer, except the first first_k_dense_replace
// layers and the layers off moe_layer_freq (DeepSeek), the layers off
// decoder_sparse_step or in mlp_only_layers (Qwen), the layers off
// interleave_moe_layer_step (Llama-4); Gemma-4's enable_moe_block puts a
// dense MLP and an MoE block side by side in every layer; hybrid block
// patterns say it per block ('E' / "moe").
//
// Active parameters (MoE only) are what one token computes with: the total
// minus the routed experts it does not use (experts − num_experts_per_tok per
// MoE layer) minus the input embedding when it is not tied (a lookup, no
// FLOPs). This is the convention of gpt-oss's published 5.1B; Mixtral's
// 12.9B and DeepSeek-V3's 37B include the input embedding, about 1% more.
//
// Left out, each under 0.1% of the total: biases other than attention_bias,
// attention sinks, router biases, the MTP layers (not counted, as
// in the published totals), and vision or audio towers of multimodal models.
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
}

// nonGated lists model types whose MLP has no gate projection.
var nonGated = map[string]bool{
	"nemotron": true, "nemotron_h": true, "gpt2": true, "gpt_neox": true, "gptj": true, "opt": true,
	"bloom": true, "falcon": true, "phi": true, "starcoder2": true, "gpt_bigcode": true, "mpt": true,
}

// gatedPrefixes are model-type families known to use a gated MLP.
var gatedPrefixes = []string{"llama", "mistral", "mixtral", "qwen", "deepseek", "kimi", "gemma", "gpt_oss",
	"phi3", "olmo", "granite", "glm", "cohere", "exaone", "internlm", "hunyuan", "ernie", "smollm", "minicpm", "yi"}

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
	if f.gated {
		known := false
		for _, p := range gatedPrefixes {
			known = known || strings.HasPrefix(a.modelType, p)
		}
		if !known {
			imp.note("model_type %q: the MLP is taken as gated (gate, up and down projections) in the parameter count", a.modelType)
		}
	}

	experts, _, hasExperts, err := c.intAlias("num_experts", "num_local_experts", "n_routed_experts")
	if err != nil {
		return err
	}
	if hasExperts && experts < 0 {
		return c.errf("num_experts", "must be >= 0 (got %d)", experts)
	}
	needDense := false
	if experts > 0 {
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
		si, key, ok, err := c.intAlias("shared_expert_intermediate_size", "moe_shared_expert_intermediate_size")
		if err != nil {
			return err
		}
		switch {
		case ok && si > 0:
			f.sharedI, f.sharedGate = si, key == "shared_expert_intermediate_size"
		case ok && si < 0:
			return c.errf(key, "must be >= 0 (got %d)", si)
		default:
			ns, err := c.nonNeg("n_shared_experts", "num_shared_experts")
			if err != nil {
				return err
			}
			f.sharedI = ns * ei
		}
	}

	if imp.blockPattern {
		for _, s := range a.specs {
			switch s.ffn {
			case ffnDense:
				needDense = true
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
		key := "intermediate_size"
		if c.has("intermediate_size_mlp") {
			key = "intermediate_size_mlp" // Llama-4's dense layers
		}
		if f.intermediate, err = c.positive(key, "ffn_hidden_size", "n_inner"); err != nil {
			return err
		}
	}
	return nil
}

// moeLayers returns which layers (0-based) hold routed experts.
func (imp *importer) moeLayers() (func(int) bool, error) {
	c := imp.c
	firstDense, err := c.nonNeg("first_k_dense_replace")
	if err != nil {
		return nil, err
	}
	freq, hasFreq, err := c.optPositive("moe_layer_freq")
	if err != nil {
		return nil, err
	}
	step, hasStep, err := c.optPositive("decoder_sparse_step")
	if err != nil {
		return nil, err
	}
	inter, hasInter, err := c.optPositive("interleave_moe_layer_step")
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
		case i < firstDense || dense[i]:
			return false
		case hasFreq && i%freq != 0:
			return false
		case hasStep && (i+1)%step != 0:
			return false
		case hasInter && (i+1)%inter != 0:
			return false
		}
		return true
	}, nil
}

// countParams counts the parameters by part (see the formula above).
func (a *arch) countParams() paramCount {
	var p paramCount
	H, V := int64(a.hidden), int64(a.vocab)
	p.Embedding = V * H
	if !a.tied {
		p.LMHead = V * H
	}
	f := a.ffn
	m := int64(2)
	if f.gated {
		m = 3
	}
	for _, s := range a.specs {
		switch s.mixer {
		case mixerFull, mixerSliding:
			p.Attention += a.attentionParams(s)
		case mixerLinear:
			l := a.lin
			kd, vd := int64(l.kHeads*l.kDim), int64(l.vHeads*l.vDim)
			p.Attention += H*(2*kd+2*vd) + H*2*int64(l.vHeads) + (2*kd+vd)*int64(l.kernel) +
				2*int64(l.vHeads) + int64(l.vDim) + vd*H
		case mixerMamba:
			mb := a.mamba
			di, gs := int64(mb.heads*mb.headDim), int64(mb.groups*mb.state)
			p.Attention += H*(2*di+2*gs+int64(mb.heads)) + (di+2*gs)*int64(mb.kernel) + 3*int64(mb.heads) + di + di*H
		}
		if s.ffn == ffnDense || s.ffn == ffnBoth {
			p.DenseMLP += m * H * int64(f.intermediate)
		}
		if s.ffn == ffnMoE || s.ffn == ffnBoth {
			one := m * H * int64(f.expertI)
			p.Experts += int64(f.experts) * one
			p.ExpertsActive += int64(f.topK) * one
			p.Router += H * int64(f.experts)
			p.Shared += m * H * int64(f.sharedI)
			if f.sharedGate {
				p.Shared += H
			}
		}
		if s.mixer != mixerNone && s.ffn != ffnNone {
			p.Norms += 2 * H
		} else {
			p.Norms += H
		}
	}
	p.Norms += H
	return p
}

// attentionParams counts one attention layer's projections.
func (a *arch) attentionParams(s layerSpec) int64 {
	H, A := int64(a.hidden), int64(a.heads)
	if ml := a.mla; ml != nil {
		qk := int64(ml.qkNope + ml.qkRope)
		var q int64
		if ml.qLoraRank > 0 {
			r := int64(ml.qLoraRank)
			q = H*r + r + r*A*qk
		} else {
			q = H * A * qk
		}
		r := int64(ml.kvLoraRank)
		kv := H*(r+int64(ml.qkRope)) + r + r*A*int64(ml.qkNope+ml.vHead)
		o := A * int64(ml.vHead) * H
		return q + kv + o
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
	kv := int64(2)
	if s.noV {
		kv = 1
	}
	n := q + kv*H*K*d + A*d*H
	if a.attnBias {
		n += A*d + kv*K*d + H
	}
	if a.qkNorm {
		n += 2 * d
	}
	return n
}
