package planner

import "github.com/kvplan/kvplan/catalog"

// KeyFigure is one figure a reviewer reads next to the findings of a
// deployment (kvplan check, kvplan diff). Unknown is a figure kvplan could
// not determine (a GPU without a price): it prints as "unknown", never as 0.
type KeyFigure struct {
	Name    string
	Value   float64
	Unit    string // B, ms, tokens, ratio, GPUs, $/h, req/s ...
	Unknown bool
	// Unbounded: the pools cannot carry the rate, so the latency grows
	// without bound (a queue with no steady state); it prints "unbounded".
	Unbounded bool
}

// PoolInvalid says why a pool's figures mean nothing: the engine refuses
// its tp, or its weights leave no KV cache (the engine would not start).
// "" when it is valid.
func (pp *PoolPlan) PoolInvalid() string {
	switch {
	case pp.TPError != "":
		return pp.TPError
	case pp.LayoutError != "":
		return pp.LayoutError
	case pp.Memory == nil || !pp.Memory.ModelFits:
		return "the weights and overheads leave no room for a KV cache"
	}
	return ""
}

// Invalid reports whether a pool of the deployment cannot start, so that
// no latency or capacity figure of the deployment means anything.
func (dep *Deployment) Invalid() bool {
	for _, pp := range dep.Pools {
		if pp.PoolInvalid() != "" {
			return true
		}
	}
	return false
}

// KeyFigures are the deployment's figures under the names kvplan plan
// uses for the same quantity (ttft_p95_ms, itl_p95_ms, tpot_mean_ms,
// transfer_ms, requests_per_s_capacity, usd_per_hour, gpus): at
// workload.request_rate they are AtLoad's, kvplan plan's function. Without
// a rate, one request's view under names that say so. A pool that cannot
// start prints no figures, and the deployment then no latency.
func (dep *Deployment) KeyFigures() []KeyFigure {
	var f []KeyFigure
	add := func(name string, v float64, unit string) { f = append(f, KeyFigure{Name: name, Value: v, Unit: unit}) }
	add("kv_bytes_per_token", float64(dep.ModelKVBytesPerToken), "B")
	add("kv_bytes_per_request", float64(dep.ModelKVBytesPerRequest), "B")
	invalid := dep.Invalid()
	if d := dep.Disagg; d != nil {
		add("bytes_per_transfer", float64(d.BytesPerTransfer), "B")
		add("bytes_per_path", float64(d.BytesPerPath), "B")
		add("transfer_alone_ms", d.TransferMS, "ms")
	}
	if !invalid && dep.PrefillMS > 0 {
		add("prefill_ms", dep.PrefillMS, "ms")
	}
	switch a := dep.AtLoad; {
	case invalid:
	case a != nil:
		add("requests_per_s", a.RatePerS, "req/s")
		names := []string{"ttft_p95_ms", "ttft_mean_ms", "itl_p95_ms", "tpot_mean_ms"}
		values := []float64{a.TTFTP95MS, a.TTFTMeanMS, a.ITLP95MS, a.TPOTMeanMS}
		if dep.Disagg != nil {
			names = append(names, "transfer_ms", "transfer_p95_ms")
			values = append(values, a.TransferMS, a.TransferP95MS)
		}
		for i, n := range names {
			// 0: the pools have no steady state at the rate (a queue grows).
			f = append(f, KeyFigure{Name: n, Value: values[i], Unit: "ms", Unbounded: a.TTFTP95MS == 0})
		}
		if dep.Disagg != nil {
			add("link_utilization", a.LinkUtil, "ratio")
		}
		if a.RequestsPerSCapacity > 0 {
			add("requests_per_s_capacity", a.RequestsPerSCapacity, "req/s")
			add("utilization", a.Utilization, "ratio")
		}
	default:
		if d := dep.Disagg; d != nil {
			add("transfers_in_flight", d.TransfersInFlight, "transfers")
			add("transfer_shared_ms", d.TransferMSShared, "ms")
		}
		if dep.TTFTMS > 0 {
			add("ttft_one_request_ms", dep.TTFTMS, "ms")
		}
		if dep.ITLMS > 0 {
			add("itl_at_concurrency_ms", dep.ITLMS, "ms")
		}
	}
	for _, pp := range dep.Pools {
		if pp.PoolInvalid() != "" {
			continue
		}
		add(pp.Name+".gpu_memory_utilization", pp.Memory.GPUUtil, "ratio")
		add(pp.Name+".kv_slots_tokens", float64(WorkerKVSlots(pp.Memory)), "tokens")
		add(pp.Name+".kv_tokens_in_flight", float64(pp.InFlight.TokensNeeded), "tokens")
		add(pp.Name+".host_required_bytes", float64(pp.Memory.HostRequiredBytes), "B")
	}
	if dep.Routing.WorkingSetTokens > 0 {
		add("working_set_tokens", float64(dep.Routing.WorkingSetTokens), "tokens")
		add("prefix_capacity_tokens", float64(dep.Routing.CapacityTokens), "tokens")
	}
	add("gpus", float64(dep.GPUs), "GPUs")
	usd := KeyFigure{Name: "usd_per_hour", Value: dep.USDPerHour, Unit: "$/h", Unknown: !dep.PriceKnown}
	if a := dep.AtLoad; a != nil {
		usd.Value, usd.Unknown = 0, a.USDPerHour == nil
		if a.USDPerHour != nil {
			usd.Value = *a.USDPerHour
		}
	}
	f = append(f, usd)
	if a := dep.AtLoad; a != nil && a.USDPerMillionOutputTokens != nil && !invalid {
		add("usd_per_million_output_tokens", *a.USDPerMillionOutputTokens, "$/Mtok")
	}
	return f
}

// Instances are the catalog's instance types, which price the deployment
// (kvplan plan's pricing: PriceInstances with its defaults).
func (dep *Deployment) Instances() []*catalog.Instance { return dep.cat.Instances }
