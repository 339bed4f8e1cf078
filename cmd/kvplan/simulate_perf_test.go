package main

import (
	"fmt"
	"math"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/sim"
)

// TestClosedLoopAgreesWithPerf: the timed simulation of C clients on one
// worker, with the engine model's step times, and the engine model's own
// closed-loop benchmark (kvplan perf) give TTFT and TPOT within 10% of each
// other, on a dense model over a few GPUs, tensor-parallel sizes, prompt and
// output lengths and concurrencies. Both schedule vLLM-style; they differ in
// what each leaves out (perf staggers the clients' first requests and drops
// each client's first two; the simulator counts every request of 20 a
// client, prompts all distinct).
func TestClosedLoopAgreesWithPerf(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	eng, err := cat.Engine(planner.DefaultEngine)
	if err != nil {
		t.Fatal(err)
	}
	cells := []struct {
		model, gpu        string
		tp, isl, osl, cli int
	}{
		{"llama-3.1-8b", "h100-sxm", 1, 1000, 200, 1},
		{"llama-3.1-8b", "h100-sxm", 1, 1000, 200, 16},
		{"llama-3.1-8b", "h100-sxm", 2, 4000, 500, 8},
		{"qwen3-8b", "l40s", 1, 2000, 300, 4},
		{"qwen3-32b", "h100-sxm", 2, 1000, 300, 32},
	}
	for _, cell := range cells {
		name := fmt.Sprintf("%s/%s/tp%d/%dx%d/c%d", cell.model, cell.gpu, cell.tp, cell.isl, cell.osl, cell.cli)
		t.Run(name, func(t *testing.T) {
			m, _ := cat.Model(cell.model)
			g, _ := cat.GPU(cell.gpu)
			p, err := planner.PlanSimulation(planner.SimulationScenario{Model: m, GPU: g, Engine: eng, KV: models.KVOptions{TP: cell.tp},
				GPUUtil: 0.9, BlockSize: 16, MaxModelLen: 8192, Catalog: cat})
			if err != nil {
				t.Fatal(err)
			}
			want, err := p.Step.Steady(perf.Load{Concurrency: cell.cli, InputTokens: cell.isl, OutputTokens: cell.osl},
				perf.Limits{MaxNumSeqs: p.MaxNumSeqs, MaxNumBatchedTokens: p.MaxNumBatchedTokens, KVSlots: p.Memory.KVSlotsTokens, BlockSize: 16})
			if err != nil {
				t.Fatal(err)
			}
			n := 20 * cell.cli
			syn := sim.Synthetic{Prefixes: n, PrefixTokens: cell.isl, Repeats: 1, TailTokens: cell.isl, OutputTokens: cell.osl, Seed: 1}
			cfg := sim.Config{Workers: 1, CapacityBlocks: p.CapacityBlocks, Concurrency: cell.cli, Policy: sim.RoundRobin, RampMS: p.RampMS,
				Engine: &sim.Engine{Step: p.Step, MaxNumBatchedTokens: p.MaxNumBatchedTokens, MaxNumSeqs: p.MaxNumSeqs, FrontendMS: p.FrontendMS + 1e-3, FrontendMSPerToken: p.FrontendMSPerToken}}
			res, err := sim.RunAll(syn.Open, cfg, []string{sim.RoundRobin})
			if err != nil {
				t.Fatal(err)
			}
			got := res[0].Timing
			t.Logf("TTFT %.2f vs perf %.2f ms; TPOT %.3f vs %.3f ms; sim ttft %+v; perf wait %.1f prefill %.1f req %.1f delay %.3f pstep %.1f dstep %.2f share %.3f running %.1f", got.TTFTMS.Mean, want.TTFTMS, got.TPOTMS.Mean, want.TPOTMS, got.TTFTMS, want.WaitingMS, want.PrefillMS, want.RequestMS, want.DelayMS, want.PrefillStepMS, want.DecodeStepMS, want.PrefillStepShare, want.Running)
			if math.Abs(got.TTFTMS.Mean-want.TTFTMS) > 0.1*want.TTFTMS || math.Abs(got.TPOTMS.Mean-want.TPOTMS) > 0.1*want.TPOTMS {
				t.Errorf("TTFT %.2f ms (perf %.2f), TPOT %.3f ms (perf %.3f): more than 10%% apart", got.TTFTMS.Mean, want.TTFTMS, got.TPOTMS.Mean, want.TPOTMS)
			}
		})
	}
}
