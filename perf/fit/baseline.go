package fit

import (
	"github.com/kvplan/kvplan/models"
)

// Baseline predicts a case the way kvplan did before the engine model, and
// as a roofline planner without a batch model does: TTFT = 13 ms of frontend
// (FACTS.md §5) + prefill FLOPs / (peak(dtype) × 0.4 × tp), the catalog's
// old datacenter prefill MFU; TPOT = the memory-bound floor (weights per
// rank + the running sequences' KV at the mean decoding context) / memory
// bandwidth. No queueing, no prefill interference, no fixed costs.
func Baseline(cases []*Case) []Prediction {
	out := make([]Prediction, len(cases))
	for i, c := range cases {
		out[i].Case = c
		wf, af := models.PrefillFLOPs(c.Model, c.Load.InputTokens)
		peak := c.GPU.BF16TFLOPS
		switch c.Dtype {
		case "fp8":
			if c.GPU.FP8TFLOPS > 0 {
				peak = c.GPU.FP8TFLOPS
			}
		case "nvfp4":
			if c.GPU.FP4TFLOPS > 0 {
				peak = c.GPU.FP4TFLOPS
			} else if c.GPU.FP8TFLOPS > 0 {
				peak = c.GPU.FP8TFLOPS
			}
		}
		out[i].TTFTMS = 13 + (wf+af)/(peak*1e12*0.4*float64(c.TP))*1000
		w, err := models.NewWeights(c.Model, c.TP)
		kv, err2 := models.NewKV(c.Model, models.KVOptions{KVDtype: c.KVDtype, TP: c.TP})
		if err != nil || err2 != nil {
			out[i].Err = err
			continue
		}
		running := min(c.Load.Concurrency, c.Limits.MaxNumSeqs)
		bytes := float64(w.PerRankBytes) + float64(running)*float64(kv.RequestBytes(c.Load.InputTokens+c.Load.OutputTokens/2))
		out[i].TPOTMS = bytes / c.GPU.MemoryBandwidthBytes * 1000
	}
	return out
}
