package planner

import "fmt"

// DisaggAtLoad compares, at a load, the prefill/decode split with the same
// GPUs serving aggregated: what splitting gains (decode no longer stalled
// by prefill chunks sharing its iterations) against what it costs (the KV
// transfer, shared with the transfers in flight at that load). The capacity
// search (planner/capacity) fills it from the engine model; the one-request
// view of DisaggPlan (prefill time against one transfer) stays as a figure.
type DisaggAtLoad struct {
	RequestsPerS float64 `json:"requests_per_s"` // the load
	LoadSource   string  `json:"load_source"`    // request_rate, or concurrency (the rate by Little's law)
	AggWorkers   int     `json:"agg_workers"`    // aggregated workers the same GPUs make
	ITLAggMS     float64 `json:"itl_agg_ms"`     // mean ITL served aggregated at the load (0: cannot carry it)
	ITLDisaggMS  float64 `json:"itl_disagg_ms"`  // mean ITL of the decode pool at the load
	// DecodeStallFreedMS is the decode time the split frees per request:
	// max(0, (output tokens − 1) × (ITL aggregated − ITL disaggregated)).
	DecodeStallFreedMS float64 `json:"decode_stall_freed_ms"`
	TransferMS         float64 `json:"transfer_ms"` // mean KV transfer at the load, sharing included
	TTFTAggP95MS       float64 `json:"ttft_agg_p95_ms"`
	TTFTDisaggP95MS    float64 `json:"ttft_disagg_p95_ms"`
	AggCarries         bool    `json:"agg_carries"`    // the aggregated pool has a steady state at the load
	DisaggCarries      bool    `json:"disagg_carries"` // the split has one
	// TransferExceedsGain: the transfer costs at least the decode time the
	// split frees (and the aggregated pool carries the load).
	TransferExceedsGain bool   `json:"transfer_exceeds_gain"`
	Note                string `json:"note,omitempty"`
}

// SetAtLoad records the comparison at a load and says the verdict from it:
// the load decides, and the one-request view stays a figure.
func (p *DisaggPlan) SetAtLoad(a *DisaggAtLoad) {
	p.AtLoad = a
	if a == nil || p.SameGPU {
		return
	}
	switch {
	case !a.DisaggCarries && a.AggCarries:
		p.Verdict = fmt.Sprintf("stay aggregated: at %.3g requests/s the split cannot carry the load, while %d aggregated workers on the same GPUs can", a.RequestsPerS, a.AggWorkers)
	case !a.AggCarries && a.DisaggCarries:
		p.Verdict = fmt.Sprintf("disaggregate: at %.3g requests/s the same GPUs aggregated cannot carry the load (prefill chunks stall decode without bound), the split can; each request pays %.1f ms of transfer", a.RequestsPerS, a.TransferMS)
	case !a.AggCarries:
		p.Verdict = fmt.Sprintf("neither carries %.3g requests/s on these GPUs: add workers (kvplan plan sizes both)", a.RequestsPerS)
	case a.TransferExceedsGain:
		p.Verdict = fmt.Sprintf("stay aggregated: at %.3g requests/s moving the KV (%.1f ms a request) costs more than the %.1f ms of decode the split frees per request (ITL %.2f → %.2f ms over %d output tokens)",
			a.RequestsPerS, a.TransferMS, a.DecodeStallFreedMS, a.ITLAggMS, a.ITLDisaggMS, p.OutputTokens)
	default:
		p.Verdict = fmt.Sprintf("disaggregation pays at %.3g requests/s: the split frees %.1f ms of decode per request (ITL %.2f → %.2f ms over %d output tokens), more than the %.1f ms transfer; TTFT p95 %.0f → %.0f ms",
			a.RequestsPerS, a.DecodeStallFreedMS, a.ITLAggMS, a.ITLDisaggMS, p.OutputTokens, a.TransferMS, a.TTFTAggP95MS, a.TTFTDisaggP95MS)
	}
}
