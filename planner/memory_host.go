package planner

import (
	"fmt"
	"math"

	"github.com/kvplan/kvplan/units"
)

// hostSide sizes the worker's host memory:
//
//	required = baseline RSS + in flight × request KV × retention + CPU offload cache + margin
//
// where the staging term applies only when KV is staged in host memory
// (kv_buffer = cpu), and the offload term when the pool declares a CPU KV
// offload cache (KVBM's DYN_KVBM_CPU_CACHE_GB, LMCache's
// cpuOffloadingBufferSize), which the engine allocates in host memory. The request KV is that of all tensor-parallel ranks,
// which stage their blocks in the same container.
func (p *MemoryPlan) hostSide(sc MemoryScenario, d *Derivation) error {
	e := sc.Engine
	p.KVBuffer = sc.KVBuffer
	if p.KVBuffer == "" {
		p.KVBuffer = KVBufferGPU
	}
	p.Concurrency = max(sc.Concurrency, 1)
	p.concurrencyGiven = sc.Concurrency > 0
	p.InputTokens = sc.InputTokens
	if p.InputTokens == 0 {
		p.InputTokens = p.MaxModelLen
	}
	p.HostRetention = e.HostRetention
	p.HostMarginBytes = e.HostMarginBytes
	p.HostLimitBytes = sc.LimitBytes

	var err error
	if p.RequestKVBytes, err = units.Product(p.kv.RequestBytes(p.InputTokens), int64(p.TP)); err != nil {
		return fmt.Errorf("KV of one request on all %d ranks: %w", p.TP, err)
	}
	d.Add("request_kv_bytes", float64(p.RequestKVBytes), "B", requestFormula(p.kv)+", × tp (all ranks of the worker)",
		"(%s) × %d", requestValues(p.kv, p.InputTokens), p.TP)

	p.HostBaselineRSSBytes = sc.BaselineRSSBytes
	if p.HostBaselineRSSBytes == 0 {
		p.HostBaselineRSSBytes = e.HostBaselineRSSBytes
		d.Add("host_baseline_rss_bytes", float64(p.HostBaselineRSSBytes), "B", "engine constant host_baseline_rss", "%s", sizeText(e.HostBaselineRSS, p.HostBaselineRSSBytes))
		d.Note(e.SourceOf("host_baseline_rss"))
	} else {
		d.Add("host_baseline_rss_bytes", float64(p.HostBaselineRSSBytes), "B", "--baseline-rss", "%d", p.HostBaselineRSSBytes)
	}

	perRequest := 0.0 // host bytes one request in flight adds
	if p.KVBuffer == KVBufferCPU {
		perRequest = float64(p.RequestKVBytes) * p.HostRetention
		p.HostStagedBytes = int64(math.Ceil(float64(p.Concurrency) * perRequest))
		d.Add("host_staged_bytes", float64(p.HostStagedBytes), "B", "concurrency × request_kv_bytes × host_retention",
			"%d × %d × %g", p.Concurrency, p.RequestKVBytes, p.HostRetention)
		d.Note(e.SourceOf("host_retention"))
	} else {
		d.Add("host_staged_bytes", 0, "B", "0: with kv_buffer = gpu nothing is staged in host memory", "0")
	}

	p.HostOffloadBytes = sc.CPUOffloadCacheBytes
	if p.HostOffloadBytes > 0 {
		d.Add("host_offload_bytes", float64(p.HostOffloadBytes), "B", "the pool's CPU KV offload cache (cpu_offload_cache)", "%d", p.HostOffloadBytes)
		d.Note("KVBM's DYN_KVBM_CPU_CACHE_GB and LMCache's cpuOffloadingBufferSize allocate this much pinned host memory inside the worker's container")
	}
	p.HostRequiredBytes = p.HostBaselineRSSBytes + p.HostStagedBytes + p.HostOffloadBytes + p.HostMarginBytes
	d.Add("host_required_bytes", float64(p.HostRequiredBytes), "B", "host_baseline_rss_bytes + host_staged_bytes + host_offload_bytes + host_margin",
		"%d + %d + %d + %d", p.HostBaselineRSSBytes, p.HostStagedBytes, p.HostOffloadBytes, p.HostMarginBytes)
	d.Note(e.SourceOf("host_margin"))

	p.MinSafeLimitBytes = ceilDiv64(p.HostRequiredBytes, mib) * mib
	d.Add("min_safe_limit_bytes", float64(p.MinSafeLimitBytes), "B", "host_required_bytes rounded up to a whole MiB",
		"ceil(%d / %d) × %d", p.HostRequiredBytes, mib, mib)

	fixed := p.HostBaselineRSSBytes + p.HostOffloadBytes + p.HostMarginBytes
	switch {
	case p.HostLimitBytes == 0:
		p.HostFits = true
		p.MaxSafeConcurrency = -1
		d.Add("max_safe_concurrency", -1, "requests", "unbounded: no memory limit given", "-1")
	case perRequest == 0:
		p.HostHeadroomBytes = p.HostLimitBytes - p.HostRequiredBytes
		p.HostFits = p.HostHeadroomBytes >= 0
		p.MaxSafeConcurrency = -1
		if !p.HostFits {
			p.MaxSafeConcurrency = 0
		}
		d.Add("host_headroom_bytes", float64(p.HostHeadroomBytes), "B", "host_limit_bytes − host_required_bytes",
			"%d − %d", p.HostLimitBytes, p.HostRequiredBytes)
		d.Add("max_safe_concurrency", float64(p.MaxSafeConcurrency), "requests",
			"unbounded (-1) when the idle worker fits, else 0: nothing is staged per request", "%d", p.MaxSafeConcurrency)
	default:
		p.HostHeadroomBytes = p.HostLimitBytes - p.HostRequiredBytes
		p.HostFits = p.HostHeadroomBytes >= 0
		d.Add("host_headroom_bytes", float64(p.HostHeadroomBytes), "B", "host_limit_bytes − host_required_bytes",
			"%d − %d", p.HostLimitBytes, p.HostRequiredBytes)
		if p.HostLimitBytes > fixed {
			p.MaxSafeConcurrency = int64(math.Floor(float64(p.HostLimitBytes-fixed) / perRequest))
		}
		d.Add("max_safe_concurrency", float64(p.MaxSafeConcurrency), "requests",
			"floor((host_limit_bytes − host_baseline_rss_bytes − host_offload_bytes − host_margin) / (request_kv_bytes × host_retention))",
			"floor((%d − %d − %d − %d) / (%d × %g))", p.HostLimitBytes, p.HostBaselineRSSBytes, p.HostOffloadBytes, p.HostMarginBytes, p.RequestKVBytes, p.HostRetention)
	}

	// Decode side: a transfer lands only where its whole KV can be held, in
	// host memory with a cpu buffer, in free GPU blocks otherwise.
	if p.DecodeStagedBytes, err = units.Product(int64(p.Concurrency), p.RequestKVBytes); err != nil {
		return fmt.Errorf("KV staged for %d requests in flight: %w", p.Concurrency, err)
	}
	d.Add("decode_staged_bytes", float64(p.DecodeStagedBytes), "B", "concurrency × request_kv_bytes",
		"%d × %d", p.Concurrency, p.RequestKVBytes)
	d.Note("KV the decode worker must hold before the transfers in flight can land: in host memory with kv_buffer = cpu, in free KV blocks otherwise")

	p.hostFindings()
	return nil
}

func (p *MemoryPlan) hostFindings() {
	b := units.Bytes
	if p.HostLimitBytes > 0 && !p.HostFits {
		offload := ""
		if p.HostOffloadBytes > 0 {
			offload = " + CPU offload cache " + b(p.HostOffloadBytes)
		}
		msg := fmt.Sprintf("OOM risk: the worker needs %s (baseline %s + %s staged for %d request(s) of %d tokens, %s each, × retention %g%s + margin %s) "+
			"but its limit is %s, %s short; ",
			b(p.HostRequiredBytes), b(p.HostBaselineRSSBytes), b(p.HostStagedBytes), p.Concurrency, p.InputTokens,
			b(p.RequestKVBytes), p.HostRetention, offload, b(p.HostMarginBytes), b(p.HostLimitBytes), b(-p.HostHeadroomBytes))
		switch {
		case p.MaxSafeConcurrency > 0:
			msg += fmt.Sprintf("at this limit at most %d request(s) in flight are safe", p.MaxSafeConcurrency)
		case p.HostLimitBytes <= p.HostBaselineRSSBytes+p.HostOffloadBytes+p.HostMarginBytes:
			msg += "the limit does not even cover the idle worker"
		default:
			msg += "not even one request in flight is safe at this limit"
		}
		msg += fmt.Sprintf("; a limit of at least %dMi is needed for concurrency %d", p.MinSafeLimitBytes/mib, p.Concurrency)
		p.Findings = append(p.Findings, msg)
	}
	if p.concurrencyGiven && p.KVBuffer == KVBufferGPU && p.KVCacheBytes > 0 && p.DecodeStagedBytes > p.KVCacheBytes*int64(p.TP) {
		p.Findings = append(p.Findings, fmt.Sprintf(
			"decode side: %d transfers in flight need %s of free KV cache to land, more than the worker's %s",
			p.Concurrency, b(p.DecodeStagedBytes), b(p.KVCacheBytes*int64(p.TP))))
	}
}
