package links

import (
	"fmt"

	"github.com/kvplan/kvplan/catalog"
)

// Paths is how one request's KV crosses a link between a prefill worker of
// PrefillTP ranks and a decode worker of DecodeTP ranks.
type Paths struct {
	TotalBytes int64 // what the decode ranks receive, all added up
	Rails      int   // paths used in parallel: min(prefill tp, decode tp) on a per-GPU link, else 1
	PathBytes  int64 // bytes on the busiest path: ceil(TotalBytes / Rails)
	PerGPU     bool  // the link's rate is per GPU rail (catalog rate_per = "gpu")
}

// Split places a transfer of totalBytes on link. Each decode rank pulls its
// own shard of the KV (its kv heads for MHA/GQA, a whole copy of the latent
// for MLA, which every rank replicates) from the prefill rank(s) that hold it:
// decode rank r reads from prefill rank r / (decode tp / prefill tp) when the
// decode side is wider, and from prefill tp / decode tp ranks when it is
// narrower (vLLM kv_connector/utils.py, get_target_remote_ranks). On a link
// whose rate is per GPU, every rank has a rail of its own, so the busiest
// rail carries totalBytes / min(prefill tp, decode tp): with equal tp, one
// rank's shard (one latent copy for MLA). On a per-node link every rank's KV
// crosses the one path (FACTS.md §7, Rails).
func Split(link *catalog.Link, totalBytes int64, prefillTP, decodeTP int) (Paths, error) {
	if totalBytes < 0 {
		return Paths{}, fmt.Errorf("transfer size %d B is negative", totalBytes)
	}
	if prefillTP < 1 || decodeTP < 1 {
		return Paths{}, fmt.Errorf("tensor-parallel ranks must be >= 1 (got prefill %d, decode %d)", prefillTP, decodeTP)
	}
	p := Paths{TotalBytes: totalBytes, Rails: 1, PathBytes: totalBytes, PerGPU: link.PerGPU()}
	if p.PerGPU {
		p.Rails = min(prefillTP, decodeTP)
		p.PathBytes = (totalBytes + int64(p.Rails) - 1) / int64(p.Rails)
	}
	return p, nil
}
