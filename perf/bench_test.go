package perf

import "testing"

// BenchmarkStepMS prices the iteration the simulator calls most: 256
// decoding sequences and one prefill chunk, Llama-3.1-8B at tp 2.
func BenchmarkStepMS(b *testing.B) {
	m, err := New(Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 2, Efficiency: realistic(0)})
	if err != nil {
		b.Fatal(err)
	}
	dec := make([]int, 256)
	for i := range dec {
		dec[i] = 1024 + 4*i
	}
	pre, ctx := []int{512}, []int{1024}
	b.ReportAllocs()
	var sink float64
	for b.Loop() {
		sink += m.StepMS(pre, ctx, dec)
	}
	_ = sink
}

// BenchmarkSteady replays a closed-loop benchmark of 64 clients, 1,024
// tokens in and out: what one `kvplan perf` call computes.
func BenchmarkSteady(b *testing.B) {
	m, err := New(Spec{Model: llama8b(), GPU: unitGPU(), Engine: "vllm", TP: 1, Efficiency: realistic(300)})
	if err != nil {
		b.Fatal(err)
	}
	ld, lim := Load{64, 1024, 1024, false, RequestPath{}}, Limits{MaxNumSeqs: 1024, MaxNumBatchedTokens: 8192, KVSlots: 400_000}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Steady(ld, lim); err != nil {
			b.Fatal(err)
		}
	}
}
