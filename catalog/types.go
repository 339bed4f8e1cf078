package catalog

// Model is one model architecture: what the KV arithmetic, the weight
// accounting and the prefill estimate need, and no more.
//
// A model's decoder layers are described by Layout, a list of groups. When
// Layout is empty every one of Layers is a full-attention layer with the
// model's KVHeads and HeadDim. Groups may override the geometry (Gemma-4's
// global layers have their own kv heads and head_dim).
type Model struct {
	Name    string   `toml:"name" json:"name,omitempty"`       // catalog id, lower-case: "qwen3-0.6b"
	Aliases []string `toml:"aliases" json:"aliases,omitempty"` // other names that resolve to it
	HFID    string   `toml:"hf_id" json:"hf_id,omitempty"`     // Hugging Face repository id: "Qwen/Qwen3-0.6B"

	ParamsTotal    int64  `toml:"params_total" json:"params_total,omitempty"`   // all parameters
	ParamsActive   int64  `toml:"params_active" json:"params_active,omitempty"` // per token, for MoE; 0 means ParamsTotal
	WeightDtype    string `toml:"weight_dtype" json:"weight_dtype,omitempty"`   // bf16, fp16, fp8, int8, int4, mxfp4
	WeightsBytes   int64  `toml:"weights_bytes" json:"weights_bytes,omitempty"` // checkpoint size when params × dtype is wrong (mixed precision); optional
	TiedEmbeddings bool   `toml:"tied_embeddings" json:"tied_embeddings"`       // input and output embeddings share one matrix
	VocabSize      int    `toml:"vocab_size" json:"vocab_size,omitempty"`
	HiddenSize     int    `toml:"hidden_size" json:"hidden_size,omitempty"`
	AttentionHeads int    `toml:"attention_heads" json:"attention_heads,omitempty"` // query heads
	MaxContext     int    `toml:"max_context" json:"max_context,omitempty"`         // max_position_embeddings

	Layers    int    `toml:"layers" json:"layers,omitempty"`         // decoder layers of every kind, MTP layers excluded
	KVHeads   int    `toml:"kv_heads" json:"kv_heads,omitempty"`     // key/value heads of a full-attention layer
	HeadDim   int    `toml:"head_dim" json:"head_dim,omitempty"`     // per-head dimension of K and V
	KVDtype   string `toml:"kv_dtype" json:"kv_dtype,omitempty"`     // default KV cache dtype (the model's torch_dtype, or the checkpoint's KV scheme)
	Dtype     string `toml:"dtype" json:"dtype,omitempty"`           // the model's own dtype as served (activations, linear/Mamba conv state); "" = kv_dtype
	MTPLayers int    `toml:"mtp_layers" json:"mtp_layers,omitempty"` // multi-token-prediction layers; not counted in KV bytes

	MLA    *MLA         `toml:"mla" json:"mla,omitempty"`       // multi-head latent attention (DeepSeek-V2/V3, Kimi K2)
	MoE    *MoE         `toml:"moe" json:"moe,omitempty"`       // routed experts (mixture of experts); nil = dense
	Layout []LayerGroup `toml:"layout" json:"layout,omitempty"` // per-layer attention layout; empty = all full

	Source string `toml:"source" json:"source,omitempty"` // where these figures come from

	File string `toml:"-" json:"-"` // catalog file this entry was read from
	Line int    `toml:"-" json:"-"` // line of the entry in File
}

// MLA holds the latent ranks of multi-head latent attention. Each MLA layer
// caches one latent of kv_lora_rank + qk_rope_head_dim elements per token,
// not split by tensor parallelism.
type MLA struct {
	KVLoraRank    int `toml:"kv_lora_rank" json:"kv_lora_rank,omitempty"`
	QKRopeHeadDim int `toml:"qk_rope_head_dim" json:"qk_rope_head_dim,omitempty"`
	// FP8EntryBytes is one latent's bytes when the KV cache is fp8 and the
	// engines pack it with its scales (FlashMLA sparse's fp8_ds_mla: 656 for
	// DeepSeek-V3.2 and GLM-5, 584 for DeepSeek-V4); 0 = one byte an element.
	FP8EntryBytes int `toml:"fp8_entry_bytes" json:"fp8_entry_bytes,omitempty"`
}

// MoE describes a mixture-of-experts model's routed experts, what the engine
// model needs to count the expert weights a batch touches. The routed
// experts' parameters follow from params_total and params_active (see
// models.ExpertParams).
type MoE struct {
	Experts         int `toml:"experts" json:"experts,omitempty"`                     // routed experts per MoE layer (n_routed_experts, num_experts)
	ExpertsPerToken int `toml:"experts_per_token" json:"experts_per_token,omitempty"` // routed experts each token uses (num_experts_per_tok)
}

// Layer kinds of a LayerGroup.
const (
	LayerFull       = "full"       // full attention: KV for every token of the request
	LayerSliding    = "sliding"    // sliding window: KV for at most Window tokens
	LayerCompressed = "compressed" // one entry per Ratio tokens of the request, plus its last Window tokens (DeepSeek-V4)
	LayerLinear     = "linear"     // linear attention: a constant state per request
	LayerMamba      = "mamba"      // a Mamba (state-space) layer: a constant conv and SSM state per request
)

// LayerKinds lists the layer kinds in the order the catalog documents them.
var LayerKinds = []string{LayerFull, LayerSliding, LayerCompressed, LayerLinear, LayerMamba}

// LayerGroup is Count decoder layers of one kind and geometry.
//
// The state of a linear or Mamba layer is given either as StateBytes (one
// figure, by hand) or by its dimensions, ConvDim, ConvKernel and
// SSMStateElements, which the KV arithmetic turns into bytes under the
// engine's state convention (models.StateConvention).
type LayerGroup struct {
	Kind    string `toml:"kind" json:"kind,omitempty"`         // full, sliding, compressed, linear or mamba
	Count   int    `toml:"count" json:"count,omitempty"`       // number of layers
	Window  int    `toml:"window" json:"window,omitempty"`     // tokens kept uncompressed: a sliding window, a compressed layer's recent tokens
	Ratio   int    `toml:"ratio" json:"ratio,omitempty"`       // compressed only: tokens that share one compressed entry
	KVHeads int    `toml:"kv_heads" json:"kv_heads,omitempty"` // overrides Model.KVHeads; 0 = inherit
	HeadDim int    `toml:"head_dim" json:"head_dim,omitempty"` // overrides Model.HeadDim; 0 = inherit

	// IndexBytes is a sparse-attention indexer's key cache beside these
	// layers: bytes of one key per indexed entry (every token, or every
	// Ratio tokens of a compressed layer), in the indexer's own format
	// (DeepSeek-V3.2: 128 fp8 + one fp32 scale = 132), not scaled by the KV
	// dtype nor split by tp; 0 = no indexer.
	IndexBytes int64 `toml:"index_bytes" json:"index_bytes,omitempty"`

	// StateBytes is per layer per request: a linear or Mamba layer's state
	// given by hand (split across tp), or a compressed layer's compressor
	// state (replicated on every rank).
	StateBytes       int64  `toml:"state_bytes" json:"state_bytes,omitempty"`
	ConvDim          int    `toml:"conv_dim" json:"conv_dim,omitempty"`                     // linear/mamba: channels of the causal conv
	ConvKernel       int    `toml:"conv_kernel" json:"conv_kernel,omitempty"`               // linear/mamba: conv kernel width
	SSMStateElements int64  `toml:"ssm_state_elements" json:"ssm_state_elements,omitempty"` // linear/mamba: recurrent state elements per layer
	SSMDtype         string `toml:"ssm_dtype" json:"ssm_dtype,omitempty"`                   // dtype the config pins for the recurrent state; "" = the engine's default
}

// Link is a path that KV travels between a prefill and a decode worker.
type Link struct {
	Name        string   `toml:"name" json:"name,omitempty"`
	Aliases     []string `toml:"aliases" json:"aliases,omitempty"`
	Description string   `toml:"description" json:"description,omitempty"`
	Nominal     string   `toml:"nominal" json:"nominal,omitempty"`       // line rate with unit: "1Gbps", "25GB/s"
	Effective   string   `toml:"effective" json:"effective,omitempty"`   // achieved throughput with unit; or give Efficiency
	Efficiency  float64  `toml:"efficiency" json:"efficiency,omitempty"` // effective / nominal, in (0, 1]; used when Effective is empty
	Latency     string   `toml:"latency" json:"latency,omitempty"`       // per-transfer latency: "0.5ms", "20us"
	Shared      bool     `toml:"shared" json:"shared"`                   // concurrent transfers divide the throughput
	// RatePer says what the rate is the rate of: "gpu" (one rail per GPU,
	// rail-optimized RDMA as on DGX/HGX nodes: each tensor-parallel rank
	// sends its own KV shard at the full rate) or "node" (one path per host,
	// an Ethernet port or host TCP: every rank's KV crosses it). "" = node.
	RatePer string `toml:"rate_per" json:"rate_per"`
	// Scope says which GPUs the link can join: "nvlink" (NVLink and
	// NVSwitch: only GPUs inside one NVLink domain, a node's baseboard or an
	// NVL72-class rack, GPU.NVLinkDomainGPUs), or "" (a network: any two
	// hosts it reaches).
	Scope  string `toml:"scope" json:"scope,omitempty"`
	Source string `toml:"source" json:"source,omitempty"`

	NominalBytesPerS   float64 `toml:"-" json:"nominal_bytes_per_s"`
	EffectiveBytesPerS float64 `toml:"-" json:"effective_bytes_per_s"`
	LatencyMS          float64 `toml:"-" json:"latency_ms"`
	File               string  `toml:"-" json:"-"`
	Line               int     `toml:"-" json:"-"`
}

// ScopeNVLink is Link.Scope of NVLink and NVSwitch links.
const ScopeNVLink = "nvlink"

// Values of Link.RatePer.
const (
	RatePerGPU  = "gpu"  // one rail per GPU: each tensor-parallel rank sends at the full rate
	RatePerNode = "node" // one path per host, shared by every rank
)

// PerGPU reports whether every GPU of a worker has a rail of its own at the
// link's rate.
func (l *Link) PerGPU() bool { return l.RatePer == RatePerGPU }

// GPU is one accelerator model.
//
// Peak figures are dense (no sparsity), per GPU. A dtype whose peak is 0 has
// no tensor-core path of its own on this GPU: the engine model runs it at the
// next wider dtype that has one (int8 → fp8 → bf16; fp4 without an fp4 path is weight-only, bf16), and says so.
type GPU struct {
	Name        string   `toml:"name" json:"name,omitempty"`
	Aliases     []string `toml:"aliases" json:"aliases,omitempty"`
	Description string   `toml:"description" json:"description,omitempty"`
	Arch        string   `toml:"arch" json:"arch,omitempty"` // ampere, ada, hopper, blackwell, cdna3, volta, turing

	Memory     string `toml:"memory" json:"memory,omitempty"`           // total memory as nvidia-smi / rocm-smi reports it: "81559MiB"
	CUDAMemory string `toml:"cuda_memory" json:"cuda_memory,omitempty"` // total as CUDA reports it (torch.cuda.mem_get_info), what engines multiply by the utilization; "" = Memory

	BF16TFLOPS float64 `toml:"bf16_tflops" json:"bf16_tflops,omitempty"` // dense bf16 tensor TFLOP/s (fp16 figure where the GPU has no bf16)
	FP16TFLOPS float64 `toml:"fp16_tflops" json:"fp16_tflops,omitempty"` // dense fp16 tensor TFLOP/s; 0 = bf16_tflops
	FP8TFLOPS  float64 `toml:"fp8_tflops" json:"fp8_tflops,omitempty"`   // dense fp8 tensor TFLOP/s; 0 = no fp8 tensor cores
	FP4TFLOPS  float64 `toml:"fp4_tflops" json:"fp4_tflops,omitempty"`   // dense fp4 (nvfp4 / mxfp4) tensor TFLOP/s; 0 = none
	INT8TOPS   float64 `toml:"int8_tops" json:"int8_tops,omitempty"`     // dense int8 tensor TOP/s; 0 = none

	MemoryBandwidth string `toml:"memory_bandwidth" json:"memory_bandwidth,omitempty"` // "3.35TB/s"
	// L2Cache is the GPU's last-level on-chip cache ("50MiB"); "" = not in
	// the catalog. The engine model's activation term (perf) leaves a
	// kernel's activations that fit in it off memory traffic.
	L2Cache string `toml:"l2_cache" json:"l2_cache,omitempty"`
	// Interconnect between GPUs of one node, what tensor-parallel all-reduces use.
	Interconnect          string `toml:"interconnect" json:"interconnect,omitempty"`                     // nvlink3, nvlink4, nvlink5, pcie3, pcie4, pcie5, infinity-fabric
	InterconnectBandwidth string `toml:"interconnect_bandwidth" json:"interconnect_bandwidth,omitempty"` // per GPU, one direction: "450GB/s"
	// NVLinkDomainGPUs is how many GPUs one NVLink domain joins: 8 on an
	// HGX/DGX baseboard's NVSwitches, 72 in a GB200/GB300 NVL72 rack, 2 for
	// PCIe cards with an NVLink bridge; 0 = no NVLink between GPUs.
	NVLinkDomainGPUs int `toml:"nvlink_domain_gpus" json:"nvlink_domain_gpus,omitempty"`

	USDPerHour     float64 `toml:"usd_per_hour" json:"usd_per_hour,omitempty"`           // on-demand price of one GPU-hour; 0 = unknown
	USDPerHourSpot float64 `toml:"usd_per_hour_spot" json:"usd_per_hour_spot,omitempty"` // a spot price sample; 0 = unknown
	PriceSource    string  `toml:"price_source" json:"price_source,omitempty"`           // where the prices come from

	TDPWatts  float64 `toml:"tdp_watts" json:"tdp_watts,omitempty"`   // maximum board power of one GPU, W; 0 = unknown
	TDPSource string  `toml:"tdp_source" json:"tdp_source,omitempty"` // where it comes from, or why it is unknown

	// GPUProduct is the nvidia.com/gpu.product label NVIDIA's GPU feature
	// discovery puts on a node with this GPU (the NVML device name, spaces
	// made "-": NVIDIA-H100-80GB-HBM3); "" = none known (AMD GPUs carry no
	// such label). Emitted manifests select nodes by it, and a manifest's
	// node selector names the GPU by it.
	GPUProduct       string `toml:"gpu_product" json:"gpu_product,omitempty"`
	GPUProductSource string `toml:"gpu_product_source" json:"gpu_product_source,omitempty"` // where the device name was read

	Source string `toml:"source" json:"source,omitempty"`

	MemoryBytes                int64   `toml:"-" json:"memory_bytes"`
	CUDAMemoryBytes            int64   `toml:"-" json:"cuda_memory_bytes"` // CUDAMemory parsed, or MemoryBytes
	MemoryBandwidthBytes       float64 `toml:"-" json:"memory_bandwidth_bytes_per_s"`
	L2CacheBytes               int64   `toml:"-" json:"l2_cache_bytes,omitempty"`
	InterconnectBandwidthBytes float64 `toml:"-" json:"interconnect_bandwidth_bytes_per_s,omitempty"`
	File                       string  `toml:"-" json:"-"`
	Line                       int     `toml:"-" json:"-"`
}

// PriceKnown reports whether the catalog has an on-demand price for g.
func (g *GPU) PriceKnown() bool { return g.USDPerHour > 0 }
