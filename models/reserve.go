package models

import (
	"fmt"

	"github.com/kvplan/kvplan/catalog"
)

// ReserveBytes is the KV memory an engine's block allocator reserves for
// one request of tokens tokens in this group, per rank, the way vLLM's KV
// cache specs compute max_memory_usage_bytes (kv_cache_utils.py):
//
//	full, MLA      ceil(tokens / block) × block entries
//	sliding        (ceil(min(window − 1 + max_batched_tokens, tokens) / block) + 1) × block entries
//	compressed     the sliding reservation of its window, plus
//	               ceil(tokens / (ratio × block)) × block compressed entries, plus its compressor state
//	indexer        ceil(tokens / (ratio × block)) × block keys
//	linear, Mamba  the state
//
// each entry being BytesPerTokenEach bytes in every one of Count layers.
// For compressed and indexer groups this is an approximation: their blocks
// are taken to hold block entries each.
func (g Group) ReserveBytes(tokens, blockSize, maxBatchedTokens int) int64 {
	bs, n := int64(max(1, blockSize)), int64(max(0, tokens))
	per := int64(g.Count) * g.BytesPerTokenEach
	state := int64(g.Count) * g.StateBytesEach
	window := func() int64 {
		t := min(int64(g.Window-1+maxBatchedTokens), n)
		return (ceilDiv(t, bs) + 1) * bs * per
	}
	compressed := func() int64 { return ceilDiv(n, int64(max(1, g.Ratio))*bs) * bs * per }
	switch g.Kind {
	case catalog.LayerLinear, catalog.LayerMamba:
		return state
	case catalog.LayerSliding:
		return window()
	case catalog.LayerCompressed:
		return window() + compressed() + state
	case KindIndexer:
		return compressed()
	}
	return ceilDiv(n, bs) * bs * per
}

// ReserveFormula is ReserveBytes as a formula, in the words of a memory
// derivation (max_model_len requests).
func (g Group) ReserveFormula() string {
	switch g.Kind {
	case catalog.LayerLinear, catalog.LayerMamba:
		return g.Kind + " state per request"
	case catalog.LayerSliding:
		return "(ceil(min(window − 1 + max_num_batched_tokens, max_model_len) / block_size) + 1) × block_size × sliding bytes per token"
	case catalog.LayerCompressed:
		return "(ceil(min(window − 1 + max_num_batched_tokens, max_model_len) / block_size) + 1) × block_size × compressed bytes per entry" +
			" + ceil(max_model_len / (ratio × block_size)) × block_size × compressed bytes per entry + compressor state"
	case KindIndexer:
		return "ceil(max_model_len / (ratio × block_size)) × block_size × indexer bytes per key"
	}
	return "ceil(max_model_len / block_size) × block_size × " + g.Kind + " bytes per token"
}

// ReserveValues is ReserveFormula with the numbers put in.
func (g Group) ReserveValues(tokens, blockSize, maxBatchedTokens int) string {
	bs := int64(blockSize)
	per := int64(g.Count) * g.BytesPerTokenEach
	window := fmt.Sprintf("(ceil(min(%d − 1 + %d, %d) / %d) + 1) × %d × %d", g.Window, maxBatchedTokens, tokens, bs, bs, per)
	compressed := fmt.Sprintf("ceil(%d / (%d × %d)) × %d × %d", tokens, g.Ratio, bs, bs, per)
	switch g.Kind {
	case catalog.LayerLinear, catalog.LayerMamba:
		return fmt.Sprintf("%d", int64(g.Count)*g.StateBytesEach)
	case catalog.LayerSliding:
		return window
	case catalog.LayerCompressed:
		return fmt.Sprintf("%s + %s + %d", window, compressed, int64(g.Count)*g.StateBytesEach)
	case KindIndexer:
		return compressed
	}
	return fmt.Sprintf("ceil(%d / %d) × %d × %d", tokens, bs, bs, per)
}

// Formula says how the group's per-token (or per-request) figure is made,
// for a derivation.
func (g Group) Formula() string {
	switch {
	case g.Kind == catalog.LayerLinear || g.Kind == catalog.LayerMamba:
		if g.SSMBytesEach > 0 || g.ConvBytesEach > 0 {
			return "layers × (conv state + recurrent state) per layer, per rank"
		}
		return "layers × state bytes per layer"
	case g.Kind == KindIndexer:
		return "layers × indexer key bytes (its own format, not split by tp) / ratio, rounded up"
	case g.Kind == catalog.LayerCompressed:
		return "layers × entry bytes × (1 window token + 1/ratio compressed entry), rounded up"
	case g.Latent && g.BytesPerTokenEach != int64(g.HeadDim*g.BytesPerElement):
		return "layers × packed fp8 latent bytes (fp8_entry_bytes: fp8 values and their scales; one latent, not split by tp)"
	case g.Latent:
		return "layers × (kv_lora_rank + qk_rope_head_dim) × bytes per element (one latent, not split by tp)"
	}
	return "layers × 2 (K and V) × kv heads per rank × head_dim × bytes per element"
}

// Values is Formula with the numbers put in.
func (g Group) Values() string {
	switch {
	case g.Kind == catalog.LayerLinear || g.Kind == catalog.LayerMamba:
		if g.SSMBytesEach > 0 || g.ConvBytesEach > 0 {
			return fmt.Sprintf("%d × (%d + %d)", g.Count, g.ConvBytesEach, g.SSMBytesEach)
		}
		return fmt.Sprintf("%d × %d", g.Count, g.StateBytesEach)
	case g.Kind == KindIndexer:
		return fmt.Sprintf("%d × %d / %d", g.Count, g.BytesPerTokenEach, g.Ratio)
	case g.Kind == catalog.LayerCompressed:
		return fmt.Sprintf("%d × %d × (1 + 1/%d)", g.Count, g.BytesPerTokenEach, g.Ratio)
	case g.Latent && g.BytesPerTokenEach != int64(g.HeadDim*g.BytesPerElement):
		return fmt.Sprintf("%d × %d", g.Count, g.BytesPerTokenEach)
	case g.Latent:
		return fmt.Sprintf("%d × %d × %d", g.Count, g.HeadDim, g.BytesPerElement)
	}
	return fmt.Sprintf("%d × 2 × %d × %d × %d", g.Count, g.KVHeadsPerRank, g.HeadDim, g.BytesPerElement)
}
