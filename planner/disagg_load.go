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
	// Split and Aggregated, when set (kvplan disagg --rate), are each side
	// sized to carry the load as kvplan plan sizes it, with plan's figures;
	// the figures above are then theirs. Without them (kvplan check) the
	// split is the plan's pools and aggregated the same GPUs.
	Split      *LoadResult `json:"split,omitempty"`
	Aggregated *LoadResult `json:"aggregated,omitempty"`
}

// SetAtLoad records the comparison at a load and says the verdict from it:
// the load decides, and the one-request view stays a figure.
func (p *DisaggPlan) SetAtLoad(a *DisaggAtLoad) {
	p.AtLoad = a
	if a == nil || p.SameGPU {
		return
	}
	if a.Split != nil && a.Aggregated != nil {
		p.Verdict = sizedVerdict(a)
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

// sizedVerdict says which side of a sized comparison wins: the one that
// meets the objectives, then the cheaper (dollars when both are priced,
// else GPUs), then the one with more headroom.
func sizedVerdict(a *DisaggAtLoad) string {
	s, g := a.Split, a.Aggregated
	within := "within " + s.SLO
	if s.SLO == "" {
		within = "in a steady state"
	}
	cost := func(r *LoadResult) string {
		if r.USDPerHour == nil {
			return fmt.Sprintf("%d GPUs, price unknown", r.GPUs)
		}
		return fmt.Sprintf("%d GPUs, $%.2f/h", r.GPUs, *r.USDPerHour)
	}
	side := func(r *LoadResult) string { return fmt.Sprintf("%s (%s)", r.Pools, cost(r)) }
	switch {
	case !s.MeetsSLO && !g.MeetsSLO:
		return fmt.Sprintf("neither carries %.4g requests/s %s on these GPUs at any size: the split is limited by %s, aggregated by %s", a.RequestsPerS, within, s.LimitedBy, g.LimitedBy)
	case !g.MeetsSLO:
		return fmt.Sprintf("disaggregate: %s carries %.4g requests/s %s; no aggregated size does (limited by %s)", side(s), a.RequestsPerS, within, g.LimitedBy)
	case !s.MeetsSLO:
		return fmt.Sprintf("stay aggregated: %s carries %.4g requests/s %s; no split does (limited by %s)", side(g), a.RequestsPerS, within, s.LimitedBy)
	}
	sc, gc := float64(s.GPUs), float64(g.GPUs)
	if s.USDPerHour != nil && g.USDPerHour != nil {
		sc, gc = *s.USDPerHour, *g.USDPerHour
	}
	gain := fmt.Sprintf("the split frees %.1f ms of decode per request against a %.1f ms transfer", a.DecodeStallFreedMS, a.TransferMS)
	switch {
	case sc < gc-0.005:
		return fmt.Sprintf("disaggregate: at %.4g requests/s %s %s costs less than aggregated %s; %s", a.RequestsPerS, within, side(s), side(g), gain)
	case gc < sc-0.005:
		return fmt.Sprintf("stay aggregated: at %.4g requests/s %s %s costs less than the split %s; %s", a.RequestsPerS, within, side(g), side(s), gain)
	case s.RequestsPerSCapacity > g.RequestsPerSCapacity:
		return fmt.Sprintf("the same cost (%s) either way at %.4g requests/s %s; the split %s has more headroom: %.3g requests/s against %.3g; %s", cost(s), a.RequestsPerS, within, s.Pools, s.RequestsPerSCapacity, g.RequestsPerSCapacity, gain)
	}
	return fmt.Sprintf("the same cost (%s) either way at %.4g requests/s %s; aggregated %s has as much headroom or more: %.3g requests/s against %.3g; %s", cost(g), a.RequestsPerS, within, g.Pools, g.RequestsPerSCapacity, s.RequestsPerSCapacity, gain)
}
