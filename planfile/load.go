package planfile

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/kvplan/kvplan/internal/safefile"
	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/internal/tomlpos"
	"github.com/kvplan/kvplan/slo"
	"github.com/kvplan/kvplan/units"
)

// Options change how a plan file is read.
type Options struct {
	// AllowOutsidePaths lets model.config and deployment.manifest name
	// files anywhere (an absolute path, or one climbing out with ..). Off
	// by default: a plan from a pull request must not make CI read
	// ../../etc/passwd. The command-line flag is --allow-outside-paths.
	AllowOutsidePaths bool
	// PathsRoot is the directory the files a plan names must resolve
	// inside, symbolic links followed; "" is the plan file's directory.
	// kvplan check sets it with --paths-root, by default to the working
	// directory when the plan file is inside it (plans/review.toml naming
	// ../k8s/disagg.yaml, run from the repository's root).
	PathsRoot string
}

// root is the directory a plan's files must stay inside.
func (p *Plan) root() string {
	if p.opts.PathsRoot != "" {
		return p.opts.PathsRoot
	}
	return filepath.Dir(p.Path)
}

// Load reads, decodes and validates the plan file at path ("-" is stdin):
// a regular file of at most safefile.Plan's cap. Unknown keys and invalid
// values are errors of type *tomlpos.Error ("file:line: field: msg");
// several validation errors come back joined (errors.Join), in file order.
func Load(path string) (*Plan, error) { return LoadWith(path, Options{}) }

// LoadWith is Load with options.
func LoadWith(path string, o Options) (*Plan, error) {
	data, err := safefile.ReadFile(path, safefile.Plan)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	return ParseWith(path, data, o)
}

// Parse decodes and validates a plan file's contents; path names it in errors.
// A plan that points at a manifest ([deployment] manifest) is only decoded:
// its pools come from the manifest, so the caller validates the merged plan
// (Validate) once the manifest is read.
func Parse(path string, data []byte) (*Plan, error) { return ParseWith(path, data, Options{}) }

// ParseWith is Parse with options.
func ParseWith(path string, data []byte, o Options) (*Plan, error) {
	p, err := Decode(path, data)
	if err != nil {
		return nil, err
	}
	p.opts = o
	if p.Deployment.Manifest != "" {
		return p, nil
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// Decode reads a plan file strictly (unknown keys are errors) and records
// the line of every key and table, without checking values or applying
// defaults.
func Decode(path string, data []byte) (*Plan, error) {
	p := &Plan{}
	idx, err := tomlpos.DecodeStrict(path, data, p)
	if err != nil {
		return nil, unknownSLO(err)
	}
	p.Path = path
	for _, e := range idx.Entries {
		key := strings.Join(e.Path, ".")
		if !p.Has(key) {
			p.SetPos(key, Pos{File: path, Line: e.Line})
		}
	}
	for name, pool := range p.Pools {
		if pool == nil {
			pool = &Pool{}
			p.Pools[name] = pool
		}
		pool.Name = name
	}
	return p, nil
}

// unknownSLO names an unknown [slo] key as the SLO it may have meant: the
// metrics and percentiles offered, with a "did you mean".
func unknownSLO(err error) error {
	var te *tomlpos.Error
	if !errors.As(err, &te) || !strings.HasPrefix(te.Field, "slo.") || !strings.HasPrefix(te.Msg, "unknown key") {
		return err
	}
	e := *te
	key := strings.TrimPrefix(te.Field, "slo.")
	e.Msg = strings.Replace(slo.UnknownKey(key).Error(), fmt.Sprintf("unknown SLO %q", key), "unknown SLO key", 1)
	return &e
}

// Validate checks every value, fills the defaults of absent keys, and
// returns every problem at its field's place (errors.Join of
// *tomlpos.Error, in file order).
func (p *Plan) Validate() error {
	for name, pool := range p.Pools {
		if pool == nil {
			pool = &Pool{}
			p.Pools[name] = pool
		}
		pool.Name = name
	}
	errs := p.validate()
	if len(errs) == 0 {
		return nil
	}
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].File != errs[j].File {
			return errs[i].File < errs[j].File
		}
		return errs[i].Line < errs[j].Line
	})
	joined := make([]error, len(errs))
	for i, e := range errs {
		joined[i] = e
	}
	return errors.Join(joined...)
}

// ConfigPath returns model.config resolved against the plan file's folder.
// Unless the plan was read with AllowOutsidePaths, validation has checked
// that it stays inside that folder (as written; ReadConfig also checks
// where symbolic links lead).
func (p *Plan) ConfigPath() string {
	if p.Model.Config == "" || filepath.IsAbs(p.Model.Config) {
		return p.Model.Config
	}
	return filepath.Join(filepath.Dir(p.Path), p.Model.Config)
}

// ReadConfig reads the config.json that model.config names: a regular file
// within safefile.ModelConfig's cap, inside the plan file's folder once
// symbolic links are followed (unless AllowOutsidePaths). Errors are at
// model.config's place. The planner should read the file through this.
func (p *Plan) ReadConfig() ([]byte, error) {
	return p.readNamed("model.config", p.ConfigPath(), safefile.ModelConfig, true)
}

// ReadManifest reads the manifest deployment.manifest names: a regular
// file within safefile.Manifest's cap ("-" is stdin, safefile.Stdin),
// inside PathsRoot once symbolic links are followed (unless
// AllowOutsidePaths).
func (p *Plan) ReadManifest() ([]byte, error) {
	return p.readNamed("deployment.manifest", p.ManifestPath(), safefile.Manifest, true)
}

// readNamed reads the file a plan's field names, capped, and confined to
// the plan's directory when confine is set (and AllowOutsidePaths is not).
func (p *Plan) readNamed(field, path string, k safefile.Kind, confine bool) ([]byte, error) {
	if path == "" {
		return nil, p.FieldError(field, fmt.Errorf("missing: the plan names no %s", k.Name))
	}
	if confine && path != "-" && !p.opts.AllowOutsidePaths {
		if err := inside(p.root(), path); err != nil {
			return nil, p.FieldError(field, err)
		}
	}
	data, err := safefile.ReadFile(path, k)
	if err != nil {
		return nil, p.FieldError(field, err)
	}
	return data, nil
}

// outsideHint says how to allow a path outside the root.
const outsideHint = "kvplan reads the files a plan names only inside --paths-root (by default the working directory, or the plan file's directory when the plan is outside it); move the file there, set --paths-root, or pass --allow-outside-paths"

// escapes reports why a path as written in a plan leaves the root, or "".
func (p *Plan) escapes(rel string) string {
	if filepath.IsAbs(rel) || filepath.VolumeName(rel) != "" {
		return "is an absolute path"
	}
	root, err := filepath.Abs(p.root())
	if err != nil {
		return "cannot be placed: " + err.Error()
	}
	full, err := filepath.Abs(filepath.Join(filepath.Dir(p.Path), rel))
	if err != nil {
		return "cannot be placed: " + err.Error()
	}
	if r, err := filepath.Rel(root, full); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "climbs out of " + p.root()
	}
	return ""
}

// inside checks that path, once symbolic links are resolved, is inside dir.
func inside(dir, path string) error {
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	realPath, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err // a missing file: say so, as a read would
	}
	// Compare absolute paths: one may be relative to the working directory.
	absDir, err1 := filepath.Abs(realDir)
	absPath, err2 := filepath.Abs(realPath)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("%s: cannot place it against %s: %w", path, dir, errors.Join(err1, err2))
	}
	rel, err := filepath.Rel(absDir, absPath)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s resolves to %s, outside %s: %s", path, realPath, realDir, outsideHint)
	}
	return nil
}

var (
	kvDtypes     = []string{"bf16", "fp16", "fp8", "int8"}
	roles        = []string{RoleAggregated, RolePrefill, RoleDecode}
	devices      = []string{BufferCPU, BufferGPU}
	routerModes  = []string{RouterKV, RouterRoundRobin, RouterRandom}
	requestPaths = []string{RequestPathFrontend, RequestPathDirect}
	cudaRe       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+\.[0-9]+$`) })        // compiled on first use, not at start-up
	driverRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+(\.[0-9]+){0,2}$`) }) // compiled on first use, not at start-up
	tlsRe        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\^?[a-z][a-z0-9_]*$`) })    // compiled on first use, not at start-up
)

type checker struct {
	p    *Plan
	errs []*tomlpos.Error
}

func (c *checker) add(field, format string, args ...any) {
	c.errs = append(c.errs, c.p.fieldErrorf(field, format, args...))
}

func (c *checker) has(field string) bool { return c.p.Has(field) }

// oneOf matches value against allowed regardless of case ("FP8" is "fp8")
// and returns the allowed spelling, or value after adding an error.
func (c *checker) oneOf(field, value string, allowed []string) string {
	v, err := units.ParseEnum(value, allowed)
	if err != nil {
		c.add(field, "%v", err)
		return value
	}
	return v
}

func (c *checker) nonNegative(field string, v int) {
	if v < 0 {
		c.add(field, "%d is negative: want 0 or more", v)
	}
}

// Upper bounds of plan values: far above any real deployment, low enough
// that the planner's products of them (bytes × tokens × requests) can be
// checked for overflow rather than wrap. A value above is an error stating
// the range.
const (
	MaxTokens            = 100_000_000 // tokens of a prompt, an output, a prefix or a context
	MaxConcurrency       = 10_000_000  // requests in flight
	MaxRequestRate       = 10_000_000  // requests per second
	MaxWorkers           = 100_000     // workers of one pool
	MaxTP                = 1024        // tensor-parallel ranks (and data, expert, pipeline ranks; GPUs of one worker)
	MaxSpeculativeTokens = 64          // tokens proposed per speculative step
	MaxCount             = 100_000_000 // prefixes, repeats, sequences
	MaxBlockSize         = 1 << 20     // tokens per KV block
	MaxSLOMS             = 86_400_000  // one day, in milliseconds
)

// atMost adds an error when v is above max (lower bounds have their own
// messages), stating the range from lo.
func (c *checker) atMost(field string, v, lo, max int, unit string) {
	if v > max {
		c.add(field, "%v", units.CheckInt(int64(v), int64(lo), int64(max), unit))
	}
}

// finite adds an error for NaN, ±Inf or a value outside [lo, hi], and
// reports whether v was fine.
func (c *checker) finite(field string, v, lo, hi float64, unit string) bool {
	if err := units.CheckFloat(v, lo, hi, unit); err != nil {
		c.add(field, "%v", err)
		return false
	}
	return true
}

func (p *Plan) validate() []*tomlpos.Error {
	c := &checker{p: p}

	// [model]
	m := &p.Model
	switch {
	case m.Name == "" && m.Config == "":
		c.add("model", "missing: set name (a catalog model) or config (a config.json path)")
	case m.Name != "" && m.Config != "":
		c.add("model.config", "set either name or config, not both")
	}
	if why := p.escapes(m.Config); m.Config != "" && why != "" && !p.opts.AllowOutsidePaths {
		c.add("model.config", "%s %s: %s", safetext.Quote(m.Config), why, outsideHint)
	}
	if m.KVDtype != "" {
		m.KVDtype = c.oneOf("model.kv_dtype", m.KVDtype, kvDtypes)
	}
	if c.has("model.tp") && m.TP < 1 {
		c.add("model.tp", "%d is not accepted: want 1 or more", m.TP)
	}
	c.atMost("model.tp", m.TP, 1, MaxTP, "ranks")
	if m.TP == 0 {
		m.TP = 1
	}

	// [workload]
	w := &p.Workload
	if w.InputTokens <= 0 {
		c.add("workload.input_tokens", "missing or %d: want the prompt tokens per request, 1 or more", w.InputTokens)
	}
	c.atMost("workload.input_tokens", w.InputTokens, 1, MaxTokens, "tokens")
	c.nonNegative("workload.output_tokens", w.OutputTokens)
	c.atMost("workload.output_tokens", w.OutputTokens, 0, MaxTokens, "tokens")
	c.atMost("workload.concurrency", w.Concurrency, 1, MaxConcurrency, "requests")
	if c.has("workload.concurrency") && w.Concurrency < 1 {
		c.add("workload.concurrency", "%d is not accepted: want 1 or more requests in flight", w.Concurrency)
	}
	if w.Concurrency == 0 {
		w.Concurrency = 1
	}
	if w.RequestRate < 0 {
		c.add("workload.request_rate", "%g is negative: want requests per second, or leave it out", w.RequestRate)
	} else {
		c.finite("workload.request_rate", w.RequestRate, 0, MaxRequestRate, "requests per second")
	}
	c.nonNegative("workload.prefixes", w.Prefixes)
	c.atMost("workload.prefixes", w.Prefixes, 0, MaxCount, "prefixes")
	c.nonNegative("workload.prefix_tokens", w.PrefixTokens)
	c.atMost("workload.prefix_tokens", w.PrefixTokens, 0, MaxTokens, "tokens")
	c.nonNegative("workload.repeats", w.Repeats)
	c.atMost("workload.repeats", w.Repeats, 0, MaxCount, "sends")
	if w.Prefixes > 0 && w.PrefixTokens == 0 {
		c.add("workload.prefix_tokens", "missing: workload.prefixes is %d, so say how many tokens each prefix has", w.Prefixes)
	}
	if w.InputTokens > 0 && w.PrefixTokens > w.InputTokens {
		c.add("workload.prefix_tokens", "%d exceeds input_tokens (%d): a prefix is part of the prompt", w.PrefixTokens, w.InputTokens)
	}

	// [pools.*]
	if len(p.Pools) == 0 {
		c.add("pools", "missing: add at least one [pools.<name>] table with a role")
	}
	for _, name := range p.PoolNames() {
		pl := p.Pools[name]
		f := func(key string) string { return "pools." + name + "." + key }
		if pl.Role == "" {
			c.add(f("role"), "missing: want one of %s", quoteList(roles))
		} else {
			pl.Role = c.oneOf(f("role"), pl.Role, roles)
		}
		if c.has(f("workers")) && pl.Workers < 1 {
			c.add(f("workers"), "%d is not accepted: want 1 or more", pl.Workers)
		}
		c.atMost(f("workers"), pl.Workers, 1, MaxWorkers, "workers")
		if pl.Workers == 0 {
			pl.Workers = 1
		}
		if pl.GPU == "" {
			c.add(f("gpu"), "missing: name the GPU of this pool's workers (a catalog GPU)")
		}
		if c.has(f("gpu_memory_utilization")) || pl.GPUMemoryUtilization != 0 {
			if !(pl.GPUMemoryUtilization > 0 && pl.GPUMemoryUtilization <= 1) {
				c.add(f("gpu_memory_utilization"), "%g is out of range: want a fraction in (0, 1], e.g. 0.9", pl.GPUMemoryUtilization)
			}
		} // absent: 0, the engine's default for the version in use (the planner's memory model applies it)
		c.nonNegative(f("max_model_len"), pl.MaxModelLen)
		c.atMost(f("max_model_len"), pl.MaxModelLen, 0, MaxTokens, "tokens")
		if c.has(f("memory_limit")) || pl.MemoryLimit != "" {
			b, err := units.ParseMemory(pl.MemoryLimit)
			switch {
			case err != nil:
				c.add(f("memory_limit"), "%v", err)
			case b == 0:
				c.add(f("memory_limit"), "%q is zero: want a limit such as 3584Mi, or leave it out for none", pl.MemoryLimit)
			default:
				pl.MemoryLimitBytes = b
			}
		}
		if c.has(f("tp")) && pl.TP < 1 {
			c.add(f("tp"), "%d is not accepted: want 1 or more tensor-parallel ranks, or leave it out for model.tp", pl.TP)
		}
		c.atMost(f("tp"), pl.TP, 1, MaxTP, "ranks")
		for _, k := range []struct {
			key string
			v   int
		}{{"data_parallel_size", pl.DataParallelSize}, {"expert_parallel_size", pl.ExpertParallelSize}, {"pipeline_parallel_size", pl.PipelineParallelSize}} {
			if c.has(f(k.key)) && k.v < 1 {
				c.add(f(k.key), "%d is not accepted: want 1 or more ranks, or leave it out for 1", k.v)
			}
			c.atMost(f(k.key), k.v, 1, MaxTP, "ranks")
		}
		c.nonNegative(f("redundant_experts"), pl.RedundantExperts)
		c.atMost(f("redundant_experts"), pl.RedundantExperts, 0, MaxCount, "experts")
		if pl.RedundantExperts > 0 && pl.ExpertParallelSize <= 1 {
			c.add(f("redundant_experts"), "%d redundant experts without expert_parallel_size: EPLB places copies of experts on expert-parallel ranks; set expert_parallel_size too", pl.RedundantExperts)
		}
		c.nonNegative(f("speculative_tokens"), pl.SpeculativeTokens)
		c.atMost(f("speculative_tokens"), pl.SpeculativeTokens, 0, MaxSpeculativeTokens, "tokens")
		if c.has(f("acceptance_length")) || pl.AcceptanceLength != 0 {
			switch {
			case pl.SpeculativeTokens == 0:
				c.add(f("acceptance_length"), "%g given without speculative_tokens: set speculative_tokens (the tokens proposed per step) too, or leave it out", pl.AcceptanceLength)
			default:
				c.finite(f("acceptance_length"), pl.AcceptanceLength, 1, float64(pl.SpeculativeTokens+1), "tokens per step")
			}
		} else if pl.SpeculativeTokens > 0 {
			c.add(f("speculative_tokens"), "%d speculative tokens need acceptance_length: the mean tokens accepted per target step, bonus token included (1 to %d)", pl.SpeculativeTokens, pl.SpeculativeTokens+1)
		}
		if (pl.EPLB || pl.TwoBatchOverlap) && pl.ExpertParallelSize <= 1 {
			key := "eplb"
			if !pl.EPLB {
				key = "two_batch_overlap"
			}
			c.add(f(key), "set without expert_parallel_size: it changes how the experts' ranks balance and overlap their all-to-all; set expert_parallel_size too, or leave it out")
		}
		if pl.SpeculativeModel != "" && pl.SpeculativeTokens == 0 {
			c.add(f("speculative_model"), "%s given without speculative_tokens: set speculative_tokens and acceptance_length too, or leave it out", safetext.Quote(pl.SpeculativeModel))
		}
		if n := p.PoolGPUsPerWorker(pl); n > MaxTP && n > p.PoolTP(pl) {
			key := f("data_parallel_size")
			if pl.PipelineParallelSize > 1 {
				key = f("pipeline_parallel_size")
			}
			c.add(key, "tp × data_parallel_size × pipeline_parallel_size = %d GPUs per worker: want at most %d", n, MaxTP)
		}
		c.nonNegative(f("max_num_seqs"), pl.MaxNumSeqs)
		c.atMost(f("max_num_seqs"), pl.MaxNumSeqs, 0, MaxCount, "sequences")
		c.nonNegative(f("max_num_batched_tokens"), pl.MaxNumBatchedTokens)
		c.atMost(f("max_num_batched_tokens"), pl.MaxNumBatchedTokens, 0, MaxTokens, "tokens")
		if c.has(f("cpu_offload_cache")) || pl.CPUOffloadCache != "" {
			b, err := units.ParseMemory(pl.CPUOffloadCache)
			if err != nil {
				c.add(f("cpu_offload_cache"), "%v", err)
			} else {
				pl.CPUOffloadCacheBytes = b
			}
		}
		if pl.KVBufferDevice == "" {
			pl.KVBufferDevice = BufferGPU
		} else {
			pl.KVBufferDevice = c.oneOf(f("kv_buffer_device"), pl.KVBufferDevice, devices)
		}
		if pl.SharesGPUWith != "" {
			other, ok := p.Pools[pl.SharesGPUWith]
			switch {
			case pl.SharesGPUWith == name:
				c.add(f("shares_gpu_with"), "%q names this pool itself: name another pool", name)
			case !ok:
				c.add(f("shares_gpu_with"), "no pool %q: want one of %s", pl.SharesGPUWith, quoteList(otherPools(p, name)))
			case other.GPU != "" && pl.GPU != "" && other.GPU != pl.GPU:
				c.add(f("shares_gpu_with"), "pool %q runs on gpu %q, this pool on %q: pools sharing a GPU name the same gpu", pl.SharesGPUWith, other.GPU, pl.GPU)
			}
		}
	}
	nPrefill, nDecode := len(p.PoolsByRole(RolePrefill)), len(p.PoolsByRole(RoleDecode))
	if nPrefill > 0 && nDecode == 0 {
		c.add("pools."+p.PoolsByRole(RolePrefill)[0].Name+".role", "a prefill pool needs a decode pool to hand its KV to: add a [pools.<name>] with role = \"decode\"")
	}
	if nDecode > 0 && nPrefill == 0 {
		c.add("pools."+p.PoolsByRole(RoleDecode)[0].Name+".role", "a decode pool needs a prefill pool: add a [pools.<name>] with role = \"prefill\", or make it aggregated")
	}

	// [link]
	l := &p.Link
	switch {
	case l.Name != "" && (l.Throughput != "" || l.Latency != ""):
		c.add("link.name", "set either name (a catalog link) or throughput and latency, not both")
	case l.Name == "" && l.Latency != "" && l.Throughput == "":
		c.add("link.throughput", "missing: latency is set, so give the throughput too, e.g. \"104MB/s\"")
	}
	if l.Throughput != "" {
		v, err := units.ParseRate(l.Throughput)
		switch {
		case err != nil:
			c.add("link.throughput", "%v", err)
		case v <= 0:
			c.add("link.throughput", "%q is zero: want a positive rate such as 104MB/s", l.Throughput)
		default:
			l.ThroughputBytesPerS = v
		}
	}
	if l.Latency != "" {
		v, err := units.ParseMS(l.Latency)
		if err != nil {
			c.add("link.latency", "%v", err)
		} else {
			l.LatencyMS = v
		}
	}
	if nPrefill > 0 && nDecode > 0 && l.Name == "" && l.Throughput == "" && !allShareGPU(p) {
		c.add("link", "missing: a disaggregated plan moves KV between workers; set link.name (a catalog link) or link.throughput")
	}

	// [router]
	r := &p.Router
	if r.Mode == "" {
		r.Mode = RouterRoundRobin
	} else {
		r.Mode = c.oneOf("router.mode", r.Mode, routerModes)
	}
	if r.RequestPath == "" {
		r.RequestPath = RequestPathFrontend
	} else {
		r.RequestPath = c.oneOf("router.request_path", r.RequestPath, requestPaths)
	}
	if c.has("router.block_size") && r.BlockSize < 1 {
		c.add("router.block_size", "%d is not accepted: want tokens per block, e.g. 16", r.BlockSize)
	}
	c.atMost("router.block_size", r.BlockSize, 1, MaxBlockSize, "tokens")
	if r.BlockSize == 0 {
		r.BlockSize = DefaultBlockSize
	}

	// [transport]
	for i, t := range p.Transport.UCXTLS {
		if !tlsRe().MatchString(t) {
			c.add("transport.ucx_tls", "entry %d %q is not a UCX transport name: want e.g. \"tcp\", \"cuda_ipc\", \"rc\" (one name per entry)", i+1, t)
		}
	}

	// [runtime]
	if rt := p.Runtime; rt.CUDA != "" && !cudaRe().MatchString(rt.CUDA) {
		c.add("runtime.cuda", "%q is not a CUDA build: want major.minor, e.g. \"12.9\" or \"13.0\"", rt.CUDA)
	}
	if rt := p.Runtime; rt.Driver != "" && !driverRe().MatchString(rt.Driver) {
		c.add("runtime.driver", "%q is not a driver version: want e.g. \"570.133\"", rt.Driver)
	}

	// [slo]
	for _, pr := range append(p.SLO.Normalize(), p.SLO.Problems()...) {
		c.add("slo."+pr.Key, "%s", pr.Msg)
	}
	return c.errs
}

// allShareGPU reports whether every prefill pool shares its GPU with a decode
// pool or the other way round: KV then moves inside one machine. It is
// linear in the pools (a plan of 20,000 pools is hostile, not slow).
func allShareGPU(p *Plan) bool {
	sharedByDecode := map[string]bool{} // prefill pools a decode pool names
	for _, pl := range p.Pools {
		if pl.Role == RoleDecode && pl.SharesGPUWith != "" {
			sharedByDecode[pl.SharesGPUWith] = true
		}
	}
	for _, pl := range p.Pools {
		if pl.Role != RolePrefill {
			continue
		}
		if o, ok := p.Pools[pl.SharesGPUWith]; ok && o.Role == RoleDecode {
			continue
		}
		if !sharedByDecode[pl.Name] {
			return false
		}
	}
	return true
}

func otherPools(p *Plan, self string) []string {
	var out []string
	for _, n := range p.PoolNames() {
		if n != self {
			out = append(out, n)
		}
	}
	return out
}

func quoteList(xs []string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}
