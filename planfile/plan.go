// Package planfile reads a kvplan plan file: one deployment described in TOML
// (model, workload, worker pools, link, router, transport, runtime and SLO).
//
// The key names are fixed because other tools generate these files. Decoding
// is strict: an unknown key is an error naming its file and line and the keys
// accepted there. Values are checked after decoding and every problem names
// file:line: field. Names of catalog entries (model, gpu, link) stay strings
// here; the planner resolves them against the catalog.
package planfile

import (
	"path/filepath"
	"sort"

	"github.com/kvplan/kvplan/slo"
)

// Pool roles.
const (
	RoleAggregated = "aggregated" // prefill and decode on the same workers
	RolePrefill    = "prefill"    // prefill only; hands its KV to a decode pool
	RoleDecode     = "decode"     // decode only; receives KV from a prefill pool
)

// Router modes.
const (
	RouterKV         = "kv"          // KV-aware routing (Dynamo's KV router)
	RouterRoundRobin = "round-robin" // the default
	RouterRandom     = "random"
)

// KV buffer devices of a disaggregated worker (vLLM's kv_buffer_device).
const (
	BufferCPU = "cpu" // KV is staged in host memory for transfer
	BufferGPU = "gpu" // KV is sent from GPU memory (vLLM's default, "cuda")
)

// Defaults applied by Load when a key is absent. An absent
// gpu_memory_utilization stays 0: the engine's default for the version in
// use applies (catalog/data/engines.toml memory_fraction), in the planner.
const (
	DefaultBlockSize = 16 // FACTS §4: vLLM's default block_size
)

// Plan is one deployment as written in a plan file, after defaults.
type Plan struct {
	Path string `toml:"-"` // file the plan was read from (a plan file or a manifest)

	// Deployment points at the Kubernetes manifest the plan describes; the
	// plan file then supplies only what the manifest lacks.
	Deployment Deployment       `toml:"deployment"`
	Model      Model            `toml:"model"`
	Workload   Workload         `toml:"workload"`
	Pools      map[string]*Pool `toml:"pools"`
	Link       Link             `toml:"link"`
	Router     Router           `toml:"router"`
	Transport  Transport        `toml:"transport"`
	Runtime    Runtime          `toml:"runtime"`
	SLO        SLO              `toml:"slo"`

	pos  positions // where each field was written
	opts Options
}

// Deployment is the [deployment] table: the manifest this plan reviews.
type Deployment struct {
	// Manifest is a Kubernetes manifest (a DynamoGraphDeployment, llm-d,
	// KServe, Helm values or a Deployment running vllm serve), relative to the
	// plan file. Its pools, engine arguments and router come from there; the
	// plan file adds the GPU, link, workload and SLO the manifest lacks.
	Manifest string `toml:"manifest"`
}

// ManifestPath returns deployment.manifest resolved against the plan file's folder.
func (p *Plan) ManifestPath() string {
	m := p.Deployment.Manifest
	if m == "" || filepath.IsAbs(m) || m == "-" {
		return m
	}
	return filepath.Join(filepath.Dir(p.Path), m)
}

// Model names the model served: a catalog name or a Hugging Face config.json.
type Model struct {
	Name    string `toml:"name"`     // catalog name, e.g. "qwen3-0.6b"
	Config  string `toml:"config"`   // path to a config.json, relative to the plan file
	KVDtype string `toml:"kv_dtype"` // KV cache dtype: bf16, fp16, fp8, int8; "" = the model's
	TP      int    `toml:"tp"`       // tensor-parallel ranks per worker; 0 in the file means 1
	// WeightDtype overrides the catalog's weight dtype (a quantized checkpoint
	// of the same architecture): bf16, fp16, fp8, int8, int4, mxfp4, nvfp4, fp32; "" = the model's.
	WeightDtype string `toml:"weight_dtype"`
}

// Workload is the traffic the deployment serves.
type Workload struct {
	InputTokens  int     `toml:"input_tokens"`  // prompt tokens per request
	OutputTokens int     `toml:"output_tokens"` // generated tokens per request
	Concurrency  int     `toml:"concurrency"`   // requests in flight; 0 in the file means 1
	RequestRate  float64 `toml:"request_rate"`  // requests per second; 0 = closed loop at Concurrency
	Prefixes     int     `toml:"prefixes"`      // distinct shared prefixes
	PrefixTokens int     `toml:"prefix_tokens"` // tokens of each prefix
	Repeats      int     `toml:"repeats"`       // sends of each prefix
}

// Pool is a group of identical workers.
type Pool struct {
	Name string `toml:"-"` // the key under [pools]

	Role                 string  `toml:"role"`                   // aggregated, prefill or decode
	Workers              int     `toml:"workers"`                // 0 in the file means 1
	GPU                  string  `toml:"gpu"`                    // catalog GPU name
	GPUMemoryUtilization float64 `toml:"gpu_memory_utilization"` // in (0, 1]; absent = 0: the engine's default for its version
	MaxModelLen          int     `toml:"max_model_len"`          // tokens; 0 = the model's context
	EnforceEager         bool    `toml:"enforce_eager"`          // no CUDA graphs
	MemoryLimit          string  `toml:"memory_limit"`           // container memory limit, Kubernetes quantity
	KVBufferDevice       string  `toml:"kv_buffer_device"`       // cpu or gpu; absent = gpu
	SharesGPUWith        string  `toml:"shares_gpu_with"`        // name of another pool on the same GPU
	TP                   int     `toml:"tp"`                     // tensor-parallel ranks of this pool's workers; 0 = model.tp
	MaxNumSeqs           int     `toml:"max_num_seqs"`           // engine's --max-num-seqs; 0 = the engine's default
	MaxNumBatchedTokens  int     `toml:"max_num_batched_tokens"` // engine's --max-num-batched-tokens; 0 = the engine's default
	CPUOffloadCache      string  `toml:"cpu_offload_cache"`      // host memory of a CPU KV offload cache (KVBM DYN_KVBM_CPU_CACHE_GB, LMCache cpuOffloadingBufferSize); size

	// The worker's layout beyond tp (models.Parallelism; 0 = 1, none): a
	// worker has tp × data_parallel_size × pipeline_parallel_size GPUs.
	DataParallelSize     int     `toml:"data_parallel_size"`     // attention data-parallel ranks (vLLM --data-parallel-size, SGLang --dp-size with DP attention, TRT-LLM enable_attention_dp)
	ExpertParallelSize   int     `toml:"expert_parallel_size"`   // ranks the routed experts are spread over (vLLM --enable-expert-parallel: tp × dp)
	PipelineParallelSize int     `toml:"pipeline_parallel_size"` // pipeline stages
	SpeculativeTokens    int     `toml:"speculative_tokens"`     // tokens an MTP head or a draft proposes per step; 0 = none
	AcceptanceLength     float64 `toml:"acceptance_length"`      // mean tokens accepted per target step, bonus token included; with speculative_tokens
	RedundantExperts     int     `toml:"redundant_experts"`      // EPLB's redundant copies of routed experts (vLLM num_redundant_experts, SGLang --ep-num-redundant-experts); with expert_parallel_size
	EPLB                 bool    `toml:"eplb"`                   // experts rebalanced by load (vLLM --enable-eplb, SGLang --enable-eplb); implied by redundant_experts
	TwoBatchOverlap      bool    `toml:"two_batch_overlap"`      // two micro-batches, one's all-to-all under the other's compute (vLLM --enable-dbo, SGLang --enable-two-batch-overlap)
	SpeculativeModel     string  `toml:"speculative_model"`      // the draft model (vLLM speculative_config.model, SGLang --speculative-draft-model-path); "" = the model's own MTP layers

	MemoryLimitBytes     int64 `toml:"-"` // MemoryLimit in bytes; 0 = no limit
	CPUOffloadCacheBytes int64 `toml:"-"` // CPUOffloadCache in bytes; 0 = none
}

// PoolTP returns the tensor parallelism of a pool: its own tp, or the model's.
func (p *Plan) PoolTP(pl *Pool) int {
	if pl != nil && pl.TP > 0 {
		return pl.TP
	}
	return max(1, p.Model.TP)
}

// PoolGPUsPerWorker is the GPUs of one of the pool's workers: tp × data
// parallel × pipeline parallel ranks.
func (p *Plan) PoolGPUsPerWorker(pl *Pool) int {
	return p.PoolTP(pl) * max(1, pl.DataParallelSize) * max(1, pl.PipelineParallelSize)
}

// Link is the network between prefill and decode workers: a catalog name or
// an explicit throughput and latency.
type Link struct {
	Name       string `toml:"name"`       // catalog link name, e.g. "1gbe"
	Throughput string `toml:"throughput"` // e.g. "104MB/s", "25GB/s", "1Gbps"
	Latency    string `toml:"latency"`    // e.g. "0.2ms"; a bare number is ms

	ThroughputBytesPerS float64 `toml:"-"` // Throughput parsed; 0 when Name is used
	LatencyMS           float64 `toml:"-"` // Latency parsed
}

// Router is the frontend's routing of requests to workers.
type Router struct {
	Mode      string `toml:"mode"`       // kv, round-robin or random; absent = round-robin
	KVEvents  *bool  `toml:"kv_events"`  // workers publish KV events; absent = true
	BlockSize int    `toml:"block_size"` // tokens per KV block; absent = 16
	// RequestPath is how requests reach the workers, the first term of
	// every TTFT: RequestPathFrontend (a frontend serves HTTP and tokenizes
	// in the engine's place: Dynamo) or RequestPathDirect (the engine's own
	// server: vllm serve behind KServe, llm-d's gateway, a Service);
	// absent = frontend.
	RequestPath string `toml:"request_path"`
}

// Request paths (perf.RequestPath's names).
const (
	RequestPathFrontend = "frontend"
	RequestPathDirect   = "direct"
)

// Transport holds the UCX settings of the KV transfer (NIXL over UCX).
type Transport struct {
	UCXTLS []string `toml:"ucx_tls"` // what UCX_TLS would get; empty = UCX's default (all)
}

// Runtime is the software the workers run.
type Runtime struct {
	Engine        string `toml:"engine"`         // vllm, sglang or trtllm; "" = vllm
	EngineVersion string `toml:"engine_version"` // e.g. "0.19.0"; "" = the newest the catalog knows
	CUDA          string `toml:"cuda"`           // CUDA build of the engine, "major.minor": "12.9", "13.0"
	Driver        string `toml:"driver"`         // NVIDIA driver version of the nodes: "570.133"
}

// SLO holds the service-level objectives ([slo]); 0 means none. It is the
// type kvplan plan sizes against (package slo): ttft_ms and itl_ms are the
// 95th percentiles, and the table takes every other target slo.Targets
// lists (ttft_p99_ms, tpot_mean_ms, goodput, ...).
type SLO = slo.SLO

// KVEventsEnabled reports whether workers publish KV events (true when the
// plan file does not say).
func (r Router) KVEventsEnabled() bool { return r.KVEvents == nil || *r.KVEvents }

// PoolNames returns the pool names in sorted order.
func (p *Plan) PoolNames() []string {
	names := make([]string, 0, len(p.Pools))
	for n := range p.Pools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PoolsByRole returns the pools of one role, sorted by name.
func (p *Plan) PoolsByRole(role string) []*Pool {
	var out []*Pool
	for _, n := range p.PoolNames() {
		if p.Pools[n].Role == role {
			out = append(out, p.Pools[n])
		}
	}
	return out
}

// Disaggregated reports whether the plan has both a prefill and a decode pool.
func (p *Plan) Disaggregated() bool {
	return len(p.PoolsByRole(RolePrefill)) > 0 && len(p.PoolsByRole(RoleDecode)) > 0
}
