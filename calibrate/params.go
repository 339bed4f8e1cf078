package calibrate

import "github.com/kvplan/kvplan/catalog"

// Param is one fittable efficiency: its name in the catalog, how to read
// and set it, and the range a fit may use. A field the engine model gains
// is one line here.
type Param struct {
	Name   string
	Get    func(*catalog.Efficiency) float64
	Set    func(*catalog.Efficiency, float64)
	Lo, Hi float64
}

// Params are the efficiencies calibrate may fit. The ranges are those of
// the shipped fit (perf/fit/params.go, Bounds): what tuned kernels reach on
// current GPUs, and times between a CUDA-graphed C++ loop and an eager
// Python one. A calibration may not explain a run with an efficiency no
// kernel reaches.
var Params = []Param{
	{"gemm", func(e *catalog.Efficiency) float64 { return e.GEMM }, func(e *catalog.Efficiency, v float64) { e.GEMM = v }, 0.2, 0.95},
	{"memory", func(e *catalog.Efficiency) float64 { return e.Memory }, func(e *catalog.Efficiency, v float64) { e.Memory = v }, 0.3, 0.95},
	{"attention", func(e *catalog.Efficiency) float64 { return e.Attention }, func(e *catalog.Efficiency, v float64) { e.Attention = v }, 0.2, 0.9},
	{"moe", func(e *catalog.Efficiency) float64 { return e.MoE }, func(e *catalog.Efficiency, v float64) { e.MoE = v }, 0.2, 1},
	{"interconnect", func(e *catalog.Efficiency) float64 { return e.Interconnect }, func(e *catalog.Efficiency, v float64) { e.Interconnect = v }, 0.1, 0.95},
	{"allreduce_us", func(e *catalog.Efficiency) float64 { return e.AllReduceUS }, func(e *catalog.Efficiency, v float64) { e.AllReduceUS = v }, 2, 100},
	{"step_ms", func(e *catalog.Efficiency) float64 { return e.StepMS }, func(e *catalog.Efficiency, v float64) { e.StepMS = v }, 0.05, 20},
	{"layer_us", func(e *catalog.Efficiency) float64 { return e.LayerUS }, func(e *catalog.Efficiency, v float64) { e.LayerUS = v }, 0.5, 100},
	{"eager_layer_us", func(e *catalog.Efficiency) float64 { return e.EagerLayerUS }, func(e *catalog.Efficiency, v float64) { e.EagerLayerUS = v }, 1, 1000},
	{"request_ms", func(e *catalog.Efficiency) float64 { return e.RequestMS }, func(e *catalog.Efficiency, v float64) { e.RequestMS = v }, 0.1, 100},
	{"request_us_per_token", func(e *catalog.Efficiency) float64 { return e.RequestUSTok }, func(e *catalog.Efficiency, v float64) { e.RequestUSTok = v }, 0.01, 50},
	{"ramp_ms", func(e *catalog.Efficiency) float64 { return e.RampMS }, func(e *catalog.Efficiency, v float64) { e.RampMS = v }, 1, 20000},
}
