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
	Engine  string // whose linear-attention and Mamba state convention applies; "" = vllm (StateConventionFor)
}

// Group kinds beyond the catalog's layer kinds.
const (
	KindMLA     = "mla"     // full-attention MLA layers: one latent per token, not split by tp
	KindIndexer = "indexer" // a sparse-attention indexer's key cache, beside the layers it indexes
)

// Group is the KV arithmetic of one layer group, per tensor-parallel rank.
//
// An attention group caches entries: one per token for full and sliding
// layers (K and V, or one MLA latent), and for a compressed layer one per
// Ratio tokens of the whole request plus one per token of its last Window
// tokens. An indexer group caches one key per Ratio tokens. Linear and Mamba
// groups hold a constant state per request; a compressed group also holds
// its compressor's state.
type Group struct {
	Kind              string // full, sliding, compressed, linear, mamba, mla, indexer
	Count             int    // layers
	Window            int    // tokens kept uncompressed (sliding, compressed), or 0
	Ratio             int    // tokens per cached entry: 1, or a compressed or indexer group's ratio
	KVHeadsPerRank    int    // kv heads stored on one rank (1 for an MLA latent or an indexer key)
	HeadDim           int    // elements per head of one entry
	BytesPerElement   int    // of the KV dtype (0 for a linear or indexer group)
	BytesPerTokenEach int64  // one layer, one cached entry (for ratio 1, one token)
	Latent            bool   // an entry is one vector (an MLA latent, K and V in one), not K and V
	StateBytesEach    int64  // one layer, one request: linear or Mamba state, compressor state

	// The parts of a linear or Mamba state, under State (zero when the
	// catalog gives state_bytes by hand).
	ConvBytesEach int64
	SSMBytesEach  int64
}

// BytesPerToken is the group's KV bytes per token while a request is shorter
// than any window: a compressed group's window entry and its share of a
// compressed entry, rounded up.
func (g Group) BytesPerToken() int64 {
	n := int64(g.Count) * g.BytesPerTokenEach
	switch g.Kind {
	case catalog.LayerCompressed:
		return n + ceilDiv(n, int64(g.Ratio))
	case KindIndexer:
		return ceilDiv(n, int64(max(1, g.Ratio)))
	}
	return n
}

// LongBytesPerToken is what one more token adds to the group's KV once a
// request is longer than every window: full, MLA and ratio-1 indexer groups
// a whole entry, compressed and compressed indexer groups 1/ratio of one
// (rounded up), sliding, linear and Mamba groups nothing.
func (g Group) LongBytesPerToken() int64 {
	n := int64(g.Count) * g.BytesPerTokenEach
	switch g.Kind {
	case catalog.LayerSliding, catalog.LayerLinear, catalog.LayerMamba:
		return 0
	case catalog.LayerCompressed, KindIndexer:
		return ceilDiv(n, int64(max(1, g.Ratio)))
	}
	return n
}

// Entries is the number of entries one layer of the group caches for a
// request of tokens tokens.
func (g Group) Entries(tokens int) int64 {
	t := int64(max(0, tokens))
	switch g.Kind {
	case catalog.LayerSliding:
		return min(t, int64(g.Window))
	case catalog.LayerCompressed:
		return min(t, int64(g.Window)) + t/int64(g.Ratio)
	case KindIndexer:
		return t / int64(max(1, g.Ratio))
	case catalog.LayerLinear, catalog.LayerMamba:
		return 0
	}
	return t
}

// RequestBytes is the group's KV bytes for one request of tokens tokens,
// per rank: its entries and its state.
func (g Group) RequestBytes(tokens int) int64 {
	return g.Entries(tokens)*int64(g.Count)*g.BytesPerTokenEach + int64(g.Count)*g.StateBytesEach
}

// KV is a model's KV geometry under given options, per tensor-parallel rank.
type KV struct {
	Model   *catalog.Model
	KVDtype string
	TP      int
	Groups  []Group
	State   StateConvention // how linear and Mamba states are counted
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
	kv := &KV{Model: m, KVDtype: dtype, TP: tp, State: StateConventionFor(opts.Engine)}
	elem := int(b)
	layout := m.Layout
	if len(layout) == 0 {
		layout = []catalog.LayerGroup{{Kind: catalog.LayerFull, Count: m.Layers}}
	}
	for _, lg := range layout {
		g := Group{Kind: lg.Kind, Count: lg.Count, Window: lg.Window, Ratio: max(1, lg.Ratio)}
		switch lg.Kind {
		case catalog.LayerLinear, catalog.LayerMamba:
			g.Ratio = 0
			g.StateBytesEach, g.ConvBytesEach, g.SSMBytesEach = kv.State.layerState(m, lg, tp)
			kv.Groups = append(kv.Groups, g)
			continue
		}
		g.BytesPerElement = elem
		if m.MLA != nil {
			// One latent of kv_lora_rank + qk_rope_head_dim, not split by tp;
			// a packed fp8 format may add scales (fp8_entry_bytes).
			g.KVHeadsPerRank, g.HeadDim, g.Latent = 1, m.MLA.KVLoraRank+m.MLA.QKRopeHeadDim, true
			g.BytesPerTokenEach = int64(g.HeadDim * elem)
			if dtype == "fp8" && m.MLA.FP8EntryBytes > 0 {
				g.BytesPerTokenEach = int64(m.MLA.FP8EntryBytes)
			}
			if lg.Kind == catalog.LayerFull {
				g.Kind = KindMLA
			}
		} else {
			heads, dim := lg.KVHeads, lg.HeadDim
			if heads == 0 {
				heads = m.KVHeads
			}
			if dim == 0 {
				dim = m.HeadDim
			}
			g.KVHeadsPerRank, g.HeadDim = max(1, heads/tp), dim
			g.BytesPerTokenEach = int64(2 * g.KVHeadsPerRank * dim * elem) // K and V
		}
		if lg.Kind == catalog.LayerCompressed {
			g.StateBytesEach = lg.StateBytes // the compressor's state, replicated on every rank
		}
		kv.Groups = append(kv.Groups, g)
		if lg.IndexBytes > 0 {
			// The indexer keeps one key per indexed entry in its own format,
			// one head, replicated on every rank.
			kv.Groups = append(kv.Groups, Group{Kind: KindIndexer, Count: lg.Count, Ratio: max(1, lg.Ratio),
				KVHeadsPerRank: 1, BytesPerTokenEach: lg.IndexBytes})
		}
	}
	return kv, nil
}

// BytesPerToken is the KV bytes of one token over every attention layer and
// indexer, per rank, while a request is shorter than any window: the
// published "bytes per token" figure.
func (kv *KV) BytesPerToken() int64 {
	var n int64
	for _, g := range kv.Groups {
		n += g.BytesPerToken()
	}
	return n
}

// FullBytesPerToken is the KV bytes one token adds once a request is longer
// than every window, per rank: full-attention and MLA layers, and the
// compressed entries and indexer keys of compressed layers.
func (kv *KV) FullBytesPerToken() int64 {
	var n int64
	for _, g := range kv.Groups {
		n += g.LongBytesPerToken()
	}
	return n
}

// StateBytesPerRequest is the constant state of one request, per rank:
// linear-attention and Mamba states (their heads split across tp ranks) and
// compressor states.
func (kv *KV) StateBytesPerRequest() int64 {
	var n int64
	for _, g := range kv.Groups {
		n += int64(g.Count) * g.StateBytesEach
	}
	return n
}

// RequestBytes is the KV bytes of one request of tokens tokens, per rank:
// full layers hold every token, sliding layers at most their window,
// compressed layers their window and one entry per ratio tokens, indexers
// one key per indexed entry, and linear and Mamba layers their state.
func (kv *KV) RequestBytes(tokens int) int64 {
	var n int64
	for _, g := range kv.Groups {
		n += g.RequestBytes(tokens)
	}
	return n
}

// HasWindows reports whether any layer group keeps a window of tokens.
func (kv *KV) HasWindows() bool {
	for _, g := range kv.Groups {
		if g.Window > 0 {
			return true
		}
	}
	return false
}

// HasState reports whether any group holds a state per request.
func (kv *KV) HasState() bool { return kv.StateBytesPerRequest() > 0 }

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
