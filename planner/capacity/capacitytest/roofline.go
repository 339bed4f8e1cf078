// Package capacitytest holds a stand-in engine model for tests of the capacity
// search: physical enough to face the real trade-offs, simple enough to stay
// fixed while the fitted engine model (perf) changes.
package capacitytest

import (
	"fmt"
	"math"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planner/capacity"
)

// Roofline is a test stand-in for the engine model: a fixed 4 ms per
// iteration, GEMMs at half the bf16 peak or the weights at 70% of the
// memory bandwidth (the slower wins), attention quadratic in the prompt and
// every decoding sequence's KV read at 70% of the bandwidth, split over tp
// ranks with 20 µs × 2 × layers of all-reduce latency. It is physical
// enough for the search to face the real trade-offs; the product wires the
// fitted engine model (perf) instead.
type Roofline struct {
	flopPerToken, weightBytes, kvBytesPerToken float64
	attnFLOPPerPair                            float64
	peakFLOPms, bwBms                          float64
	fixedMS, allReduceMS                       float64
}

// NewRoofline builds the stand-in for m on tp GPUs of kind g.
func NewRoofline(m *catalog.Model, g *catalog.GPU, tp int) *Roofline {
	kv, _ := models.NewKV(m, models.KVOptions{TP: tp})
	w, _ := models.NewWeights(m, tp)
	r := &Roofline{
		flopPerToken:    2 * float64(models.MatmulParams(m)) / float64(tp),
		weightBytes:     float64(w.PerRankBytes),
		kvBytesPerToken: float64(kv.BytesPerToken()),
		attnFLOPPerPair: 4 * float64(m.AttentionHeads/tp) * float64(m.HeadDim) * float64(m.Layers),
		peakFLOPms:      g.BF16TFLOPS * 1e12 * 0.5 / 1000,
		bwBms:           g.MemoryBandwidthBytes * 0.7 / 1000,
		fixedMS:         4,
	}
	if tp > 1 {
		r.allReduceMS = 2 * float64(m.Layers) * 0.02
	}
	return r
}

// StepMS is the stand-in's iteration time.
func (r *Roofline) StepMS(pt, pc, dc []int) float64 {
	tokens, pairs, kv := 0.0, 0.0, 0.0
	for i, p := range pt {
		c := 0
		if i < len(pc) {
			c = pc[i]
		}
		tokens += float64(p)
		pairs += float64(p)*float64(c) + float64(p)*float64(p+1)/2
	}
	for _, c := range dc {
		kv += float64(c)
	}
	tokens += float64(len(dc))
	if tokens == 0 {
		return 0
	}
	gemm := math.Max(r.flopPerToken*tokens/r.peakFLOPms, r.weightBytes/r.bwBms)
	return r.fixedMS + gemm + r.attnFLOPPerPair*pairs/r.peakFLOPms + kv*r.kvBytesPerToken/r.bwBms + r.allReduceMS
}

// Timers is a capacity.TimerFactory of Rooflines.
func Timers(s capacity.EngineSpec) (capacity.StepTimer, string, error) {
	if !s.Parallel.Plain() {
		return nil, "", fmt.Errorf("the roofline stand-in models tensor parallelism alone, not %s", s.Parallel)
	}
	return NewRoofline(s.Model, s.GPU, s.TP), "", nil
}
