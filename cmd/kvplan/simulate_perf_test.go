package main

import (
	"fmt"
	"math"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/sim"
)

// TestClosedLoopAgreesWithPerf: the timed simulation of C clients on one
// worker, with the engine model's step times, and kvplan perf's own
// closed-loop replay of that engine model (planner.PlanPerf) give mean TTFT
// and TPOT within 10% of each other, on dense models over a few GPUs,
// tensor-parallel sizes, prompt and output lengths and concurrencies. Both
// schedule as vLLM does and send the clients' first requests over the
// fitted ramp; they differ in what each counts (perf drops each client's
// first two requests; the simulator counts all 20 a client sends, prompts
// all distinct) and perf's client reaches the engine 1 µs after its
// frontend time, which the simulator's frontend takes here too.
func TestClosedLoopAgreesWithPerf(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	eng, ver, err := cat.EngineVersion(planner.DefaultEngine, "")
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
			want, err := planner.PlanPerf(planner.PerfScenario{Catalog: cat, Model: m, GPU: g, Engine: eng.Name, TP: cell.tp,
				InputTokens: cell.isl, OutputTokens: cell.osl, Concurrency: cell.cli, GPUUtil: 0.9})
			if err != nil {
				t.Fatal(err)
			}
			p, err := planner.PlanSimulation(planner.SimulationScenario{Catalog: cat, Model: m, GPU: g, Engine: eng, EngineVersion: ver,
				VersionDefaulted: true, KV: models.KVOptions{TP: cell.tp}, GPUUtil: 0.9, BlockSize: 16, MaxModelLen: cell.isl + cell.osl})
			if err != nil {
				t.Fatal(err)
			}
			syn := sim.Synthetic{Prefixes: 20 * cell.cli, PrefixTokens: cell.isl, Repeats: 1, TailTokens: cell.isl, OutputTokens: cell.osl, Seed: 1}
			e := simEngine(p)
			e.FrontendMS += 1e-3
			cfg := sim.Config{Workers: 1, CapacityBlocks: p.CapacityBlocks, Concurrency: cell.cli, Policy: sim.RoundRobin, RampMS: p.RampMS, Engine: e}
			res, err := sim.RunAll(syn.Open, cfg, []string{sim.RoundRobin})
			if err != nil {
				t.Fatal(err)
			}
			got := res[0].Timing
			t.Logf("TTFT %.2f ms (kvplan perf %.2f), TPOT %.3f ms (%.3f)", got.TTFTMS.Mean, want.TTFTMS, got.TPOTMS.Mean, want.TPOTMS)
			if math.Abs(got.TTFTMS.Mean-want.TTFTMS) > 0.1*want.TTFTMS || math.Abs(got.TPOTMS.Mean-want.TPOTMS) > 0.1*want.TPOTMS {
				t.Errorf("TTFT %.2f ms (kvplan perf %.2f), TPOT %.3f ms (%.3f): more than 10%% apart", got.TTFTMS.Mean, want.TTFTMS, got.TPOTMS.Mean, want.TPOTMS)
			}
		})
	}
}
