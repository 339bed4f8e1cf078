package planner

import (
	"math"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

func perfScenario(t testing.TB, model, gpu string, tp, c int) PerfScenario {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	m, err := cat.Model(model)
	if err != nil {
		t.Fatal(err)
	}
	g, err := cat.GPU(gpu)
	if err != nil {
		t.Fatal(err)
	}
	return PerfScenario{Catalog: cat, Model: m, GPU: g, Engine: "vllm", TP: tp, InputTokens: 2048, OutputTokens: 256, Concurrency: c}
}

// The plan's figures hang together: KV slots are the memory model's, the
// per-GPU rate divides by tp, Little's law ties throughput to latency.
func TestPlanPerfFigures(t *testing.T) {
	sc := perfScenario(t, "qwen3-32b", "h100-sxm", 2, 48)
	p, err := PlanPerf(sc)
	if err != nil {
		t.Fatal(err)
	}
	e, ver, _ := sc.Catalog.EngineVersion("vllm", "")
	mp, err := PlanMemory(MemoryScenario{Model: sc.Model, KV: models.KVOptions{TP: 2}, GPU: sc.GPU, Engine: e, EngineVersion: ver,
		MaxModelLen: 2048 + 256})
	if err != nil {
		t.Fatal(err)
	}
	if p.KVSlotsTokens != mp.KVSlotsTokens || p.MaxNumSeqs != mp.MaxNumSeqs || p.MaxNumBatchedTokens != mp.MaxNumBatchedTokens {
		t.Errorf("slots %d, max_num_seqs %d, budget %d; the memory model says %d, %d, %d",
			p.KVSlotsTokens, p.MaxNumSeqs, p.MaxNumBatchedTokens, mp.KVSlotsTokens, mp.MaxNumSeqs, mp.MaxNumBatchedTokens)
	}
	if p.GPUs != 2 || math.Abs(p.OutputTokensPerSPerGPU*2-p.OutputTokensPerS) > 1e-9 {
		t.Errorf("gpus %d, per GPU %g of %g", p.GPUs, p.OutputTokensPerSPerGPU, p.OutputTokensPerS)
	}
	if want := 48 / (p.TTFTMS + 255*p.TPOTMS) * 1000; math.Abs(p.RequestsPerS/want-1) > 1e-6 {
		t.Errorf("requests/s %g, Little's law %g", p.RequestsPerS, want)
	}
	if math.Abs(p.TTFTMS-(p.RequestOverheadMS+p.WaitingMS+p.PrefillMS)) > 1e-6 {
		t.Errorf("TTFT %g is not overhead %g + waiting %g + prefill %g", p.TTFTMS, p.RequestOverheadMS, p.WaitingMS, p.PrefillMS)
	}
	if p.KVLimited || p.MaxRunning != 48 {
		t.Errorf("kv_limited %v, max running %d: 48 requests of 2,304 tokens fit %d slots", p.KVLimited, p.MaxRunning, p.KVSlotsTokens)
	}
}

func TestPlanPerfRejects(t *testing.T) {
	sc := perfScenario(t, "llama-3.1-70b", "l4", 1, 1)
	if _, err := PlanPerf(sc); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("70B on one L4: err = %v, want weights that do not fit", err)
	}
	sc = perfScenario(t, "llama-3.1-8b", "h100-sxm", 1, 1)
	sc.Engine = "tgi"
	if _, err := PlanPerf(sc); err == nil || !strings.Contains(err.Error(), `engine "tgi"`) {
		t.Errorf("unknown engine: err = %v", err)
	}
}

// BenchmarkPlanPerf is one `kvplan perf` call past process start and the
// catalog load: memory model, engine model, the benchmark's replay.
func BenchmarkPlanPerf(b *testing.B) {
	sc := perfScenario(b, "llama-3.1-8b", "h100-sxm", 1, 64)
	sc.InputTokens, sc.OutputTokens = 1024, 1024
	for b.Loop() {
		if _, err := PlanPerf(sc); err != nil {
			b.Fatal(err)
		}
	}
}
