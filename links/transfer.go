// Package links models moving KV between workers: the time of one transfer
// over a link profile, alone and while other transfers share the link.
package links

import (
	"fmt"

	"github.com/kvplan/kvplan/catalog"
)

// Transfer is the time to move one request's KV over a link.
type Transfer struct {
	Bytes                int64   // KV bytes of the request
	EffectiveBytesPerS   float64 // the link's achieved throughput, all transfers together
	PerTransferBytesPerS float64 // throughput one transfer gets while Concurrent share the link
	LatencyMS            float64 // fixed cost of one transfer
	Concurrent           int     // transfers in flight on the link, including this one
	Shared               bool    // whether concurrent transfers divide the link
	IsolatedMS           float64 // latency + bytes / effective throughput
	SharedMS             float64 // latency + bytes / (effective throughput / Concurrent)
}

// Time computes a transfer of bytes over link while concurrent transfers
// (at least 1) are in flight: time = latency + bytes / per-transfer
// throughput. On a shared link each of N transfers gets 1/N of the
// effective throughput (FACTS.md §3: four transfers on 1 GbE added up to the
// link's throughput); on a link that is not shared each keeps all of it.
func Time(link *catalog.Link, bytes int64, concurrent int) (Transfer, error) {
	if bytes < 0 {
		return Transfer{}, fmt.Errorf("transfer size %d B is negative", bytes)
	}
	if concurrent < 1 {
		return Transfer{}, fmt.Errorf("concurrent transfers must be >= 1 (got %d)", concurrent)
	}
	if link.EffectiveBytesPerS <= 0 {
		return Transfer{}, fmt.Errorf("link %s has no effective throughput", link.Name)
	}
	t := Transfer{
		Bytes:              bytes,
		EffectiveBytesPerS: link.EffectiveBytesPerS,
		LatencyMS:          link.LatencyMS,
		Concurrent:         concurrent,
		Shared:             link.Shared,
	}
	t.PerTransferBytesPerS = link.EffectiveBytesPerS
	if link.Shared {
		t.PerTransferBytesPerS = link.EffectiveBytesPerS / float64(concurrent)
	}
	t.IsolatedMS = link.LatencyMS + float64(bytes)/link.EffectiveBytesPerS*1000
	t.SharedMS = link.LatencyMS + float64(bytes)/t.PerTransferBytesPerS*1000
	return t, nil
}
