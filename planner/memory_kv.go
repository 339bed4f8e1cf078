package planner

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/catalog"
)

// kvCapacity turns the KV bytes into blocks, slots and concurrency.
//
// vLLM checks that one request of max_model_len fits (kv_cache_utils.py,
// check_enough_kv_cache_memory) with each layer group's max_memory_usage:
// ceil(len / block) blocks for a full-attention layer, and
// ceil(min(window − 1 + max_num_batched_tokens, len) / block) + 1 blocks for
// a sliding-window layer. The same per-request reservation gives the max
// concurrency at max_model_len.
//
// Slots are counted in full-attention tokens: with a hybrid layout vLLM's
// allocator draws the blocks of every layer group from one pool, so the
// sliding layers' windows of the max_concurrent_at_max_len requests are set
// aside first and the rest is divided by the full-attention layers' bytes per
// token (an approximation of the pool's split at full concurrency). A model
// with no full-attention layer counts tokens over all its layers.
//
// With pipeline parallelism the limiting stage holds 1/layersEquiv of the
// layers; its budget is scaled to the whole model's per-token bytes, which
// holds the same number of tokens.
func (p *MemoryPlan) kvCapacity(d *Derivation) {
	bs := int64(p.BlockSize)
	L := p.MaxModelLen
	kvBytes := p.KVCacheBytes
	if p.PP > 1 {
		kvBytes = int64(float64(p.KVCacheBytes) * p.layersEquiv)
		d.Add("kv_cache_bytes_model_equiv", float64(kvBytes), "B", "kv_cache_bytes × model layers / limiting stage's layers (the tokens it holds, in whole-model bytes)",
			"%d × %.4g", p.KVCacheBytes, p.layersEquiv)
	}
	p.MaxModelLenRequestBytes = p.requestReserve(L)
	d.Add("max_model_len_request_bytes", float64(p.MaxModelLenRequestBytes), "B", p.reserveFormula(), "%s", p.reserveValues(L))
	d.Note("vLLM kv_cache_utils.py: KV cache spec max_memory_usage_bytes")
	p.MaxModelLenFits = p.ModelFits && p.MaxModelLenRequestBytes <= kvBytes
	if p.MaxModelLenRequestBytes > 0 {
		p.MaxConcurrentAtMaxLen = kvBytes / p.MaxModelLenRequestBytes
	}
	d.Add("max_concurrent_at_max_len", float64(p.MaxConcurrentAtMaxLen), "requests",
		"floor(kv_cache_bytes / max_model_len_request_bytes)", "floor(%d / %d)", kvBytes, p.MaxModelLenRequestBytes)

	full := p.FullKVBytesPerToken
	if full == 0 { // every layer is windowed (or linear): count tokens over all layers
		full = p.KVBytesPerToken
		if full > 0 {
			p.KVBlocks = kvBytes / (bs * full)
		}
		d.Add("kv_blocks", float64(p.KVBlocks), "blocks", "floor(kv_cache_bytes / (block_size × kv_bytes_per_token))",
			"floor(%d / (%d × %d))", kvBytes, bs, full)
	} else {
		reserve := p.MaxConcurrentAtMaxLen * (p.MaxModelLenRequestBytes - ceilDiv64(int64(L), bs)*bs*full)
		if reserve == 0 {
			p.KVBlocks = kvBytes / (bs * full)
			d.Add("kv_blocks", float64(p.KVBlocks), "blocks", "floor(kv_cache_bytes / (block_size × kv_bytes_per_token))",
				"floor(%d / (%d × %d))", kvBytes, bs, full)
		} else {
			d.Add("kv_window_reserve_bytes", float64(reserve), "B",
				"max_concurrent_at_max_len × (max_model_len_request_bytes − ceil(max_model_len / block_size) × block_size × full_kv_bytes_per_token)",
				"%d × (%d − %d × %d × %d)", p.MaxConcurrentAtMaxLen, p.MaxModelLenRequestBytes, ceilDiv64(int64(L), bs), bs, full)
			d.Note("sliding-window and linear-state memory of the requests at max_model_len, set aside before counting full-attention tokens")
			p.KVBlocks = max(0, kvBytes-reserve) / (bs * full)
			d.Add("kv_blocks", float64(p.KVBlocks), "blocks", "floor((kv_cache_bytes − kv_window_reserve_bytes) / (block_size × full_kv_bytes_per_token))",
				"floor((%d − %d) / (%d × %d))", kvBytes, reserve, bs, full)
		}
	}
	p.KVSlotsTokens = p.KVBlocks * bs
	d.Add("kv_slots_tokens", float64(p.KVSlotsTokens), "tokens", "kv_blocks × block_size", "%d × %d", p.KVBlocks, bs)

	p.LargestFittingMaxModelLen = p.largestFit(kvBytes)
	d.Add("largest_fitting_max_model_len", float64(p.LargestFittingMaxModelLen), "tokens",
		"largest len ≤ max_context whose request reservation ≤ kv_cache_bytes", "%d", p.LargestFittingMaxModelLen)
}

// engineTokens is the KV cache size the engine itself reports, from a
// stage's KV bytes and its KV bytes per token (every layer of the stage).
//
//   - vLLM (kv_cache_utils.py): layers of one attention type form groups of
//     group_size layers (the smallest type's layer count, or the largest's when
//     within 25%); one pool of blocks serves one layer of every group, and the
//     reported size is num_blocks / groups × block_size, num_blocks =
//     kv / (block_size × bytes per layer per token × group_size). With one
//     attention type this is kv / (block_size × bytes per token) blocks.
//   - SGLang: max_total_num_tokens = kv / cell_size (every layer, page of 1).
//   - TRT-LLM: max_tokens = kv / kv_size_per_token, in whole blocks.
func (p *MemoryPlan) engineTokens(kvBytes int64, bpt float64, layers int) int64 {
	if kvBytes <= 0 || bpt <= 0 {
		return 0
	}
	bs := int64(p.BlockSize)
	switch p.EngineFamily {
	case catalog.FamilySGLang:
		return int64(float64(kvBytes) / bpt)
	case catalog.FamilyTRTLLM:
		return int64(float64(kvBytes)/bpt) / bs * bs
	}
	gs, ng, perLayer, ok := p.hybridGroups()
	if !ok {
		return int64(float64(kvBytes)/(float64(bs)*bpt)) * bs
	}
	scale := float64(layers) / float64(p.kv.Model.Layers) // a stage's share of every group
	blocks := int64(float64(kvBytes) / (float64(bs) * float64(perLayer) * float64(gs) * scale))
	return blocks / int64(ng) * bs
}

// hybridGroups returns vLLM's grouping of a model whose layers have more than
// one attention type (full and sliding) of one page size: group size, group
// count and bytes per layer per token.
func (p *MemoryPlan) hybridGroups() (gs, ng int, perLayer int64, ok bool) {
	counts := map[string]int{}
	for _, g := range p.kv.Groups {
		if g.Kind == catalog.LayerLinear || g.Kind == catalog.LayerMamba || g.Ratio > 1 { // states, compressed entries, indexer keys
			return 0, 0, 0, false
		}
		kind := "full"
		if g.Window > 0 {
			kind = "sliding"
		}
		counts[kind] += g.Count
		perLayer = max(perLayer, g.BytesPerTokenEach)
	}
	if len(counts) < 2 {
		return 0, 0, 0, false
	}
	lo, hi := 0, 0
	for _, c := range counts {
		if lo == 0 || c < lo {
			lo = c
		}
		hi = max(hi, c)
	}
	gs = lo
	if float64(hi) < 1.25*float64(lo) {
		gs = hi
	}
	for _, c := range counts {
		ng += (c + gs - 1) / gs
	}
	return gs, ng, perLayer, true
}

func (p *MemoryPlan) engineTokensFormula() string {
	switch p.EngineFamily {
	case catalog.FamilySGLang:
		return "floor(kv_cache_bytes / KV bytes per token of the stage) (SGLang max_total_num_tokens)"
	case catalog.FamilyTRTLLM:
		return "floor(kv_cache_bytes / KV bytes per token of the stage), whole blocks (TRT-LLM max_tokens)"
	}
	if _, _, _, ok := p.hybridGroups(); ok {
		return "floor(floor(kv_cache_bytes / (block_size × bytes per layer per token × group_size)) / groups) × block_size (vLLM's 'GPU KV cache size')"
	}
	return "floor(kv_cache_bytes / (block_size × KV bytes per token of the stage)) × block_size (vLLM's 'GPU KV cache size')"
}

func (p *MemoryPlan) engineTokensValues(kvBytes int64, bpt float64, layers int) string {
	if gs, ng, perLayer, ok := p.hybridGroups(); ok && p.EngineFamily == catalog.FamilyVLLM {
		return fmt.Sprintf("floor(floor(%d / (%d × %d × %d × %d/%d)) / %d) × %d", kvBytes, p.BlockSize, perLayer, gs, layers, p.kv.Model.Layers, ng, p.BlockSize)
	}
	return fmt.Sprintf("%d / (%d × %.0f)", kvBytes, p.BlockSize, bpt)
}

// requestReserve is the KV bytes vLLM reserves for one request of n tokens,
// per rank, summed over the layer groups (models.Group.ReserveBytes).
func (p *MemoryPlan) requestReserve(n int) int64 {
	var b int64
	for _, g := range p.kv.Groups {
		b += g.ReserveBytes(n, p.BlockSize, p.MaxNumBatchedTokens)
	}
	return b
}

func (p *MemoryPlan) reserveFormula() string {
	var parts []string
	for _, g := range p.kv.Groups {
		parts = append(parts, g.ReserveFormula())
	}
	return strings.Join(parts, " + ")
}

func (p *MemoryPlan) reserveValues(n int) string {
	var parts []string
	for _, g := range p.kv.Groups {
		parts = append(parts, g.ReserveValues(n, p.BlockSize, p.MaxNumBatchedTokens))
	}
	return strings.Join(parts, " + ")
}

// largestFit is the largest max_model_len (up to the model's max context)
// whose one-request reservation fits in kvBytes, found by bisection (the
// reservation grows with the length).
func (p *MemoryPlan) largestFit(kvBytes int64) int {
	if !p.ModelFits {
		return 0
	}
	hi := p.MaxModelLen
	if p.kv.Model.MaxContext > hi {
		hi = p.kv.Model.MaxContext
	}
	if p.requestReserve(hi) <= kvBytes {
		return hi
	}
	lo := 0 // fits (trivially)
	for lo < hi-1 {
		mid := lo + (hi-lo)/2
		if p.requestReserve(mid) <= kvBytes {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
