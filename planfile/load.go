package planfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kvplan/kvplan/internal/tomlpos"
	"github.com/kvplan/kvplan/units"
)

// Load reads, decodes and validates the plan file at path. Unknown keys and
// invalid values are errors of type *tomlpos.Error ("file:line: field: msg");
// several validation errors come back joined (errors.Join), in file order.
func Load(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes and validates a plan file's contents; path names it in errors.
// A plan that points at a manifest ([deployment] manifest) is only decoded:
// its pools come from the manifest, so the caller validates the merged plan
// (Validate) once the manifest is read.
func Parse(path string, data []byte) (*Plan, error) {
	p, err := Decode(path, data)
	if err != nil {
		return nil, err
	}
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
		return nil, err
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
func (p *Plan) ConfigPath() string {
	if p.Model.Config == "" || filepath.IsAbs(p.Model.Config) {
		return p.Model.Config
	}
	return filepath.Join(filepath.Dir(p.Path), p.Model.Config)
}

var (
	kvDtypes    = []string{"bf16", "fp16", "fp8", "int8"}
	roles       = []string{RoleAggregated, RolePrefill, RoleDecode}
	devices     = []string{BufferCPU, BufferGPU}
	routerModes = []string{RouterKV, RouterRoundRobin, RouterRandom}
	cudaRe      = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
	driverRe    = regexp.MustCompile(`^[0-9]+(\.[0-9]+){0,2}$`)
	tlsRe       = regexp.MustCompile(`^\^?[a-z][a-z0-9_]*$`)
)

type checker struct {
	p    *Plan
	errs []*tomlpos.Error
}

func (c *checker) add(field, format string, args ...any) {
	c.errs = append(c.errs, c.p.fieldErrorf(field, format, args...))
}

func (c *checker) has(field string) bool { return c.p.Has(field) }

func (c *checker) oneOf(field, value string, allowed []string) {
	for _, a := range allowed {
		if value == a {
			return
		}
	}
	c.add(field, "%q is not accepted: want one of %s", value, quoteList(allowed))
}

func (c *checker) nonNegative(field string, v int) {
	if v < 0 {
		c.add(field, "%d is negative: want 0 or more", v)
	}
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
	if m.KVDtype != "" {
		c.oneOf("model.kv_dtype", m.KVDtype, kvDtypes)
	}
	if c.has("model.tp") && m.TP < 1 {
		c.add("model.tp", "%d is not accepted: want 1 or more", m.TP)
	}
	if m.TP == 0 {
		m.TP = 1
	}

	// [workload]
	w := &p.Workload
	if w.InputTokens <= 0 {
		c.add("workload.input_tokens", "missing or %d: want the prompt tokens per request, 1 or more", w.InputTokens)
	}
	c.nonNegative("workload.output_tokens", w.OutputTokens)
	if c.has("workload.concurrency") && w.Concurrency < 1 {
		c.add("workload.concurrency", "%d is not accepted: want 1 or more requests in flight", w.Concurrency)
	}
	if w.Concurrency == 0 {
		w.Concurrency = 1
	}
	if w.RequestRate < 0 {
		c.add("workload.request_rate", "%g is negative: want requests per second, or leave it out", w.RequestRate)
	}
	c.nonNegative("workload.prefixes", w.Prefixes)
	c.nonNegative("workload.prefix_tokens", w.PrefixTokens)
	c.nonNegative("workload.repeats", w.Repeats)
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
			c.oneOf(f("role"), pl.Role, roles)
		}
		if c.has(f("workers")) && pl.Workers < 1 {
			c.add(f("workers"), "%d is not accepted: want 1 or more", pl.Workers)
		}
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
		} else {
			pl.GPUMemoryUtilization = DefaultGPUMemoryUtilization
		}
		c.nonNegative(f("max_model_len"), pl.MaxModelLen)
		if c.has(f("memory_limit")) || pl.MemoryLimit != "" {
			b, err := units.ParseQuantity(pl.MemoryLimit)
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
		c.nonNegative(f("max_num_seqs"), pl.MaxNumSeqs)
		c.nonNegative(f("max_num_batched_tokens"), pl.MaxNumBatchedTokens)
		if c.has(f("cpu_offload_cache")) || pl.CPUOffloadCache != "" {
			b, err := units.ParseQuantity(pl.CPUOffloadCache)
			if err != nil {
				c.add(f("cpu_offload_cache"), "%v", err)
			} else {
				pl.CPUOffloadCacheBytes = b
			}
		}
		if pl.KVBufferDevice == "" {
			pl.KVBufferDevice = BufferGPU
		} else {
			c.oneOf(f("kv_buffer_device"), pl.KVBufferDevice, devices)
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
		c.oneOf("router.mode", r.Mode, routerModes)
	}
	if c.has("router.block_size") && r.BlockSize < 1 {
		c.add("router.block_size", "%d is not accepted: want tokens per block, e.g. 16", r.BlockSize)
	}
	if r.BlockSize == 0 {
		r.BlockSize = DefaultBlockSize
	}

	// [transport]
	for i, t := range p.Transport.UCXTLS {
		if !tlsRe.MatchString(t) {
			c.add("transport.ucx_tls", "entry %d %q is not a UCX transport name: want e.g. \"tcp\", \"cuda_ipc\", \"rc\" (one name per entry)", i+1, t)
		}
	}

	// [runtime]
	if rt := p.Runtime; rt.CUDA != "" && !cudaRe.MatchString(rt.CUDA) {
		c.add("runtime.cuda", "%q is not a CUDA build: want major.minor, e.g. \"12.9\" or \"13.0\"", rt.CUDA)
	}
	if rt := p.Runtime; rt.Driver != "" && !driverRe.MatchString(rt.Driver) {
		c.add("runtime.driver", "%q is not a driver version: want e.g. \"570.133\"", rt.Driver)
	}

	// [slo]
	if p.SLO.TTFTMS < 0 {
		c.add("slo.ttft_ms", "%g is negative: want milliseconds, or leave it out", p.SLO.TTFTMS)
	}
	if p.SLO.ITLMS < 0 {
		c.add("slo.itl_ms", "%g is negative: want milliseconds, or leave it out", p.SLO.ITLMS)
	}
	return c.errs
}

// allShareGPU reports whether every prefill pool shares its GPU with a decode
// pool or the other way round: KV then moves inside one machine.
func allShareGPU(p *Plan) bool {
	for _, pl := range p.Pools {
		if pl.Role != RolePrefill {
			continue
		}
		shared := false
		if o, ok := p.Pools[pl.SharesGPUWith]; ok && o.Role == RoleDecode {
			shared = true
		}
		for _, o := range p.Pools {
			if o.Role == RoleDecode && o.SharesGPUWith == pl.Name {
				shared = true
			}
		}
		if !shared {
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
