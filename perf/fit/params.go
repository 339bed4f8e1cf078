package fit

import (
	"math"
	"slices"

	"github.com/kvplan/kvplan/catalog"
)

// EagerLayerUS is the per-layer cost of an iteration without CUDA graphs
// (--enforce-eager): about a dozen kernel launches per decoder layer
// (norms, projections, rotary, attention, activation, residual adds) at
// 5–8 µs of eager PyTorch dispatch each. None of the measured runs is eager,
// so it is a prior, not fitted.
const EagerLayerUS = 80

// Space is the fit's parameter vector layout. The efficiencies of one GPU ×
// engine × dtype are built from shared effects, so that a combination the
// data holds few rows of borrows strength from the others and an unseen one
// still has a value:
//
//	gemm(g, e, d)   = σ(g0 + ge[e] + gg[g] + gd[d])     σ the logistic function
//	memory(g, e)    = σ(m0 + me[e] + mg[g])
//	attention(e), moe(e)                      = σ(·) per engine
//	step_ms(e), layer_us(e), request_ms(e), ramp_ms(e) = exp(·) per engine
//	allreduce_us, interconnect                = one each
//
// The offsets ge, gg, gd, me, mg are shrunk towards 0 (ridge).
type Space struct {
	Engines, GPUs, Dtypes []string // Dtypes: bf16 first (its offset is fixed at 0)
}

// Parameter indices.
const (
	pGemm0 = iota
	pMem0
	pAllReduce
	pInterconnect
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
	eRequest
	eRamp
	nEngine
)

// Len is the number of parameters.
func (s Space) Len() int { return nGlobal + nEngine*len(s.Engines) + 2*len(s.GPUs) + len(s.Dtypes) - 1 }

func (s Space) engine(e, k int) int { return nGlobal + e*nEngine + k }
func (s Space) gpuGemm(g int) int   { return nGlobal + nEngine*len(s.Engines) + g }
func (s Space) gpuMem(g int) int    { return nGlobal + nEngine*len(s.Engines) + len(s.GPUs) + g }
func (s Space) dtype(d int) int     { return nGlobal + nEngine*len(s.Engines) + 2*len(s.GPUs) + d - 1 }

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
	return ix
}

// Initial is the starting point: round figures, not fitted (gemm 0.6,
// memory 0.8, attention 0.5, moe 0.7, 2 ms a step, 5 µs a layer, 15 ms a
// request, a 100 ms ramp, 15 µs an all-reduce at 70% of the interconnect).
func (s Space) Initial() []float64 {
	x := make([]float64, s.Len())
	x[pGemm0], x[pMem0] = logit(0.6), logit(0.8)
	x[pAllReduce], x[pInterconnect] = math.Log(15), logit(0.7)
	for e := range s.Engines {
		x[s.engine(e, eAttention)] = logit(0.5)
		x[s.engine(e, eMoE)] = logit(0.7)
		x[s.engine(e, eStep)] = math.Log(2)
		x[s.engine(e, eLayer)] = math.Log(5)
		x[s.engine(e, eRequest)] = math.Log(15)
		x[s.engine(e, eRamp)] = math.Log(100)
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
	return catalog.Efficiency{
		GEMM: sigmoid(gemm), Memory: sigmoid(mem),
		Attention: sigmoid(engine(eAttention)), MoE: sigmoid(engine(eMoE)),
		Interconnect: sigmoid(x[pInterconnect]), AllReduceUS: math.Exp(x[pAllReduce]),
		StepMS: math.Exp(engine(eStep)), LayerUS: math.Exp(engine(eLayer)), EagerLayerUS: EagerLayerUS,
		RequestMS: math.Exp(engine(eRequest)), RampMS: math.Exp(engine(eRamp)),
	}
}

// Index returns the position of name in list, or -1.
func Index(list []string, name string) int { return slices.Index(list, name) }

func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
func logit(p float64) float64   { return math.Log(p / (1 - p)) }
