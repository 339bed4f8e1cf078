package planner

import (
	"math"
	"strings"
	"testing"
)

// TestDeploymentLayout: a pool's data, expert and pipeline ranks set the
// GPUs of its workers (tp × dp × pp) and the instances they are priced on.
func TestDeploymentLayout(t *testing.T) {
	dep := deploy(t, `
[model]
name = "deepseek-v3"
weight_dtype = "fp8"
[workload]
input_tokens = 2000
output_tokens = 500
[pools.prefill]
role = "prefill"
gpu = "h100-sxm"
tp = 8
pipeline_parallel_size = 2
[pools.decode]
role = "decode"
gpu = "h100-sxm"
tp = 1
data_parallel_size = 16
expert_parallel_size = 16
[link]
name = "ib-ndr"
`)
	pre, dec := dep.pool("prefill"), dep.pool("decode")
	// Prefill: tp 8 × pp 2 = 16 GPUs; decode: tp 1 × dp 16 = 16 GPUs, each a
	// worker of two 8-GPU nodes: 4 × p5.48xlarge at $55.04
	// (catalog/data/instances.toml) = $220.16.
	if pre.GPUsPerWorker != 16 || dec.GPUsPerWorker != 16 || dep.GPUs != 32 {
		t.Errorf("GPUs per worker %d, %d; deployment %d; want 16, 16, 32", pre.GPUsPerWorker, dec.GPUsPerWorker, dep.GPUs)
	}
	if !dep.PriceKnown || math.Abs(dep.USDPerHour-4*55.04) > 1e-9 {
		t.Errorf("$%.2f/h (known %v); want 4 × $55.04 = $220.16", dep.USDPerHour, dep.PriceKnown)
	}
	if got := dec.Parallel.String(); got != "tp1 dp16 ep16" {
		t.Errorf("decode layout %q; want tp1 dp16 ep16", got)
	}
	if pre.LayoutError != "" || dec.LayoutError != "" {
		t.Errorf("layout errors %q, %q; want none", pre.LayoutError, dec.LayoutError)
	}
	found := false
	for _, f := range dep.Derivation {
		if f.Name == "gpus" {
			found = strings.Contains(f.Values, "1 × 16 (decode (tp1 dp16 ep16))")
			if !found {
				t.Errorf("gpus derivation %q", f.Values)
			}
		}
	}
	if !found {
		t.Error("no gpus figure naming the decode layout")
	}
}

// TestDeploymentLayoutRefused: a layout the model cannot take is the pool's
// LayoutError (a finding at its key), not an error of the plan.
func TestDeploymentLayoutRefused(t *testing.T) {
	dep := deploy(t, `
[model]
name = "deepseek-v3"
weight_dtype = "fp8"
[workload]
input_tokens = 2000
output_tokens = 500
[pools.w]
role = "aggregated"
gpu = "h200"
tp = 1
data_parallel_size = 12
expert_parallel_size = 12
`)
	// 256 routed experts % 12 = 4: 12 − 4 = 8 redundant experts make 264 = 22 × 12.
	w := dep.pool("w")
	if !strings.Contains(w.LayoutError, "does not divide the 256 routed experts") || !strings.Contains(w.LayoutError, "8 redundant experts") {
		t.Errorf("layout error %q", w.LayoutError)
	}
	if w.PoolInvalid() == "" || !dep.Invalid() {
		t.Error("a pool whose layout cannot serve the model is invalid")
	}
}

// TestDeploymentDenseDataParallel: data_parallel_size on a dense model is
// plain replicas: 2 workers × dp 4 of tp 2 are 8 workers of 2 GPUs, 16 GPUs.
func TestDeploymentDenseDataParallel(t *testing.T) {
	dep := deploy(t, `
[model]
name = "llama-3.1-8b"
[workload]
input_tokens = 1000
output_tokens = 100
[pools.w]
role = "aggregated"
gpu = "h100-sxm"
workers = 2
tp = 2
data_parallel_size = 4
`)
	w := dep.pool("w")
	if w.Workers != 8 || w.GPUsPerWorker != 2 || w.GPUs != 16 || !w.Parallel.Plain() {
		t.Errorf("workers %d × %d GPUs = %d (%s); want 8 × 2 = 16, tp2", w.Workers, w.GPUsPerWorker, w.GPUs, w.Parallel)
	}
	if w.ITLMS <= 0 {
		t.Error("plain replicas are priced by the engine model as before")
	}
}
