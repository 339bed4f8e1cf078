package rules

import (
	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/planner"
)

// FromDeployment builds the Env of a plan from the planner's figures: what
// the plan file states (BaseEnv), then every derived figure.
func FromDeployment(dep *planner.Deployment) *Env {
	e := BaseEnv(dep.Plan)
	m := dep.Model
	e.Model.Name = m.Name
	e.Model.KVDtype = dep.KV.KVDtype
	e.Model.TP = dep.KV.TP
	e.Model.MaxContext = m.MaxContext
	e.Model.ParamsTotal = int(m.ParamsTotal)
	e.Model.MTPLayers, e.Model.Layers = m.MTPLayers, m.Layers
	if m.MoE != nil {
		e.Model.RoutedExperts = m.MoE.Experts
	}
	if len(dep.Pools) > 0 {
		e.Model.WeightsBytes = int(dep.Pools[0].Memory.WeightsBytes) * dep.Pools[0].TP
	}
	if b, ok := catalog.DtypeBytes(dep.KV.KVDtype); ok {
		e.Model.KVBytesPerElem = int(b)
	}
	e.KV = KVEnv{
		BytesPerToken:   int(dep.ModelKVBytesPerToken),
		BytesPerRequest: int(dep.ModelKVBytesPerRequest),
		BytesTransfer:   int(dep.KV.KVBytesAllRanks),
	}
	if d := dep.Disagg; d != nil {
		e.KV.BytesTransfer = int(d.BytesPerTransfer)
	}
	if dep.Link != nil {
		e.Link.ThroughputBytesPerS = dep.Link.EffectiveBytesPerS
		e.Link.LatencyMS = dep.Link.LatencyMS
		e.Link.RatePer = dep.Link.RatePer
		e.Link.Scope = dep.Link.Scope
	}
	if d := dep.Disagg; d != nil {
		e.Disagg.ConcurrentTransfers = d.Concurrency
		e.Disagg.TransfersInFlight = d.TransfersInFlight
		e.Disagg.InFlightSource = d.InFlightSource
		e.Disagg.LinkUtilization = d.LinkUtilization
		e.Disagg.BytesPerPath = int(d.BytesPerPath)
		e.Disagg.ParallelPaths = d.ParallelPaths
		e.Disagg.TransferMS = d.TransferMS
		e.Disagg.TransferMSShared = d.TransferMSShared
		e.Disagg.TTFTAggMS = d.TTFTAggMS
		e.Disagg.TTFTDisaggMS = d.TTFTDisaggMS
		if a := d.AtLoad; a != nil {
			e.Disagg.AtLoadComputed, e.Disagg.RequestsPerSAtLoad = true, a.RequestsPerS
			e.Disagg.ITLAggAtLoadMS, e.Disagg.ITLDisaggAtLoadMS, e.Disagg.DecodeStallFreedAtLoad = a.ITLAggMS, a.ITLDisaggMS, a.DecodeStallFreedMS
			e.Disagg.TransferAtLoadMS, e.Disagg.AggCarriesAtLoad, e.Disagg.DisaggCarriesAtLoad = a.TransferMS, a.AggCarries, a.DisaggCarries
			e.Disagg.TransferExceedsGainLoad = a.TransferExceedsGain
		}
		e.Disagg.SameGPU = e.Disagg.SameGPU || d.SameGPU
	}
	e.Disagg.PDGPUs, e.Disagg.NVLinkDomainGPUs = dep.PDGPUs, dep.NVLinkDomainGPUs
	e.Disagg.PrefillMS = dep.PrefillMS
	if e.Disagg.TTFTAggMS == 0 {
		e.Disagg.TTFTAggMS = dep.TTFTMS
	}
	r := dep.Routing
	e.Routing = RoutingEnv{
		WorkingSetTokens: r.WorkingSetTokens, HolderPool: r.HolderPool, HolderWorkers: r.HolderWorkers,
		SlotsPerWorkerTokens: r.SlotsPerWorkerTokens, SlotsPoolTokens: r.SlotsPoolTokens,
		CapacityTokens: r.CapacityTokens, CapacityAggTokens: r.CapacityAggTokens,
	}
	e.Predicted = PredictedEnv{TTFTMS: dep.TTFTMS, ITLMS: dep.ITLMS}
	if a := dep.AtLoad; a != nil {
		// At the rate: kvplan plan's figures of these pools, p95 as the
		// SLO; 0 (unknown) when the pools cannot carry the rate.
		e.Predicted = PredictedEnv{AtLoad: true, TTFTMS: a.TTFTP95MS, ITLMS: a.ITLP95MS, TTFTMeanMS: a.TTFTMeanMS, TPOTMeanMS: a.TPOTMeanMS,
			TransferMS: a.TransferMS, RequestsPerSCapacity: a.RequestsPerSCapacity}
	}
	e.Cost = CostEnv{GPUs: dep.GPUs, USDPerHour: dep.USDPerHour, PriceKnown: dep.PriceKnown}
	byName := make(map[string]*planner.PoolPlan, len(dep.Pools)) // pools × pools was quadratic
	for _, pp := range dep.Pools {
		byName[pp.Name] = pp
	}
	for i := range e.Pools {
		pe := &e.Pools[i]
		if pp := byName[pe.Name]; pp != nil {
			mp := pp.Memory
			pe.ConcurrencyPerWorker = pp.ConcurrencyPerWorker
			pe.KVSlotsTokens = int(mp.KVSlotsTokens)
			pe.GPUMemoryUtilization = mp.GPUUtil // the plan's, or the engine's default for its version
			pe.MaxModelLen = mp.MaxModelLen
			pe.MaxModelLenFits = mp.MaxModelLenFits
			pe.HostRequiredBytes = int(mp.HostRequiredBytes)
			pe.HostStagedBytes = int(mp.HostStagedBytes)
			pe.GPUs = pp.GPUs
			pe.TP, pe.TPError = pp.TP, pp.TPError
			pe.GPUsPerWorker, pe.Layout = pp.GPUsPerWorker, pp.Parallel.String()
			if pp.GPU != nil {
				pe.NVLinkDomainGPUs = pp.GPU.NVLinkDomainGPUs
			}
			if pp.LayoutError != "" {
				// A layout the model cannot take: the layout rules report it
				// at its key; the pool's memory and load figures (sized as
				// tensor parallelism alone) stay unknown.
				continue
			}
			f := pp.Fit
			pe.ModelFits, pe.WeightsBytes, pe.RequestedBytes = f.Fits, int(mp.WeightsBytes), int(mp.RequestedBytes)
			pe.OverheadBytes = int(f.RequiredBytes - mp.WeightsBytes)
			pe.WeightsShortBytes, pe.FitTP, pe.FitFP8, pe.FitGPU = int(f.ShortBytes), f.MinTP, f.FP8Fits, f.GPU
			pe.RequestsInFlight = pp.RequestsInFlight
			pe.KVTokensInFlight, pe.MaxRequestsThatFit = pp.InFlight.TokensNeeded, pp.InFlight.MaxRequestsThatFit
			pe.RequestTokens, pe.PromptFits = pp.Prompt.RequestTokens, pp.Prompt.Fits
			c := pp.Prefill
			pe.RequestRate, pe.UncachedInputTokens, pe.PrefillMS = c.RequestRate, c.UncachedTokens, c.PrefillMS
			pe.PrefillDemandPerS, pe.PrefillCapacityPerS, pe.PrefillWorkersNeeded = c.DemandTokensPerS, c.CapacityTokensPerS, c.WorkersNeeded
			if k := pp.Capacity; k != nil {
				pe.CapacityComputed, pe.CapacityRequestsPerS, pe.CapacityWorkersNeeded = true, k.CapacityPerS, k.WorkersNeeded
				pe.CapacityLimitedBy, pe.CapacityExceeded, pe.CapacitySLO = k.LimitedBy, k.Exceeded, k.SLO
				pe.CapacityTTFTP95MS, pe.CapacityITLP95MS = k.TTFTP95MS, k.ITLP95MS
			}
		}
	}
	return &e
}
