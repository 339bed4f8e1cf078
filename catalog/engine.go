package catalog

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kvplan/kvplan/units"
)

// Engine families: how an engine turns GPU memory into a KV cache.
const (
	// FamilyVLLM: kv = total × gpu_memory_utilization − weights − profiled
	// peak activation − non-torch memory (− its CUDA-graph estimate from
	// v0.21). vllm/v1/worker/gpu_worker.py determine_available_memory.
	FamilyVLLM = "vllm"
	// FamilySGLang: kv = mem_fraction_static × free memory at start − weights.
	// sglang/srt/model_executor/model_runner.py profile_max_num_token.
	FamilySGLang = "sglang"
	// FamilyTRTLLM: kv = free_gpu_memory_fraction × (total − weights − peak
	// activation − non-torch memory). tensorrt_llm/_torch/pyexecutor/_util.py
	// KvCacheCreator.
	FamilyTRTLLM = "trtllm"
)

// Engine holds the constants of one serving engine's memory accounting over
// a range of its versions (vLLM 0.10–0.20, say). Several entries may share a
// name, one per version range; Catalog.EngineVersion picks the one that
// holds a version. Every constant carries its source in Sources, keyed by its
// TOML name; none live in code. Sizes are strings with a unit in the TOML
// file ("88MiB") and are parsed once, by resolve, into the *Bytes fields.
//
// The vLLM family follows its profile run (gpu_worker.py
// determine_available_memory, utils/mem_utils.py memory_profiling):
//
//		kv = total × gpu_memory_utilization − weights − peak activation − non-torch − CUDA graphs
//
//	  - total is what CUDA reports (GPU.CUDAMemoryBytes), not nvidia-smi's figure.
//	  - non-torch: memory allocated outside PyTorch's allocator between the
//	    engine's snapshot and the end of the profile run; small on one GPU, about
//	    2 GiB per rank with tensor parallelism (NCCL and custom all-reduce
//	    buffers), by tp in NonTorchTP.
//	  - peak activation: the profile run's forward of max_num_batched_tokens
//	    tokens keeps ActivationHiddenCopies hidden-size vectors and
//	    ActivationMLPCopies times the MLP width (split by tp) per token; then the
//	    sampler runs on the logits of max_num_seqs requests over the vocabulary
//	    (not split by tp), SamplerBytesPerLogit bytes each beyond the model
//	    dtype's logit, while ActivationKeptHiddenCopies hidden vectors per
//	    batched token stay alive. A mixture of experts keeps its fused-MoE
//	    workspace (MoEWorkspaceCopies × the routed MLP width per token) through
//	    both. The peak is the larger of the forward and the sampler phase.
//	  - CUDA graphs: charged (CUDAGraphsCharged) from v0.21; before, captured
//	    after the KV cache in the memory that gpu_memory_utilization leaves.
type Engine struct {
	Name        string `toml:"name"`
	Family      string `toml:"family"` // vllm, sglang or trtllm; "" = the name
	Description string `toml:"description"`
	Version     string `toml:"version"` // the versions the constants describe, in words

	MinVersion   string   `toml:"min_version"`   // first version of the range (inclusive); "" = all before
	BelowVersion string   `toml:"below_version"` // first version after the range (exclusive); "" = all after
	Versions     []string `toml:"versions"`      // releases known in the range; the newest of all entries is the default

	MemoryFraction     float64 `toml:"memory_fraction"`      // default gpu_memory_utilization / free_gpu_memory_fraction; 0 = derived (SGLang)
	MemoryFractionFlag string  `toml:"memory_fraction_flag"` // the engine's name for it

	NonTorch   string            `toml:"non_torch"`    // one GPU, one process
	NonTorchTP map[string]string `toml:"non_torch_tp"` // tp → size, for tp > 1 (the largest key ≤ tp applies)
	NonTorchPP string            `toml:"non_torch_pp"` // tp 1 with pipeline parallelism (worker processes)
	// NonTorchEager is the tp 1 figure with --enforce-eager (no torch.compile
	// kernels, no CUDA graphs).
	NonTorchEager string `toml:"non_torch_eager"`

	ActivationHiddenCopies     float64 `toml:"activation_hidden_copies"`      // hidden-size vectors alive per batched token in the forward
	ActivationMLPCopies        float64 `toml:"activation_mlp_copies"`         // multiples of the MLP width (÷ tp) alive per batched token
	ActivationKeptHiddenCopies float64 `toml:"activation_kept_hidden_copies"` // hidden vectors per batched token alive while the sampler runs
	MoEWorkspaceCopies         float64 `toml:"moe_workspace_copies"`          // multiples of the routed MLP width (÷ tp) per token kept by fused MoE
	PPBufferHiddenCopies       float64 `toml:"pp_buffer_hidden_copies"`       // hidden vectors per batched token of pipeline send/receive buffers
	SamplerBytesPerLogit       float64 `toml:"sampler_bytes_per_logit"`       // sampler bytes per logit beyond the model-dtype logits

	CUDAGraphsCharged  bool   `toml:"cuda_graphs_charged"`   // the engine subtracts its CUDA-graph estimate from the KV budget
	CUDAGraphBase      string `toml:"cuda_graph_base"`       // "64MiB"
	CUDAGraphPerLayer  string `toml:"cuda_graph_per_layer"`  // "4MiB"
	CUDAGraphMaxTokens int    `toml:"cuda_graph_max_tokens"` // largest captured batch, tokens

	// SGLang: memory in use when the engine reads the free memory it takes its
	// fraction of (CUDA context; plus NCCL with tp > 1), and the heuristic that
	// sets mem_fraction_static when it is not given.
	InitOverhead           string           `toml:"init_overhead"`
	InitOverheadTP         string           `toml:"init_overhead_tp"`
	FractionBuckets        []FractionBucket `toml:"fraction_bucket"`
	ReserveBase            string           `toml:"reserve_base"`              // "512MiB"
	ReservePerPrefillToken string           `toml:"reserve_per_prefill_token"` // "1.5MiB" per chunked-prefill token
	ReservePerGraphBatch   string           `toml:"reserve_per_graph_batch"`   // "2MiB" per CUDA-graph batch size
	ReservePer8Ranks       string           `toml:"reserve_per_8_ranks"`       // "1GiB" per 8 tp × pp ranks
	ReserveFloor           string           `toml:"reserve_floor"`             // "10GiB"
	ReserveFloorAbove      string           `toml:"reserve_floor_above"`       // "60GiB": GPUs above it reserve at least ReserveFloor

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

	NonTorchBytes               int64     `toml:"-"`
	NonTorchPPBytes             int64     `toml:"-"`
	NonTorchEagerBytes          int64     `toml:"-"`
	NonTorchTPBytes             []TPBytes `toml:"-"` // sorted by TP
	CUDAGraphBaseBytes          int64     `toml:"-"`
	CUDAGraphPerLayerBytes      int64     `toml:"-"`
	InitOverheadBytes           int64     `toml:"-"`
	InitOverheadTPBytes         int64     `toml:"-"`
	ReserveBaseBytes            int64     `toml:"-"`
	ReservePerPrefillTokenBytes int64     `toml:"-"`
	ReservePerGraphBatchBytes   int64     `toml:"-"`
	ReservePer8RanksBytes       int64     `toml:"-"`
	ReserveFloorBytes           int64     `toml:"-"`
	ReserveFloorAboveBytes      int64     `toml:"-"`
	LargeGPUMemoryBytes         int64     `toml:"-"`
	HostBaselineRSSBytes        int64     `toml:"-"`
	HostMarginBytes             int64     `toml:"-"`
	File                        string    `toml:"-"`
	Line                        int       `toml:"-"`

	minV, belowV     version   // parsed MinVersion, BelowVersion
	hasMin, hasBelow bool      // whether each bound is given
	versions         []version // parsed Versions
}

// TPBytes is a size that applies from a tensor-parallel degree on.
type TPBytes struct {
	TP    int
	Bytes int64
}

// FractionBucket is one row of SGLang's GPU-size table (server_args.py
// _handle_gpu_memory_settings): GPUs with less memory than Below get these
// chunked-prefill and CUDA-graph batch defaults.
type FractionBucket struct {
	Below              string `toml:"below"`                 // "20GiB"; "" = the last, open bucket
	ChunkedPrefillSize int    `toml:"chunked_prefill_size"`  // tokens
	CUDAGraphMaxBS     int    `toml:"cuda_graph_max_bs"`     // tp < 4
	CUDAGraphMaxBSTP4  int    `toml:"cuda_graph_max_bs_tp4"` // tp ≥ 4
	BelowBytes         int64  `toml:"-"`
}

// engineCommon lists the constants every family needs a source for.
var engineCommon = []string{
	"memory_fraction", "default_block_size", "default_max_num_batched_tokens", "default_max_num_seqs",
	"host_baseline_rss", "host_margin", "host_retention",
}

// engineByFamily lists the constants of each family's accounting.
var engineByFamily = map[string][]string{
	FamilyVLLM: {
		"non_torch", "non_torch_tp", "non_torch_pp", "non_torch_eager", "activation_hidden_copies", "activation_mlp_copies",
		"activation_kept_hidden_copies", "moe_workspace_copies", "pp_buffer_hidden_copies", "sampler_bytes_per_logit",
		"cuda_graphs_charged", "cuda_graph_base", "cuda_graph_per_layer", "cuda_graph_max_tokens",
		"large_gpu_memory", "large_gpu_max_num_batched_tokens", "large_gpu_max_num_seqs",
	},
	FamilySGLang: {
		"init_overhead", "init_overhead_tp", "fraction_bucket", "reserve_base", "reserve_per_prefill_token",
		"reserve_per_graph_batch", "reserve_per_8_ranks", "reserve_floor", "reserve_floor_above",
	},
	FamilyTRTLLM: {
		"non_torch", "non_torch_tp", "activation_hidden_copies", "activation_mlp_copies",
		"activation_kept_hidden_copies", "moe_workspace_copies", "sampler_bytes_per_logit",
	},
}

// EngineConstants returns the TOML names of the constants an engine of
// family needs, each of which needs an entry in sources.
func EngineConstants(family string) []string {
	return append(append([]string{}, engineCommon...), engineByFamily[family]...)
}

// FamilyOf returns the engine's accounting family.
func (e *Engine) FamilyOf() string {
	if e.Family != "" {
		return e.Family
	}
	return e.Name
}

// SourceOf returns the source of one constant, or the entry's source.
func (e *Engine) SourceOf(constant string) string {
	if s := e.Sources[constant]; s != "" {
		return s
	}
	return e.Source
}

// NonTorchFor returns the non-torch memory of one rank at tp × pp, with the
// constant it comes from.
func (e *Engine) NonTorchFor(tp, pp int, eager bool) (int64, string) {
	if tp <= 1 {
		if eager && pp <= 1 && e.NonTorchEager != "" {
			return e.NonTorchEagerBytes, "non_torch_eager"
		}
		if pp > 1 {
			return e.NonTorchPPBytes, "non_torch_pp"
		}
		return e.NonTorchBytes, "non_torch"
	}
	b, name := e.NonTorchBytes, "non_torch"
	for _, x := range e.NonTorchTPBytes {
		if x.TP <= tp {
			b, name = x.Bytes, fmt.Sprintf("non_torch_tp[%d]", x.TP)
		}
	}
	return b, name
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

// Holds reports whether version v (e.g. "0.19.0", "v0.19", "1.3.0rc15")
// falls in the entry's range.
func (e *Engine) Holds(v string) bool {
	pv, ok := parseVersion(v)
	if !ok {
		return false
	}
	return e.holds(pv)
}

func (e *Engine) holds(v version) bool {
	if e.hasMin && v.less(e.minV) {
		return false
	}
	if e.hasBelow && !v.less(e.belowV) {
		return false
	}
	return true
}

// Newest returns the newest release the entry lists, or "".
func (e *Engine) Newest() string {
	best, bestV := "", version{}
	for i, v := range e.versions {
		if best == "" || bestV.less(v) {
			best, bestV = e.Versions[i], v
		}
	}
	return best
}

// Range describes the entry's version range: ">= 0.10.0, < 0.21.0".
func (e *Engine) Range() string {
	var parts []string
	if e.MinVersion != "" {
		parts = append(parts, ">= "+e.MinVersion)
	}
	if e.BelowVersion != "" {
		parts = append(parts, "< "+e.BelowVersion)
	}
	if len(parts) == 0 {
		return "all versions"
	}
	return strings.Join(parts, ", ")
}

// version is a release number: major, minor, patch, and whether a
// pre-release suffix (rc, dev) puts it before the plain release.
type version struct {
	n   [3]int
	pre int  // pre-release number + 1 (rc15 → 16); 0 when none is given
	isP bool // a pre-release (rc, dev, a, b): before the plain release
}

func (a version) less(b version) bool {
	for i := range a.n {
		if a.n[i] != b.n[i] {
			return a.n[i] < b.n[i]
		}
	}
	switch {
	case a.isP && !b.isP:
		return true
	case !a.isP && b.isP:
		return false
	}
	return a.pre < b.pre
}

// parseVersion reads "0.19.0", "v0.19", "0.19.0.post1", "1.3.0rc15".
func parseVersion(s string) (version, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(strings.ToLower(s)), "v")
	if s == "" {
		return version{}, false
	}
	var v version
	parts := strings.SplitN(s, ".", 4)
	for i := 0; i < 3 && i < len(parts); i++ {
		p := parts[i]
		j := 0
		for j < len(p) && p[j] >= '0' && p[j] <= '9' {
			j++
		}
		if j == 0 {
			return version{}, false
		}
		n, err := strconv.Atoi(p[:j])
		if err != nil {
			return version{}, false
		}
		v.n[i] = n
		if rest := p[j:]; rest != "" {
			if i != len(parts)-1 && i != 2 {
				return version{}, false
			}
			k := 0
			for k < len(rest) && (rest[k] < '0' || rest[k] > '9') {
				k++
			}
			tag := rest[:k]
			if tag != "rc" && tag != "dev" && tag != "a" && tag != "b" && tag != "post" {
				return version{}, false
			}
			if tag != "post" {
				v.isP = true
				if k < len(rest) {
					m, err := strconv.Atoi(rest[k:])
					if err != nil {
						return version{}, false
					}
					v.pre = m + 1
				}
			}
			break
		}
	}
	return v, true
}

func (e *Engine) validate() []fieldErr {
	var errs []fieldErr
	add := func(field, format string, a ...any) { errs = append(errs, fieldErr{field, fmt.Sprintf(format, a...)}) }
	if e.Source == "" {
		add("source", "missing: say where the figures come from")
	}
	fam := e.FamilyOf()
	if _, ok := engineByFamily[fam]; !ok {
		add("family", "%q is not one of vllm, sglang, trtllm (it says whose memory accounting the constants feed)", fam)
		return errs
	}
	consts := EngineConstants(fam)
	for _, c := range consts {
		if strings.TrimSpace(e.Sources[c]) == "" {
			add("sources", "missing a source for %s: add %s = \"...\" under [engine.sources]", c, c)
		}
	}
	known := map[string]bool{}
	for _, c := range consts {
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
		add("sources", "%q is not a constant of a %s engine (one of %s)", k, fam, strings.Join(consts, ", "))
	}
	if e.MinVersion != "" {
		if e.minV, e.hasMin = parseVersion(e.MinVersion); !e.hasMin {
			add("min_version", "%q is not a version such as 0.19.0", e.MinVersion)
		}
	}
	if e.BelowVersion != "" {
		if e.belowV, e.hasBelow = parseVersion(e.BelowVersion); !e.hasBelow {
			add("below_version", "%q is not a version such as 0.21.0", e.BelowVersion)
		}
	}
	if e.hasMin && e.hasBelow && !e.minV.less(e.belowV) {
		add("below_version", "%s is not after min_version %s", e.BelowVersion, e.MinVersion)
	}
	e.versions = nil
	for _, s := range e.Versions {
		v, ok := parseVersion(s)
		if !ok {
			add("versions", "%q is not a version such as 0.19.0", s)
			continue
		}
		e.versions = append(e.versions, v)
		if !e.holds(v) {
			add("versions", "%s is outside the entry's range (%s)", s, e.Range())
		}
	}
	if fam == FamilySGLang {
		if !(e.MemoryFraction >= 0 && e.MemoryFraction <= 1) {
			add("memory_fraction", "must be in [0, 1] (got %g); 0 = SGLang's own heuristic", e.MemoryFraction)
		}
		if e.MemoryFraction == 0 && len(e.FractionBuckets) == 0 {
			add("fraction_bucket", "missing: memory_fraction 0 asks for SGLang's heuristic, which needs its GPU-size table")
		}
	} else if !(e.MemoryFraction > 0 && e.MemoryFraction <= 1) {
		add("memory_fraction", "must be in (0, 1] (got %g)", e.MemoryFraction)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"activation_hidden_copies", e.ActivationHiddenCopies}, {"activation_mlp_copies", e.ActivationMLPCopies},
		{"activation_kept_hidden_copies", e.ActivationKeptHiddenCopies}, {"moe_workspace_copies", e.MoEWorkspaceCopies},
		{"pp_buffer_hidden_copies", e.PPBufferHiddenCopies}, {"sampler_bytes_per_logit", e.SamplerBytesPerLogit},
	} {
		if !(f.v >= 0) {
			add(f.name, "must be >= 0 (got %g)", f.v)
		}
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
	if fam == FamilyVLLM {
		if e.LargeMaxNumBatchedTokens <= 0 {
			add("large_gpu_max_num_batched_tokens", "must be > 0 (got %d)", e.LargeMaxNumBatchedTokens)
		}
		if e.LargeMaxNumSeqs <= 0 {
			add("large_gpu_max_num_seqs", "must be > 0 (got %d)", e.LargeMaxNumSeqs)
		}
	}
	if e.HostRetention < 1 {
		add("host_retention", "must be >= 1 (got %g): staged buffers are freed at the earliest right after their transfer", e.HostRetention)
	}
	return errs
}

// resolve parses the sizes. A size the family needs may not be empty: every
// constant is stated, even when it is 0 ("0B").
func (e *Engine) resolve() []fieldErr {
	var errs []fieldErr
	fam := e.FamilyOf()
	need := map[string]bool{}
	for _, c := range EngineConstants(fam) {
		need[c] = true
	}
	size := func(field, s string, dst *int64) {
		if strings.TrimSpace(s) == "" {
			if need[field] {
				errs = append(errs, fieldErr{field, "missing: a size such as \"256MiB\" (write \"0B\" for none)"})
			}
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
	size("non_torch_pp", e.NonTorchPP, &e.NonTorchPPBytes)
	size("non_torch_eager", e.NonTorchEager, &e.NonTorchEagerBytes)
	size("cuda_graph_base", e.CUDAGraphBase, &e.CUDAGraphBaseBytes)
	size("cuda_graph_per_layer", e.CUDAGraphPerLayer, &e.CUDAGraphPerLayerBytes)
	size("init_overhead", e.InitOverhead, &e.InitOverheadBytes)
	size("init_overhead_tp", e.InitOverheadTP, &e.InitOverheadTPBytes)
	size("reserve_base", e.ReserveBase, &e.ReserveBaseBytes)
	size("reserve_per_prefill_token", e.ReservePerPrefillToken, &e.ReservePerPrefillTokenBytes)
	size("reserve_per_graph_batch", e.ReservePerGraphBatch, &e.ReservePerGraphBatchBytes)
	size("reserve_per_8_ranks", e.ReservePer8Ranks, &e.ReservePer8RanksBytes)
	size("reserve_floor", e.ReserveFloor, &e.ReserveFloorBytes)
	size("reserve_floor_above", e.ReserveFloorAbove, &e.ReserveFloorAboveBytes)
	size("large_gpu_memory", e.LargeGPUMemory, &e.LargeGPUMemoryBytes)
	size("host_baseline_rss", e.HostBaselineRSS, &e.HostBaselineRSSBytes)
	size("host_margin", e.HostMargin, &e.HostMarginBytes)

	e.NonTorchTPBytes = nil
	keys := make([]string, 0, len(e.NonTorchTP))
	for k := range e.NonTorchTP {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		tp, err := strconv.Atoi(k)
		if err != nil || tp < 2 {
			errs = append(errs, fieldErr{"non_torch_tp", fmt.Sprintf("key %q is not a tensor-parallel degree >= 2", k)})
			continue
		}
		var b int64
		size("non_torch_tp", e.NonTorchTP[k], &b)
		e.NonTorchTPBytes = append(e.NonTorchTPBytes, TPBytes{TP: tp, Bytes: b})
	}
	sort.Slice(e.NonTorchTPBytes, func(i, j int) bool { return e.NonTorchTPBytes[i].TP < e.NonTorchTPBytes[j].TP })
	if fam != FamilySGLang && need["non_torch_tp"] && len(e.NonTorchTPBytes) == 0 {
		errs = append(errs, fieldErr{"non_torch_tp", "missing: the non-torch memory of a rank with tensor parallelism, e.g. { \"2\" = \"2GiB\" }"})
	}
	for i := range e.FractionBuckets {
		b := &e.FractionBuckets[i]
		if b.Below == "" {
			if i != len(e.FractionBuckets)-1 {
				errs = append(errs, fieldErr{"fraction_bucket", fmt.Sprintf("bucket %d has no below: only the last bucket may be open", i+1)})
			}
			continue
		}
		size("fraction_bucket", b.Below, &b.BelowBytes)
		if i > 0 && e.FractionBuckets[i-1].BelowBytes >= b.BelowBytes {
			errs = append(errs, fieldErr{"fraction_bucket", fmt.Sprintf("bucket %d (below %s) does not follow a smaller one", i+1, b.Below)})
		}
	}
	return errs
}

// Bucket returns SGLang's chunked-prefill size and CUDA-graph batch for a GPU
// of gpuBytes (what CUDA reports) at tp.
func (e *Engine) Bucket(gpuBytes int64, tp int) (chunk, graphBS int, ok bool) {
	for _, b := range e.FractionBuckets {
		if b.Below == "" || gpuBytes < b.BelowBytes {
			bs := b.CUDAGraphMaxBS
			if tp >= 4 && b.CUDAGraphMaxBSTP4 > 0 {
				bs = b.CUDAGraphMaxBSTP4
			}
			return b.ChunkedPrefillSize, bs, true
		}
	}
	return 0, 0, false
}
