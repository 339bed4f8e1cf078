package planner

import (
	"math"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/perf"
)

// Hand-built profiles with the catalog's figures, so that the arithmetic
// below does not move if the catalog does.
func ibNDR() *catalog.Link {
	return &catalog.Link{Name: "ib-ndr", EffectiveBytesPerS: 42.6e9, LatencyMS: 0.01, Shared: true, RatePer: catalog.RatePerGPU}
}

func gbe100() *catalog.Link {
	return &catalog.Link{Name: "100gbe", EffectiveBytesPerS: 12.5e9 * 0.85, LatencyMS: 0.05, Shared: true, RatePer: catalog.RatePerNode}
}

func llama70() *catalog.Model {
	return &catalog.Model{Name: "llama-3.1-70b", ParamsTotal: 70_553_706_496, WeightDtype: "bf16", VocabSize: 128256, HiddenSize: 8192,
		AttentionHeads: 64, MaxContext: 131072, Layers: 80, KVHeads: 8, HeadDim: 128, KVDtype: "bf16"}
}

func deepseekV3() *catalog.Model {
	return &catalog.Model{Name: "deepseek-v3", ParamsTotal: 671_026_419_200, ParamsActive: 36_625_618_432, WeightDtype: "fp8",
		VocabSize: 129280, HiddenSize: 7168, AttentionHeads: 128, MaxContext: 163840, Layers: 61, KVHeads: 128, KVDtype: "bf16",
		MLA: &catalog.MLA{KVLoraRank: 512, QKRopeHeadDim: 64}}
}

// TestDisaggRails checks what one transfer puts on the busiest path.
func TestDisaggRails(t *testing.T) {
	cases := []struct {
		name             string
		model            *catalog.Model
		kvDtype          string
		tokens, pTP, dTP int
		link             *catalog.Link
		total, path      int64
		rails            int
		transferMS       float64
	}{
		// Llama-3.1-70B, 4,000 tokens: 327,680 B/token (FACTS §2) × 4,000 = 1,310,720,000 B,
		// tp 8 on both sides: each rail one rank's kv head, 163,840,000 B,
		// 0.01 ms + 163.84e6 / 42.6e9 s = 3.8560 ms.
		{"70b tp8 ib-ndr", llama70(), "", 4000, 8, 8, ibNDR(), 1_310_720_000, 163_840_000, 8, 3.856009},
		// The same over 100 GbE: one port, all of it: 0.05 + 1,310.72e6 / 10.625e9 s = 123.4119 ms.
		{"70b tp8 100gbe", llama70(), "", 4000, 8, 8, gbe100(), 1_310_720_000, 1_310_720_000, 1, 123.411882},
		// Prefill tp 4 into decode tp 8: each decode rank pulls its 1 kv head, 8 × 4,000 ×
		// 40,960 B = 1,310,720,000 B in all, over 4 prefill rails: 327,680,000 B each.
		{"70b tp4 into tp8", llama70(), "", 4000, 4, 8, ibNDR(), 1_310_720_000, 327_680_000, 4, 0.01 + 327.68e6/42.6e9*1000},
		// DeepSeek-V3 fp8 KV (35,136 B/token, FACTS §2), 8,150 tokens, tp 8: the latent is
		// replicated, each decode rank pulls one copy, 35,136 × 8,150 = 286,358,400 B per
		// rail — the 286 MB FACTS §2 quotes for the same MLA geometry (Kimi-K2.5) at 8,150
		// tokens — and 8 copies in all.
		{"mla tp8", deepseekV3(), "fp8", 8150, 8, 8, ibNDR(), 8 * 286_358_400, 286_358_400, 8, 0.01 + 286.3584e6/42.6e9*1000},
	}
	for _, c := range cases {
		p, err := PlanDisagg(DisaggScenario{Model: c.model, KVDtype: c.kvDtype, TP: c.pTP, DecodeTP: c.dTP, InputTokens: c.tokens,
			Concurrency: 1, Link: c.link, PrefillMS: 100, Path: perf.Frontend(13)})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.BytesPerTransfer != c.total || p.BytesPerPath != c.path || p.ParallelPaths != c.rails {
			t.Errorf("%s: total %d, path %d over %d; want %d, %d over %d", c.name, p.BytesPerTransfer, p.BytesPerPath, p.ParallelPaths, c.total, c.path, c.rails)
		}
		// kv_bytes_per_token is the model's, one copy: FACTS §2's 35,136 B for
		// DeepSeek-V3 with fp8 KV, not the 8 latent copies that cross the link.
		if c.name == "mla tp8" && (p.KVBytesPerToken != 35_136 || p.KVBytesPerRequest != 286_358_400) {
			t.Errorf("%s: kv_bytes_per_token %d, kv_bytes_per_request %d; want the model's 35,136 and 286,358,400", c.name, p.KVBytesPerToken, p.KVBytesPerRequest)
		}
		if math.Abs(p.TransferMS-c.transferMS) > 1e-4 {
			t.Errorf("%s: transfer %.6f ms, want %.6f", c.name, p.TransferMS, c.transferMS)
		}
	}
}

// TestDisaggInFlight: transfers in flight follow from the load, not from the
// requests in flight.
func TestDisaggInFlight(t *testing.T) {
	base := DisaggScenario{Model: llama70(), TP: 8, InputTokens: 4000, OutputTokens: 300, Link: ibNDR(), PrefillMS: 180, Path: perf.Frontend(13)}
	cases := []struct {
		name      string
		set       func(*DisaggScenario)
		source    string
		mean      float64
		transfers int
	}{
		// 64 requests, each 3.846 ms (+0.01) of a 180 + 3.856 + 2,553.8 ms life in a
		// transfer: N = 64 × 3.85601 / 2,737.653 = 0.090144, so one transfer at a time.
		{"closed", func(s *DisaggScenario) { s.RequestsInFlight, s.DecodeMS = 64, 2553.797 }, "concurrency", 0.090144, 1},
		// 2 requests/s: ρ = 2 × 3.846e-3 = 0.0076921; N = 2 × (0.01e-3 + 3.84601e-3 / 0.9923079) = 0.0077717.
		{"open", func(s *DisaggScenario) { s.RequestRate = 2 }, "request_rate", 0.0077717, 1},
		// The same rate over 4 worker pairs: 0.5/s per path, ρ = 0.00192300,
		// N = 0.5 × (0.01e-3 + 3.84601e-3 / 0.998077) = 0.0019317.
		{"open, 4 pairs", func(s *DisaggScenario) { s.RequestRate, s.WorkerPairs = 2, 4 }, "request_rate", 0.0019317, 1},
		// --concurrency as given: 64 transfers share the rails.
		{"given", func(s *DisaggScenario) { s.Concurrency = 64 }, "given", 64, 64},
	}
	for _, c := range cases {
		sc := base
		c.set(&sc)
		p, err := PlanDisagg(sc)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.InFlightSource != c.source || math.Abs(p.TransfersInFlight-c.mean) > 1e-5 || p.Concurrency != c.transfers {
			t.Errorf("%s: %s %.7f → %d; want %s %.7f → %d", c.name, p.InFlightSource, p.TransfersInFlight, p.Concurrency, c.source, c.mean, c.transfers)
		}
	}
	// Saturated: 10/s of 1,310,720,000 B over one 10.625 GB/s path is ρ = 1.2336; the
	// figures stay finite and the utilization says why.
	sc := base
	sc.Link, sc.RequestRate = gbe100(), 10
	p, err := PlanDisagg(sc)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.LinkUtilization-1.233619) > 1e-5 || math.IsInf(p.TransferMSShared, 0) || p.Concurrency != 2 {
		t.Errorf("saturated: ρ %.6f, shared %.1f ms, %d transfers", p.LinkUtilization, p.TransferMSShared, p.Concurrency)
	}
}
