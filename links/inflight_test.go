package links

import (
	"math"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

func TestSplit(t *testing.T) {
	ndr := &catalog.Link{Name: "ib-ndr", EffectiveBytesPerS: 42.6e9, RatePer: catalog.RatePerGPU, Shared: true}
	gbe := &catalog.Link{Name: "1gbe", EffectiveBytesPerS: 104e6, RatePer: catalog.RatePerNode, Shared: true}
	cases := []struct {
		name            string
		link            *catalog.Link
		total           int64
		prefill, decode int
		rails           int
		pathBytes       int64
	}{
		// Llama-3.1-70B, 4,000 tokens: 327,680 B/token × 4,000 = 1,310,720,000 B over
		// 8 rails of one rank each: 163,840,000 B per rail.
		{"70b tp8 per gpu", ndr, 1_310_720_000, 8, 8, 8, 163_840_000},
		// The same over one Ethernet port: all of it on the one path.
		{"70b tp8 per node", gbe, 1_310_720_000, 8, 8, 1, 1_310_720_000},
		// DeepSeek-V3 MLA, tp 8 on both sides, 1,000 tokens: each decode rank pulls
		// one latent copy (70,272 B/token × 1,000 = 70,272,000 B), 8 copies in all;
		// each rail carries one copy.
		{"mla tp8", ndr, 8 * 70_272_000, 8, 8, 8, 70_272_000},
		// Prefill tp 2, decode tp 8: two prefill rails carry everything, half each.
		{"prefill narrower", ndr, 1_000_000, 2, 8, 2, 500_000},
		// Prefill tp 8, decode tp 4: four decode rails receive a quarter each.
		{"decode narrower", ndr, 1_000_000, 8, 4, 4, 250_000},
		// An odd split rounds up: 10 B over 4 rails is 3 B on the busiest.
		{"rounding", ndr, 10, 4, 4, 4, 3},
	}
	for _, c := range cases {
		p, err := Split(c.link, c.total, c.prefill, c.decode)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.Rails != c.rails || p.PathBytes != c.pathBytes || p.TotalBytes != c.total {
			t.Errorf("%s: %+v; want %d rails of %d B", c.name, p, c.rails, c.pathBytes)
		}
	}
	if _, err := Split(ndr, 1, 0, 1); err == nil {
		t.Error("tp 0 accepted")
	}
	if _, err := Split(ndr, -1, 1, 1); err == nil {
		t.Error("negative bytes accepted")
	}
}

func TestInFlightClosed(t *testing.T) {
	gbe := &catalog.Link{Name: "1gbe", EffectiveBytesPerS: 104e6, LatencyMS: 0.2, Shared: true}
	ndr := &catalog.Link{Name: "ib-ndr", EffectiveBytesPerS: 42.6e9, LatencyMS: 0.01, Shared: true}
	cases := []struct {
		name    string
		link    *catalog.Link
		bytes   int64
		clients float64
		otherMS float64
		want    float64
	}{
		// Qwen3-0.6B, 1,500 tokens (172,032,000 B) over 1 GbE: s = 1,654.154 ms,
		// against 323 ms of prefill and decode. Nearly every client is in a
		// transfer: with latency ~0, N ≈ C − (other + latency) / s
		// = 16 − 323.2 / 1,654.154 = 15.8046.
		{"1gbe saturated", gbe, 172_032_000, 16, 323, 15.8046},
		// Llama-3.1-70B tp 8 on per-GPU rails: 163,840,000 B per rail, s = 3.84601 ms
		// (+ 0.01 ms latency), against 500 ms of prefill and decode; a transfer
		// alone takes 3.856 of every 503.856 ms: N = 64 × 3.85601 / 503.85601 = 0.48979.
		{"ndr modest", ndr, 163_840_000, 64, 500, 0.48979},
		// Nothing else in a request's life: every client is in a transfer.
		{"transfer only", gbe, 1_000_000, 4, 0, 4},
	}
	for _, c := range cases {
		got := InFlightClosed(c.link, c.bytes, c.clients, c.otherMS)
		if math.Abs(got-c.want) > 1e-3 {
			t.Errorf("%s: %.5f transfers in flight, want %.5f", c.name, got, c.want)
		}
	}
	// Little's law holds at the root: N = C × T / (other + T), T = latency + N × s.
	s := 172_032_000 / 104e6 * 1000
	n := InFlightClosed(gbe, 172_032_000, 16, 323)
	tt := 0.2 + n*s
	if back := 16 * tt / (323 + tt); math.Abs(back-n) > 1e-6 {
		t.Errorf("not a fixed point: N %.6f, C T / (other + T) %.6f", n, back)
	}
}

func TestInFlightOpen(t *testing.T) {
	gbe := &catalog.Link{Name: "1gbe", EffectiveBytesPerS: 104e6, LatencyMS: 0.2, Shared: true}
	// 0.5 requests/s of 172,032,000 B: s = 1.654154 s, ρ = 0.827077,
	// T = 0.0002 + 1.654154 / 0.172923 = 9.566036 s, N = 0.5 × T = 4.783018.
	n, rho := InFlightOpen(gbe, 172_032_000, 0.5)
	if math.Abs(rho-0.827077) > 1e-5 || math.Abs(n-4.783018) > 1e-4 {
		t.Errorf("open loop: N %.6f ρ %.6f; want 4.783018, 0.827077", n, rho)
	}
	// 10 requests/s need 1.72 GB/s of a 104 MB/s link: ρ = 16.5, no steady state.
	n, rho = InFlightOpen(gbe, 172_032_000, 10)
	if !math.IsInf(n, 1) || math.Abs(rho-16.54154) > 1e-4 {
		t.Errorf("saturated: N %v ρ %.5f; want +Inf, 16.54154", n, rho)
	}
}
