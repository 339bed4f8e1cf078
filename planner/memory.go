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
// the engine and its flags, and the host side (container limit, KV staging,
// CPU offload cache).
type MemoryScenario struct {
	Model         *catalog.Model
	KV            models.KVOptions // KV dtype and tensor parallelism
	GPU           *catalog.GPU
	Engine        *catalog.Engine // the entry of the engine's version (catalog.EngineVersion)
	EngineVersion string          // the version it was resolved for; "" = not known
	// VersionDefaulted says EngineVersion is the catalog's newest, not the user's.
	VersionDefaulted bool

	GPUUtil             float64 // the engine's memory fraction (gpu_memory_utilization, mem_fraction_static, free_gpu_memory_fraction), in (0, 1]; 0 = the engine's default
	EnforceEager        bool    // --enforce-eager: no CUDA graphs
	PP                  int     // pipeline-parallel stages; 0 = 1
	MaxModelLen         int     // 0 = the model's max_context
	BlockSize           int     // tokens per KV block; 0 = the engine's default
	MaxNumBatchedTokens int     // 0 = the engine's default for this GPU
	MaxNumSeqs          int     // 0 = the engine's default for this GPU

	Dtype          string // --dtype of the weights: fp32, fp16, bf16; "" = the model's
	Quantization   string // a quantized checkpoint's layout: fp8, int8, int4 (awq, gptq), nvfp4, mxfp4; "" = the model's weight_dtype
	QuantGroupSize int    // int4 scale group; 0 = 128

	LimitBytes           int64  // the worker's host memory limit; 0 = none
	KVBuffer             string // KVBufferCPU or KVBufferGPU; "" = gpu (vLLM's default device)
	Concurrency          int    // requests in flight (transfers staged at once); 0 = 1
	InputTokens          int    // tokens of one request's KV; 0 = max_model_len
	BaselineRSSBytes     int64  // the worker's idle resident set; 0 = the engine's
	CPUOffloadCacheBytes int64  // host memory of a CPU KV offload cache (KVBM, LMCache); 0 = none

	// Parallel is the worker's layout beyond KV.TP and PP: attention data
	// parallelism (DP; every figure is then one DP rank's, its own KV and
	// batch limits) and expert parallelism (EP; each rank holds
	// (experts + RedundantExperts) / EP routed experts, split TP × DP / EP
	// ways). Its TP and PP, when set, must equal KV.TP and PP.
	Parallel         models.Parallelism
	RedundantExperts int // EPLB's redundant experts, spread over the EP ranks
}

// MemoryPlan is a worker's GPU KV capacity and host-memory headroom. GPU
// figures are per rank (each rank is one GPU), of the pipeline stage that
// limits the KV cache; host figures are for the whole worker, whose ranks
// stage their KV in one container.
type MemoryPlan struct {
	Model          string `json:"model"`
	GPU            string `json:"gpu"`
	Engine         string `json:"engine"`
	EngineFamily   string `json:"engine_family"`
	EngineVersion  string `json:"engine_version"`  // "" when the catalog lists no release and none was given
	EngineVersions string `json:"engine_versions"` // the range of versions whose constants apply
	// EngineVersionDefault says engine_version is the catalog's newest, no version having been given.
	EngineVersionDefault bool    `json:"engine_version_default"`
	KVDtype              string  `json:"kv_dtype"`
	TP                   int     `json:"tp"`
	PP                   int     `json:"pp"`
	GPUUtil              float64 `json:"gpu_util"`      // the memory fraction used
	GPUUtilFlag          string  `json:"gpu_util_flag"` // its name in the engine
	GPUUtilSource        string  `json:"gpu_util_source"`

	EnforceEager        bool   `json:"enforce_eager"`
	MaxModelLen         int    `json:"max_model_len"`
	BlockSize           int    `json:"block_size"`
	MaxNumBatchedTokens int    `json:"max_num_batched_tokens"`
	MaxNumSeqs          int    `json:"max_num_seqs"`
	WeightDtype         string `json:"weight_dtype"`           // of the unquantized weights, or the quantized layout
	Quantization        string `json:"quantization,omitempty"` // the quantized checkpoint's layout, if any

	KVBytesPerToken     int64 `json:"kv_bytes_per_token"`      // per rank, every attention layer of the model
	FullKVBytesPerToken int64 `json:"full_kv_bytes_per_token"` // per rank, layers that keep every token

	GPUMemoryBytes         int64 `json:"gpu_memory_bytes"`          // as nvidia-smi reports it
	GPUCUDAMemoryBytes     int64 `json:"gpu_cuda_memory_bytes"`     // as CUDA reports it: what the engine computes with
	RequestedBytes         int64 `json:"requested_bytes"`           // vLLM: CUDA total × util; SGLang: fraction × free memory at start; TRT-LLM: CUDA total
	WeightsBytes           int64 `json:"weights_bytes"`             // per rank
	ActivationBytes        int64 `json:"activation_bytes"`          // peak of the profile run; 0 for SGLang (its reserve covers it)
	NonTorchBytes          int64 `json:"non_torch_bytes"`           // memory outside PyTorch's allocator the engine charges
	CUDAGraphBytes         int64 `json:"cuda_graph_bytes"`          // charged to the KV budget; 0 with enforce-eager or before vLLM 0.21
	CUDAGraphEstimateBytes int64 `json:"cuda_graph_estimate_bytes"` // the engine's estimate, charged or not
	KVCacheBytes           int64 `json:"kv_cache_bytes"`            // left for the KV cache; 0 when nothing is left
	KVBlocks               int64 `json:"kv_blocks"`                 // blocks of the full-attention layers
	KVSlotsTokens          int64 `json:"kv_slots_tokens"`           // kv_blocks × block_size, full-attention tokens
	EngineKVTokens         int64 `json:"engine_kv_tokens"`          // the KV cache size the engine logs (vLLM "GPU KV cache size: N tokens")

	Stages []MemoryStage `json:"stages,omitempty"` // per pipeline stage (pp > 1)

	// Attention data and expert parallelism (absent for tp alone): the
	// figures above are one rank's; a worker holds DP × kv_slots_tokens.
	DP                  int     `json:"dp,omitempty"`
	EP                  int     `json:"ep,omitempty"`
	MoETP               int     `json:"moe_tp,omitempty"`
	ExpertsPerRank      float64 `json:"experts_per_rank,omitempty"`     // (routed + redundant experts) / EP
	RoutedWeightsBytes  int64   `json:"routed_weights_bytes,omitempty"` // the routed experts' share of weights_bytes, per rank
	WorkerKVSlotsTokens int64   `json:"worker_kv_slots_tokens,omitempty"`

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
	HostStagedBytes      int64   `json:"host_staged_bytes"`  // in flight × request KV × retention; 0 with a gpu buffer
	HostOffloadBytes     int64   `json:"host_offload_bytes"` // a CPU KV offload cache the pool declares
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
	layersEquiv      float64 // model layers ÷ the limiting stage's layers (1 without pp)
}

// MemoryStage is one pipeline stage's GPU figures, per rank.
type MemoryStage struct {
	Stage           int   `json:"stage"`
	Layers          int   `json:"layers"`
	WeightsBytes    int64 `json:"weights_bytes"`
	ActivationBytes int64 `json:"activation_bytes"`
	NonTorchBytes   int64 `json:"non_torch_bytes"`
	CUDAGraphBytes  int64 `json:"cuda_graph_bytes"`
	KVCacheBytes    int64 `json:"kv_cache_bytes"`
	EngineKVTokens  int64 `json:"engine_kv_tokens"`
}

// memoryNotModelled lists what the memory estimate leaves out.
var memoryNotModelled = []string{
	"memory used by other processes on the GPU (vLLM refuses to start when free memory is below total × util)",
	"the peak activation of multimodal encoders, LoRA adapters and speculative-decoding drafts",
	"prefix-cache sharing between requests (it lowers the KV per request on both GPU and host)",
}

const mib = 1 << 20

// PlanMemory computes a worker's GPU KV capacity the way its engine does, its
// verdicts, and its host-memory headroom. It returns an error only for bad
// input; a plan that does not fit is reported as findings.
func PlanMemory(sc MemoryScenario) (*MemoryPlan, error) {
	if err := sc.check(); err != nil {
		return nil, err
	}
	kvOpts := sc.KV
	if kvOpts.Engine == "" {
		kvOpts.Engine = sc.Engine.Name // linear and Mamba state follow the engine's convention
	}
	if kvOpts.KVDtype == "" && sc.Dtype != "" {
		kvOpts.KVDtype = sc.Dtype // the KV cache follows the model dtype unless told otherwise (FACTS.md §2)
	}
	kv, err := models.NewKV(sc.Model, kvOpts)
	if err != nil {
		return nil, err
	}
	e, g, m := sc.Engine, sc.GPU, sc.Model
	p := &MemoryPlan{
		Model: m.Name, GPU: g.Name, Engine: e.Name, EngineFamily: e.FamilyOf(), EngineVersion: sc.EngineVersion,
		EngineVersions: e.Range(), EngineVersionDefault: sc.VersionDefaulted, KVDtype: kv.KVDtype, TP: kv.TP, PP: max(1, sc.PP),
		EnforceEager: sc.EnforceEager, BlockSize: sc.BlockSize,
		KVBytesPerToken: kv.BytesPerToken(), FullKVBytesPerToken: kv.FullBytesPerToken(),
		GPUMemoryBytes: g.MemoryBytes, GPUCUDAMemoryBytes: g.CUDAMemoryBytes, NotModelled: memoryNotModelled,
		Findings: []string{}, kv: kv, layersEquiv: 1,
	}
	if lay := sc.Parallel.Norm(); lay.DP > 1 || lay.EP > 1 || sc.RedundantExperts > 0 {
		lay.TP = p.TP
		p.DP, p.EP, p.MoETP = lay.DP, lay.EP, lay.MoETP()
		if m.MoE != nil && m.MoE.Experts > 0 {
			p.ExpertsPerRank = float64(m.MoE.Experts+sc.RedundantExperts) / float64(lay.EP)
		}
	}
	if p.GPUCUDAMemoryBytes <= 0 {
		p.GPUCUDAMemoryBytes = g.MemoryBytes
	}
	if p.PP > m.Layers {
		return nil, fmt.Errorf("pipeline parallelism %d is more than %s's %d layers", p.PP, m.Name, m.Layers)
	}
	p.MaxModelLen = sc.MaxModelLen
	if p.MaxModelLen == 0 {
		p.MaxModelLen = m.MaxContext
	}
	if p.BlockSize == 0 {
		p.BlockSize = e.DefaultBlockSize
		p.Assumptions = append(p.Assumptions, fmt.Sprintf("block size %d: %s's default (%s)", p.BlockSize, e.Name, e.SourceOf("default_block_size")))
	}
	p.resolveDefaults(sc)
	if sc.VersionDefaulted {
		p.Assumptions = append(p.Assumptions, fmt.Sprintf("%s %s: the newest version the catalog knows (give the engine version to choose another; this entry covers %s)",
			e.Name, versionText(sc.EngineVersion), e.Range()))
	}
	p.Assumptions = append(p.Assumptions, models.TiedEmbeddingsConvention, models.MTPConvention)

	d := &p.Derivation
	if err := p.gpuSide(sc, d); err != nil {
		return nil, err
	}
	p.verdicts()
	if err := p.hostSide(sc, d); err != nil {
		return nil, err
	}
	return p, nil
}

func versionText(v string) string {
	if v == "" {
		return "no version given and the entry lists none"
	}
	return v
}

// resolveDefaults fills the engine's batch defaults for this GPU and the
// memory fraction.
func (p *MemoryPlan) resolveDefaults(sc MemoryScenario) {
	e, g := sc.Engine, sc.GPU
	large := e.IsLargeGPU(g.Name, p.GPUCUDAMemoryBytes)
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
	p.GPUUtilFlag = e.MemoryFractionFlag
	switch {
	case sc.GPUUtil > 0:
		p.GPUUtil, p.GPUUtilSource = sc.GPUUtil, "given"
	case e.MemoryFraction > 0:
		p.GPUUtil, p.GPUUtilSource = e.MemoryFraction, e.Name+"'s default: "+e.SourceOf("memory_fraction")
	default:
		p.GPUUtilSource = e.Name + "'s heuristic" // set by the SGLang side
	}
}

func (sc *MemoryScenario) check() error {
	switch {
	case sc.Model == nil:
		return fmt.Errorf("no model given")
	case sc.GPU == nil:
		return fmt.Errorf("no GPU given")
	case sc.Engine == nil:
		return fmt.Errorf("no engine given")
	case math.IsNaN(sc.GPUUtil) || sc.GPUUtil < 0 || sc.GPUUtil > 1:
		return fmt.Errorf("gpu utilization %g is outside (0, 1]: give the fraction of GPU memory the engine may use, e.g. 0.9", sc.GPUUtil)
	case sc.BlockSize < 0:
		return fmt.Errorf("block size must be > 0 (got %d); %s's default is %d", sc.BlockSize, sc.Engine.Name, sc.Engine.DefaultBlockSize)
	case sc.KV.TP < 0:
		return fmt.Errorf("tp must be >= 1 (got %d)", sc.KV.TP)
	case sc.PP < 0:
		return fmt.Errorf("pp must be >= 1 (got %d)", sc.PP)
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
	case sc.QuantGroupSize < 0:
		return fmt.Errorf("quantization group size must be >= 0 (got %d); 0 means 128", sc.QuantGroupSize)
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
	case sc.CPUOffloadCacheBytes < 0:
		return fmt.Errorf("cpu offload cache %d is negative", sc.CPUOffloadCacheBytes)
	}
	if err := sc.checkParallel(); err != nil {
		return err
	}
	if sc.Dtype != "" {
		if _, ok := unquantizedDtypes[sc.Dtype]; !ok {
			return fmt.Errorf("dtype %q is not one of fp32, fp16, bf16 (quantized checkpoints: give the quantization)", sc.Dtype)
		}
	}
	if sc.Quantization != "" {
		if _, ok := quantLayouts[sc.Quantization]; !ok {
			return fmt.Errorf("quantization %q is not one of %s", sc.Quantization, strings.Join(quantNames(), ", "))
		}
	}
	return nil
}

func (p *MemoryPlan) verdicts() {
	gib := func(b int64) string { return units.Bytes(b) }
	switch {
	case !p.ModelFits:
		over := p.WeightsBytes + p.ActivationBytes + p.NonTorchBytes + p.CUDAGraphBytes - p.RequestedBytes
		p.Findings = append(p.Findings, fmt.Sprintf(
			"model does not fit: weights %s + peak activation %s + non-torch %s + CUDA graphs %s exceed the %s the engine takes (%s, %s %g) by %s; "+
				"%s will refuse to start (no memory left for the KV cache). Raise the memory fraction, add tensor or pipeline parallelism, quantize the weights, or pick a larger GPU",
			gib(p.WeightsBytes), gib(p.ActivationBytes), gib(p.NonTorchBytes), gib(p.CUDAGraphBytes),
			gib(p.RequestedBytes), gib(p.GPUCUDAMemoryBytes), p.GPUUtilFlag, p.GPUUtil, gib(max(over, 0)), p.Engine))
	case !p.MaxModelLenFits:
		p.Findings = append(p.Findings, fmt.Sprintf(
			"%s will refuse to start: one request of max_model_len %d tokens needs %s of KV cache, but only %s is available; "+
				"the largest max_model_len that fits is %d (or raise the memory fraction, use fp8 KV, or add tensor parallelism)",
			p.Engine, p.MaxModelLen, gib(p.MaxModelLenRequestBytes), gib(p.KVCacheBytes), p.LargestFittingMaxModelLen))
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
