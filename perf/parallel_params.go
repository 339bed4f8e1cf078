package perf

// ParallelEfficiency is what the parallel terms of the engine model (expert,
// attention-data and pipeline parallelism, MTP) take beyond the dense
// efficiencies: one set per engine.
type ParallelEfficiency struct {
	// AllToAll is the fraction of the per-GPU bandwidth (NVLink inside the
	// GPU's NVLink domain, the deployment's link across it) that MoE
	// dispatch and combine reach, (0, 1].
	AllToAll float64 `json:"alltoall"`
	// AllToAllUS is the fixed cost of one dispatch or combine with the
	// low-latency kernels (DeepEP low_latency_dispatch; used for decode-only
	// iterations), µs.
	AllToAllUS float64 `json:"alltoall_us"`
	// AllToAllNormalUS is the same with the normal (throughput) kernels,
	// used for iterations that carry prefill, µs.
	AllToAllNormalUS float64 `json:"alltoall_normal_us"`
	// Imbalance is the routing skew without EPLB: the hottest expert-parallel
	// rank's tokens over the mean, beyond the statistical spread of uniform
	// routing, as a fraction (0.3 = 30% more).
	Imbalance float64 `json:"ep_imbalance"`
	// EPLBImbalance is the same skew with EPLB (redundant, rebalanced experts).
	EPLBImbalance float64 `json:"eplb_imbalance"`
	// P2PUS is the fixed cost of one point-to-point send of activations
	// between pipeline stages, µs.
	P2PUS float64 `json:"p2p_us"`
	// Rows is the measured runs the values were fitted on (0: a prior).
	Rows   int    `json:"rows"`
	Source string `json:"source"`
}

// ParallelEfficiencies are the parallel terms' constants per engine, and
// "*" for an engine without its own.
//
// The values are priors from published kernel measurements; each entry
// names its source. perf/fit's TestParallelFit fits them per engine on the
// measured expert- and data-parallel runs and reports whether that beats
// the prior on held-out models (it does not yet).
var ParallelEfficiencies = map[string]ParallelEfficiency{
	"*": parallelPrior,
	// Per-engine values fitted by perf/fit TestParallelFit are not shipped:
	// on models held out of that fit they do no better than this prior
	// (docs/parallelism.md).
}

// parallelPrior: DeepEP's README (deepseek-ai/DeepEP, H800, 4,096 tokens,
// hidden 7,168, top-8, fp8 dispatch, bf16 combine): normal kernels reach
// 153–158 GB/s of NVLink inside a node (~0.77 of H800's 200 GB/s one-way)
// and 43–58 GB/s of RDMA across nodes (~0.9 of a 400 Gb/s NIC); the
// low-latency kernels at 128 tokens per rank take 77 µs (dispatch) and
// 114 µs (combine) at EP 8, of which a few tens of µs are not bandwidth.
// Routing skew: DeepSeek-V3's technical report and the EPLB repository say
// the hottest GPU carries noticeably more than the mean without
// rebalancing; 30% without EPLB and 5% with it are priors, not fitted.
var parallelPrior = ParallelEfficiency{
	AllToAll: 0.75, AllToAllUS: 20, AllToAllNormalUS: 60, Imbalance: 0.3, EPLBImbalance: 0.05, P2PUS: 20,
	Source: "prior: DeepEP README kernel figures (H800) and DeepSeek-V3's EPLB notes; not fitted (perf/fit TestParallelFit: a per-engine fit does no better on held-out models)",
}

// ParallelEfficiencyFor returns the engine's parallel constants, or the
// fallback "*" entry.
func ParallelEfficiencyFor(engine string) ParallelEfficiency {
	if e, ok := ParallelEfficiencies[engine]; ok {
		return e
	}
	return ParallelEfficiencies["*"]
}
