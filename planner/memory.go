package planner

import (
	"fmt"
	"math"
	"strings"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/units"
)

// KV buffer devices of a KV connector (vLLM's kv_buffer_device).
const (
	KVBufferCPU = "cpu" // KV is staged in host memory for transfer (needed over TCP, FACTS.md §3)
	KVBufferGPU = "gpu" // KV moves from GPU memory directly; nothing is staged on the host
)

// MemoryScenario is one worker's memory configuration: the model, the GPU,
// the engine flags, and the host side (container limit and KV staging).
type MemoryScenario struct {
	Model  *catalog.Model
	KV     models.KVOptions // KV dtype and tensor parallelism
	GPU    *catalog.GPU
	Engine *catalog.Engine

	GPUUtil             float64 // --gpu-memory-utilization, in (0, 1]
	EnforceEager        bool    // --enforce-eager: no CUDA graphs
	MaxModelLen         int     // 0 = the model's max_context
	BlockSize           int     // tokens per KV block, > 0 (the engine's DefaultBlockSize is 16)
	MaxNumBatchedTokens int     // 0 = the engine's default for this GPU
	MaxNumSeqs          int     // 0 = the engine's default for this GPU

	LimitBytes       int64  // the worker's host memory limit; 0 = none
	KVBuffer         string // KVBufferCPU or KVBufferGPU; "" = gpu (vLLM's default device)
	Concurrency      int    // requests in flight (transfers staged at once); 0 = 1
	InputTokens      int    // tokens of one request's KV; 0 = max_model_len
	BaselineRSSBytes int64  // the worker's idle resident set; 0 = the engine's
}

// MemoryPlan is a worker's GPU KV capacity and host-memory headroom. GPU
// figures are per tensor-parallel rank (each rank is one GPU); host figures
// are for the whole worker, whose ranks stage their KV in one container.
type MemoryPlan struct {
	Model   string  `json:"model"`
	GPU     string  `json:"gpu"`
	Engine  string  `json:"engine"`
	KVDtype string  `json:"kv_dtype"`
	TP      int     `json:"tp"`
	GPUUtil float64 `json:"gpu_util"`

	EnforceEager        bool `json:"enforce_eager"`
	MaxModelLen         int  `json:"max_model_len"`
	BlockSize           int  `json:"block_size"`
	MaxNumBatchedTokens int  `json:"max_num_batched_tokens"`
	MaxNumSeqs          int  `json:"max_num_seqs"`

	KVBytesPerToken     int64 `json:"kv_bytes_per_token"`      // per rank, every attention layer
	FullKVBytesPerToken int64 `json:"full_kv_bytes_per_token"` // per rank, layers that keep every token

	GPUMemoryBytes  int64 `json:"gpu_memory_bytes"`
	RequestedBytes  int64 `json:"requested_bytes"`  // total × util
	WeightsBytes    int64 `json:"weights_bytes"`    // per rank
	ActivationBytes int64 `json:"activation_bytes"` // peak of the profile run
	NonTorchBytes   int64 `json:"non_torch_bytes"`
	CUDAGraphBytes  int64 `json:"cuda_graph_bytes"` // 0 with enforce-eager
	KVCacheBytes    int64 `json:"kv_cache_bytes"`   // left for the KV cache; 0 when nothing is left
	KVBlocks        int64 `json:"kv_blocks"`        // blocks of the full-attention layers
	KVSlotsTokens   int64 `json:"kv_slots_tokens"`  // kv_blocks × block_size, full-attention tokens

	ModelFits                 bool  `json:"model_fits"`                    // weights and overheads leave room for a KV cache
	MaxModelLenFits           bool  `json:"max_model_len_fits"`            // vLLM starts: one max_model_len request fits
	LargestFittingMaxModelLen int   `json:"largest_fitting_max_model_len"` // 0 when not even one token fits
	MaxModelLenRequestBytes   int64 `json:"max_model_len_request_bytes"`   // KV one max_model_len request reserves, per rank
	MaxConcurrentAtMaxLen     int64 `json:"max_concurrent_at_max_len"`     // whole requests of max_model_len tokens

	KVBuffer             string  `json:"kv_buffer"`
	Concurrency          int     `json:"concurrency"`
	InputTokens          int     `json:"input_tokens"`
	RequestKVBytes       int64   `json:"request_kv_bytes"` // one request of input_tokens, all ranks
	HostBaselineRSSBytes int64   `json:"host_baseline_rss_bytes"`
	HostRetention        float64 `json:"host_retention"`
	HostMarginBytes      int64   `json:"host_margin_bytes"`
	HostStagedBytes      int64   `json:"host_staged_bytes"` // in flight × request KV × retention; 0 with a gpu buffer
	HostRequiredBytes    int64   `json:"host_required_bytes"`
	HostLimitBytes       int64   `json:"host_limit_bytes"`     // 0 = no limit given
	HostHeadroomBytes    int64   `json:"host_headroom_bytes"`  // limit − required; 0 without a limit
	HostFits             bool    `json:"host_fits"`            // required ≤ limit, or no limit
	MaxSafeConcurrency   int64   `json:"max_safe_concurrency"` // -1 = unbounded (no limit, or nothing staged)
	MinSafeLimitBytes    int64   `json:"min_safe_limit_bytes"` // required, rounded up to a whole MiB
	DecodeStagedBytes    int64   `json:"decode_staged_bytes"`  // KV that must be held before concurrency transfers land

	Findings    []string   `json:"findings"`
	Assumptions []string   `json:"assumptions"`
	NotModelled []string   `json:"not_modelled"`
	Derivation  Derivation `json:"derivation,omitempty"`

	kv               *models.KV
	concurrencyGiven bool
}

// memoryNotModelled lists what the memory estimate leaves out.
var memoryNotModelled = []string{
	"memory used by other processes on the GPU (vLLM refuses to start when free memory is below total × util)",
	"the peak activation of multimodal encoders, LoRA adapters and speculative-decoding drafts",
	"prefix-cache sharing between requests (it lowers the KV per request on both GPU and host)",
	"the engine's own host buffers for CPU KV offloading (--kv-offloading-size / swap space)",
}

const mib = 1 << 20

// PlanMemory computes a worker's GPU KV capacity the way vLLM's profile run
// does, its verdicts, and its host-memory headroom. It returns an error only
// for bad input; a plan that does not fit is reported as findings.
func PlanMemory(sc MemoryScenario) (*MemoryPlan, error) {
	if err := sc.check(); err != nil {
		return nil, err
	}
	kvOpts := sc.KV
	if kvOpts.Engine == "" {
		kvOpts.Engine = sc.Engine.Name // linear and Mamba state follow the engine's convention
	}
	kv, err := models.NewKV(sc.Model, kvOpts)
	if err != nil {
		return nil, err
	}
	w, err := models.NewWeights(sc.Model, kv.TP)
	if err != nil {
		return nil, err
	}
	e, g, m := sc.Engine, sc.GPU, sc.Model
	p := &MemoryPlan{
		Model: m.Name, GPU: g.Name, Engine: e.Name, KVDtype: kv.KVDtype, TP: kv.TP,
		GPUUtil: sc.GPUUtil, EnforceEager: sc.EnforceEager, BlockSize: sc.BlockSize,
		KVBytesPerToken: kv.BytesPerToken(), FullKVBytesPerToken: kv.FullBytesPerToken(),
		GPUMemoryBytes: g.MemoryBytes, NotModelled: memoryNotModelled, Findings: []string{}, kv: kv,
	}
	p.MaxModelLen = sc.MaxModelLen
	if p.MaxModelLen == 0 {
		p.MaxModelLen = m.MaxContext
	}
	large := e.IsLargeGPU(g.Name, g.MemoryBytes)
	p.MaxNumBatchedTokens, p.MaxNumSeqs = sc.MaxNumBatchedTokens, sc.MaxNumSeqs
	if p.MaxNumBatchedTokens == 0 {
		p.MaxNumBatchedTokens = e.DefaultMaxNumBatchedTokens
		if large {
			p.MaxNumBatchedTokens = e.LargeMaxNumBatchedTokens
		}
		p.Assumptions = append(p.Assumptions, fmt.Sprintf("max_num_batched_tokens %d: %s's default for %s (%s)",
			p.MaxNumBatchedTokens, e.Name, g.Name, e.SourceOf(pick(large, "large_gpu_max_num_batched_tokens", "default_max_num_batched_tokens"))))
	}
	if p.MaxNumSeqs == 0 {
		p.MaxNumSeqs = e.DefaultMaxNumSeqs
		if large {
			p.MaxNumSeqs = e.LargeMaxNumSeqs
		}
		p.Assumptions = append(p.Assumptions, fmt.Sprintf("max_num_seqs %d: %s's default for %s (%s)",
			p.MaxNumSeqs, e.Name, g.Name, e.SourceOf(pick(large, "large_gpu_max_num_seqs", "default_max_num_seqs"))))
	}
	p.Assumptions = append(p.Assumptions, models.TiedEmbeddingsConvention, models.MTPConvention)

	d := &p.Derivation
	p.gpuSide(sc, w, d)
	p.verdicts(sc)
	p.hostSide(sc, d)
	return p, nil
}

func (sc *MemoryScenario) check() error {
	switch {
	case sc.Model == nil:
		return fmt.Errorf("no model given")
	case sc.GPU == nil:
		return fmt.Errorf("no GPU given")
	case sc.Engine == nil:
		return fmt.Errorf("no engine given")
	case math.IsNaN(sc.GPUUtil) || sc.GPUUtil <= 0 || sc.GPUUtil > 1:
		return fmt.Errorf("gpu utilization %g is outside (0, 1]: give the fraction of GPU memory the engine may use, e.g. 0.9", sc.GPUUtil)
	case sc.BlockSize <= 0:
		return fmt.Errorf("block size must be > 0 (got %d); vLLM's default is %d", sc.BlockSize, sc.Engine.DefaultBlockSize)
	case sc.KV.TP < 0:
		return fmt.Errorf("tp must be >= 1 (got %d)", sc.KV.TP)
	case sc.MaxModelLen < 0:
		return fmt.Errorf("max model len must be >= 0 (got %d); 0 means the model's max context", sc.MaxModelLen)
	case sc.MaxModelLen == 0 && sc.Model.MaxContext <= 0:
		return fmt.Errorf("model %s has no max_context in the catalog: give --max-model-len", sc.Model.Name)
	case sc.Model.MaxContext > 0 && sc.MaxModelLen > sc.Model.MaxContext:
		return fmt.Errorf("max model len %d is above %s's max context %d: vLLM refuses it (unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)",
			sc.MaxModelLen, sc.Model.Name, sc.Model.MaxContext)
	case sc.MaxNumBatchedTokens < 0:
		return fmt.Errorf("max num batched tokens must be >= 0 (got %d); 0 means the engine's default", sc.MaxNumBatchedTokens)
	case sc.MaxNumSeqs < 0:
		return fmt.Errorf("max num seqs must be >= 0 (got %d); 0 means the engine's default", sc.MaxNumSeqs)
	case sc.LimitBytes < 0:
		return fmt.Errorf("memory limit %d is negative: give a Kubernetes quantity such as 3584Mi, or 0 for none", sc.LimitBytes)
	case sc.KVBuffer != "" && sc.KVBuffer != KVBufferCPU && sc.KVBuffer != KVBufferGPU:
		return fmt.Errorf("kv buffer %q is not one of cpu, gpu", sc.KVBuffer)
	case sc.Concurrency < 0:
		return fmt.Errorf("concurrency must be >= 0 (got %d)", sc.Concurrency)
	case sc.InputTokens < 0:
		return fmt.Errorf("input tokens must be >= 0 (got %d); 0 means max model len", sc.InputTokens)
	case sc.BaselineRSSBytes < 0:
		return fmt.Errorf("baseline RSS %d is negative", sc.BaselineRSSBytes)
	}
	return nil
}

// gpuSide follows vLLM's determine_available_memory:
// kv = total × util − weights − peak activation − non-torch − CUDA graphs.
func (p *MemoryPlan) gpuSide(sc MemoryScenario, w *models.Weights, d *Derivation) {
	e, g, m := sc.Engine, sc.GPU, sc.Model
	tp := p.TP

	requested := float64(g.MemoryBytes) * sc.GPUUtil
	p.RequestedBytes = int64(requested)
	d.Add("requested_bytes", float64(p.RequestedBytes), "B", "gpu memory × gpu_memory_utilization",
		"%d × %g", g.MemoryBytes, sc.GPUUtil)
	d.Note("vLLM gpu_worker.py init_device: requested_memory = total_memory × gpu_memory_utilization")

	p.WeightsBytes = w.PerRankBytes
	if w.FromCatalog {
		d.Add("weights_bytes", float64(p.WeightsBytes), "B", "ceil(weights_bytes from the catalog / tp)",
			"ceil(%d / %d)", w.TotalBytes, tp)
	} else {
		d.Add("weights_bytes", float64(p.WeightsBytes), "B", "ceil(params_total × bytes per weight / tp)",
			"ceil(%d × %g / %d)", w.Params, w.BytesPerParam, tp)
	}
	if m.TiedEmbeddings {
		d.Note(models.TiedEmbeddingsConvention)
	}

	// Peak activation of the profile run: a forward of max_num_batched_tokens
	// tokens, then the sampler on the logits of min(max_num_seqs, tokens) requests.
	mlp := models.MLPWidth(m)
	perToken := float64(e.ActivationElementBytes) * (e.ActivationHiddenCopies*float64(m.HiddenSize) + e.ActivationMLPCopies*mlp/float64(tp))
	if m.MLA != nil || m.AttentionHeads == 0 {
		d.Add("mlp_width", mlp, "elements/token", "(params_active − embedding params) / layers / hidden",
			"(%d − %d) / %d / %d", activeParams(m), embeddingParams(m), m.Layers, m.HiddenSize)
		d.Note("3 × intermediate_size for a gated MLP (all active experts); the attention projections are not in the catalog and stay in it (over-estimate)")
	} else {
		d.Add("mlp_width", mlp, "elements/token", "(params_active − embedding params) / layers / hidden − head_dim × (2 × attention_heads + 2 × kv_heads)",
			"(%d − %d) / %d / %d − %d × (2 × %d + 2 × %d)", activeParams(m), embeddingParams(m), m.Layers, m.HiddenSize, m.HeadDim, m.AttentionHeads, m.KVHeads)
		d.Note("3 × intermediate_size for a gated MLP (all active experts); q, k, v and o projections taken out")
	}
	d.Add("activation_bytes_per_token", perToken, "B/token",
		"activation_element_bytes × (activation_hidden_copies × hidden + activation_mlp_copies × mlp_width / tp)",
		"%d × (%g × %d + %g × %.1f / %d)", e.ActivationElementBytes, e.ActivationHiddenCopies, m.HiddenSize, e.ActivationMLPCopies, mlp, tp)
	d.Note(e.SourceOf("activation_mlp_copies"))
	forward := perToken * float64(p.MaxNumBatchedTokens)
	d.Add("forward_activation_bytes", forward, "B", "max_num_batched_tokens × activation_bytes_per_token",
		"%d × %.1f", p.MaxNumBatchedTokens, perToken)
	seqs := min(p.MaxNumSeqs, p.MaxNumBatchedTokens)
	sampler := float64(seqs) * float64(m.VocabSize) * e.SamplerBytesPerLogit
	d.Add("sampler_activation_bytes", sampler, "B", "min(max_num_seqs, max_num_batched_tokens) × vocab_size × sampler_bytes_per_logit",
		"%d × %d × %g", seqs, m.VocabSize, e.SamplerBytesPerLogit)
	d.Note(e.SourceOf("sampler_bytes_per_logit"))
	p.ActivationBytes = int64(math.Ceil(forward + sampler))
	d.Add("activation_bytes", float64(p.ActivationBytes), "B", "forward_activation_bytes + sampler_activation_bytes",
		"%.0f + %.0f", forward, sampler)

	p.NonTorchBytes = e.NonTorchBytes
	d.Add("non_torch_bytes", float64(p.NonTorchBytes), "B", "engine constant non_torch", "%s", sizeText(e.NonTorch, e.NonTorchBytes))
	d.Note(e.SourceOf("non_torch"))

	if sc.EnforceEager {
		d.Add("cuda_graph_bytes", 0, "B", "0 with --enforce-eager (no CUDA graphs are captured)", "0")
	} else {
		capture := min(e.CUDAGraphMaxTokens, 2*p.MaxNumSeqs, p.MaxNumBatchedTokens)
		graphs := float64(e.CUDAGraphBaseBytes) + float64(e.CUDAGraphPerLayerBytes)*float64(m.Layers) + float64(capture)*perToken
		p.CUDAGraphBytes = int64(math.Ceil(graphs))
		d.Add("cuda_graph_bytes", float64(p.CUDAGraphBytes), "B",
			"cuda_graph_base + cuda_graph_per_layer × layers + min(cuda_graph_max_tokens, 2 × max_num_seqs) × activation_bytes_per_token",
			"%d + %d × %d + %d × %.1f", e.CUDAGraphBaseBytes, e.CUDAGraphPerLayerBytes, m.Layers, capture, perToken)
		d.Note(e.SourceOf("cuda_graph_base"))
	}

	kvBytes := p.RequestedBytes - p.WeightsBytes - p.ActivationBytes - p.NonTorchBytes - p.CUDAGraphBytes
	d.Add("kv_cache_bytes", float64(kvBytes), "B",
		"requested_bytes − weights_bytes − activation_bytes − non_torch_bytes − cuda_graph_bytes",
		"%d − %d − %d − %d − %d", p.RequestedBytes, p.WeightsBytes, p.ActivationBytes, p.NonTorchBytes, p.CUDAGraphBytes)
	d.Note("vLLM gpu_worker.py determine_available_memory: requested_memory − non_kv_cache_memory")
	p.ModelFits = kvBytes > 0
	if kvBytes < 0 {
		kvBytes = 0
	}
	p.KVCacheBytes = kvBytes
	p.kvCapacity(d)
}

// kvCapacity turns the KV bytes into blocks, slots and concurrency.
//
// vLLM checks that one request of max_model_len fits (kv_cache_utils.py,
// check_enough_kv_cache_memory) with each layer group's max_memory_usage:
// ceil(len / block) blocks for a full-attention layer, and
// ceil(min(window − 1 + max_num_batched_tokens, len) / block) + 1 blocks for
// a sliding-window layer. The same per-request reservation gives the max
// concurrency at max_model_len.
//
// Slots are counted in full-attention tokens: with a hybrid layout vLLM's
// allocator draws the blocks of every layer group from one pool, so the
// sliding layers' windows of the max_concurrent_at_max_len requests are set
// aside first and the rest is divided by the full-attention layers' bytes per
// token (an approximation of the pool's split at full concurrency). A model
// with no full-attention layer counts tokens over all its layers.
func (p *MemoryPlan) kvCapacity(d *Derivation) {
	bs := int64(p.BlockSize)
	L := p.MaxModelLen
	p.MaxModelLenRequestBytes = p.requestReserve(L)
	d.Add("max_model_len_request_bytes", float64(p.MaxModelLenRequestBytes), "B", p.reserveFormula(), "%s", p.reserveValues(L))
	d.Note("vLLM kv_cache_utils.py: KV cache spec max_memory_usage_bytes")
	p.MaxModelLenFits = p.ModelFits && p.MaxModelLenRequestBytes <= p.KVCacheBytes
	if p.MaxModelLenRequestBytes > 0 {
		p.MaxConcurrentAtMaxLen = p.KVCacheBytes / p.MaxModelLenRequestBytes
	}
	d.Add("max_concurrent_at_max_len", float64(p.MaxConcurrentAtMaxLen), "requests",
		"floor(kv_cache_bytes / max_model_len_request_bytes)", "floor(%d / %d)", p.KVCacheBytes, p.MaxModelLenRequestBytes)

	full := p.FullKVBytesPerToken
	if full == 0 { // every layer is windowed (or linear): count tokens over all layers
		full = p.KVBytesPerToken
		if full > 0 {
			p.KVBlocks = p.KVCacheBytes / (bs * full)
		}
		d.Add("kv_blocks", float64(p.KVBlocks), "blocks", "floor(kv_cache_bytes / (block_size × kv_bytes_per_token))",
			"floor(%d / (%d × %d))", p.KVCacheBytes, bs, full)
	} else {
		reserve := p.MaxConcurrentAtMaxLen * (p.MaxModelLenRequestBytes - ceilDiv64(int64(L), bs)*bs*full)
		if reserve == 0 {
			p.KVBlocks = p.KVCacheBytes / (bs * full)
			d.Add("kv_blocks", float64(p.KVBlocks), "blocks", "floor(kv_cache_bytes / (block_size × kv_bytes_per_token))",
				"floor(%d / (%d × %d))", p.KVCacheBytes, bs, full)
		} else {
			d.Add("kv_window_reserve_bytes", float64(reserve), "B",
				"max_concurrent_at_max_len × (max_model_len_request_bytes − ceil(max_model_len / block_size) × block_size × full_kv_bytes_per_token)",
				"%d × (%d − %d × %d × %d)", p.MaxConcurrentAtMaxLen, p.MaxModelLenRequestBytes, ceilDiv64(int64(L), bs), bs, full)
			d.Note("sliding-window and linear-state memory of the requests at max_model_len, set aside before counting full-attention tokens")
			p.KVBlocks = max(0, p.KVCacheBytes-reserve) / (bs * full)
			d.Add("kv_blocks", float64(p.KVBlocks), "blocks", "floor((kv_cache_bytes − kv_window_reserve_bytes) / (block_size × full_kv_bytes_per_token))",
				"floor((%d − %d) / (%d × %d))", p.KVCacheBytes, reserve, bs, full)
		}
	}
	p.KVSlotsTokens = p.KVBlocks * bs
	d.Add("kv_slots_tokens", float64(p.KVSlotsTokens), "tokens", "kv_blocks × block_size", "%d × %d", p.KVBlocks, bs)

	p.LargestFittingMaxModelLen = p.largestFit()
	d.Add("largest_fitting_max_model_len", float64(p.LargestFittingMaxModelLen), "tokens",
		"largest len ≤ max_context whose request reservation ≤ kv_cache_bytes", "%d", p.LargestFittingMaxModelLen)
}

// requestReserve is the KV bytes vLLM reserves for one request of n tokens,
// per rank, summed over the layer groups (models.Group.ReserveBytes).
func (p *MemoryPlan) requestReserve(n int) int64 {
	var b int64
	for _, g := range p.kv.Groups {
		b += g.ReserveBytes(n, p.BlockSize, p.MaxNumBatchedTokens)
	}
	return b
}

func (p *MemoryPlan) reserveFormula() string {
	var parts []string
	for _, g := range p.kv.Groups {
		parts = append(parts, g.ReserveFormula())
	}
	return strings.Join(parts, " + ")
}

func (p *MemoryPlan) reserveValues(n int) string {
	var parts []string
	for _, g := range p.kv.Groups {
		parts = append(parts, g.ReserveValues(n, p.BlockSize, p.MaxNumBatchedTokens))
	}
	return strings.Join(parts, " + ")
}

// largestFit is the largest max_model_len (up to the model's max context)
// whose one-request reservation fits in the KV cache, found by bisection
// (the reservation grows with the length).
func (p *MemoryPlan) largestFit() int {
	if !p.ModelFits {
		return 0
	}
	hi := p.MaxModelLen
	if p.kv.Model.MaxContext > hi {
		hi = p.kv.Model.MaxContext
	}
	if p.requestReserve(hi) <= p.KVCacheBytes {
		return hi
	}
	lo := 0 // fits (trivially)
	for lo < hi-1 {
		mid := lo + (hi-lo)/2
		if p.requestReserve(mid) <= p.KVCacheBytes {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

func (p *MemoryPlan) verdicts(sc MemoryScenario) {
	gib := func(b int64) string { return units.Bytes(b) }
	switch {
	case !p.ModelFits:
		over := p.WeightsBytes + p.ActivationBytes + p.NonTorchBytes + p.CUDAGraphBytes - p.RequestedBytes
		p.Findings = append(p.Findings, fmt.Sprintf(
			"model does not fit: weights %s + peak activation %s + non-torch %s + CUDA graphs %s exceed the %s requested (%s × %g) by %s; "+
				"vLLM will refuse to start (no memory left for the KV cache). Raise --gpu-util, add tensor parallelism, quantize the weights, or pick a larger GPU",
			gib(p.WeightsBytes), gib(p.ActivationBytes), gib(p.NonTorchBytes), gib(p.CUDAGraphBytes),
			gib(p.RequestedBytes), gib(p.GPUMemoryBytes), p.GPUUtil, gib(over)))
	case !p.MaxModelLenFits:
		p.Findings = append(p.Findings, fmt.Sprintf(
			"vLLM will refuse to start: one request of max_model_len %d tokens needs %s of KV cache, but only %s is available; "+
				"the largest max_model_len that fits is %d (or raise --gpu-util, use fp8 KV, or add tensor parallelism)",
			p.MaxModelLen, gib(p.MaxModelLenRequestBytes), gib(p.KVCacheBytes), p.LargestFittingMaxModelLen))
	}
}

// sizeText shows a catalog size as written, or in bytes when the engine was
// built in code.
func sizeText(s string, b int64) string {
	if s == "" {
		return fmt.Sprint(b)
	}
	return s
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

func ceilDiv64(a, b int64) int64 { return (a + b - 1) / b }

func activeParams(m *catalog.Model) int64 {
	if m.ParamsActive > 0 {
		return m.ParamsActive
	}
	return m.ParamsTotal
}

func embeddingParams(m *catalog.Model) int64 {
	e := int64(m.VocabSize) * int64(m.HiddenSize)
	if !m.TiedEmbeddings {
		e *= 2
	}
	return e
}
