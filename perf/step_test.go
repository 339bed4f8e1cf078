package perf

import (
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

// llama8b is Llama-3.1-8B as catalog/data/models.toml has it (config.json):
// matmul params 8,030,261,248 − 2 × 128,256 × 4,096 = 6,979,588,096.
func llama8b() *catalog.Model {
	return &catalog.Model{Name: "llama-3.1-8b", ParamsTotal: 8_030_261_248, WeightDtype: "bf16", VocabSize: 128256,
		HiddenSize: 4096, AttentionHeads: 32, MaxContext: 131072, Layers: 32, KVHeads: 8, HeadDim: 128, KVDtype: "bf16",
		Layout: []catalog.LayerGroup{{Kind: catalog.LayerFull, Count: 32}}, Source: "test"}
}

// unitGPU has round figures: 1,000 TFLOP/s bf16, 2,000 fp8, 1 TB/s, 100 GB/s links.
func unitGPU() *catalog.GPU {
	return &catalog.GPU{Name: "unit", BF16TFLOPS: 1000, FP8TFLOPS: 2000, MemoryBandwidthBytes: 1e12,
		InterconnectBandwidthBytes: 100e9, MemoryBytes: 80e9, Source: "test"}
}

// ideal: every efficiency 1, no fixed cost.
func ideal() *catalog.Efficiency {
	return &catalog.Efficiency{GEMM: 1, Memory: 1, Attention: 1, MoE: 1, Interconnect: 1, Source: "test"}
}

func newModel(t *testing.T, spec Spec) *Model {
	t.Helper()
	m, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

func TestStepByHand(t *testing.T) {
	cbrt2 := math.Cbrt(2)
	cases := []struct {
		name                 string
		tp                   int
		prefill, ctx, decode []int
		eff                  *catalog.Efficiency
		want                 float64 // ms, worked out below
	}{
		{
			// One decoding sequence at 1,000 tokens of context:
			// dense: compute 2 × 6,979,588,096 / 1e15 s = 0.01396 ms, weights 13,959,176,192 B / 1e12 = 13.959 ms;
			//        smax = 13.959 × ∛(1 + (0.01396/13.959)³) = 13.959176 ms
			// lm head: compute 2 × 525,336,576 / 1e15 = 0.00105 ms, weights 1,050,673,152 B / 1e12 = 1.050673 ms
			// kv read: 1,000 × 131,072 B / 1e12 = 0.131072 ms; attention 4 × 32 × 128 × 1,000 × 32 layers = 0.524 GFLOP = 0.000524 ms
			name: "decode", tp: 1, decode: []int{1000}, eff: ideal(),
			want: 13.959176 + 1.050673 + 0.131072,
		},
		{
			// A 1,000-token prefill: dense compute 2 × 6,979,588,096 × 1,000 / 1e15 = 13.959176 ms, equal to its
			// weights' 13.959176 ms, so smax = 13.959176 × ∛2; lm head for its last token 1.050673 ms;
			// attention 4 × 32 × 128 × 500,500 pairs × 32 layers / 1e15 = 0.262406 ms; its KV written and read
			// 1,000 × 131,072 B = 0.131072 ms.
			name: "prefill", tp: 1, prefill: []int{1000}, eff: ideal(),
			want: 13.959176*cbrt2 + 1.050673 + 0.262406 + 0.131072,
		},
		{
			// The decode step at tp 2: weights and KV heads split in two; two all-reduces per layer of
			// 2 × (1/2) × 4,096 × 2 B = 8,192 B per token over 100 GB/s plus 10 µs each:
			// 64 × (0.010 + 8,192 / 1e11 s) = 64 × 0.01008192 ms = 0.645243 ms.
			name: "decode tp2", tp: 2, decode: []int{1000},
			eff:  &catalog.Efficiency{GEMM: 1, Memory: 1, Attention: 1, MoE: 1, Interconnect: 1, AllReduceUS: 10, Source: "test"},
			want: 13.959176/2 + 1.050673/2 + 0.131072/2 + 0.645243,
		},
		{
			// Fixed costs: 2 ms a step + 32 layers × 5 µs under CUDA graphs (a decode step of one sequence),
			// at half the bandwidth: every memory time doubles.
			name: "fixed and efficiency", tp: 1, decode: []int{1000},
			eff:  &catalog.Efficiency{GEMM: 1, Memory: 0.5, Attention: 1, MoE: 1, Interconnect: 1, StepMS: 2, LayerUS: 5, EagerLayerUS: 50, Source: "test"},
			want: 2 + 0.16 + 2*(13.959176+1.050673+0.131072),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: tc.tp, Efficiency: tc.eff})
			got := m.StepMS(tc.prefill, tc.ctx, tc.decode)
			if !near(got, tc.want, 1e-4) {
				t.Errorf("StepMS = %.6f ms, want %.6f (terms %+v)", got, tc.want, m.Step(tc.prefill, tc.ctx, tc.decode))
			}
		})
	}
}

func TestCausalPairs(t *testing.T) {
	for _, tc := range []struct {
		p, c, w int
		want    float64
	}{
		{4, 0, 0, 10},            // 1+2+3+4
		{2, 3, 0, 9},             // 4+5
		{4, 0, 2, 1 + 2 + 2 + 2}, // window 2
		{3, 5, 4, 12},            // every query sees 4
		{3, 2, 4, 3 + 4 + 4},     // positions 3, 4, 5 → 3, 4, 4
	} {
		if got := causalPairs(float64(tc.p), float64(tc.c), tc.w); got != tc.want {
			t.Errorf("causalPairs(%d, %d, %d) = %g, want %g", tc.p, tc.c, tc.w, got, tc.want)
		}
	}
}

// Distinct experts touched: E × (1 − (1 − k/E)^T). With E = 8, k = 2:
// one token touches 2; two tokens 8 × (1 − 0.75²) = 3.5.
func TestExpertsTouched(t *testing.T) {
	moe := llama8b()
	moe.Name, moe.ParamsTotal, moe.ParamsActive = "moe", 40_000_000_000, 10_000_000_000
	moe.MoE = &catalog.MoE{Experts: 8, ExpertsPerToken: 2}
	m := newModel(t, Spec{Model: moe, GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: ideal()})
	for _, tc := range []struct {
		decodes int
		want    float64
	}{{1, 2}, {2, 3.5}, {64, 8}} {
		got := m.Step(nil, nil, make([]int, tc.decodes)).Experts
		if !near(got, tc.want, 1e-6) {
			t.Errorf("%d tokens touch %g experts, want %g", tc.decodes, got, tc.want)
		}
	}
}

func TestStepAllocationFree(t *testing.T) {
	m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 2, Efficiency: ideal()})
	pre, ctx, dec := []int{512, 300}, []int{0, 1024}, make([]int, 128)
	for i := range dec {
		dec[i] = 1000 + i
	}
	if n := testing.AllocsPerRun(100, func() { m.StepMS(pre, ctx, dec) }); n != 0 {
		t.Errorf("StepMS allocates %g times per call, want 0", n)
	}
}

// One Model serves many goroutines (run with -race).
func TestStepConcurrent(t *testing.T) {
	m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "sglang", TP: 1, Efficiency: ideal()})
	want := m.StepMS([]int{100}, nil, []int{10, 20})
	var wg sync.WaitGroup
	errs := make(chan float64, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				if got := m.StepMS([]int{100}, nil, []int{10, 20}); got != want {
					errs <- got
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for got := range errs {
		t.Errorf("concurrent StepMS = %g, want %g", got, want)
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		want string
	}{
		{"tp does not divide heads", Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 3, Efficiency: ideal()}, "does not divide the 32 attention heads"},
		{"unknown engine", Spec{Model: llama8b(), GPU: unitGPU(), Engine: "ollama", TP: 1, Efficiency: ideal()}, `engine "ollama" is not one`},
		{"unknown dtype", Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1, WeightDtype: "fp3", Efficiency: ideal()}, `weight dtype "fp3"`},
		{"no efficiencies", Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1}, "no efficiencies given"},
	} {
		if _, err := New(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

// fp4 weights on a GPU without an fp4 path (the unit GPU: 1,000 TFLOP/s
// bf16, 2,000 fp8, no fp4) are weight-only, as vLLM runs them there (Marlin
// W4A16; gpt-oss's mxfp4 experts on Hopper): bf16 maths at 1,000 TFLOP/s,
// not the fp8 peak, and the note says so.
func TestDtypeFallbackIsSaid(t *testing.T) {
	for _, dt := range []string{"nvfp4", "mxfp4"} {
		m := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1, WeightDtype: dt, Efficiency: ideal()})
		if m.peakTFLOPS != 1000 || m.peakDtype != "bf16" || len(m.Notes) == 0 || !strings.Contains(m.Notes[0], "weight-only") {
			t.Errorf("%s: peak %g TFLOP/s (%s), notes %q; want 1000 (bf16) and a note that it is weight-only", dt, m.peakTFLOPS, m.peakDtype, m.Notes)
		}
	}
}

// The host's per-sequence cost (seq_us) adds seq_us × sequences to an
// iteration's fixed term and nothing else: 4 decoding sequences and one
// prefill chunk at 10 µs each are 5 × 0.010 = 0.050 ms.
func TestSeqUSPerSequence(t *testing.T) {
	base := ideal()
	with := ideal()
	with.SeqUS = 10
	m0 := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: base})
	m1 := newModel(t, Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: with})
	a := m0.Step([]int{100}, nil, []int{500, 600, 700, 800})
	b := m1.Step([]int{100}, nil, []int{500, 600, 700, 800})
	if d := b.FixedMS - a.FixedMS; math.Abs(d-0.050) > 1e-12 {
		t.Errorf("fixed term grew by %.6f ms, want 0.050", d)
	}
	if d := b.TotalMS - a.TotalMS; math.Abs(d-0.050) > 1e-12 {
		t.Errorf("step grew by %.6f ms, want 0.050", d)
	}
}
