// Package models computes what follows from a model's architecture alone:
// KV bytes per token and per request, weight bytes and prefill FLOPs. The
// Hugging Face config.json import lives in models/hfimport.
package models

import (
	"fmt"

	"github.com/kvplan/kvplan/catalog"
)

// MTPConvention states how multi-token-prediction layers are counted.
const MTPConvention = "multi-token-prediction (MTP) layers are not counted, as in the published figures (FACTS.md §2)"

// KVOptions changes how a model's KV cache is stored.
type KVOptions struct {
	KVDtype string // "" = the model's default
	TP      int    // tensor-parallel ranks; 0 or 1 = none
}

// Group is the KV arithmetic of one layer group, per tensor-parallel rank.
type Group struct {
	Kind              string // full, sliding, linear, mla
	Count             int    // layers
	Window            int    // sliding window in tokens, or 0
	KVHeadsPerRank    int    // kv heads stored on one rank
	HeadDim           int
	BytesPerElement   int
	BytesPerTokenEach int64 // one layer, one token
	StateBytesEach    int64 // linear: one layer, one request
}

// BytesPerToken is the group's KV bytes per token while a request is shorter
// than any window.
func (g Group) BytesPerToken() int64 { return int64(g.Count) * g.BytesPerTokenEach }

// KV is a model's KV geometry under given options, per tensor-parallel rank.
type KV struct {
	Model   *catalog.Model
	KVDtype string
	TP      int
	Groups  []Group
}

// NewKV resolves a model's layer groups under opts. It fails on an unknown
// KV dtype.
func NewKV(m *catalog.Model, opts KVOptions) (*KV, error) {
	dtype := opts.KVDtype
	if dtype == "" {
		dtype = m.KVDtype
	}
	b, ok := catalog.DtypeBytes(dtype)
	if !ok || b < 1 {
		return nil, fmt.Errorf("kv dtype %q is not one of bf16, fp16, fp8, int8, fp32", dtype)
	}
	tp := opts.TP
	if tp < 1 {
		tp = 1
	}
	kv := &KV{Model: m, KVDtype: dtype, TP: tp}
	elem := int(b)
	perRank := func(heads int) int { return max(1, heads/tp) }
	if m.MLA != nil {
		// One latent "head" of kv_lora_rank + qk_rope_head_dim, not split by TP.
		dim := m.MLA.KVLoraRank + m.MLA.QKRopeHeadDim
		kv.Groups = []Group{{Kind: "mla", Count: m.Layers, KVHeadsPerRank: 1, HeadDim: dim,
			BytesPerElement: elem, BytesPerTokenEach: int64(dim * elem)}}
		return kv, nil
	}
	layout := m.Layout
	if len(layout) == 0 {
		layout = []catalog.LayerGroup{{Kind: catalog.LayerFull, Count: m.Layers}}
	}
	for _, lg := range layout {
		heads, dim := lg.KVHeads, lg.HeadDim
		if heads == 0 {
			heads = m.KVHeads
		}
		if dim == 0 {
			dim = m.HeadDim
		}
		g := Group{Kind: lg.Kind, Count: lg.Count, Window: lg.Window, BytesPerElement: elem}
		if lg.Kind == catalog.LayerLinear {
			// The state's heads are split across ranks like attention heads.
			g.StateBytesEach = (lg.StateBytes + int64(tp) - 1) / int64(tp)
		} else {
			g.KVHeadsPerRank, g.HeadDim = perRank(heads), dim
			g.BytesPerTokenEach = int64(2 * g.KVHeadsPerRank * dim * elem) // K and V
		}
		kv.Groups = append(kv.Groups, g)
	}
	return kv, nil
}

// BytesPerToken is the KV bytes of one token over every attention layer
// (full and sliding), per rank: the published "bytes per token" figure.
func (kv *KV) BytesPerToken() int64 {
	var n int64
	for _, g := range kv.Groups {
		n += g.BytesPerToken()
	}
	return n
}

// FullBytesPerToken is the KV bytes of one token over the layers that keep
// every token (full attention and MLA), per rank.
func (kv *KV) FullBytesPerToken() int64 {
	var n int64
	for _, g := range kv.Groups {
		if g.Window == 0 {
			n += g.BytesPerToken()
		}
	}
	return n
}

// StateBytesPerRequest is the constant linear-attention or Mamba state of
// one request, per rank (the state's heads are split across tp ranks).
func (kv *KV) StateBytesPerRequest() int64 {
	var n int64
	for _, g := range kv.Groups {
		n += int64(g.Count) * g.StateBytesEach
	}
	return n
}

// RequestBytes is the KV bytes of one request of tokens tokens, per rank:
// full layers hold every token, sliding layers at most their window, and
// linear layers their constant state.
func (kv *KV) RequestBytes(tokens int) int64 {
	var n int64
	for _, g := range kv.Groups {
		t := tokens
		if g.Window > 0 {
			t = min(tokens, g.Window)
		}
		n += int64(t) * g.BytesPerToken()
		n += int64(g.Count) * g.StateBytesEach
	}
	return n
}

// HasWindows reports whether any layer group is a sliding window.
func (kv *KV) HasWindows() bool {
	for _, g := range kv.Groups {
		if g.Window > 0 {
			return true
		}
	}
	return false
}
