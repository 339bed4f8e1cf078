package rules

// Env is everything a rule may read. Rules compile against this type, so a
// misspelt name or a type mismatch fails when the pack is loaded. Every leaf
// field has an expr name (its snake_case `expr` tag), a unit and a meaning
// (`unit` and `desc` tags); EnvVars lists them for `kvplan rules env`.
//
// Units: bytes are "B" (int), durations "ms" (float64), throughputs "B/s"
// (float64), token counts "tokens" (int), fractions "ratio" (0.25 = 25%).
// A figure that the plan does not determine is 0 (or "" / false) and the
// default rules treat 0 as "unknown".
//
// BaseEnv fills what the plan file states; the planner fills the derived
// figures (KV sizes, slots, transfer and prefill times, predictions).
//
// The types of Env must not have methods: expr would expose them to rules.
type Env struct {
	Model     ModelEnv     `expr:"model"`
	Workload  WorkloadEnv  `expr:"workload"`
	KV        KVEnv        `expr:"kv"`
	Link      LinkEnv      `expr:"link"`
	Router    RouterEnv    `expr:"router"`
	Transport TransportEnv `expr:"transport"`
	Runtime   RuntimeEnv   `expr:"runtime"`
	SLO       SLOEnv       `expr:"slo"`
	Disagg    DisaggEnv    `expr:"disagg"`
	Routing   RoutingEnv   `expr:"routing"`
	Predicted PredictedEnv `expr:"predicted"`
	Cost      CostEnv      `expr:"cost"`
	Pools     []PoolEnv    `expr:"pools" desc:"every worker pool of the plan, sorted by name"`
	// Pool is the pool a per-pool rule is evaluated for; zero in other rules.
	Pool PoolEnv `expr:"pool" desc:"the pool a per_pool rule is evaluated for (zero value in other rules)"`
}

// ModelEnv describes the model served.
type ModelEnv struct {
	Name           string `expr:"name" unit:"" desc:"catalog name of the model, or the config.json path"`
	KVDtype        string `expr:"kv_dtype" unit:"" desc:"KV cache dtype: bf16, fp16, fp8 or int8"`
	TP             int    `expr:"tp" unit:"ranks" desc:"tensor-parallel ranks per worker"`
	WeightsBytes   int    `expr:"weights_bytes" unit:"B" desc:"weight bytes of the whole model (all ranks)"`
	MaxContext     int    `expr:"max_context" unit:"tokens" desc:"the model's max_position_embeddings"`
	ParamsTotal    int    `expr:"params_total" unit:"params" desc:"parameters of the model"`
	KVBytesPerElem int    `expr:"kv_bytes_per_element" unit:"B" desc:"bytes of one KV element (bf16 = 2, fp8 = 1)"`
	RoutedExperts  int    `expr:"routed_experts" unit:"experts" desc:"routed experts of each MoE layer (the catalog's moe.experts); 0 = a dense model"`
	MTPLayers      int    `expr:"mtp_layers" unit:"layers" desc:"multi-token-prediction layers the checkpoint ships (DeepSeek-V3's 1), which MTP speculative decoding drafts with; 0 = none"`
	Layers         int    `expr:"layers" unit:"layers" desc:"decoder layers, which pipeline stages split"`
}

// WorkloadEnv is the traffic of the plan file's [workload].
type WorkloadEnv struct {
	InputTokens  int     `expr:"input_tokens" unit:"tokens" desc:"prompt tokens per request"`
	OutputTokens int     `expr:"output_tokens" unit:"tokens" desc:"generated tokens per request"`
	Concurrency  int     `expr:"concurrency" unit:"requests" desc:"requests in flight across the deployment"`
	RequestRate  float64 `expr:"request_rate" unit:"req/s" desc:"arrival rate; 0 = closed loop at concurrency"`
	Prefixes     int     `expr:"prefixes" unit:"prefixes" desc:"distinct shared prefixes"`
	PrefixTokens int     `expr:"prefix_tokens" unit:"tokens" desc:"tokens of each prefix"`
	Repeats      int     `expr:"repeats" unit:"sends" desc:"sends of each prefix"`
}

// KVEnv holds the KV cache sizes of the model as served (FACTS §2).
type KVEnv struct {
	BytesPerToken   int `expr:"bytes_per_token" unit:"B" desc:"the model's KV bytes of one token over all layers at its KV dtype, one copy (FACTS §2's published figure; an MLA latent that every rank replicates is counted once)"`
	BytesPerRequest int `expr:"bytes_per_request" unit:"B" desc:"the model's KV bytes of one request: bytes_per_token × (input_tokens + output_tokens), sliding windows capped"`
	BytesTransfer   int `expr:"bytes_transfer" unit:"B" desc:"KV bytes moved from prefill to decode for one request (its prompt's KV), every decode rank's shard added up (an MLA latent once per decode rank)"`
}

// LinkEnv is the link between prefill and decode workers (FACTS §3).
type LinkEnv struct {
	Name                string  `expr:"name" unit:"" desc:"catalog link name, or \"\" when given by throughput"`
	ThroughputBytesPerS float64 `expr:"throughput_bytes_per_s" unit:"B/s" desc:"effective throughput of one transfer alone (FACTS §3)"`
	LatencyMS           float64 `expr:"latency_ms" unit:"ms" desc:"per-transfer latency"`
	RatePer             string  `expr:"rate_per" unit:"" desc:"gpu: the rate is per GPU rail (each tensor-parallel rank sends its shard on its own rail); node: one path per host, shared by every rank"`
	Scope               string  `expr:"scope" unit:"" desc:"nvlink: NVLink or NVSwitch, which joins GPUs inside one NVLink domain only (a node's baseboard, an NVL72 rack); \"\": a network"`
}

// RouterEnv is the frontend's routing.
type RouterEnv struct {
	Mode      string `expr:"mode" unit:"" desc:"kv, round-robin or random"`
	KVEvents  bool   `expr:"kv_events" unit:"" desc:"workers publish KV events to the router"`
	BlockSize int    `expr:"block_size" unit:"tokens" desc:"tokens per KV block"`
	// RequestPath is how requests reach the workers.
	RequestPath string `expr:"request_path" unit:"" desc:"frontend (Dynamo's frontend serves HTTP and tokenizes) or direct (the engine's own server, as under KServe and llm-d)"`
}

// TransportEnv holds UCX_TLS and what follows from it. NewTransport fills it.
type TransportEnv struct {
	UCXTLS      []string `expr:"ucx_tls" unit:"" desc:"the UCX_TLS list; empty = UCX's default (all transports)"`
	TCPOnly     bool     `expr:"tcp_only" unit:"" desc:"UCX_TLS allows tcp and no transport that moves GPU memory (no cuda_ipc, gdr_copy, rc, ud, dc, ib)"`
	CUDAIPCOnly bool     `expr:"cuda_ipc_only" unit:"" desc:"UCX_TLS names cuda_ipc and no active-messages transport (tcp, self, sm, rc, ud, dc ...)"`
	HasRDMA     bool     `expr:"has_rdma" unit:"" desc:"UCX_TLS allows an RDMA transport (rc, ud, dc, ib), or is empty"`
}

// RuntimeEnv is the engine build and the nodes' driver (FACTS §4).
type RuntimeEnv struct {
	Engine             string `expr:"engine" unit:"" desc:"serving engine, e.g. vllm"`
	CUDABuild          string `expr:"cuda_build" unit:"" desc:"CUDA version the engine was built for, \"major.minor\""`
	CUDABuildMajor     int    `expr:"cuda_build_major" unit:"" desc:"major version of cuda_build; 0 = unknown"`
	CUDABuildNum       int    `expr:"cuda_build_num" unit:"" desc:"cuda_build as major×100+minor (12.9 = 1209); 0 = unknown"`
	Driver             string `expr:"driver" unit:"" desc:"NVIDIA driver version of the nodes, e.g. 570.133"`
	DriverMaxCUDA      string `expr:"driver_max_cuda" unit:"" desc:"highest CUDA the driver supports (driver table, FACTS §4); \"\" = unknown"`
	DriverMaxCUDAMajor int    `expr:"driver_max_cuda_major" unit:"" desc:"major version of driver_max_cuda; 0 = unknown"`
	DriverMaxCUDANum   int    `expr:"driver_max_cuda_num" unit:"" desc:"driver_max_cuda as major×100+minor; 0 = unknown"`
}

// SLOEnv holds the plan's objectives; 0 means none.
type SLOEnv struct {
	TTFTMS float64 `expr:"ttft_ms" unit:"ms" desc:"time-to-first-token objective; 0 = none"`
	ITLMS  float64 `expr:"itl_ms" unit:"ms" desc:"inter-token-latency objective; 0 = none"`
}

// DisaggEnv holds what disaggregation costs and gains (FACTS §1 question 2, §3).
type DisaggEnv struct {
	Disaggregated       bool    `expr:"disaggregated" unit:"" desc:"the plan has a prefill pool and a decode pool"`
	SameGPU             bool    `expr:"same_gpu" unit:"" desc:"a prefill pool and a decode pool share one GPU (shares_gpu_with)"`
	ConcurrentTransfers int     `expr:"concurrent_transfers" unit:"transfers" desc:"KV transfers sharing the link at once: ceil(transfers_in_flight), at least 1"`
	TransfersInFlight   float64 `expr:"transfers_in_flight" unit:"transfers" desc:"mean KV transfers in flight, by Little's law from request_rate (open loop) or concurrency (closed loop)"`
	InFlightSource      string  `expr:"in_flight_source" unit:"" desc:"what transfers_in_flight comes from: request_rate or concurrency"`
	LinkUtilization     float64 `expr:"link_utilization" unit:"ratio" desc:"requests per second × one transfer alone: the share of the link's time it is busy; ≥ 1 means the link cannot carry the load"`
	BytesPerPath        int     `expr:"bytes_per_path" unit:"B" desc:"KV bytes of one request on the busiest path: kv.bytes_transfer ÷ min(prefill tp, decode tp) on a per-GPU link, all of it on a per-node link"`
	ParallelPaths       int     `expr:"parallel_paths" unit:"paths" desc:"rails one transfer uses in parallel: min(prefill tp, decode tp) on a per-GPU link, else 1"`
	TransferMS          float64 `expr:"transfer_ms" unit:"ms" desc:"time to move one request's KV alone: latency + bytes_per_path ÷ throughput"`
	TransferMSShared    float64 `expr:"transfer_ms_shared" unit:"ms" desc:"the same while concurrent_transfers share the link (FACTS §3 Sharing)"`
	PrefillMS           float64 `expr:"prefill_ms" unit:"ms" desc:"prefill time of one request, which disaggregation moves off the decode GPU"`
	TTFTAggMS           float64 `expr:"ttft_agg_ms" unit:"ms" desc:"predicted TTFT if the same GPUs served aggregated"`
	TTFTDisaggMS        float64 `expr:"ttft_disagg_ms" unit:"ms" desc:"predicted TTFT disaggregated: prefill + shared transfer + queueing"`

	AtLoadComputed          bool    `expr:"at_load_computed" unit:"" desc:"the comparison at the load below was computed (workload.request_rate and an engine model); else only the one-request view above is"`
	RequestsPerSAtLoad      float64 `expr:"requests_per_s_at_load" unit:"req/s" desc:"the load of the comparison: workload.request_rate"`
	ITLAggAtLoadMS          float64 `expr:"itl_agg_at_load_ms" unit:"ms" desc:"mean ITL if the same GPUs served aggregated at the load (prefill chunks share decode's iterations)"`
	ITLDisaggAtLoadMS       float64 `expr:"itl_disagg_at_load_ms" unit:"ms" desc:"mean ITL of the decode pool at the load"`
	DecodeStallFreedAtLoad  float64 `expr:"decode_stall_freed_at_load_ms" unit:"ms" desc:"decode time the split frees per request at the load: (output tokens − 1) × (itl_agg_at_load_ms − itl_disagg_at_load_ms)"`
	TransferAtLoadMS        float64 `expr:"transfer_ms_at_load" unit:"ms" desc:"mean KV transfer at the load, sharing included"`
	AggCarriesAtLoad        bool    `expr:"agg_carries_at_load" unit:"" desc:"the same GPUs aggregated have a steady state at the load"`
	DisaggCarriesAtLoad     bool    `expr:"disagg_carries_at_load" unit:"" desc:"the split has a steady state at the load"`
	TransferExceedsGainLoad bool    `expr:"transfer_exceeds_gain_at_load" unit:"" desc:"the transfer costs at least the decode time the split frees at the load"`

	PDGPUs           int `expr:"pd_gpus" unit:"GPUs" desc:"GPUs of the prefill and decode pools: every GPU the link joins (any decode worker pulls from any prefill worker)"`
	NVLinkDomainGPUs int `expr:"nvlink_domain_gpus" unit:"GPUs" desc:"GPUs one NVLink domain of the pools' GPU joins (8 on an HGX board, 72 in an NVL72 rack); 0 = the GPU has no NVLink"`
}

// RoutingEnv holds the prefix working set and the slots that hold it
// (FACTS §1 question 3, §5).
type RoutingEnv struct {
	WorkingSetTokens     int    `expr:"working_set_tokens" unit:"tokens" desc:"prefixes × prefix_tokens: the KV the prefixes need to stay cached"`
	HolderPool           string `expr:"holder_pool" unit:"" desc:"the pool whose workers keep prefixes cached (the prefill pool when disaggregated)"`
	HolderWorkers        int    `expr:"holder_workers" unit:"workers" desc:"workers of holder_pool"`
	SlotsPerWorkerTokens int    `expr:"slots_per_worker_tokens" unit:"tokens" desc:"KV slots of one worker of holder_pool"`
	SlotsPoolTokens      int    `expr:"slots_pool_tokens" unit:"tokens" desc:"KV slots of all of holder_pool: what KV routing can use"`
	CapacityTokens       int    `expr:"capacity_tokens" unit:"tokens" desc:"prefix capacity under the plan's router: slots_per_worker_tokens under round-robin/random, slots_pool_tokens under kv"`
	CapacityAggTokens    int    `expr:"capacity_agg_tokens" unit:"tokens" desc:"prefix capacity if every worker of the plan served aggregated, under the plan's router"`
}

// PredictedEnv holds the planner's predictions for the plan as written.
// With workload.request_rate (and an engine model for the pools) they are
// kvplan plan's figures of the same pools at that rate; else one request at
// the plan's concurrency.
type PredictedEnv struct {
	TTFTMS               float64 `expr:"ttft_ms" unit:"ms" desc:"predicted time to first token: its 95th percentile at workload.request_rate (kvplan plan's ttft_p95_ms), or one request's at the plan's concurrency"`
	ITLMS                float64 `expr:"itl_ms" unit:"ms" desc:"predicted inter-token latency: its 95th percentile at workload.request_rate (kvplan plan's itl_p95_ms), or the decode step at the plan's concurrency"`
	HitRate              float64 `expr:"hit_rate" unit:"ratio" desc:"predicted prefix-cache hit rate; 0 when not simulated"`
	AtLoad               bool    `expr:"at_load" unit:"" desc:"the figures are at workload.request_rate (kvplan plan's, p95 where named so); false: one request at the plan's concurrency"`
	TTFTMeanMS           float64 `expr:"ttft_mean_ms" unit:"ms" desc:"mean time to first token at workload.request_rate; 0 when not at_load"`
	TPOTMeanMS           float64 `expr:"tpot_mean_ms" unit:"ms" desc:"mean time per output token after the first at workload.request_rate; 0 when not at_load"`
	TransferMS           float64 `expr:"transfer_ms" unit:"ms" desc:"mean KV transfer at workload.request_rate, sharing included; 0 aggregated or when not at_load"`
	RequestsPerSCapacity float64 `expr:"requests_per_s_capacity" unit:"req/s" desc:"the highest request rate the pools carry within the SLO (kvplan plan's requests_per_s_capacity); 0 when not at_load"`
}

// PoolEnv is one worker pool: its settings and memory figures (FACTS §4).
// CostEnv is what the deployment costs to run.
type CostEnv struct {
	GPUs       int     `expr:"gpus" unit:"GPUs" desc:"GPUs of the whole deployment: Σ pools workers × tp, a GPU shared by two pools counted once"`
	USDPerHour float64 `expr:"usd_per_hour" unit:"$/h" desc:"on-demand cost of those GPUs as whole instances of the default provider (kvplan plan's pricing); 0 when price_known is false"`
	PriceKnown bool    `expr:"price_known" unit:"" desc:"the deployment's on-demand price is known (usd_per_hour means unknown when false)"`
}

type PoolEnv struct {
	Name                 string  `expr:"name" unit:"" desc:"the pool's name under [pools]"`
	Role                 string  `expr:"role" unit:"" desc:"aggregated, prefill or decode"`
	Workers              int     `expr:"workers" unit:"workers" desc:"workers in the pool"`
	GPU                  string  `expr:"gpu" unit:"" desc:"catalog GPU name"`
	GPUMemoryUtilization float64 `expr:"gpu_memory_utilization" unit:"ratio" desc:"the engine's memory fraction (vLLM's --gpu-memory-utilization): the plan's, or the engine's default for its version"`
	MaxModelLen          int     `expr:"max_model_len" unit:"tokens" desc:"effective --max-model-len: the plan's, or the model's context when the plan omits it"`
	EnforceEager         bool    `expr:"enforce_eager" unit:"" desc:"no CUDA graphs"`
	KVBufferDevice       string  `expr:"kv_buffer_device" unit:"" desc:"cpu or gpu: where KV is staged for transfer"`
	SharesGPUWith        string  `expr:"shares_gpu_with" unit:"" desc:"name of the pool sharing this pool's GPU, or \"\""`
	StagesKVInHost       bool    `expr:"stages_kv_in_host" unit:"" desc:"KV is staged in host memory for transfer: kv_buffer_device = cpu in a prefill or decode pool"`
	ConcurrencyPerWorker int     `expr:"concurrency_per_worker" unit:"requests" desc:"requests in flight on one worker"`
	KVSlotsTokens        int     `expr:"kv_slots_tokens" unit:"tokens" desc:"KV slots of one worker (FACTS §4)"`
	MaxModelLenFits      bool    `expr:"max_model_len_fits" unit:"" desc:"one request of max_model_len tokens fits kv_slots_tokens (vLLM refuses to start otherwise)"`
	HostStagedBytes      int     `expr:"host_staged_bytes" unit:"B" desc:"KV one worker stages in host memory: concurrency_per_worker × the prompt's KV × retention; 0 when nothing is staged"`
	HostRequiredBytes    int     `expr:"host_required_bytes" unit:"B" desc:"host memory one worker needs: base + staged KV of concurrency_per_worker requests + margin"`
	GPUs                 int     `expr:"gpus" unit:"GPUs" desc:"GPUs this pool occupies: workers × tp (0 when it shares another pool's)"`
	HostLimitBytes       int     `expr:"host_limit_bytes" unit:"B" desc:"memory_limit of one worker's container; 0 = no limit"`

	TP      int    `expr:"tp" unit:"ranks" desc:"tensor-parallel ranks of one worker: pools.<name>.tp, else model.tp"`
	TPError string `expr:"tp_error" unit:"" desc:"why vLLM refuses this tp for the model (heads not divisible); \"\" when it accepts it"`

	DataParallelSize     int     `expr:"data_parallel_size" unit:"ranks" desc:"attention data-parallel ranks of one worker (pools.<name>.data_parallel_size); 1 = none"`
	ExpertParallelSize   int     `expr:"expert_parallel_size" unit:"ranks" desc:"ranks the routed experts are spread over (pools.<name>.expert_parallel_size); 1 = none"`
	PipelineParallelSize int     `expr:"pipeline_parallel_size" unit:"ranks" desc:"pipeline stages of one worker; 1 = none"`
	SpeculativeTokens    int     `expr:"speculative_tokens" unit:"tokens" desc:"tokens an MTP head or a draft model proposes per step; 0 = no speculative decoding"`
	AcceptanceLength     float64 `expr:"acceptance_length" unit:"tokens" desc:"mean tokens accepted per target step, bonus token included"`
	EPLB                 bool    `expr:"eplb" unit:"" desc:"experts rebalanced by load (pools.<name>.eplb, or redundant experts)"`
	TwoBatchOverlap      bool    `expr:"two_batch_overlap" unit:"" desc:"two micro-batches, one's all-to-all under the other's compute (pools.<name>.two_batch_overlap)"`
	RedundantExperts     int     `expr:"redundant_experts" unit:"experts" desc:"EPLB's redundant copies of routed experts placed on the expert-parallel ranks (pools.<name>.redundant_experts); 0 = none"`
	SpeculativeModel     string  `expr:"speculative_model" unit:"" desc:"the draft model; \"\" = the model's own MTP layers"`
	GPUsPerWorker        int     `expr:"gpus_per_worker" unit:"GPUs" desc:"GPUs of one worker: tp × data_parallel_size × pipeline_parallel_size"`
	Layout               string  `expr:"layout" unit:"" desc:"the worker's layout as \"tp1 dp8 ep8\" (counts of 1 left out)"`
	NVLinkDomainGPUs     int     `expr:"nvlink_domain_gpus" unit:"GPUs" desc:"GPUs one NVLink domain of the pool's GPU joins (8 on an HGX board, 72 in an NVL72 rack); 0 = no NVLink"`

	ModelFits         bool   `expr:"model_fits" unit:"" desc:"weights per rank + overheads fit gpu memory × gpu_memory_utilization, leaving room for a KV cache"`
	WeightsBytes      int    `expr:"weights_bytes" unit:"B" desc:"weight bytes per rank (one GPU) at the pool's tp"`
	OverheadBytes     int    `expr:"overhead_bytes" unit:"B" desc:"peak activation + non-torch overhead + CUDA graphs, per rank"`
	RequestedBytes    int    `expr:"requested_bytes" unit:"B" desc:"gpu memory × gpu_memory_utilization, per rank"`
	WeightsShortBytes int    `expr:"weights_short_bytes" unit:"B" desc:"weights + overheads − requested when they do not fit; 0 when they do"`
	FitTP             int    `expr:"fit_tp" unit:"ranks" desc:"the smallest tp above the pool's that the model divides into and at which the weights fit; 0 = none up to 64"`
	FitFP8            bool   `expr:"fit_fp8" unit:"" desc:"fp8 weights would fit at the pool's tp"`
	FitGPU            string `expr:"fit_gpu" unit:"" desc:"the catalog GPU with the least memory above the pool's on which the weights fit at the pool's tp; \"\" = none"`

	RequestsInFlight   float64 `expr:"requests_in_flight" unit:"requests" desc:"mean requests holding KV on the pool: concurrency, or its share by Little's law when disaggregated"`
	KVTokensInFlight   int     `expr:"kv_tokens_in_flight" unit:"tokens" desc:"KV the in-flight requests of one worker hold, in whole blocks: concurrency_per_worker × (input + output), each shared prefix counted once per worker that holds it"`
	MaxRequestsThatFit int     `expr:"max_requests_that_fit" unit:"requests" desc:"the most requests in flight per worker whose KV fits kv_slots_tokens"`
	RequestTokens      int     `expr:"request_tokens" unit:"tokens" desc:"tokens of one request on this pool: input + output (input + 1 on a prefill pool)"`
	PromptFits         bool    `expr:"prompt_fits" unit:"" desc:"request_tokens ≤ max_model_len"`

	RequestRate          float64 `expr:"request_rate" unit:"req/s" desc:"requests per second this pool prefills: workload.request_rate spread evenly over the workers that prefill; 0 = no rate given"`
	UncachedInputTokens  int     `expr:"uncached_input_tokens" unit:"tokens" desc:"input tokens per request not served from the prefix cache"`
	PrefillMS            float64 `expr:"prefill_ms" unit:"ms" desc:"prefill time of one request's uncached tokens on one worker (a floor)"`
	PrefillDemandPerS    float64 `expr:"prefill_demand_tokens_per_s" unit:"tokens/s" desc:"request_rate × uncached_input_tokens"`
	PrefillCapacityPerS  float64 `expr:"prefill_capacity_tokens_per_s" unit:"tokens/s" desc:"workers × uncached_input_tokens ÷ prefill_ms: the pool's prefill compute, a floor that leaves out decode work and queueing"`
	PrefillWorkersNeeded int     `expr:"prefill_workers_needed" unit:"workers" desc:"ceil(request_rate × prefill_ms): workers the prefill demand needs at least"`

	CapacityComputed      bool    `expr:"capacity_computed" unit:"" desc:"the capacity figures below were computed (a request rate, and an engine model for the pool's GPU); else only the prefill floor above is"`
	CapacityRequestsPerS  float64 `expr:"capacity_requests_per_s" unit:"req/s" desc:"the highest workload.request_rate the deployment carries within the SLO (p95 targets) with its pools as planned: engine model, open-load batching and queueing, as kvplan plan sizes"`
	CapacityWorkersNeeded int     `expr:"capacity_workers_needed" unit:"workers" desc:"the fewest workers of this pool that carry workload.request_rate within the SLO, the other pools as planned; 0 = no count of this pool does"`
	CapacityLimitedBy     string  `expr:"capacity_limited_by" unit:"" desc:"what fails first: prefill compute, decode ITL, KV slots, link, memory"`
	CapacityExceeded      bool    `expr:"capacity_exceeded" unit:"" desc:"the deployment misses the SLO at workload.request_rate and this pool is what to grow"`
	CapacitySLO           string  `expr:"capacity_slo" unit:"" desc:"the objectives the capacity is computed at, e.g. TTFT p95 ≤ 1000 ms, ITL p95 ≤ 50 ms; \"\" when the plan has no [slo] (a steady state only)"`
	CapacityTTFTP95MS     float64 `expr:"capacity_ttft_p95_ms" unit:"ms" desc:"predicted TTFT p95 at workload.request_rate (0 when the deployment cannot carry it)"`
	CapacityITLP95MS      float64 `expr:"capacity_itl_p95_ms" unit:"ms" desc:"predicted ITL p95 at workload.request_rate (0 when the deployment cannot carry it)"`
}
