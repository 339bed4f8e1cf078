package perf

import (
	"fmt"
	"math"
	"strings"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

// Spec is what an engine model is built from.
type Spec struct {
	Model  *catalog.Model
	GPU    *catalog.GPU
	Engine string // serving engine: vllm, sglang or trtllm
	TP     int    // tensor-parallel ranks (GPUs of one replica), ≥ 1
	// Parallel is the worker's layout beyond TP (data, expert and pipeline
	// parallelism, MTP); its TP, when set, must equal TP. The zero value is
	// tensor parallelism alone.
	Parallel     models.Parallelism
	WeightDtype  string // matmul weights: bf16, fp16, fp8, int8, int4, mxfp4, nvfp4, fp4; "" = the model's
	KVDtype      string // "" = the model's
	EnforceEager bool   // no CUDA graphs
	GraphMax     int    // largest iteration captured in a CUDA graph, tokens; 0 = 512 (vLLM's default cap)

	// Link is the network between the NVLink domains (nodes) of a worker
	// that spans more than one; nil when it fits in one.
	Link *catalog.Link
	// EPLB: experts are rebalanced (SGLang --enable-eplb, TRT-LLM's load
	// balancer); RedundantExperts replicas of the hottest experts are added
	// (implies EPLB; E + redundant must divide by EP).
	EPLB             bool
	RedundantExperts int
	// TwoBatchOverlap: the step runs as two micro-batches whose all-to-all
	// overlaps the other's compute (SGLang --enable-two-batch-overlap,
	// DeepSeek's dual micro-batch overlap): the all-to-all and the rest of
	// the step take the longer of the two instead of their sum.
	TwoBatchOverlap bool
	// ParallelEfficiency overrides the engine's parallel constants
	// (ParallelEfficiencies); nil = the engine's.
	ParallelEfficiency *ParallelEfficiency

	// Efficiency is the fitted efficiencies to use. Leave it nil and give
	// Catalog to look them up for GPU × Engine × weight dtype.
	Efficiency *catalog.Efficiency
	Catalog    *catalog.Catalog
}

// Model is an engine performance model for one model on one GPU type under
// one engine and tensor parallelism. It is immutable once built, so one
// Model may serve many goroutines.
type Model struct {
	Name        string // "llama-3.1-8b on 1 × h100-sxm, vllm, bf16 weights"
	Efficiency  catalog.Efficiency
	Fallback    string   // how the efficiencies were chosen when no exact entry exists; "" = exact
	Notes       []string // other assumptions (dtype without a tensor path of its own, missing interconnect)
	TP          int
	WeightDtype string
	KV          *models.KV

	par     *parallel // the layout beyond tp (parallel.go); nil: tensor parallelism alone
	parDesc *ParallelDesc

	peakTFLOPS float64 // dense peak of the weight dtype's tensor path
	peakDtype  string  // the dtype whose peak is used
	bf16TFLOPS float64
	bwBytesS   float64 // memory bandwidth
	icBytesS   float64 // interconnect bandwidth, one direction

	layers       float64
	stepMS       float64 // fixed per iteration
	graphLayerMS float64 // layers × layer_us
	eagerLayerMS float64 // layers × eager_layer_us
	graphMax     float64
	graphPrefill bool // CUDA graphs cover iterations with prefill chunks (vLLM's piecewise graphs)
	eager        bool

	gemmFLOPms float64 // FLOP per ms that large GEMMs reach (weight dtype)
	lmFLOPms   float64 // FLOP per ms of the bf16 lm head
	attnFLOPms float64 // FLOP per ms of attention (bf16)
	memBms     float64 // bytes per ms of weight and KV streaming
	moeFLOPms  float64
	moeBms     float64

	denseFLOPTok  float64 // 2 × dense matmul params per rank
	denseBytes    float64 // dense weight bytes per rank
	expertFLOPTok float64 // 2 × routed active params per rank
	expertBytes   float64 // one expert's weights, every MoE layer, per rank
	experts       float64
	logMiss       float64 // log(1 − k/E): a token misses a given expert
	lmFLOPSeq     float64 // 2 × vocab × hidden per rank, per sequence
	lmBytes       float64 // vocab × hidden × 2 B per rank

	groups     []attnGroup
	stateBytes float64 // linear-attention state of one sequence, per rank

	arCount    float64 // all-reduces per iteration (2 per layer with tp > 1)
	arLatMS    float64
	arSmallMS  float64 // latency of an all-reduce of at most arSmallTok tokens (custom all-reduce); 0: arLatMS
	arSmallTok float64
	arBytesTok float64     // bytes each rank moves per token and all-reduce (ring: 2 (tp−1)/tp × hidden × 2 B)
	icBms      float64     // interconnect bytes per ms reached
	seqMS      float64     // host cost per sequence of an iteration (Efficiency.SeqUS)
	eagerOver  bool        // eager launches overlap GPU time (Efficiency.EagerOverlap)
	actKernels []actKernel // the activation kernels (Efficiency.ActivationTraffic); nil: off
	l2Bytes    float64     // the GPU's L2 cache; 0: not in the catalog
}

// attnGroup is the attention arithmetic of one layer group, per rank.
type attnGroup struct {
	window       int     // 0 = full attention
	pairFLOP     float64 // FLOPs per causal (query, key) pair in a prefill, all layers of the group
	decodeFLOP   float64 // FLOPs per context token of one decoding sequence, all layers of the group
	kvBytesToken float64 // KV bytes per token, all layers of the group
}

// New builds the engine model of spec. It fails on impossible settings: a tp
// that does not divide the attention heads, an unknown dtype, or no
// efficiencies for the combination.
func New(spec Spec) (*Model, error) {
	m, g := spec.Model, spec.GPU
	switch {
	case m == nil:
		return nil, fmt.Errorf("no model given")
	case g == nil:
		return nil, fmt.Errorf("no gpu given")
	case spec.Engine == "":
		return nil, fmt.Errorf("no engine given (vllm, sglang or trtllm)")
	case spec.TP < 1:
		return nil, fmt.Errorf("tp must be >= 1 (got %d)", spec.TP)
	case m.AttentionHeads > 0 && m.AttentionHeads%spec.TP != 0:
		return nil, fmt.Errorf("tp %d does not divide the %d attention heads of %s; engines split heads evenly across ranks", spec.TP, m.AttentionHeads, m.Name)
	case spec.Parallel.TP != 0 && spec.Parallel.TP != spec.TP:
		return nil, fmt.Errorf("parallel layout %s disagrees with tp %d", spec.Parallel, spec.TP)
	case m.HiddenSize <= 0 || m.VocabSize <= 0 || m.AttentionHeads <= 0:
		return nil, fmt.Errorf("model %s lacks hidden_size, vocab_size or attention_heads, which the engine model needs", m.Name)
	}
	dtype := strings.ToLower(spec.WeightDtype)
	if dtype == "" {
		dtype = m.WeightDtype
	}
	wb, ok := catalog.DtypeBytes(dtype)
	if !ok {
		return nil, fmt.Errorf("weight dtype %q is not one of bf16, fp16, fp8, int8, int4, mxfp4, nvfp4, fp4", dtype)
	}
	kv, err := models.NewKV(m, models.KVOptions{KVDtype: spec.KVDtype, TP: spec.TP})
	if err != nil {
		return nil, err
	}
	sched, ok := Schedules[spec.Engine]
	if !ok {
		return nil, fmt.Errorf("engine %q is not one the engine model knows (%s)", spec.Engine, strings.Join(Engines(), ", "))
	}
	out := &Model{TP: spec.TP, WeightDtype: dtype, KV: kv, eager: spec.EnforceEager, graphMax: float64(spec.GraphMax),
		graphPrefill: sched.GraphsCoverPrefill}
	if out.graphMax <= 0 {
		out.graphMax = 512
	}
	eff, err := efficiencyOf(spec, dtype, out)
	if err != nil {
		return nil, err
	}
	out.Efficiency = eff
	out.Name = fmt.Sprintf("%s on %d × %s, %s, %s weights", m.Name, spec.TP, g.Name, spec.Engine, dtype)

	out.peakTFLOPS, out.peakDtype = peakFor(g, dtype)
	fp4 := dtype == "fp4" || dtype == "nvfp4" || dtype == "mxfp4"
	if out.peakDtype != dtype && !(dtype == "int4" && out.peakDtype == "bf16") && !(fp4 && out.peakDtype == "bf16") {
		out.Notes = append(out.Notes, fmt.Sprintf("%s has no %s tensor path in the catalog: %s matmuls run at its %s peak (%g TFLOP/s)", g.Name, dtype, dtype, out.peakDtype, out.peakTFLOPS))
	}
	if dtype == "int4" {
		out.Notes = append(out.Notes, "int4 weights are weight-only: matmuls run at the bf16 peak, weights are read at 4 bits")
	}
	if fp4 && out.peakDtype == "bf16" {
		out.Notes = append(out.Notes, fmt.Sprintf("%s has no fp4 tensor path: %s weights are weight-only here (dequantised in the kernel, bf16 maths at %g TFLOP/s), read at 4 bits", g.Name, dtype, out.peakTFLOPS))
	}
	out.bf16TFLOPS = g.BF16TFLOPS
	out.bwBytesS = g.MemoryBandwidthBytes
	out.icBytesS = g.InterconnectBandwidthBytes
	if out.icBytesS <= 0 && spec.TP > 1 {
		out.icBytesS = 25e9
		out.Notes = append(out.Notes, fmt.Sprintf("%s has no interconnect bandwidth in the catalog: all-reduces are taken over PCIe Gen4 (25 GB/s measured, FACTS.md §3)", g.Name))
	}

	tp := float64(spec.TP)
	L := float64(m.Layers)
	out.layers = L
	out.stepMS = eff.StepMS
	out.graphLayerMS = L * eff.LayerUS / 1000
	out.eagerLayerMS = L * eff.EagerLayerUS / 1000

	out.gemmFLOPms = out.peakTFLOPS * 1e12 * eff.GEMM / 1000
	out.lmFLOPms = out.bf16TFLOPS * 1e12 * eff.GEMM / 1000
	out.attnFLOPms = out.bf16TFLOPS * 1e12 * eff.Attention / 1000
	out.memBms = out.bwBytesS * eff.Memory / 1000
	out.moeFLOPms = out.gemmFLOPms * eff.MoE
	out.moeBms = out.memBms * eff.MoE
	if eff.MoEMemory > 0 {
		out.moeBms = out.memBms * eff.MoEMemory
	}
	out.eagerOver = eff.EagerOverlap

	H, V := float64(m.HiddenSize), float64(m.VocabSize)
	matmul := float64(models.MatmulParams(m))
	routed, routedActive := models.RoutedExpertParams(m)
	dense := matmul - float64(routedActive)
	out.denseFLOPTok = 2 * dense / tp
	out.denseBytes = dense * wb / tp
	if routed > 0 {
		E, k := float64(m.MoE.Experts), float64(m.MoE.ExpertsPerToken)
		out.experts = E
		out.logMiss = math.Log1p(-k / E)
		out.expertFLOPTok = 2 * float64(routedActive) / tp
		out.expertBytes = float64(routed) / E * wb / tp
	}
	out.lmFLOPSeq = 2 * V * H / tp
	out.lmBytes = V * H * 2 / tp

	out.groups, out.stateBytes = attentionGroups(m, kv, spec.TP)
	if eff.ActivationTraffic {
		out.actKernels = activationKernels(m, spec.TP)
		out.l2Bytes = float64(g.L2CacheBytes)
	}
	out.seqMS = eff.SeqUS / 1000
	if spec.TP > 1 {
		out.arCount = 2 * L
		out.arLatMS = eff.AllReduceUS / 1000
		out.arBytesTok = 2 * (tp - 1) / tp * H * 2
		out.icBms = out.icBytesS * eff.Interconnect / 1000
		if eff.CustomAllReduceUS > 0 && strings.HasPrefix(g.Interconnect, "nvlink") {
			// Activations are bf16: a step of T tokens all-reduces T × hidden × 2 B.
			out.arSmallMS = eff.CustomAllReduceUS / 1000
			out.arSmallTok = math.Floor(CustomAllReduceBytes / (H * 2))
		}
	}
	if !spec.Parallel.Plain() || spec.RedundantExperts > 0 || spec.EPLB || spec.Link != nil || spec.TwoBatchOverlap {
		if err := newParallel(spec, out, wb); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MatmulFloorMS is the least time one rank's matmuls of a token take (the
// dense and the routed experts' active weights, lm head left out) at the
// tensor peak of the weight dtype's path, with no efficiency: a floor that
// no kernel beats. perf/fit's TestMeasuredWithinPeak checks the measured
// runs against it.
func (m *Model) MatmulFloorMS() float64 {
	return (m.denseFLOPTok + m.expertFLOPTok) / (m.peakTFLOPS * 1e9)
}

// ActivationBytesPerToken is the memory traffic of one token's activations
// through every layer on one tensor-parallel rank of tp, in bytes (bf16
// activations, 2 B an element), before the L2 cache takes its share (see
// activationKernels).
func ActivationBytesPerToken(m *catalog.Model, tp int) float64 {
	var b float64
	for _, k := range activationKernels(m, tp) {
		b += k.count * k.bytesTok
	}
	return b
}

// actKernel is one class of memory-bound activation kernel: bytesTok a token
// in one layer, count of them over the model's layers.
type actKernel struct{ bytesTok, count float64 }

// activationKernels counts the activation kernels kernel by kernel:
//
//   - two residual-add + RMSNorms a layer, each reading the hidden state and
//     the residual and writing both: 4 × hidden elements, on the full hidden
//     (after an all-reduce every rank holds it whole), so not divided by tp;
//   - the gated MLP's activation (SiLU or GELU of the gate times the up
//     projection), reading 2 × intermediate and writing 1 × intermediate,
//     intermediate split by tp: 3 × intermediate = the MLP's parameters /
//     hidden. Dense MLPs (shared experts included) are the dense matmul
//     parameters less attention's (2 × hidden × (q heads + KV heads) ×
//     head_dim a layer); for MLA and linear-attention models, whose
//     attention parameters the catalog does not give, only the routed
//     experts are counted; the routed experts add their active parameters /
//     hidden;
//   - the MoE combine: each of the k expert outputs written and read back to
//     sum them, 2 × k × hidden elements a layer, on every rank.
//
// Matmul inputs and outputs are left to the GEMM terms; the attention
// kernels' reads to the attention and KV terms. Every MoE model is taken to
// route in every layer (DeepSeek-V3's 3 dense layers of 61 are counted as
// MoE): an estimate.
func activationKernels(m *catalog.Model, tp int) []actKernel {
	H, L, t := float64(m.HiddenSize), float64(m.Layers), float64(tp)
	ks := []actKernel{{bytesTok: 2 * 4 * H, count: 2 * L}}
	_, routedActive := models.RoutedExpertParams(m)
	dense := float64(models.MatmulParams(m)) - float64(routedActive)
	plain := m.MLA == nil && m.HeadDim > 0
	for _, g := range m.Layout {
		if g.Kind == catalog.LayerLinear || g.Kind == catalog.LayerMamba {
			plain = false
		}
	}
	var mlp float64 // the MLP activation's elements a token, every layer
	if plain {
		attn := 2 * H * float64(m.AttentionHeads+m.KVHeads) * float64(m.HeadDim) * L
		mlp = math.Max(0, dense-attn) / H / t
	}
	mlp += float64(routedActive) / H / t
	if mlp > 0 {
		ks = append(ks, actKernel{bytesTok: 2 * mlp / L, count: L})
	}
	if routedActive > 0 {
		ks = append(ks, actKernel{bytesTok: 2 * 2 * float64(m.MoE.ExpertsPerToken) * H, count: L})
	}
	return ks
}

// activationMS is the activation kernels of an iteration of T tokens on one
// rank: each kernel's bytes at the memory efficiency, less what the L2
// cache holds: a kernel whose T tokens' activations (S bytes, read just
// after the kernel before wrote them) fit in L2 leaves memory alone, and a
// larger one pays for the share 1 − L2 / S that does not fit. A GPU with
// no L2 figure in the catalog pays for all of it.
func (m *Model) activationMS(T float64) float64 {
	var b float64
	for _, k := range m.actKernels {
		s := T * k.bytesTok
		if m.l2Bytes > 0 {
			s = math.Max(0, s-m.l2Bytes)
		}
		b += k.count * s
	}
	return b / m.memBms
}

// CustomAllReduceBytes is the largest all-reduce the engines' custom
// all-reduce kernels take on NVLink (vLLM's CustomAllreduce max_size,
// 8 MiB, which SGLang reuses); larger ones go to NCCL.
const CustomAllReduceBytes = 8 << 20

// allReduceMS is the tensor-parallel all-reduces of a step of T tokens.
func (m *Model) allReduceMS(T float64) float64 {
	if m.arCount == 0 {
		return 0
	}
	lat := m.arLatMS
	if m.arSmallMS > 0 && T <= m.arSmallTok {
		lat = m.arSmallMS
	}
	return m.arCount * (lat + T*m.arBytesTok/m.icBms)
}

// efficiencyOf returns the spec's efficiencies, or looks them up.
func efficiencyOf(spec Spec, dtype string, out *Model) (catalog.Efficiency, error) {
	if spec.Efficiency != nil {
		return *spec.Efficiency, nil
	}
	if spec.Catalog == nil {
		return catalog.Efficiency{}, fmt.Errorf("no efficiencies given and no catalog to look them up in")
	}
	match, err := spec.Catalog.EfficiencyFor(spec.GPU.Name, spec.Engine, dtype)
	if err != nil {
		return catalog.Efficiency{}, err
	}
	out.Fallback = match.Fallback
	return *match.Efficiency, nil
}

// peakFor returns the dense TFLOP/s a matmul of weight dtype runs at on g,
// and the dtype of the tensor path it uses: the dtype's own, else the next
// wider one the GPU has (fp8 → bf16). int4 weights are weight-only
// (W4A16): the bf16 path; so are fp4 weights on a GPU without an fp4
// tensor path (W4A16 as the engines run them there, not fp8 maths).
func peakFor(g *catalog.GPU, dtype string) (float64, string) {
	switch dtype {
	case "fp4", "nvfp4", "mxfp4":
		if g.FP4TFLOPS > 0 {
			return g.FP4TFLOPS, dtype
		}
		// No fp4 tensor path (Hopper, Ada, Ampere): the engines dequantise
		// in the kernel and multiply in bf16 (vLLM: "Your GPU does not have
		// native support for FP4 computation ... Weight-only FP4 compression
		// will be used leveraging the Marlin kernel"; gpt-oss's mxfp4 experts
		// on Hopper run triton_kernels' matmul_ogs on bf16 activations).
		return g.BF16TFLOPS, "bf16"
	case "fp8":
		if g.FP8TFLOPS > 0 {
			return g.FP8TFLOPS, "fp8"
		}
	case "int8":
		if g.INT8TOPS > 0 {
			return g.INT8TOPS, "int8"
		}
		if g.FP8TFLOPS > 0 {
			return g.FP8TFLOPS, "fp8"
		}
	case "fp16":
		if g.FP16TFLOPS > 0 {
			return g.FP16TFLOPS, "fp16"
		}
	}
	return g.BF16TFLOPS, "bf16"
}

// attentionGroups turns the model's KV groups into attention arithmetic per
// rank: FLOPs per prefill pair and per decode context token, KV bytes per
// token, and the linear-attention state of one sequence.
func attentionGroups(m *catalog.Model, kv *models.KV, tp int) ([]attnGroup, float64) {
	qh := float64(m.AttentionHeads) / float64(tp)
	var gs []attnGroup
	var state float64
	for _, g := range kv.Groups {
		n := float64(g.Count)
		switch g.Kind {
		case catalog.LayerLinear:
			state += n * float64(g.StateBytesEach)
			continue
		case "mla":
			// Prefill runs MLA as multi-head attention over the decompressed
			// keys (qk = head_dim = nope + rope) and values (v = nope);
			// decode runs the absorbed form over the latent (kv_lora + rope
			// scores, kv_lora values).
			qk := float64(m.HeadDim)
			if qk <= 0 {
				qk = float64(m.MLA.KVLoraRank/4 + m.MLA.QKRopeHeadDim)
			}
			v := qk - float64(m.MLA.QKRopeHeadDim)
			lat := float64(m.MLA.KVLoraRank)
			gs = append(gs, attnGroup{
				pairFLOP:     n * 2 * qh * (qk + v),
				decodeFLOP:   n * 2 * qh * (2*lat + float64(m.MLA.QKRopeHeadDim)),
				kvBytesToken: float64(g.BytesPerToken()),
			})
			continue
		}
		d := float64(g.HeadDim)
		gs = append(gs, attnGroup{
			window:       g.Window,
			pairFLOP:     n * 4 * qh * d,
			decodeFLOP:   n * 4 * qh * d,
			kvBytesToken: float64(g.BytesPerToken()),
		})
	}
	return gs, state
}
