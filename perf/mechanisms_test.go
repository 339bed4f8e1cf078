package perf

import (
	"math"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

// Round 2's mechanisms (issue 22), each worked out by hand on the unit GPU.

// TestCustomAllReduceBySize: an all-reduce of at most 8 MiB on NVLink takes
// the custom all-reduce's latency, a larger one NCCL's; on PCIe every size
// is NCCL's.
func TestCustomAllReduceBySize(t *testing.T) {
	eff := ideal()
	eff.AllReduceUS, eff.CustomAllReduceUS = 30, 8
	nv := unitGPU()
	nv.Interconnect = "nvlink4"
	pcie := unitGPU()
	pcie.Interconnect = "pcie4"
	// Llama-3.1-8B at tp 2: 64 all-reduces a step, each rank moving
	// 2 × (1/2) × 4,096 × 2 B = 8,192 B a token over 100 GB/s (8.192e-5 ms).
	// 8 MiB / (4,096 × 2 B) = 1,024 tokens is the largest custom one.
	bw := func(tokens float64) float64 { return 64 * tokens * 8192 / 1e11 * 1000 }
	for _, tc := range []struct {
		gpu    *catalog.GPU
		tokens int
		want   float64 // ms
	}{
		{nv, 1, 64*0.008 + bw(1)},
		{nv, 1024, 64*0.008 + bw(1024)},
		{nv, 1025, 64*0.030 + bw(1025)},
		{pcie, 1, 64*0.030 + bw(1)},
	} {
		m := newModel(t, Spec{Model: llama8b(), GPU: tc.gpu, Engine: "vllm", TP: 2, Efficiency: eff})
		got := m.Step([]int{tc.tokens}, nil, nil).AllReduceMS
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s, %d tokens: all-reduce %.6f ms, want %.6f", tc.gpu.Interconnect, tc.tokens, got, tc.want)
		}
	}
	// Without custom_allreduce_us (the shipped entries) every size is NCCL's.
	off := ideal()
	off.AllReduceUS = 30
	m := newModel(t, Spec{Model: llama8b(), GPU: nv, Engine: "vllm", TP: 2, Efficiency: off})
	if got, want := m.Step([]int{1}, nil, nil).AllReduceMS, 64*0.030+bw(1); math.Abs(got-want) > 1e-9 {
		t.Errorf("no custom all-reduce: %.6f ms, want %.6f", got, want)
	}
}

// TestEagerOverlap: outside CUDA graphs, launches of 32 × 50 µs = 1.6 ms
// overlap the GPU's work; the step is step_ms + smax(1.6, GPU) instead of
// step_ms + 1.6 + GPU. Under CUDA graphs nothing changes.
func TestEagerOverlap(t *testing.T) {
	eff := ideal()
	eff.StepMS, eff.LayerUS, eff.EagerLayerUS = 2, 5, 50
	over := *eff
	over.EagerOverlap = true
	m0 := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "trtllm", TP: 1, Efficiency: eff})
	m1 := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "trtllm", TP: 1, Efficiency: &over})
	// A 1,000-token prefill (TensorRT-LLM: no graphs with prefill): GPU time
	// from TestStepByHand, 13.959176 × ∛2 + 1.050673 + 0.262406 + 0.131072 ms.
	gpu := 13.959176*math.Cbrt(2) + 1.050673 + 0.262406 + 0.131072
	a, b := m0.Step([]int{1000}, nil, nil), m1.Step([]int{1000}, nil, nil)
	if !near(a.TotalMS, 2+1.6+gpu, 1e-6) {
		t.Errorf("no overlap: %.6f ms, want %.6f", a.TotalMS, 2+1.6+gpu)
	}
	r := 1.6 / gpu
	if want := 2 + gpu*math.Cbrt(1+r*r*r); !near(b.TotalMS, want, 1e-6) {
		t.Errorf("overlap: %.6f ms, want %.6f", b.TotalMS, want)
	}
	if b.FixedMS < 2 || b.FixedMS > 2.01 {
		t.Errorf("overlap: fixed %.6f ms, want step_ms and the ~0.1%% of launches a 19 ms step does not hide", b.FixedMS)
	}
	// A decode step runs under CUDA graphs: 2 ms + 32 × 5 µs, overlap or not.
	if a, b := m0.Step(nil, nil, []int{1000}), m1.Step(nil, nil, []int{1000}); a.TotalMS != b.TotalMS || !near(a.FixedMS, 2.16, 1e-9) {
		t.Errorf("graphed decode: %.6f and %.6f ms (fixed %.6f), want equal with 2.16 ms fixed", a.TotalMS, b.TotalMS, a.FixedMS)
	}
}

// TestMoEMemoryApartFromCompute: moe_memory scales the experts' weight
// streaming only, moe their compute only.
func TestMoEMemoryApartFromCompute(t *testing.T) {
	moe := llama8b()
	moe.Name, moe.ParamsTotal, moe.ParamsActive = "moe", 40_000_000_000, 10_000_000_000
	moe.MoE = &catalog.MoE{Experts: 8, ExpertsPerToken: 2}
	eff := ideal()
	eff.MoE, eff.MoEMemory = 0.5, 0.25
	m := newModel(t, Spec{Model: moe, GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: eff})
	ref := newModel(t, Spec{Model: moe, GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: ideal()})
	// One decode touches 2 experts: memory-bound, its streaming 4× the ideal one.
	d, d0 := m.Step(nil, nil, []int{100}), ref.Step(nil, nil, []int{100})
	if !near(d.ExpertsMS, 4*d0.ExpertsMS, 1e-3) {
		t.Errorf("decode experts %.6f ms, want 4 × %.6f (streaming at 0.25)", d.ExpertsMS, d0.ExpertsMS)
	}
	// A 100,000-token prefill is compute-bound: 2× the ideal one.
	p, p0 := m.Step([]int{100000}, nil, nil), ref.Step([]int{100000}, nil, nil)
	if !near(p.ExpertsMS, 2*p0.ExpertsMS, 1e-3) {
		t.Errorf("prefill experts %.6f ms, want 2 × %.6f (compute at 0.5)", p.ExpertsMS, p0.ExpertsMS)
	}
}

// TestActivationTraffic: the activation kernels' bytes, counted by hand.
//
// Llama-3.1-8B (hidden 4,096, 32 layers, intermediate 14,336): two
// residual-add + RMSNorms a layer move 8 × 4,096 = 32,768 elements, the
// SiLU-and-mul 3 × 14,336 = 43,008, so (32,768 + 43,008) × 32 × 2 B =
// 4,849,664 B a token at tp 1. At tp 2 the intermediate halves and the norms
// do not: (32,768 + 21,504) × 32 × 2 B = 3,473,408 B. (The code derives the
// intermediate from the parameter count, whose 266,240 norm weights add 130 B
// to tp 1's figure.) A 1,000-token prefill at 1 TB/s: 4.849664 ms.
//
// A small MoE (tied embeddings of 1,000 × 1,000; 10 layers of attention
// 2 × 1,000 × (8 + 2) × 100 = 2 M, a shared MLP of 3 × 1,000 × 500 = 1.5 M
// and 10 experts of 3 × 1,000 × 200 = 0.6 M, 2 a token): norms 8 × 1,000 ×
// 10 = 80,000 elements, shared MLP 15 M / 1,000 = 15,000, routed 2 × 0.6 M
// × 10 / 1,000 = 12,000, combine 2 × 2 × 1,000 × 10 = 40,000: 147,000
// elements, 294,000 B; at tp 2, 80,000 + 7,500 + 6,000 + 40,000 = 133,500
// elements, 267,000 B.
//
// With a 10 MiB L2 (10,485,760 B), a 1,000-token Llama-3.1-8B prefill's
// norm kernel holds 32,768,000 B of activations and its SiLU-and-mul
// 86,016,000 B; only what the L2 does not hold reaches memory:
// 64 × (32,768,000 − 10,485,760) + 32 × (86,016,000 − 10,485,760) =
// 1,426,063,360 + 2,416,967,680 = 3,843,031,040 B, 3.843031 ms at 1 TB/s.
// A 100-token step's kernels (3.3 MB and 8.6 MB) fit: 0 ms.
func TestActivationTraffic(t *testing.T) {
	moe := &catalog.Model{Name: "moe", ParamsTotal: 96_000_000, ParamsActive: 48_000_000, TiedEmbeddings: true,
		WeightDtype: "bf16", VocabSize: 1000, HiddenSize: 1000, AttentionHeads: 8, KVHeads: 2, HeadDim: 100, Layers: 10,
		KVDtype: "bf16", MoE: &catalog.MoE{Experts: 10, ExpertsPerToken: 2}, Source: "test"}
	for _, c := range []struct {
		name string
		m    *catalog.Model
		tp   int
		want float64
	}{
		{"llama-3.1-8b tp 1", llama8b(), 1, 4_849_664},
		{"llama-3.1-8b tp 2", llama8b(), 2, 3_473_408},
		{"moe tp 1", moe, 1, 294_000},
		{"moe tp 2", moe, 2, 267_000},
	} {
		if got := ActivationBytesPerToken(c.m, c.tp); !near(got, c.want, 1e-4) {
			t.Errorf("%s: %.0f B a token, want %.0f", c.name, got, c.want)
		}
	}
	on := *ideal()
	on.ActivationTraffic = true
	m0 := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: ideal()})
	m1 := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: &on})
	a, b := m0.Step([]int{1000}, nil, nil), m1.Step([]int{1000}, nil, nil)
	if a.ActivationMS != 0 {
		t.Errorf("off: activation %.6f ms, want 0", a.ActivationMS)
	}
	if !near(b.ActivationMS, 4.849664, 1e-4) || !near(b.TotalMS-a.TotalMS, b.ActivationMS, 1e-9) {
		t.Errorf("on: activation %.6f ms (step %.6f against %.6f), want 4.849664 ms added", b.ActivationMS, b.TotalMS, a.TotalMS)
	}
	l2 := unitGPU()
	l2.L2CacheBytes = 10 << 20
	mc := newModel(t, Spec{Model: llama8b(), GPU: l2, Engine: "vllm", TP: 1, Efficiency: &on})
	if got := mc.Step([]int{1000}, nil, nil).ActivationMS; !near(got, 3.843031, 1e-4) {
		t.Errorf("10 MiB L2: activation %.6f ms, want 3.843031", got)
	}
	if got := mc.Step([]int{100}, nil, nil).ActivationMS; got != 0 {
		t.Errorf("10 MiB L2, 100 tokens: activation %.6f ms, want 0 (every kernel's activations fit)", got)
	}
	// Through the parallel path (dp 2 of tp 1: each rank runs half the
	// prefill chunks, so one chunk of two), the same bytes a rank's token.
	p := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: &on,
		Parallel: models.Parallelism{TP: 1, DP: 2}})
	if got := p.Step([]int{1000, 1000}, nil, nil).ActivationMS; !near(got, 4.849664, 1e-4) {
		t.Errorf("dp 2: activation %.6f ms, want 4.849664 (one 1,000-token chunk a rank)", got)
	}
}
