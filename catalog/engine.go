package catalog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kvplan/kvplan/units"
)

// Engine holds the constants of one serving engine's memory accounting
// (vLLM's, for example). Every constant carries its source in Sources, keyed
// by the constant's TOML name; none live in code. Sizes are strings with a
// unit in the TOML file ("88MiB") and are parsed once, by resolve, into the
// *Bytes fields.
//
// The GPU side follows vLLM's profile run (vllm/v1/worker/gpu_worker.py,
// determine_available_memory, and vllm/utils/mem_utils.py, memory_profiling):
//
//	kv = total × gpu_memory_utilization − weights − peak activation − non-torch − CUDA graphs
//
// and the engine supplies the terms that are not the model's weights:
//
//   - non-torch: memory allocated outside PyTorch's allocator between the
//     engine's memory snapshot and the end of the profile run (CUDA kernel
//     images loaded lazily, library workspaces). The CUDA context and the NCCL
//     buffers exist before the snapshot and are not counted.
//   - peak activation: the profile run does one forward pass of
//     max_num_batched_tokens tokens split over max_num_seqs requests, then runs
//     the sampler on the logits of max_num_seqs requests. Per batched token
//     the forward keeps ActivationHiddenCopies hidden-size vectors (residual
//     stream and normed input) and ActivationMLPCopies times the gated MLP's
//     width (gate_up and its activated half: 3 × intermediate, split by tensor
//     parallelism), in ActivationElementBytes each. The sampler holds
//     SamplerBytesPerLogit per logit of max_num_seqs × vocab_size. The peak is
//     the sum, a slight over-estimate since the forward's tensors are mostly
//     freed when the sampler runs.
//   - CUDA graphs (none with --enforce-eager): CUDAGraphBaseBytes plus
//     CUDAGraphPerLayerBytes per decoder layer (piecewise graphs capture each
//     layer), plus the activations of the largest captured batch,
//     CUDAGraphMaxTokens tokens.
//
// The host side sizes a worker's container: the engine process's baseline
// resident set (HostBaselineRSS), the KV staged in host memory for transfer
// (× HostRetention ≥ 1, since buffers are not always freed at once), and a
// margin (HostMargin).
type Engine struct {
	Name        string `toml:"name"`
	Description string `toml:"description"`
	Version     string `toml:"version"` // engine versions the constants describe

	NonTorch               string  `toml:"non_torch"`                // "88MiB"
	ActivationElementBytes int     `toml:"activation_element_bytes"` // bytes of one activation element (bf16: 2)
	ActivationHiddenCopies float64 `toml:"activation_hidden_copies"` // hidden-size vectors alive per batched token
	ActivationMLPCopies    float64 `toml:"activation_mlp_copies"`    // multiples of the gated MLP width alive per batched token
	SamplerBytesPerLogit   float64 `toml:"sampler_bytes_per_logit"`  // bytes per logit of max_num_seqs × vocab

	CUDAGraphBase      string `toml:"cuda_graph_base"`       // "64MiB"
	CUDAGraphPerLayer  string `toml:"cuda_graph_per_layer"`  // "4MiB"
	CUDAGraphMaxTokens int    `toml:"cuda_graph_max_tokens"` // largest captured batch, tokens

	DefaultBlockSize           int `toml:"default_block_size"`             // tokens per KV block
	DefaultMaxNumBatchedTokens int `toml:"default_max_num_batched_tokens"` // when unset, GPUs below large_gpu_memory
	DefaultMaxNumSeqs          int `toml:"default_max_num_seqs"`           // when unset, GPUs below large_gpu_memory

	LargeGPUMemory           string   `toml:"large_gpu_memory"`                 // "70GiB": from here the large defaults apply
	LargeGPUExclude          []string `toml:"large_gpu_exclude"`                // GPU names containing one of these keep the small defaults
	LargeMaxNumBatchedTokens int      `toml:"large_gpu_max_num_batched_tokens"` // default on large GPUs
	LargeMaxNumSeqs          int      `toml:"large_gpu_max_num_seqs"`           // default on large GPUs

	HostBaselineRSS string  `toml:"host_baseline_rss"` // "2560MiB": resident set of an idle worker
	HostMargin      string  `toml:"host_margin"`       // "256MiB"
	HostRetention   float64 `toml:"host_retention"`    // ≥ 1

	Sources map[string]string `toml:"sources"` // constant name → where its value comes from
	Source  string            `toml:"source"`  // the entry as a whole

	NonTorchBytes          int64 `toml:"-"`
	CUDAGraphBaseBytes     int64 `toml:"-"`
	CUDAGraphPerLayerBytes int64 `toml:"-"`
	LargeGPUMemoryBytes    int64 `toml:"-"`
	HostBaselineRSSBytes   int64 `toml:"-"`
	HostMarginBytes        int64 `toml:"-"`

	File string `toml:"-"`
	Line int    `toml:"-"`
}

// EngineConstants lists the TOML names of an engine's constants, each of
// which needs an entry in sources.
var EngineConstants = []string{
	"non_torch", "activation_element_bytes", "activation_hidden_copies", "activation_mlp_copies",
	"sampler_bytes_per_logit", "cuda_graph_base", "cuda_graph_per_layer", "cuda_graph_max_tokens",
	"default_block_size", "default_max_num_batched_tokens", "default_max_num_seqs",
	"large_gpu_memory", "large_gpu_max_num_batched_tokens", "large_gpu_max_num_seqs",
	"host_baseline_rss", "host_margin", "host_retention",
}

// SourceOf returns the source of one constant, or the entry's source.
func (e *Engine) SourceOf(constant string) string {
	if s := e.Sources[constant]; s != "" {
		return s
	}
	return e.Source
}

// IsLargeGPU reports whether the engine applies its large-GPU defaults
// (max_num_batched_tokens, max_num_seqs) to a GPU of memoryBytes named name.
func (e *Engine) IsLargeGPU(name string, memoryBytes int64) bool {
	if e.LargeGPUMemoryBytes <= 0 || memoryBytes < e.LargeGPUMemoryBytes {
		return false
	}
	n := strings.ToLower(name)
	for _, x := range e.LargeGPUExclude {
		if x != "" && strings.Contains(n, strings.ToLower(x)) {
			return false
		}
	}
	return true
}

func (e *Engine) validate() []fieldErr {
	var errs []fieldErr
	add := func(field, format string, a ...any) { errs = append(errs, fieldErr{field, fmt.Sprintf(format, a...)}) }
	if e.Source == "" {
		add("source", "missing: say where the figures come from")
	}
	for _, c := range EngineConstants {
		if strings.TrimSpace(e.Sources[c]) == "" {
			add("sources", "missing a source for %s: add %s = \"...\" under [engine.sources]", c, c)
		}
	}
	known := map[string]bool{}
	for _, c := range EngineConstants {
		known[c] = true
	}
	var extra []string
	for k := range e.Sources {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		add("sources", "%q is not a constant of an engine (one of %s)", k, strings.Join(EngineConstants, ", "))
	}
	if e.ActivationElementBytes <= 0 {
		add("activation_element_bytes", "must be > 0 (got %d); bf16 activations are 2", e.ActivationElementBytes)
	}
	if e.ActivationHiddenCopies < 0 {
		add("activation_hidden_copies", "must be >= 0 (got %g)", e.ActivationHiddenCopies)
	}
	if e.ActivationMLPCopies < 0 {
		add("activation_mlp_copies", "must be >= 0 (got %g)", e.ActivationMLPCopies)
	}
	if e.SamplerBytesPerLogit < 0 {
		add("sampler_bytes_per_logit", "must be >= 0 (got %g)", e.SamplerBytesPerLogit)
	}
	if e.CUDAGraphMaxTokens < 0 {
		add("cuda_graph_max_tokens", "must be >= 0 (got %d)", e.CUDAGraphMaxTokens)
	}
	if e.DefaultBlockSize <= 0 {
		add("default_block_size", "must be > 0 (got %d); vLLM's default is 16", e.DefaultBlockSize)
	}
	if e.DefaultMaxNumBatchedTokens <= 0 {
		add("default_max_num_batched_tokens", "must be > 0 (got %d)", e.DefaultMaxNumBatchedTokens)
	}
	if e.DefaultMaxNumSeqs <= 0 {
		add("default_max_num_seqs", "must be > 0 (got %d)", e.DefaultMaxNumSeqs)
	}
	if e.LargeMaxNumBatchedTokens <= 0 {
		add("large_gpu_max_num_batched_tokens", "must be > 0 (got %d)", e.LargeMaxNumBatchedTokens)
	}
	if e.LargeMaxNumSeqs <= 0 {
		add("large_gpu_max_num_seqs", "must be > 0 (got %d)", e.LargeMaxNumSeqs)
	}
	if e.HostRetention < 1 {
		add("host_retention", "must be >= 1 (got %g): staged buffers are freed at the earliest right after their transfer", e.HostRetention)
	}
	return errs
}

// resolve parses the sizes. An empty size is refused: every constant is
// stated, even when it is 0 ("0B").
func (e *Engine) resolve() []fieldErr {
	var errs []fieldErr
	size := func(field, s string, dst *int64) {
		if strings.TrimSpace(s) == "" {
			errs = append(errs, fieldErr{field, "missing: a size such as \"256MiB\" (write \"0B\" for none)"})
			return
		}
		v, err := units.ParseBytes(s)
		if err != nil {
			errs = append(errs, fieldErr{field, err.Error()})
			return
		}
		*dst = v
	}
	size("non_torch", e.NonTorch, &e.NonTorchBytes)
	size("cuda_graph_base", e.CUDAGraphBase, &e.CUDAGraphBaseBytes)
	size("cuda_graph_per_layer", e.CUDAGraphPerLayer, &e.CUDAGraphPerLayerBytes)
	size("large_gpu_memory", e.LargeGPUMemory, &e.LargeGPUMemoryBytes)
	size("host_baseline_rss", e.HostBaselineRSS, &e.HostBaselineRSSBytes)
	size("host_margin", e.HostMargin, &e.HostMarginBytes)
	return errs
}
