package benchresult

// The formats Read recognises, by content (File.Format).
const (
	FormatVLLM             = "vllm-bench-serve"          // vllm bench serve / benchmark_serving.py --save-result (JSON or JSON lines)
	FormatSGLang           = "sglang-bench-serving"      // python -m sglang.bench_serving --output-file (JSON lines)
	FormatAIPerfJSON       = "aiperf-json"               // AIPerf / genai-perf profile_export_*.json
	FormatAIPerfCSV        = "aiperf-csv"                // AIPerf / genai-perf profile_export_*.csv
	FormatGuideLLM         = "guidellm"                  // guidellm benchmark --output-path benchmarks.json|.yaml
	FormatInferencePerf    = "inference-perf-lifecycle"  // inference-perf stage_N_lifecycle_metrics.json / summary_lifecycle_metrics.json
	FormatInferencePerfSrv = "inference-perf-prometheus" // inference-perf stage_N_prometheus_metrics.json (the server's view)
	FormatTRTLLMBench      = "trtllm-bench"              // trtllm-bench … throughput, its text report
)

// Formats lists what Read recognises, as error messages and docs name them.
func Formats() []string {
	return []string{
		"vLLM `vllm bench serve --save-result` JSON (old and new layouts, per-request arrays or not, one run or JSON lines)",
		"SGLang `bench_serving --output-file` JSON lines (bare Infinity accepted)",
		"AIPerf / genai-perf profile_export JSON (records or top-level metrics) and CSV",
		"guidellm benchmarks JSON and YAML (v0.3 `args`/`run_stats`, v1 `args`, v2 `config` layouts)",
		"inference-perf lifecycle reports (stage and summary) and its Prometheus stage files",
		"trtllm-bench throughput text report",
	}
}

// Load kinds (Workload.Kind): how the benchmark issued its requests.
const (
	LoadConcurrency = "concurrency" // a closed loop: Concurrency clients, each sending its next request when the last ended
	LoadRate        = "rate"        // open loop: requests sent at RatePerS (gaps drawn with Burstiness)
	LoadBurst       = "burst"       // every request sent at once, with no cap on requests in flight
	LoadOffline     = "offline"     // an offline max-throughput run: every request queued at the engine at once (trtllm-bench)
	LoadUnknown     = ""            // the file does not say
)

// File is one result file as read: its format and its runs, in order.
type File struct {
	Path   string
	Format string // one of the Format constants
	Layout string // which layout of the format, in words ("new layout, per-request arrays")
	Runs   []Run
	// Skipped says which runs were left out and why (every request failed,
	// zero throughput).
	Skipped []string
}

// Run is one benchmark run or load point of a file: what it measured,
// the workload it sent and what it says of the set-up. Every figure is the
// file's own, in its unit converted to milliseconds, requests/s or
// tokens/s; a figure the file does not have (or has as NaN or Infinity)
// is nil, "not measured".
type Run struct {
	Index int    // 0-based, in the file's order
	Line  int    // the line the run starts on (JSON lines); 0 when the whole file is one run
	Label string // a short description of the run: its load and any label the file gives

	Setup    Setup
	Workload Workload
	Measured Metrics
	// Notes say what the reader took from where, when it is not plain
	// (a field read under another name, a unit converted).
	Notes []string
}

// Setup is what a file says of the deployment; zero values mean "not
// stated". Names are as the file writes them (a local path, a Hugging
// Face id): the caller resolves them.
type Setup struct {
	Model         string
	Backend       string // the benchmark's backend/endpoint ("vllm", "openai", "sglang")
	Engine        string // the serving engine, when the file says which: vllm, sglang, trtllm
	EngineVersion string
	GPU           string // as written ("4xNVIDIA_L40S")
	GPUCount      int    // GPUs the file says the deployment had (its --metadata gpu=4x…)
	TP, DP, PP    int
	Replicas      int    // replicas behind one endpoint, when the file says (decode_replicas metadata)
	WeightDtype   string // normalised: bf16, fp16, fp8, ...; "" = not stated
	KVDtype       string
	MaxNumSeqs    int   // the engine's batch cap, when stated (SGLang max_running_requests, trtllm-bench max runtime batch size)
	MaxBatchedTok int   // tokens per iteration, when stated (SGLang chunked_prefill_size, trtllm-bench max runtime tokens)
	KVTokens      int64 // the engine's KV pool in tokens, when stated (SGLang max_total_num_tokens)
	Date          string
}

// Workload is what the benchmark sent.
type Workload struct {
	Kind        string  // one of the Load constants
	RatePerS    float64 // LoadRate: requests per second sent
	Concurrency int     // LoadConcurrency: clients; LoadOffline: the engine's batch cap
	// Burstiness is the shape of the gamma distribution of gaps between
	// sends: 1 is Poisson, larger is more even; 0 = not stated.
	Burstiness float64
	EvenGaps   bool // LoadRate: sends evenly spaced (guidellm's constant rate)
	Prompts    int  // requests the benchmark sent (or meant to); 0 = not stated
	Completed  int  // requests that completed; -1 = not stated
	Failed     int  // requests that failed or were cancelled
	Dataset    string
	DurationS  float64 // the benchmark's duration, s; 0 = not stated

	// InputTokensMean and OutputTokensMean are the mean lengths of the
	// completed requests; 0 = not stated.
	InputTokensMean, OutputTokensMean float64
	// InputLens and OutputLens are per request, in the file's order, when
	// the file has per-request arrays (nil otherwise).
	InputLens, OutputLens []int
	// NominalInputTokens and NominalOutputTokens are the lengths the
	// benchmark was asked for, when they differ in meaning from the means
	// (SGLang's random_input_len with range ratio 0 draws up to it).
	NominalInputTokens, NominalOutputTokens int
}

// Metrics are the measured figures of a run. Times are milliseconds.
type Metrics struct {
	TTFT Dist // time to first token
	TPOT Dist // time per output token after the first, per request ((latency − TTFT) / (output − 1))
	ITL  Dist // inter-token (inter-chunk) latency, over every gap
	E2E  Dist // request latency, end to end

	RequestsPerS     *float64
	OutputTokensPerS *float64
}

// Dist is a measured distribution: its mean and the percentiles the file
// has; nil = not in the file.
type Dist struct {
	Mean, P50, P90, P95, P99 *float64
}

// Empty reports whether the file measured nothing of d.
func (d Dist) Empty() bool {
	return d.Mean == nil && d.P50 == nil && d.P90 == nil && d.P95 == nil && d.P99 == nil
}

// Lengths returns the per-request input and output lengths of the run
// when the file has them, else nil, nil. Callers that want a length
// distribution (kvplan plan --lengths) read it here.
func (r *Run) Lengths() (input, output []int) { return r.Workload.InputLens, r.Workload.OutputLens }

// Empty reports whether the run measured nothing at all.
func (m Metrics) Empty() bool {
	return m.TTFT.Empty() && m.TPOT.Empty() && m.ITL.Empty() && m.E2E.Empty() && m.RequestsPerS == nil && m.OutputTokensPerS == nil
}
