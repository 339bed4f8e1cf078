package planner

import (
	"fmt"
	"math"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/links"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/units"
)

// DefaultFrontendMS is the frontend overhead (HTTP, tokenization, routing)
// of every TTFT through a frontend: measured +13 ms at concurrency 1
// (FACTS.md §5); perf.RequestPath says how it stands in for the engine's own.
const DefaultFrontendMS = perf.DefaultFrontendMS

// DisaggScenario is a prefill/decode split the user is considering.
type DisaggScenario struct {
	Model        *catalog.Model
	KVDtype      string
	TP           int // tensor-parallel ranks of the prefill worker
	DecodeTP     int // of the decode worker; 0 = TP
	InputTokens  int
	OutputTokens int
	// Concurrency is the number of transfers in flight on the link (kvplan
	// disagg --concurrency), used as given unless the load below is set.
	Concurrency int
	// The load, when the transfers in flight follow from it (kvplan check),
	// by Little's law (links.InFlightOpen, links.InFlightClosed):
	RequestRate      float64 // open loop, requests per second; wins over RequestsInFlight
	RequestsInFlight int     // closed loop: requests kept in flight; also caps the transfers
	DecodeMS         float64 // a request's decode time (output tokens × decode step), for the closed loop
	// WorkerPairs is how many prefill/decode worker pairs share the load,
	// each over its own path (its ranks' rails on a per-GPU link; its host's
	// port on a per-node link, one worker per host): min(prefill workers,
	// decode workers). 0 = 1.
	WorkerPairs int
	Link        *catalog.Link // the path KV takes from prefill to decode
	PrefillGPU  *catalog.GPU
	DecodeGPU   *catalog.GPU
	SameGPU     bool    // prefill and decode workers share one GPU
	PrefillMS   float64 // measured prefill time; 0 = estimate with the engine model
	// Path is how the request reaches its worker (perf.RequestPath): through
	// a frontend at its cost, or direct at the engine model's request cost
	// (which needs PrefillGPU); the zero value is direct.
	Path perf.RequestPath
	// Catalog and Engine give the engine model's efficiencies for the
	// prefill estimate (Engine "" = vllm).
	Catalog *catalog.Catalog
	Engine  string
}

// DisaggPlan compares aggregated and disaggregated serving of one request.
type DisaggPlan struct {
	Model             string `json:"model"`
	KVDtype           string `json:"kv_dtype"`
	TP                int    `json:"tp"`
	DecodeTP          int    `json:"decode_tp"`
	InputTokens       int    `json:"input_tokens"`
	OutputTokens      int    `json:"output_tokens"`
	KVBytesPerToken   int64  `json:"kv_bytes_per_token"`   // the model's, one copy (FACTS §2's figure)
	KVBytesPerRequest int64  `json:"kv_bytes_per_request"` // the model's KV of the prompt, one copy
	// BytesPerTransfer is what crosses the link for one request: every
	// decode rank's shard added up (an MLA latent once per decode rank).
	BytesPerTransfer     int64         `json:"bytes_per_transfer"`
	Link                 string        `json:"link"`
	EffectiveBytesPerS   float64       `json:"effective_bytes_per_s"`
	PerTransferBytesPerS float64       `json:"per_transfer_bytes_per_s"`
	LinkLatencyMS        float64       `json:"link_latency_ms"`
	LinkShared           bool          `json:"link_shared"`
	LinkRatePer          string        `json:"link_rate_per"`
	ParallelPaths        int           `json:"parallel_paths"`
	BytesPerPath         int64         `json:"bytes_per_path"`
	TransferMS           float64       `json:"transfer_alone_ms"` // one transfer with the path to itself (plan's transfer_ms is the mean at a rate)
	TransferMSShared     float64       `json:"transfer_ms_shared"`
	Concurrency          int           `json:"concurrency"`
	InFlightSource       string        `json:"in_flight_source"`
	WorkerPairs          int           `json:"worker_pairs"`
	TransfersInFlight    float64       `json:"transfers_in_flight"`
	LinkUtilization      float64       `json:"link_utilization"`
	PrefillGPU           string        `json:"prefill_gpu"`
	DecodeGPU            string        `json:"decode_gpu"`
	SameGPU              bool          `json:"same_gpu"`
	PrefillMS            float64       `json:"prefill_ms"`
	PrefillSource        string        `json:"prefill_source"`
	DecodeStallFreedMS   float64       `json:"decode_stall_freed_ms"`
	FrontendMS           float64       `json:"frontend_ms"`  // the frontend's cost on the frontend path; 0 direct
	RequestPath          string        `json:"request_path"` // frontend or direct
	RequestMS            float64       `json:"request_ms"`   // what the request pays on its path before its worker, in both TTFTs
	TTFTAggMS            float64       `json:"ttft_agg_ms"`
	TTFTDisaggMS         float64       `json:"ttft_disagg_ms"`
	TTFTRatio            float64       `json:"ttft_ratio"`
	TransferExceedsFreed bool          `json:"transfer_exceeds_prefill"`
	AtLoad               *DisaggAtLoad `json:"at_load,omitempty"` // the comparison at the load, when an engine model is at hand
	Verdict              string        `json:"verdict"`
	MTPConvention        string        `json:"mtp_convention"`
	Assumptions          []string      `json:"assumptions"`
	NotModelled          []string      `json:"not_modelled"`
	Derivation           Derivation    `json:"derivation,omitempty"`
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
	case sc.Concurrency < 1 && sc.RequestRate == 0 && sc.RequestsInFlight == 0:
		return nil, fmt.Errorf("concurrency must be >= 1 (got %d)", sc.Concurrency)
	case sc.RequestRate < 0 || math.IsNaN(sc.RequestRate) || math.IsInf(sc.RequestRate, 0):
		return nil, fmt.Errorf("request rate must be a finite number >= 0 (got %g)", sc.RequestRate)
	case sc.RequestsInFlight < 0 || sc.DecodeMS < 0 || sc.WorkerPairs < 0:
		return nil, fmt.Errorf("requests in flight and decode ms must be >= 0 (got %d, %g)", sc.RequestsInFlight, sc.DecodeMS)
	case sc.DecodeTP < 0:
		return nil, fmt.Errorf("decode tp must be >= 1 (got %d)", sc.DecodeTP)
	case sc.PrefillMS < 0:
		return nil, fmt.Errorf("prefill ms must be >= 0 (got %g)", sc.PrefillMS)
	case sc.Path.FrontendMS < 0 || math.IsNaN(sc.Path.FrontendMS) || math.IsInf(sc.Path.FrontendMS, 0):
		return nil, fmt.Errorf("frontend ms must be a finite number >= 0 (got %g)", sc.Path.FrontendMS)
	case !sc.Path.IsFrontend() && sc.PrefillGPU == nil:
		return nil, fmt.Errorf("the direct request path costs what the engine model's efficiencies say, which need a prefill GPU: give one, or take the frontend path")
	case sc.PrefillMS == 0 && sc.PrefillGPU == nil:
		return nil, fmt.Errorf("give a prefill GPU to estimate prefill time, or a measured --prefill-ms")
	}
	kvp, err := PlanKV(KVScenario{Model: sc.Model, KVDtype: sc.KVDtype, TP: sc.TP, Tokens: sc.InputTokens})
	if err != nil {
		return nil, err
	}
	decodeTP := sc.DecodeTP
	if decodeTP == 0 {
		decodeTP = kvp.TP
	}
	dec, err := PlanKV(KVScenario{Model: sc.Model, KVDtype: sc.KVDtype, TP: decodeTP, Tokens: sc.InputTokens})
	if err != nil {
		return nil, err
	}
	one, err := PlanKV(KVScenario{Model: sc.Model, KVDtype: sc.KVDtype, TP: 1, Tokens: sc.InputTokens})
	if err != nil {
		return nil, err
	}
	p := &DisaggPlan{
		Model:             sc.Model.Name,
		KVDtype:           kvp.KVDtype,
		TP:                kvp.TP,
		DecodeTP:          dec.TP,
		InputTokens:       sc.InputTokens,
		OutputTokens:      sc.OutputTokens,
		KVBytesPerToken:   one.KVBytesPerToken,
		KVBytesPerRequest: one.KVBytes,
		Link:              sc.Link.Name,
		SameGPU:           sc.SameGPU,
		RequestPath:       sc.Path.String(),
		MTPConvention:     models.MTPConvention,
		NotModelled:       notModelled,
	}
	d := &p.Derivation
	d.Add("kv_bytes_per_token", float64(p.KVBytesPerToken), "B/token", "the model's KV bytes per token, one copy (tp 1)", "%d", p.KVBytesPerToken)
	d.Note(models.MTPConvention)
	d.Add("kv_bytes_per_request", float64(p.KVBytesPerRequest), "B", "the model's KV of the prompt, one copy (tp 1)", "%d tokens", sc.InputTokens)
	// What the decode ranks pull, added up: each its own shard (its kv heads;
	// a whole latent copy for MLA, which every rank replicates).
	p.BytesPerTransfer = dec.KVBytesAllRanks
	d.Add("bytes_per_transfer", float64(p.BytesPerTransfer), "B",
		requestFormula(dec.kv)+" per decode rank, × decode tp (each decode rank pulls its own shard)",
		"(%s) × %d", requestValues(dec.kv, sc.InputTokens), dec.TP)
	if err := p.prefill(sc, d); err != nil {
		return nil, err
	}
	if sc.Path.IsFrontend() {
		p.FrontendMS = sc.Path.FrontendMS
	}
	if p.RequestMS, err = RequestMSFor(sc.Catalog, sc.engine(), sc.Model, sc.PrefillGPU, WorkerLayout{Parallel: models.Parallelism{TP: max(1, sc.TP)}}, sc.Path, sc.InputTokens, d); err != nil {
		return nil, err
	}

	paths, err := links.Split(sc.Link, p.BytesPerTransfer, kvp.TP, dec.TP)
	if err != nil {
		return nil, err
	}
	p.LinkRatePer, p.ParallelPaths, p.BytesPerPath = sc.Link.RatePer, paths.Rails, paths.PathBytes
	if paths.PerGPU {
		d.Add("bytes_per_path", float64(p.BytesPerPath), "B",
			"ceil(bytes_per_transfer / min(prefill tp, decode tp)): the link's rate is per GPU, so each rank's rail carries its own shard",
			"ceil(%d / min(%d, %d))", p.BytesPerTransfer, kvp.TP, dec.TP)
	} else {
		d.Add("bytes_per_path", float64(p.BytesPerPath), "B",
			"bytes_per_transfer: the link's rate is per node, so every rank's KV crosses the one path", "%d", p.BytesPerTransfer)
	}
	d.Note("FACTS.md §7 (Rails); decode rank r pulls from prefill rank r / (decode tp / prefill tp), vLLM kv_connector/utils.py get_target_remote_ranks")

	alone, err := links.Time(sc.Link, p.BytesPerPath, 1)
	if err != nil {
		return nil, err
	}
	p.EffectiveBytesPerS, p.LinkLatencyMS, p.LinkShared = alone.EffectiveBytesPerS, alone.LatencyMS, alone.Shared
	p.TransferMS = d.Add("transfer_alone_ms", alone.IsolatedMS, "ms", "latency + bytes_per_path / effective throughput",
		"%g ms + %d B / %.0f B/s", alone.LatencyMS, alone.Bytes, alone.EffectiveBytesPerS)
	d.Note(sc.Link.Source)

	p.Concurrency = p.inFlight(sc, d)
	tr, err := links.Time(sc.Link, p.BytesPerPath, p.Concurrency)
	if err != nil {
		return nil, err
	}
	p.PerTransferBytesPerS = tr.PerTransferBytesPerS
	shareFormula := "latency + bytes_per_path / (effective throughput / transfers sharing the link)"
	if !tr.Shared {
		shareFormula = "latency + bytes_per_path / effective throughput (this link is not shared: each transfer keeps its rate)"
	}
	p.TransferMSShared = d.Add("transfer_ms_shared", tr.SharedMS, "ms", shareFormula,
		"%g ms + %d B / %.0f B/s (%d in flight)", tr.LatencyMS, tr.Bytes, tr.PerTransferBytesPerS, p.Concurrency)

	p.TTFTAggMS = d.Add("ttft_agg_ms", p.RequestMS+p.PrefillMS, "ms", "request_ms ("+p.RequestPath+" path) + prefill", "%.3f + %.3f", p.RequestMS, p.PrefillMS)
	p.TTFTDisaggMS = d.Add("ttft_disagg_ms", p.RequestMS+p.PrefillMS+p.TransferMSShared, "ms",
		"request_ms ("+p.RequestPath+" path) + prefill + shared transfer", "%.3f + %.3f + %.3f", p.RequestMS, p.PrefillMS, p.TransferMSShared)
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
	p.Assumptions = append(p.Assumptions, p.concurrencyAssumption(sc), p.railAssumption(sc.Link))
	return p, nil
}

// inFlight sets the transfers sharing one path: as given, or from the load
// by Little's law, at least 1 and at most the requests in flight. The load
// is spread evenly over the worker pairs, each with a path of its own.
func (p *DisaggPlan) inFlight(sc DisaggScenario, d *Derivation) int {
	s := p.TransferMS - p.LinkLatencyMS // one transfer's bytes term alone
	pairs := max(1, sc.WorkerPairs)
	p.WorkerPairs = pairs
	var cap int // requests in flight per pair, when known
	switch {
	case sc.RequestRate > 0:
		p.InFlightSource = "request_rate"
		rate := sc.RequestRate / float64(pairs)
		n, rho := links.InFlightOpen(sc.Link, p.BytesPerPath, rate)
		p.LinkUtilization = d.Add("link_utilization", rho, "ratio", "request_rate / worker pairs × bytes_per_path / effective throughput",
			"%g/s / %d × %d B / %.0f B/s", sc.RequestRate, pairs, p.BytesPerPath, p.EffectiveBytesPerS)
		if math.IsInf(n, 1) {
			n = rho // no steady state: at least the offered load, λ × one transfer alone
			d.Add("transfers_in_flight", n, "transfers",
				"link_utilization ≥ 1: the path cannot carry the rate and the queue grows without bound; at least λ per pair × transfer time alone",
				"%g/s × %.3f ms", rate, s)
		} else {
			d.Add("transfers_in_flight", n, "transfers",
				"Little's law, open loop, per path: request_rate / worker pairs × (latency + transfer alone / (1 − link_utilization)) (processor sharing)",
				"%g/s × (%g ms + %.3f ms / (1 − %.4f))", rate, p.LinkLatencyMS, s, rho)
		}
		p.TransfersInFlight = n
		if sc.RequestsInFlight > 0 {
			cap = ceilDiv(sc.RequestsInFlight, pairs)
		}
	case sc.RequestsInFlight > 0:
		p.InFlightSource = "concurrency"
		other := p.PrefillMS + sc.DecodeMS
		clients := float64(sc.RequestsInFlight) / float64(pairs)
		p.TransfersInFlight = d.Add("transfers_in_flight", links.InFlightClosed(sc.Link, p.BytesPerPath, clients, other), "transfers",
			"Little's law, closed loop, per path: c × T / (prefill + T + decode), c = concurrency / worker pairs, T = latency + max(1, N) × transfer alone",
			"%.4g × T / (%.3f + T + %.3f ms), transfer alone %.3f ms", clients, p.PrefillMS, sc.DecodeMS, s)
		if p.LinkShared {
			t := p.LinkLatencyMS + math.Max(1, p.TransfersInFlight)*s // one transfer's time at the root
			p.LinkUtilization = d.Add("link_utilization", clients/(other+t)*s, "ratio",
				"requests per ms per path × transfer alone: c / (prefill + T + decode) × (transfer alone)",
				"%.4g / (%.3f + %.3f + %.3f) × %.3f", clients, p.PrefillMS, t, sc.DecodeMS, s)
		}
		cap = ceilDiv(sc.RequestsInFlight, pairs)
	default:
		p.InFlightSource = "given"
		p.TransfersInFlight = float64(sc.Concurrency)
		return sc.Concurrency
	}
	n := max(1, int(math.Ceil(p.TransfersInFlight-1e-9)))
	if cap > 0 {
		n = min(n, cap)
	}
	d.Add("concurrent_transfers", float64(n), "transfers", "ceil(transfers_in_flight), at least 1, at most the requests in flight per worker pair", "%d", n)
	if pairs > 1 {
		d.Note(fmt.Sprintf("the load is spread over %d prefill/decode worker pairs, each with its own path (a host port per worker on a per-node link)", pairs))
	}
	return n
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
	var err error
	p.PrefillMS, err = EstimatePrefillMS(sc.Catalog, sc.engine(), sc.Model, sc.PrefillGPU, sc.InputTokens, sc.TP, d)
	return err
}

// engine is the scenario's engine, vLLM when none is named.
func (sc DisaggScenario) engine() string {
	if sc.Engine == "" {
		return "vllm"
	}
	return sc.Engine
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

func (p *DisaggPlan) concurrencyAssumption(sc DisaggScenario) string {
	var s string
	switch {
	case p.Concurrency == 1:
		s = fmt.Sprintf("one transfer at a time on %s", sc.Link.Name)
	case !sc.Link.Shared:
		s = fmt.Sprintf("%d transfers in flight on %s, each at the full rate: this link is not shared", p.Concurrency, sc.Link.Name)
	default:
		s = fmt.Sprintf("%d transfers share %s at once, each getting 1/%d of its effective throughput", p.Concurrency, sc.Link.Name, p.Concurrency)
	}
	pairs := ""
	if p.WorkerPairs > 1 {
		pairs = fmt.Sprintf(", spread over %d prefill/decode worker pairs with a path each", p.WorkerPairs)
	}
	switch p.InFlightSource {
	case "request_rate":
		s += fmt.Sprintf(" (%.2f in flight on average from request_rate %g/s by Little's law%s; link utilization %.2f)", p.TransfersInFlight, sc.RequestRate, pairs, p.LinkUtilization)
	case "concurrency":
		s += fmt.Sprintf(" (%.2f in flight on average from %d requests in flight by Little's law%s: a request spends most of its life in prefill and decode)", p.TransfersInFlight, sc.RequestsInFlight, pairs)
	default:
		s += " (--concurrency N is N transfers sharing the link at once, not requests in flight; kvplan check derives the transfers from the load)"
	}
	return s
}

func (p *DisaggPlan) railAssumption(l *catalog.Link) string {
	if l.PerGPU() {
		return fmt.Sprintf("%s's rate is per GPU rail: each of the %d tensor-parallel rank pairs moves its own shard in parallel (%s of the %s on the busiest rail; an MLA latent, replicated on every rank, is one copy per decode rank)",
			l.Name, p.ParallelPaths, units.Bytes(p.BytesPerPath), units.Bytes(p.BytesPerTransfer))
	}
	return fmt.Sprintf("%s's rate is per node: every tensor-parallel rank's KV (%s in all, one shard per decode rank) crosses the one path", l.Name, units.Bytes(p.BytesPerTransfer))
}
