package perf

import (
	"math"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

// dsv3 is DeepSeek-V3 as catalog/data/models.toml has it.
func dsv3() *catalog.Model {
	return &catalog.Model{Name: "deepseek-v3", ParamsTotal: 671_026_419_200, ParamsActive: 36_625_618_432, WeightDtype: "fp8",
		VocabSize: 129280, HiddenSize: 7168, AttentionHeads: 128, MaxContext: 163840, Layers: 61, KVHeads: 128, HeadDim: 192,
		KVDtype: "bf16", MTPLayers: 1, MoE: &catalog.MoE{Experts: 256, ExpertsPerToken: 8},
		MLA: &catalog.MLA{KVLoraRank: 512, QKRopeHeadDim: 64}, Source: "test"}
}

func h200ish() *catalog.GPU {
	return &catalog.GPU{Name: "h200ish", BF16TFLOPS: 989, FP8TFLOPS: 1979, MemoryBandwidthBytes: 4.8e12,
		InterconnectBandwidthBytes: 450e9, NVLinkDomainGPUs: 8, MemoryBytes: 141e9, Source: "test"}
}

var testParEff = ParallelEfficiency{AllToAll: 0.75, AllToAllUS: 20, AllToAllNormalUS: 60, Imbalance: 0.3, EPLBImbalance: 0.05, P2PUS: 20, Source: "test"}

// A layout that is tensor parallelism alone, taken through the parallel
// terms (a link given forces them), prices every step as the plain model.
func TestParallelPlainAgrees(t *testing.T) {
	for _, m := range []*catalog.Model{llama8b(), dsv3()} {
		plain := newModel(t, Spec{Model: m, GPU: h200ish(), Engine: "vllm", TP: 8, Efficiency: ideal()})
		par := newModel(t, Spec{Model: m, GPU: h200ish(), Engine: "vllm", TP: 8, Efficiency: ideal(),
			Link: &catalog.Link{Name: "l", EffectiveBytesPerS: 40e9, RatePer: catalog.RatePerGPU}, ParallelEfficiency: &testParEff})
		if par.par == nil {
			t.Fatal("the parallel terms were not built")
		}
		for _, st := range []struct{ p, c, d []int }{{[]int{2048}, nil, nil}, {nil, nil, []int{1000, 2000, 3000}}, {[]int{512}, []int{1024}, []int{100, 200}}} {
			a, b := plain.StepMS(st.p, st.c, st.d), par.StepMS(st.p, st.c, st.d)
			if !near(b, a, 1e-9) {
				t.Errorf("%s %v: parallel %.6f ms, plain %.6f ms", m.Name, st, b, a)
			}
		}
	}
}

// Data parallelism on a dense model: D replicas behind one endpoint. A
// worker's step of D × S decoding sequences is one replica's step of S.
func TestParallelDPDense(t *testing.T) {
	one := newModel(t, Spec{Model: llama8b(), GPU: h200ish(), Engine: "vllm", TP: 1, Efficiency: ideal()})
	dp4 := newModel(t, Spec{Model: llama8b(), GPU: h200ish(), Engine: "vllm", TP: 1, Efficiency: ideal(),
		Parallel: models.Parallelism{DP: 4}, ParallelEfficiency: &testParEff})
	ctx := make([]int, 64)
	for i := range ctx {
		ctx[i] = 1500
	}
	if a, b := one.StepMS(nil, nil, ctx[:16]), dp4.StepMS(nil, nil, ctx); !near(b, a, 1e-9) {
		t.Errorf("dp 4, 64 sequences: %.6f ms; one replica of 16: %.6f ms", b, a)
	}
	// 65 sequences: the slowest rank holds ⌈65/4⌉ = 17.
	if a, b := one.StepMS(nil, nil, ctx[:17]), dp4.StepMS(nil, nil, append(ctx, 1500)); !near(b, a, 1e-9) {
		t.Errorf("dp 4, 65 sequences: %.6f ms; one replica of 17: %.6f ms", b, a)
	}
}

// The all-to-all and the imbalance of DeepSeek-V3 at tp 1, dp 8, ep 8, a
// decode step of 1,024 sequences, by hand:
//
//	imbalance: μ = 1,024 × 8 / 8 = 1,024 picks per rank; one token's picks on
//	  one rank have variance 8 × (1/8)(7/8)(248/255) = 0.850980; σ = √(1,024 ×
//	  0.850980) = 29.5198; √(2 ln 8) = 2.039334; skew 0.3:
//	  1.3 × (1 + 2.039334 × 29.5198 / 1,024) = 1.376428
//	bytes per token a GPU sends: 7,168 × 8 × (1 + 4/128 fp8 dispatch + 2 bf16
//	  combine) × 7/8 = 152,096 B
//	bandwidth: inside one NVLink domain, 450 GB/s × 0.75 = 337.5 GB/s
//	all-to-all: 2 × 61 × (0.020 ms + 128 tokens × 152,096 × 1.376428 / 2 /
//	  337.5e6 B/ms) = 122 × (0.020 + 0.0396988) = 7.283250 ms
func TestParallelAllToAllByHand(t *testing.T) {
	m := newModel(t, Spec{Model: dsv3(), GPU: h200ish(), Engine: "trtllm", TP: 1, WeightDtype: "fp8", Efficiency: ideal(),
		Parallel: models.Parallelism{DP: 8, EP: 8}, ParallelEfficiency: &testParEff})
	ctx := make([]int, 1024)
	for i := range ctx {
		ctx[i] = 2000
	}
	tm := m.Step(nil, nil, ctx)
	if !near(tm.Imbalance, 1.376428, 1e-5) {
		t.Errorf("imbalance %.6f, want 1.376428", tm.Imbalance)
	}
	if !near(tm.AllToAllMS, 7.283250, 1e-5) {
		t.Errorf("all-to-all %.6f ms, want 7.283250", tm.AllToAllMS)
	}
	if d := m.Parallel(); d.AllToAllBytes != 152096 || d.ExpertsPerRank != 32 || d.MoETP != 1 || d.OverDomain {
		t.Errorf("desc %+v", d)
	}
	// The routed experts' compute is 2 × active routed params × 1,024 tokens ×
	// imbalance / 8 GPUs at fp8 (1,979 TFLOP/s, ideal): active routed params =
	// 653,908,770,816 × 8/256 = 20,434,649,088.
	wantCompute := 2 * 20_434_649_088.0 * 1024 * 1.376428 / 8 / 1979e12 * 1000
	// weights: one expert is 653,908,770,816 / 256 = 2,554,331,136 B at 1 B a
	// weight; the rank's 32 experts, each touched with probability
	// 1 − (1 − 8/256)^1024 (≈ 1): 81.74 GB / 4.8 TB/s = 17.029 ms.
	wantMem := 32 * 2_554_331_136.0 / 4.8e12 * 1000 * -math.Expm1(1024*math.Log1p(-8.0/256))
	if want := smax(wantCompute, wantMem); !near(tm.ExpertsMS, want, 1e-6) {
		t.Errorf("experts %.6f ms, want smax(%.4f, %.4f) = %.6f", tm.ExpertsMS, wantCompute, wantMem, want)
	}
	// EPLB lowers the skew to 0.05: the same step, imbalance 1.05 × 1.058791.
	eplb := newModel(t, Spec{Model: dsv3(), GPU: h200ish(), Engine: "trtllm", TP: 1, WeightDtype: "fp8", Efficiency: ideal(),
		Parallel: models.Parallelism{DP: 8, EP: 8}, ParallelEfficiency: &testParEff, EPLB: true})
	if got := eplb.Step(nil, nil, ctx).Imbalance; !near(got, 1.05*1.058791, 1e-5) {
		t.Errorf("EPLB imbalance %.6f, want %.6f", got, 1.05*1.058791)
	}
}

// The normal kernels (steps with prefill) send a token once to each other
// rank one of its experts is on, not once per expert. DeepSeek-V3 at tp 1,
// dp 8, ep 8, a prefill of 8 chunks of 1,024 tokens (one per rank), by hand:
//
//	a token misses a given other rank (32 of the 256 experts) with
//	  probability 224/256 × 223/255 × 222/254 × 221/253 × 220/252 × 219/251
//	  × 218/250 × 217/249 = 0.338168; it hits 7 × (1 − 0.338168) = 4.632821
//	  of the 7 other ranks (the low-latency kernels' 8 × 7/8 = 7 copies)
//	bytes per token: 7,168 × (1 + 4/128 + 2) × 4.632821 = 100,661.92 B
//	imbalance over the 8,192 tokens the MoE layer sees: σ = √(8,192 ×
//	  0.850980) = 83.49390; 1.3 × (1 + 2.039334 × 83.49390 / 8,192) = 1.327021
//	all-to-all: 2 × 61 × (0.060 ms + 1,024 × 100,661.92 × 1.327021 / 2 /
//	  337.5e6 B/ms) = 32.042873 ms
func TestParallelAllToAllNormalByHand(t *testing.T) {
	m := newModel(t, Spec{Model: dsv3(), GPU: h200ish(), Engine: "trtllm", TP: 1, WeightDtype: "fp8", Efficiency: ideal(),
		Parallel: models.Parallelism{DP: 8, EP: 8}, ParallelEfficiency: &testParEff})
	chunks := []int{1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024}
	tm := m.Step(chunks, nil, nil)
	if !near(tm.Imbalance, 1.327021, 1e-5) {
		t.Errorf("imbalance %.6f, want 1.327021", tm.Imbalance)
	}
	if !near(tm.AllToAllMS, 32.042873, 1e-5) {
		t.Errorf("all-to-all %.6f ms, want 32.042873", tm.AllToAllMS)
	}
	if d := m.Parallel(); !near(d.AllToAllNormal, 100661.92, 1e-6) || d.AllToAllBytes != 152096 {
		t.Errorf("normal kernels %.2f B/token (want 100661.92), low-latency %.0f (want 152096)", d.AllToAllNormal, d.AllToAllBytes)
	}
}

// MTP: a decode-only step verifies N + 1 tokens per sequence and yields the
// acceptance length; step_ms is the whole step over it.
func TestParallelMTP(t *testing.T) {
	m := newModel(t, Spec{Model: dsv3(), GPU: h200ish(), Engine: "sglang", TP: 8, WeightDtype: "fp8", Efficiency: ideal(),
		Parallel: models.Parallelism{SpeculativeTokens: 2, AcceptanceLength: 2.5}, ParallelEfficiency: &testParEff})
	plain := newModel(t, Spec{Model: dsv3(), GPU: h200ish(), Engine: "sglang", TP: 8, WeightDtype: "fp8", Efficiency: ideal()})
	ctx := []int{1000, 1000, 1000, 1000}
	tm := m.Step(nil, nil, ctx)
	if tm.TokensPerStep != 2.5 || !near(tm.TotalMS, tm.IterationMS/2.5, 1e-12) || tm.DraftMS <= 0 {
		t.Errorf("MTP terms %+v", tm)
	}
	// Verification runs 3 tokens per sequence: the step's GEMM tokens are
	// those of 12 plain decodes; the KV read is the same 4 contexts.
	p12 := plain.Step(nil, nil, []int{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000})
	if !near(tm.DenseMS, p12.DenseMS, 1e-9) || !near(tm.AllReduceMS, p12.AllReduceMS, 1e-9) {
		t.Errorf("verify: dense %.4f vs %.4f, all-reduce %.4f vs %.4f", tm.DenseMS, p12.DenseMS, tm.AllReduceMS, p12.AllReduceMS)
	}
	if pre := m.Step([]int{512}, nil, nil); pre.TokensPerStep != 1 || pre.DraftMS != 0 {
		t.Errorf("prefill step under MTP: %+v", pre)
	}
}

// MTP's verification at DeepSeek's decode set-up (128 sequences per GPU,
// 4,989 tokens of context, attention data-parallel: all 128 heads on each
// GPU), by hand. Absorbed MLA decode attention per query token per context
// token per layer: 128 heads × 2 × (512 + 64 scores + 512 values) = 278,528
// FLOPs; per step 128 × 4,989 × 61 × 278,528 = 10.8498 TFLOP, 10.9705 ms at
// 989 TFLOP/s. The latents read, bf16: 128 × 4,989 × 61 × 576 × 2 =
// 44.875 GB, 9.3490 ms at 4.8 TB/s. One token: smax(10.9705, 9.3490) =
// 12.8815 ms; MTP verifying 2 tokens a sequence doubles the FLOPs per query
// token and reads the latents once: smax(21.9410, 9.3490) = 22.4928 ms.
// (At FlashMLA's published H800 figures, 580–660 TFLOP/s and 3,000 GB/s,
// the same step is 16.4–18.7 ms of compute against 15.0 ms of reads: the
// attention is compute-bound already at one token, so verification costs
// about twice; physics, not a constant.)
func TestParallelMTPAttentionByHand(t *testing.T) {
	ctx := make([]int, 1024)
	for i := range ctx {
		ctx[i] = 4989
	}
	for _, c := range []struct {
		spec int
		want float64
	}{{0, 12.881467}, {1, 22.492776}} {
		lay := models.Parallelism{DP: 8, EP: 8}
		if c.spec > 0 {
			lay.SpeculativeTokens, lay.AcceptanceLength = c.spec, 1.8
		}
		m := newModel(t, Spec{Model: dsv3(), GPU: h200ish(), Engine: "sglang", TP: 1, WeightDtype: "fp8", KVDtype: "bf16", Efficiency: ideal(),
			Parallel: lay, ParallelEfficiency: &testParEff})
		if got := m.Step(nil, nil, ctx).KVReadMS; !near(got, c.want, 1e-6) {
			t.Errorf("speculative %d: KV read and decode attention %.6f ms, want %.6f", c.spec, got, c.want)
		}
	}
}

// Pipeline: one prefill (one micro-batch) crosses the stages one after the
// other: pp × stage + lm head + (pp − 1) × send; a full pipeline of pp
// micro-batches takes m × (stage + lm head) when that is longer.
func TestParallelPipeline(t *testing.T) {
	link := &catalog.Link{Name: "l", EffectiveBytesPerS: 40e9, RatePer: catalog.RatePerGPU}
	one := newModel(t, Spec{Model: llama8b(), GPU: h200ish(), Engine: "vllm", TP: 1, Efficiency: ideal()})
	pp2 := newModel(t, Spec{Model: llama8b(), GPU: h200ish(), Engine: "vllm", TP: 1, Efficiency: ideal(),
		Parallel: models.Parallelism{PP: 2}, Link: link, ParallelEfficiency: &testParEff})
	full := one.Step([]int{2048}, nil, nil)
	got := pp2.Step([]int{2048}, nil, nil)
	// p2p: 20 µs + 2,048 × 4,096 × 2 B / 450 GB/s (the 2 GPUs are inside one domain) = 0.020 + 0.037283 ms
	p2p := 0.020 + 2048*4096*2/450e9*1000
	if want := full.TotalMS + p2p; !near(got.TotalMS, want, 1e-9) || got.MicroBatches != 1 {
		t.Errorf("pp 2, one prefill: %.6f ms (micro-batches %d), want %.6f", got.TotalMS, got.MicroBatches, want)
	}
	// The terms report the last stage's work (half the layers, and the lm
	// head); the rest of the cycle, the first stage's half and the send, is
	// the pipeline term: (full − lm head) / 2 + p2p (no fixed costs here).
	if want := (full.TotalMS-full.LMHeadMS)/2 + p2p; !near(got.PipelineMS, want, 1e-9) {
		t.Errorf("pipeline term %.6f ms, want %.6f", got.PipelineMS, want)
	}
}

func TestCheckLayout(t *testing.T) {
	g := h200ish()
	for _, c := range []struct {
		m         *catalog.Model
		p         models.Parallelism
		redundant int
		link      *catalog.Link
		want      string
	}{
		{dsv3(), models.Parallelism{TP: 1, DP: 16, EP: 16}, 0, nil, "spans 2 nodes of 8 h200ish GPUs"},
		{dsv3(), models.Parallelism{TP: 1, DP: 16, EP: 16}, 0, &catalog.Link{Name: "nv", Scope: catalog.ScopeNVLink, EffectiveBytesPerS: 1}, "joins GPUs inside one NVLink domain only"},
		{dsv3(), models.Parallelism{TP: 1, DP: 6, EP: 6}, 1, nil, "2 redundant experts would make it 258"},
		{llama8b(), models.Parallelism{TP: 1, SpeculativeTokens: 1, AcceptanceLength: 1.5}, 0, nil, "needs the model's MTP heads"},
		{llama8b(), models.Parallelism{TP: 1}, 2, nil, "need a mixture-of-experts model"},
	} {
		err := CheckLayout(c.m, g, c.p, c.redundant, c.link)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.m.Name, c.p, err, c.want)
		}
	}
	if err := CheckLayout(dsv3(), g, models.Parallelism{TP: 1, DP: 6, EP: 6}, 2, nil); err != nil {
		t.Errorf("256 + 2 experts over ep 6: %v", err)
	}
}

// Two-batch overlap: the all-to-all hides under the rest of the step; the
// step is the longer of the two instead of their sum.
func TestParallelTwoBatchOverlap(t *testing.T) {
	spec := Spec{Model: dsv3(), GPU: h200ish(), Engine: "sglang", TP: 1, WeightDtype: "fp8", Efficiency: ideal(),
		Parallel: models.Parallelism{DP: 8, EP: 8}, ParallelEfficiency: &testParEff}
	plain := newModel(t, spec)
	spec.TwoBatchOverlap = true
	tbo := newModel(t, spec)
	ctx := make([]int, 256)
	for i := range ctx {
		ctx[i] = 3000
	}
	a, b := plain.Step(nil, nil, ctx), tbo.Step(nil, nil, ctx)
	work := a.DenseMS + a.ExpertsMS + a.AttentionMS + a.KVReadMS + a.AllReduceMS
	if want := math.Max(0, a.AllToAllMS-work); !near(b.AllToAllMS, want, 1e-9) && !(want == 0 && b.AllToAllMS == 0) {
		t.Errorf("all-to-all under overlap %.6f ms, want max(0, %.4f − %.4f) = %.6f", b.AllToAllMS, a.AllToAllMS, work, want)
	}
	if want := a.TotalMS - a.AllToAllMS + b.AllToAllMS; !near(b.TotalMS, want, 1e-9) {
		t.Errorf("step %.6f ms, want %.6f", b.TotalMS, want)
	}
	if !(b.TotalMS < a.TotalMS) {
		t.Errorf("overlap did not shorten the step: %.4f vs %.4f", b.TotalMS, a.TotalMS)
	}
}
