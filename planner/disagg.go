package planner

import (
	"fmt"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/links"
	"github.com/kvplan/kvplan/models"
)

// DefaultFrontendMS is the frontend overhead (HTTP, tokenization, routing)
// added to every TTFT: measured +13 ms at concurrency 1 (FACTS.md §5).
const DefaultFrontendMS = 13

// DisaggScenario is a prefill/decode split the user is considering.
type DisaggScenario struct {
	Model        *catalog.Model
	KVDtype      string
	TP           int
	InputTokens  int
	OutputTokens int
	Concurrency  int           // transfers in flight on the link
	Link         *catalog.Link // the path KV takes from prefill to decode
	PrefillGPU   *catalog.GPU
	DecodeGPU    *catalog.GPU
	SameGPU      bool    // prefill and decode workers share one GPU
	PrefillMS    float64 // measured prefill time; 0 = estimate from the GPU
	FrontendMS   float64 // frontend overhead per request
}

// DisaggPlan compares aggregated and disaggregated serving of one request.
type DisaggPlan struct {
	Model                string     `json:"model"`
	KVDtype              string     `json:"kv_dtype"`
	TP                   int        `json:"tp"`
	InputTokens          int        `json:"input_tokens"`
	OutputTokens         int        `json:"output_tokens"`
	KVBytesPerToken      int64      `json:"kv_bytes_per_token"`
	KVBytesPerRequest    int64      `json:"kv_bytes_per_request"`
	Link                 string     `json:"link"`
	EffectiveBytesPerS   float64    `json:"effective_bytes_per_s"`
	PerTransferBytesPerS float64    `json:"per_transfer_bytes_per_s"`
	LinkLatencyMS        float64    `json:"link_latency_ms"`
	LinkShared           bool       `json:"link_shared"`
	TransferMS           float64    `json:"transfer_ms"`
	TransferMSShared     float64    `json:"transfer_ms_shared"`
	Concurrency          int        `json:"concurrency"`
	PrefillGPU           string     `json:"prefill_gpu"`
	DecodeGPU            string     `json:"decode_gpu"`
	SameGPU              bool       `json:"same_gpu"`
	PrefillMS            float64    `json:"prefill_ms"`
	PrefillSource        string     `json:"prefill_source"`
	DecodeStallFreedMS   float64    `json:"decode_stall_freed_ms"`
	FrontendMS           float64    `json:"frontend_ms"`
	TTFTAggMS            float64    `json:"ttft_agg_ms"`
	TTFTDisaggMS         float64    `json:"ttft_disagg_ms"`
	TTFTRatio            float64    `json:"ttft_ratio"`
	TransferExceedsFreed bool       `json:"transfer_exceeds_prefill"`
	Verdict              string     `json:"verdict"`
	MTPConvention        string     `json:"mtp_convention"`
	Assumptions          []string   `json:"assumptions"`
	NotModelled          []string   `json:"not_modelled"`
	Derivation           Derivation `json:"derivation,omitempty"`
}

// notModelled lists what the disaggregation estimate leaves out.
var notModelled = []string{
	"decode speed (ITL) and its interference with prefill on a shared GPU",
	"queueing: requests wait only for the link, not for prefill or decode workers",
	"prefix-cache hits, which shrink both prefill and transfer",
	"layer-by-layer overlap of transfer with prefill (NIXL/Mooncake pipelining)",
	"per-block descriptor overhead, which lowers RDMA throughput for small blocks",
	"network congestion from traffic other than KV transfers",
}

// PlanDisagg estimates the TTFT of one request served aggregated (prefill
// and decode on one worker) and disaggregated (prefill worker, KV transfer,
// decode worker).
func PlanDisagg(sc DisaggScenario) (*DisaggPlan, error) {
	switch {
	case sc.Model == nil:
		return nil, fmt.Errorf("no model given")
	case sc.Link == nil:
		return nil, fmt.Errorf("no link given")
	case sc.InputTokens <= 0:
		return nil, fmt.Errorf("input tokens must be > 0 (got %d)", sc.InputTokens)
	case sc.OutputTokens < 0:
		return nil, fmt.Errorf("output tokens must be >= 0 (got %d)", sc.OutputTokens)
	case sc.Concurrency < 1:
		return nil, fmt.Errorf("concurrency must be >= 1 (got %d)", sc.Concurrency)
	case sc.PrefillMS < 0:
		return nil, fmt.Errorf("prefill ms must be >= 0 (got %g)", sc.PrefillMS)
	case sc.FrontendMS < 0:
		return nil, fmt.Errorf("frontend ms must be >= 0 (got %g)", sc.FrontendMS)
	case sc.PrefillMS == 0 && sc.PrefillGPU == nil:
		return nil, fmt.Errorf("give a prefill GPU to estimate prefill time, or a measured --prefill-ms")
	}
	kvp, err := PlanKV(KVScenario{Model: sc.Model, KVDtype: sc.KVDtype, TP: sc.TP, Tokens: sc.InputTokens})
	if err != nil {
		return nil, err
	}
	p := &DisaggPlan{
		Model:           sc.Model.Name,
		KVDtype:         kvp.KVDtype,
		TP:              kvp.TP,
		InputTokens:     sc.InputTokens,
		OutputTokens:    sc.OutputTokens,
		KVBytesPerToken: kvp.KVBytesPerToken * int64(kvp.TP),
		Link:            sc.Link.Name,
		Concurrency:     sc.Concurrency,
		SameGPU:         sc.SameGPU,
		FrontendMS:      sc.FrontendMS,
		MTPConvention:   models.MTPConvention,
		NotModelled:     notModelled,
	}
	d := &p.Derivation
	d.Add("kv_bytes_per_token", float64(p.KVBytesPerToken), "B/token", "per-rank KV bytes per token × tp", "%d × %d", kvp.KVBytesPerToken, kvp.TP)
	d.Note(models.MTPConvention)
	p.KVBytesPerRequest = kvp.KVBytesAllRanks
	d.Add("kv_bytes_per_request", float64(p.KVBytesPerRequest), "B",
		requestFormula(kvp.kv)+", × tp ranks", "(%s) × %d", requestValues(kvp.kv, sc.InputTokens), kvp.TP)

	tr, err := links.Time(sc.Link, p.KVBytesPerRequest, sc.Concurrency)
	if err != nil {
		return nil, err
	}
	p.EffectiveBytesPerS, p.PerTransferBytesPerS = tr.EffectiveBytesPerS, tr.PerTransferBytesPerS
	p.LinkLatencyMS, p.LinkShared = tr.LatencyMS, tr.Shared
	p.TransferMS = d.Add("transfer_ms", tr.IsolatedMS, "ms", "latency + bytes / effective throughput",
		"%g ms + %d B / %.0f B/s", tr.LatencyMS, tr.Bytes, tr.EffectiveBytesPerS)
	d.Note(sc.Link.Source)
	shareFormula := "latency + bytes / (effective throughput / concurrent transfers)"
	if !tr.Shared {
		shareFormula = "latency + bytes / effective throughput (this link is not shared: each transfer keeps its rate)"
	}
	p.TransferMSShared = d.Add("transfer_ms_shared", tr.SharedMS, "ms", shareFormula,
		"%g ms + %d B / %.0f B/s (%d in flight)", tr.LatencyMS, tr.Bytes, tr.PerTransferBytesPerS, sc.Concurrency)

	if err := p.prefill(sc, d); err != nil {
		return nil, err
	}

	p.TTFTAggMS = d.Add("ttft_agg_ms", sc.FrontendMS+p.PrefillMS, "ms", "frontend + prefill", "%g + %.3f", sc.FrontendMS, p.PrefillMS)
	p.TTFTDisaggMS = d.Add("ttft_disagg_ms", sc.FrontendMS+p.PrefillMS+p.TransferMSShared, "ms",
		"frontend + prefill + shared transfer", "%g + %.3f + %.3f", sc.FrontendMS, p.PrefillMS, p.TransferMSShared)
	p.TTFTRatio = d.Add("ttft_ratio", p.TTFTDisaggMS/p.TTFTAggMS, "×", "ttft_disagg / ttft_agg", "%.3f / %.3f", p.TTFTDisaggMS, p.TTFTAggMS)
	if sc.SameGPU {
		p.DecodeStallFreedMS = d.Add("decode_stall_freed_ms", 0, "ms", "0: prefill and decode share one GPU, so no compute is freed", "0")
		p.Assumptions = append(p.Assumptions,
			"same GPU: prefill and decode share its compute, so splitting frees nothing; the prefill time is taken as uncontended and the KV crosses the same-GPU path ("+sc.Link.Name+")")
	} else {
		p.DecodeStallFreedMS = d.Add("decode_stall_freed_ms", p.PrefillMS, "ms",
			"prefill: the time this prefill would have stalled decode of other requests on an aggregated worker", "%.3f", p.PrefillMS)
	}
	p.TransferExceedsFreed = p.TransferMSShared >= p.DecodeStallFreedMS
	p.Verdict = p.verdict()
	p.Assumptions = append(p.Assumptions,
		concurrencyAssumption(sc),
		"all tensor-parallel ranks send their KV over the one link")
	return p, nil
}

func (p *DisaggPlan) prefill(sc DisaggScenario, d *Derivation) error {
	if sc.PrefillGPU != nil {
		p.PrefillGPU = sc.PrefillGPU.Name
	}
	if sc.DecodeGPU != nil {
		p.DecodeGPU = sc.DecodeGPU.Name
	}
	if sc.PrefillMS > 0 {
		p.PrefillSource = "given"
		p.PrefillMS = d.Add("prefill_ms", sc.PrefillMS, "ms", "given (--prefill-ms)", "%g", sc.PrefillMS)
		return nil
	}
	p.PrefillSource = "estimated"
	p.PrefillMS = EstimatePrefillMS(sc.Model, sc.PrefillGPU, sc.InputTokens, sc.TP, d)
	return nil
}

// EstimatePrefillMS estimates the prefill time of one request of tokens
// tokens on tp GPUs of kind g: FLOPs / (bf16 FLOP/s × prefill MFU × tp),
// adding its figures to d.
func EstimatePrefillMS(m *catalog.Model, g *catalog.GPU, tokens, tp int, d *Derivation) float64 {
	wf, af := models.PrefillFLOPs(m, tokens)
	d.Add("prefill_flops", wf+af, "FLOP",
		"2 × matmul params × tokens + 2 × vocab × hidden (last token's logits) + causal attention FLOPs",
		"2 × %d × %d + 2 × %d × %d + %.4g", models.MatmulParams(m), tokens, m.VocabSize, m.HiddenSize, af)
	d.Note("matmul params = active params less the embedding matrices (the input embedding is a lookup)")
	tp = max(1, tp)
	ms := d.Add("prefill_ms", (wf+af)/(g.BF16TFLOPS*1e12*g.PrefillMFU*float64(tp))*1000, "ms",
		"prefill FLOPs / (bf16 FLOP/s × prefill MFU × tp)", "%.4g / (%g e12 × %g × %d)", wf+af, g.BF16TFLOPS, g.PrefillMFU, tp)
	d.Note(g.Name + ": " + g.Source)
	return ms
}

func (p *DisaggPlan) verdict() string {
	switch {
	case p.SameGPU:
		return fmt.Sprintf("do not split on one GPU: no compute is gained and each request pays %.1f ms of transfer", p.TransferMSShared)
	case p.TransferExceedsFreed:
		return fmt.Sprintf("stay aggregated: moving the KV (%.1f ms at concurrency %d) costs more than the %.1f ms of prefill the split frees; TTFT ×%.2f",
			p.TransferMSShared, p.Concurrency, p.DecodeStallFreedMS, p.TTFTRatio)
	default:
		return fmt.Sprintf("disaggregation can pay off: the transfer (%.1f ms) is shorter than the %.1f ms of prefill it takes off the decode worker; TTFT ×%.2f",
			p.TransferMSShared, p.DecodeStallFreedMS, p.TTFTRatio)
	}
}

func concurrencyAssumption(sc DisaggScenario) string {
	if sc.Concurrency == 1 {
		return fmt.Sprintf("one transfer at a time on %s (--concurrency N models N transfers sharing it)", sc.Link.Name)
	}
	if !sc.Link.Shared {
		return fmt.Sprintf("%d transfers in flight on %s, each at the full rate: this link is not shared", sc.Concurrency, sc.Link.Name)
	}
	return fmt.Sprintf("%d transfers share %s at once, each getting 1/%d of its effective throughput", sc.Concurrency, sc.Link.Name, sc.Concurrency)
}
