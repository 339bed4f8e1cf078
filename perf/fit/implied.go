package fit

import "github.com/kvplan/kvplan/perf"

// MatmulShare is the share of its GPUs' time a measured run must have
// spent in matmuls at the tensor peak, whatever the kernels: the requests a
// second it served (Little's law over one replica's clients: concurrency /
// (TTFT + (OSL − 1) × TPOT)) × the tokens of a request (prompt and output)
// × the least time a token's matmuls take on a rank (perf.Model.MatmulFloorMS;
// every rank does its share at once). Above 1 the row measured more than
// the GPU can compute; near 1 only a model whose matmuls run at the peak,
// with nothing else in the step, can predict it.
func MatmulShare(c *Case, m *perf.Model) float64 {
	latencyMS := c.TTFTMS + float64(c.Load.OutputTokens-1)*c.TPOTMS
	perMS := float64(c.Load.Concurrency) / latencyMS
	return perMS * float64(c.Load.InputTokens+c.Load.OutputTokens) * m.MatmulFloorMS()
}
