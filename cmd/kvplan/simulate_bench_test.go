package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/sim"
)

// BenchmarkSimulateTimedTrace runs the whole Mooncake conversation trace
// (12,031 requests, at its timestamps) through the timed simulation with the
// engine model (package perf): Llama-3.1-8B on 8 H100 workers, one policy,
// parsing included, and reports simulated requests per second of CPU. It
// reads ../shared/traces (or $KVPLAN_TRACE) and skips without it.
func BenchmarkSimulateTimedTrace(b *testing.B) {
	path := os.Getenv("KVPLAN_TRACE")
	if path == "" {
		path = filepath.Join("..", "..", "..", "shared", "traces", "mooncake", "conversation_trace.jsonl")
	}
	if _, err := os.Stat(path); err != nil {
		b.Skipf("conversation trace not available (%v); set KVPLAN_TRACE", err)
	}
	cat, err := catalog.Load()
	if err != nil {
		b.Fatal(err)
	}
	m, _ := cat.Model("llama-3.1-8b")
	g, _ := cat.GPU("h100-sxm")
	eng, _ := cat.Engine(planner.DefaultEngine)
	p, err := planner.PlanSimulation(planner.SimulationScenario{Model: m, GPU: g, Engine: eng, KV: models.KVOptions{TP: 1},
		GPUUtil: 0.9, BlockSize: sim.MooncakeBlockTokens, Catalog: cat})
	if err != nil {
		b.Fatal(err)
	}
	for _, pol := range []string{sim.KVAware, sim.RoundRobin} {
		b.Run(pol, func(b *testing.B) {
			cfg := sim.Config{Workers: 8, CapacityBlocks: p.CapacityBlocks, Seed: 1, Policy: pol, Engine: simEngine(p)}
			var res sim.Result
			cpu0 := cpuSeconds()
			for b.Loop() {
				src, err := sim.OpenMooncake(path, 0, false)
				if err != nil {
					b.Fatal(err)
				}
				res, err = sim.Run(src, cfg)
				src.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuSeconds() - cpu0
			b.ReportMetric(float64(res.Requests*b.N)/cpu, "requests/CPU-s")
			b.ReportMetric(res.Timing.TTFTMS.P50, "ttft-p50-ms")
		})
	}
}

// cpuSeconds is the process's user and system time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
