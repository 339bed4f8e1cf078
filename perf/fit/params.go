package fit

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvplan/kvplan/catalog"
)

// Space is the fit's parameter vector layout. The efficiencies of one GPU ×
// engine × dtype are built from shared effects, so that a combination the
// data holds few rows of borrows strength from the others and an unseen one
// still has a value:
//
//	gemm(g, e, d)   = B(g0 + ge[e] + gg[g] + gd[d])
//	memory(g, e)    = B(m0 + me[e] + mg[g])
//	attention(e), moe(e), step_ms(e), layer_us(e), eager_layer_us(e),
//	request_ms(e), request_us_per_token(e), ramp_ms(e), seq_us(e)   per engine
//	allreduce_us, interconnect                 one each
//	moe_memory(e), custom_allreduce_us          when Mechanisms turn them on
//	harness_request_ms(e), harness_request_us_per_token(e)   likewise
//	allreduce_us, interconnect + a per-link-class offset      with LinkClass
//
// where B maps a real number into the physical range of its quantity
// (Bounds) through the logistic function, on a log scale for times: a fit
// may not explain the data with an efficiency no kernel reaches. The offsets
// ge, gg, gd, me, mg are shrunk towards 0 (ridge).
type Space struct {
	Engines, GPUs, Dtypes []string // Dtypes: bf16 first (its offset is fixed at 0)
	// Links is the interconnect class of each GPU of GPUs (catalog
	// interconnect: nvlink4, nvlink5, ...) and LinkClasses the distinct
	// ones, sorted; only LinkClass reads them.
	Links, LinkClasses []string
	Mechanisms         // round 2's mechanisms, off in the shipped fit
}

// Mechanisms are issue 22's mechanisms the fit may use beyond the shipped
// fit's; each off leaves its parameters unused (their gradient is 0).
type Mechanisms struct {
	MoEMemory       bool // moe_memory per engine: expert streaming apart from expert compute
	CustomAllReduce bool // custom_allreduce_us: small all-reduces on NVLink
	EagerOverlap    bool // eager launches overlap GPU time
	// HarnessRequest: the InferenceX rows pay their own request cost per
	// engine (harness_request_ms, harness_request_us_per_token), apart from
	// the gap-analysis rows': the two sources ran different clients (vLLM's
	// benchmark_serving in InferenceX's containers; genai-perf/AIPerf in
	// AIConfigurator's), so what a request pays before the engine is a
	// property of the harness as much as of the engine. The catalog keeps
	// the gap-analysis rows' figure.
	HarnessRequest bool
	// LinkClass: the all-reduce latency and the share of the interconnect
	// it reaches differ by interconnect class (NVLink 4 on Hopper, NVLink 5
	// on Blackwell: other switches, other NCCL and custom all-reduce
	// kernels), as offsets from the shared values, shrunk towards 0.
	LinkClass bool
	// ActivationTraffic: the memory-bound activation kernels (norms, MLP
	// activation, MoE combine) as their own term at the memory efficiency
	// (catalog.Efficiency.ActivationTraffic); no parameter of its own.
	ActivationTraffic bool
}

// ParseMechanisms reads a comma-separated list of moe_memory,
// custom_allreduce, eager_overlap, harness_request, link_class and
// activation_traffic ("" for none).
func ParseMechanisms(list string) (Mechanisms, error) {
	var m Mechanisms
	for _, f := range strings.Split(list, ",") {
		switch strings.TrimSpace(f) {
		case "":
		case "moe_memory":
			m.MoEMemory = true
		case "custom_allreduce":
			m.CustomAllReduce = true
		case "eager_overlap":
			m.EagerOverlap = true
		case "harness_request":
			m.HarnessRequest = true
		case "link_class":
			m.LinkClass = true
		case "activation_traffic":
			m.ActivationTraffic = true
		default:
			return m, fmt.Errorf("unknown mechanism %q: moe_memory, custom_allreduce, eager_overlap, harness_request, link_class or activation_traffic", f)
		}
	}
	return m, nil
}

// Parameter indices.
const (
	pGemm0 = iota
	pMem0
	pAllReduce
	pInterconnect
	pCustomAR
	nGlobal
)

// per-engine parameters, in this order.
const (
	eGemm = iota
	eMem
	eAttention
	eMoE
	eStep
	eLayer
	eEager
	eRequest
	eRequestTok
	eRamp
	eSeq
	eMoEMem
	eHarnessRequest
	eHarnessRequestTok
	nEngine
)

// Bound is the physical range of a fitted quantity.
type Bound struct {
	Lo, Hi float64
	Log    bool // times: mapped on a log scale
}

// Bounds are the ranges the fit may use: efficiencies below what tuned
// kernels reach on current GPUs (large GEMMs 70–90% of peak, streaming
// 80–90% of bandwidth, FlashAttention 40–75%), and times between what a
// CUDA-graphed C++ loop and an eager Python loop cost.
var Bounds = map[string]Bound{
	"gemm": {0.2, 0.95, false}, "memory": {0.3, 0.95, false}, "attention": {0.2, 0.9, false},
	"moe": {0.2, 1, false}, "interconnect": {0.1, 0.95, false},
	"allreduce_us": {2, 100, true}, "step_ms": {0.05, 20, true}, "layer_us": {0.5, 100, true},
	"eager_layer_us": {1, 1000, true}, "request_ms": {0.1, 100, true}, "request_us_per_token": {0.01, 50, true},
	"ramp_ms": {1, 20000, true}, "seq_us": {0.1, 100, true},
	"moe_memory": {0.2, 1, false}, "custom_allreduce_us": {2, 100, true},
}

func (b Bound) value(v float64) float64 {
	if b.Log {
		return math.Exp(math.Log(b.Lo) + (math.Log(b.Hi)-math.Log(b.Lo))*sigmoid(v))
	}
	return b.Lo + (b.Hi-b.Lo)*sigmoid(v)
}

func (b Bound) param(v float64) float64 {
	if b.Log {
		return logit((math.Log(v) - math.Log(b.Lo)) / (math.Log(b.Hi) - math.Log(b.Lo)))
	}
	return logit((v - b.Lo) / (b.Hi - b.Lo))
}

func bounded(name string, v float64) float64 { return Bounds[name].value(v) }
func param(name string, v float64) float64   { return Bounds[name].param(v) }

// Len is the number of parameters.
func (s Space) Len() int {
	return nGlobal + nEngine*len(s.Engines) + 2*len(s.GPUs) + len(s.Dtypes) - 1 + 2*len(s.LinkClasses)
}

func (s Space) engine(e, k int) int { return nGlobal + e*nEngine + k }
func (s Space) gpuGemm(g int) int   { return nGlobal + nEngine*len(s.Engines) + g }
func (s Space) gpuMem(g int) int    { return nGlobal + nEngine*len(s.Engines) + len(s.GPUs) + g }
func (s Space) dtype(d int) int     { return nGlobal + nEngine*len(s.Engines) + 2*len(s.GPUs) + d - 1 }

// linkAR and linkIC are the all-reduce latency's and the interconnect
// share's offsets of link class l.
func (s Space) linkAR(l int) int { return s.dtype(len(s.Dtypes)) + 2*l }
func (s Space) linkIC(l int) int { return s.linkAR(l) + 1 }

// linkOf is the index in LinkClasses of GPU g's interconnect class, or −1
// (no GPU, or LinkClass off).
func (s Space) linkOf(g int) int {
	if !s.LinkClass || g < 0 || g >= len(s.Links) {
		return -1
	}
	return Index(s.LinkClasses, s.Links[g])
}

// Offsets lists the indices the ridge penalty applies to.
func (s Space) Offsets() []int {
	var ix []int
	for e := range s.Engines {
		ix = append(ix, s.engine(e, eGemm), s.engine(e, eMem))
	}
	for g := range s.GPUs {
		ix = append(ix, s.gpuGemm(g), s.gpuMem(g))
	}
	for d := 1; d < len(s.Dtypes); d++ {
		ix = append(ix, s.dtype(d))
	}
	for l := range s.LinkClasses {
		ix = append(ix, s.linkAR(l), s.linkIC(l))
	}
	return ix
}

// Initial is the starting point: round figures, not fitted (gemm 0.6,
// memory 0.8, attention 0.5, moe and moe_memory 0.7, a 10 µs custom all-reduce, 2 ms a step, 5 µs a layer under CUDA
// graphs and 50 µs without, 15 ms a request, a 100 ms ramp, 15 µs an
// all-reduce at 70% of the interconnect, 2 µs of frontend per input token,
// 1 µs of host time per sequence of an iteration).
func (s Space) Initial() []float64 {
	x := make([]float64, s.Len())
	x[pGemm0], x[pMem0] = param("gemm", 0.6), param("memory", 0.8)
	x[pAllReduce], x[pInterconnect] = param("allreduce_us", 15), param("interconnect", 0.7)
	x[pCustomAR] = param("custom_allreduce_us", 10)
	for e := range s.Engines {
		x[s.engine(e, eAttention)] = param("attention", 0.5)
		x[s.engine(e, eMoE)] = param("moe", 0.7)
		x[s.engine(e, eStep)] = param("step_ms", 2)
		x[s.engine(e, eLayer)] = param("layer_us", 5)
		x[s.engine(e, eEager)] = param("eager_layer_us", 50)
		x[s.engine(e, eRequest)] = param("request_ms", 15)
		x[s.engine(e, eRequestTok)] = param("request_us_per_token", 2)
		x[s.engine(e, eRamp)] = param("ramp_ms", 100)
		x[s.engine(e, eSeq)] = param("seq_us", 1)
		x[s.engine(e, eMoEMem)] = param("moe_memory", 0.7)
		x[s.engine(e, eHarnessRequest)] = param("request_ms", 15)
		x[s.engine(e, eHarnessRequestTok)] = param("request_us_per_token", 2)
	}
	return x
}

// Efficiency builds the efficiencies of gpu × engine × dtype from x. An
// index of -1 (a GPU, engine or dtype the space does not hold) takes the
// effect 0, or for per-engine values the mean over the engines.
func (s Space) Efficiency(x []float64, g, e, d int) catalog.Efficiency {
	engine := func(k int) float64 {
		if e >= 0 {
			return x[s.engine(e, k)]
		}
		var m float64
		for i := range s.Engines {
			m += x[s.engine(i, k)]
		}
		return m / float64(len(s.Engines))
	}
	gemm, mem := x[pGemm0], x[pMem0]
	if e >= 0 {
		gemm += x[s.engine(e, eGemm)]
		mem += x[s.engine(e, eMem)]
	}
	if g >= 0 {
		gemm += x[s.gpuGemm(g)]
		mem += x[s.gpuMem(g)]
	}
	if d > 0 {
		gemm += x[s.dtype(d)]
	}
	ar, ic := x[pAllReduce], x[pInterconnect]
	if l := s.linkOf(g); l >= 0 {
		ar += x[s.linkAR(l)]
		ic += x[s.linkIC(l)]
	}
	eff := catalog.Efficiency{
		GEMM: bounded("gemm", gemm), Memory: bounded("memory", mem),
		Attention: bounded("attention", engine(eAttention)), MoE: bounded("moe", engine(eMoE)),
		Interconnect: bounded("interconnect", ic), AllReduceUS: bounded("allreduce_us", ar),
		StepMS: bounded("step_ms", engine(eStep)), LayerUS: bounded("layer_us", engine(eLayer)),
		EagerLayerUS: bounded("eager_layer_us", engine(eEager)),
		RequestMS:    bounded("request_ms", engine(eRequest)), RequestUSTok: bounded("request_us_per_token", engine(eRequestTok)),
		RampMS: bounded("ramp_ms", engine(eRamp)), SeqUS: bounded("seq_us", engine(eSeq)),
		EagerOverlap: s.EagerOverlap, ActivationTraffic: s.ActivationTraffic,
	}
	if s.MoEMemory {
		eff.MoEMemory = bounded("moe_memory", engine(eMoEMem))
	}
	if s.CustomAllReduce {
		eff.CustomAllReduceUS = bounded("custom_allreduce_us", x[pCustomAR])
	}
	return eff
}

// caseEfficiency is the efficiencies case c is predicted with at x: its
// GPU × engine × dtype's, with the InferenceX harness's request cost in
// place of the engine's when HarnessRequest is on.
func (s Space) caseEfficiency(x []float64, c *Case) catalog.Efficiency {
	eff := s.Efficiency(x, c.g, c.e, c.d)
	if s.HarnessRequest && c.Source == SourceInferenceX && c.e >= 0 {
		eff.RequestMS = bounded("request_ms", x[s.engine(c.e, eHarnessRequest)])
		eff.RequestUSTok = bounded("request_us_per_token", x[s.engine(c.e, eHarnessRequestTok)])
	}
	return eff
}

// Index returns the position of name in list, or -1.
func Index(list []string, name string) int { return slices.Index(list, name) }

func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
func logit(p float64) float64   { return math.Log(p / (1 - p)) }
