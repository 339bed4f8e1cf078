package manifest

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/kvplan/kvplan/planfile"
)

// What kvplan assumes when neither the manifest, a plan file nor a flag
// says it. The workload is the field study's (FACTS §5: ~1,500-token
// prompts), the same defaults as `kvplan disagg`.
const (
	DefaultInputTokens  = 1500
	DefaultOutputTokens = 128
	DefaultConcurrency  = 1
	// DefaultLink is the link assumed between prefill and decode pools: one
	// 400 Gb/s RDMA NIC per GPU, the usual fabric of HGX-class nodes
	// (FACTS §7 Rails; §3: nixlbench measured 42.6 GB/s).
	DefaultLink = "ib-ndr"
)

// Supplement is what a manifest lacks, from command-line flags. Zero values
// are "not given".
type Supplement struct {
	GPU          map[string]string // pool → catalog GPU; the "" key applies to every pool
	Link         string
	InputTokens  int
	OutputTokens int
	Concurrency  int
	RequestRate  float64 // requests per second
	TTFTMS       float64 // SLO, ms
	ITLMS        float64 // SLO, ms
	// KnownGPU reports whether the catalog knows a GPU name; with it a node
	// label such as nvidia-h100-80gb (GKE) also finds h100-80gb.
	KnownGPU func(name string) bool
}

// Complete returns the plan to review: what the manifest states, what the
// plan file adds (file may be nil), then the flags, which win for the GPU,
// link, workload and SLO. Where nothing says a value, kvplan's default fills
// it, and each one is a Note. The plan is validated; its errors carry the
// place of the value in the manifest or the plan file.
func Complete(m *Manifest, file *planfile.Plan, s Supplement) (*planfile.Plan, []Note, error) {
	p, notes, err := Merge(m, file, s)
	if err != nil {
		return nil, nil, err
	}
	notes = append(notes, defaults(p)...)
	var missing []string
	for _, n := range p.PoolNames() {
		if p.Pools[n].GPU == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return nil, nil, p.FieldError("pools."+missing[0]+".gpu",
			fmt.Errorf("no GPU for pool(s) %s: the manifest names none (no nodeSelector %s); give --gpu NAME or --gpu POOL=NAME (kvplan gpus list), or [pools.<name>] gpu in a plan file", strings.Join(missing, ", "), gpuLabels[0]))
	}
	if p.Model.Name == "" && p.Model.Config == "" {
		return nil, nil, fmt.Errorf("%s: no worker names a model: add --model to the workers' args, or name it in a plan file ([model] name)", m.Path)
	}
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	return p, notes, nil
}

// Merge is Complete without defaults and validation: what `kvplan manifest
// show` prints.
func Merge(m *Manifest, file *planfile.Plan, s Supplement) (*planfile.Plan, []Note, error) {
	p := m.Plan.Clone()
	var notes []Note
	if file != nil {
		n, err := mergeFile(p, file)
		if err != nil {
			return nil, nil, err
		}
		notes = append(notes, n...)
	}
	notes = append(notes, mergeFlags(p, s)...)
	notes = append(notes, readGPULabels(p, s.KnownGPU)...)
	return p, notes, nil
}

// mergeFile adds what a plan file says. The manifest wins for what it states
// (the plan file's other value is a note), except the plan file's [model]
// name or config, which name the architecture the manifest serves (a
// manifest may load a path), and a pool's gpu.
func mergeFile(p, file *planfile.Plan) ([]Note, error) {
	var notes []Note
	if file.Model.Name != "" || file.Model.Config != "" {
		field := "model.name"
		if file.Model.Config != "" {
			field = "model.config"
		}
		if p.Model.Name != "" && p.Model.Name != file.Model.Name {
			notes = append(notes, Note{At: file.Pos(field), Text: fmt.Sprintf("%s names the model; the manifest loads %s (%s)", field, p.Model.Name, p.Pos("model.name"))})
		}
		p.Model.Name, p.Model.Config = file.Model.Name, ""
		p.ClearPos("model.name")
		if file.Model.Config != "" {
			cfg, err := filepath.Abs(file.ConfigPath())
			if err != nil {
				return nil, file.FieldError(field, err)
			}
			p.Model.Config = cfg
		}
		p.SetPos(field, file.Pos(field))
	}
	sections := []struct {
		name     string
		dst, src any
	}{
		{"model", &p.Model, &file.Model}, {"workload", &p.Workload, &file.Workload}, {"link", &p.Link, &file.Link},
		{"router", &p.Router, &file.Router}, {"transport", &p.Transport, &file.Transport},
		{"runtime", &p.Runtime, &file.Runtime}, {"slo", &p.SLO, &file.SLO},
	}
	for _, sec := range sections {
		if file.Has(sec.name) && !p.Has(sec.name) {
			p.SetPos(sec.name, file.Pos(sec.name)) // the table's header
		}
		notes = append(notes, mergeStruct(p, file, sec.name, sec.dst, sec.src, nil)...)
	}
	names := file.PoolNames()
	for _, name := range names {
		pl, ok := p.Pools[name]
		if !ok {
			return nil, file.FieldError("pools."+name, fmt.Errorf("the manifest has no pool %q: its pools are %s", name, strings.Join(p.PoolNames(), ", ")))
		}
		notes = append(notes, mergeStruct(p, file, "pools."+name, pl, file.Pools[name], map[string]bool{"gpu": true})...)
	}
	return notes, nil
}

// mergeStruct copies the fields the plan file writes into dst when the
// manifest does not state them (or when win names the field).
func mergeStruct(p, file *planfile.Plan, prefix string, dst, src any, win map[string]bool) []Note {
	var notes []Note
	dv, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := 0; i < dv.NumField(); i++ {
		tag, _, _ := strings.Cut(dv.Type().Field(i).Tag.Get("toml"), ",")
		if tag == "" || tag == "-" || (prefix == "model" && (tag == "name" || tag == "config")) {
			continue
		}
		field := prefix + "." + tag
		if !file.Has(field) {
			continue
		}
		if p.Has(field) && !win[tag] {
			if !reflect.DeepEqual(dv.Field(i).Interface(), sv.Field(i).Interface()) {
				notes = append(notes, Note{At: file.Pos(field), Text: fmt.Sprintf("%s in the plan file is ignored: the manifest says %v (%s)", field, show(dv.Field(i)), p.Pos(field))})
			}
			continue
		}
		dv.Field(i).Set(sv.Field(i))
		p.SetPos(field, file.Pos(field))
	}
	return notes
}

func show(v reflect.Value) any {
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		return v.Elem().Interface()
	}
	return v.Interface()
}

// mergeFlags applies the flags; each replaces what the manifest or the plan
// file said, with a note when it does.
func mergeFlags(p *planfile.Plan, s Supplement) []Note {
	var notes []Note
	replaced := func(field string, old any, flag string) {
		if p.Has(field) {
			notes = append(notes, Note{At: p.Pos(field), Text: fmt.Sprintf("%s %v is replaced by %s", field, old, flag)})
			p.ClearPos(field)
		}
	}
	for _, name := range p.PoolNames() {
		pl := p.Pools[name]
		g, flag := s.GPU[name], "--gpu "+name+"="+s.GPU[name]
		if g == "" {
			g, flag = s.GPU[""], "--gpu "+s.GPU[""]
		}
		if g != "" && g != pl.GPU {
			if pl.GPU != "" {
				replaced("pools."+name+".gpu", pl.GPU, flag)
			}
			pl.GPU = g
		}
	}
	if s.Link != "" {
		if p.Link.Name != "" || p.Link.Throughput != "" {
			replaced("link.name", p.Link.Name, "--link "+s.Link)
		}
		p.Link = planfile.Link{Name: s.Link}
	}
	ints := []struct {
		v    int
		dst  *int
		f    string
		flag string
	}{
		{s.InputTokens, &p.Workload.InputTokens, "workload.input_tokens", "--isl"},
		{s.OutputTokens, &p.Workload.OutputTokens, "workload.output_tokens", "--osl"},
		{s.Concurrency, &p.Workload.Concurrency, "workload.concurrency", "--concurrency"},
	}
	for _, x := range ints {
		if x.v > 0 {
			replaced(x.f, *x.dst, x.flag)
			*x.dst = x.v
		}
	}
	floats := []struct {
		v    float64
		dst  *float64
		f    string
		flag string
	}{
		{s.RequestRate, &p.Workload.RequestRate, "workload.request_rate", "--rate"},
		{s.TTFTMS, &p.SLO.TTFTMS, "slo.ttft_ms", "--ttft-p95"},
		{s.ITLMS, &p.SLO.ITLMS, "slo.itl_ms", "--itl-p95"},
	}
	for _, x := range floats {
		if x.v > 0 {
			replaced(x.f, *x.dst, x.flag)
			*x.dst = x.v
		}
	}
	if s.TTFTMS > 0 || s.ITLMS > 0 {
		notes = append(notes, Note{Text: "the SLO flags name 95th percentiles; kvplan compares them with its predicted TTFT and inter-token latency at the planned concurrency, which are not percentiles"})
	}
	return notes
}

// readGPULabels lets a node label name a catalog GPU: NVIDIA-H100-80GB-HBM3
// is a catalog alias as it is; GKE's nvidia-h100-80gb is found as h100-80gb.
func readGPULabels(p *planfile.Plan, known func(string) bool) []Note {
	if known == nil {
		return nil
	}
	var notes []Note
	for _, name := range p.PoolNames() {
		pl := p.Pools[name]
		if pl.GPU == "" || known(pl.GPU) {
			continue
		}
		lower := strings.ToLower(pl.GPU)
		for _, prefix := range []string{"nvidia-tesla-", "nvidia-", "tesla-"} {
			if rest := strings.TrimPrefix(lower, prefix); rest != lower && known(rest) {
				notes = append(notes, Note{At: p.Pos("pools." + name + ".gpu"), Text: fmt.Sprintf("%s: GPU label %s read as the catalog's %s", name, pl.GPU, rest)})
				pl.GPU = rest
				break
			}
		}
	}
	return notes
}

// defaults fills what nothing said and lists each value it assumed.
func defaults(p *planfile.Plan) []Note {
	var notes []Note
	w := &p.Workload
	if w.InputTokens == 0 {
		w.InputTokens = DefaultInputTokens
		if w.OutputTokens == 0 {
			w.OutputTokens = DefaultOutputTokens
		}
		notes = append(notes, Note{Text: fmt.Sprintf("workload: %d prompt tokens and %d output tokens per request (the field study's; give --isl and --osl)", w.InputTokens, w.OutputTokens)})
	}
	if w.Concurrency == 0 {
		w.Concurrency = DefaultConcurrency
		notes = append(notes, Note{Text: fmt.Sprintf("workload: %d request in flight across the deployment (give --concurrency)", DefaultConcurrency)})
	}
	if p.Disaggregated() && p.Link.Name == "" && p.Link.Throughput == "" {
		p.Link.Name = DefaultLink
		notes = append(notes, Note{Text: fmt.Sprintf("link: prefill hands KV to decode over %s, 400 Gb/s RDMA per GPU (the manifest cannot say; give --link, kvplan links list)", DefaultLink)})
	}
	engine := p.Runtime.Engine
	if engine == "" {
		engine = "vllm"
	}
	var pools []string
	for _, name := range p.PoolNames() {
		if !p.Has("pools." + name + ".gpu_memory_utilization") {
			pools = append(pools, name)
		}
	}
	if len(pools) > 0 {
		notes = append(notes, Note{Text: fmt.Sprintf("gpu_memory_utilization for %s: the manifest sets none, so the engine's default for its version applies: %s", strings.Join(pools, ", "), utilDefault(engine))})
	}
	pools = pools[:0]
	for _, name := range p.PoolNames() {
		pl := p.Pools[name]
		if pl.Role != planfile.RoleAggregated && !p.Has("pools."+name+".kv_buffer_device") {
			pools = append(pools, name)
		}
	}
	if len(pools) > 0 {
		notes = append(notes, Note{Text: fmt.Sprintf("kv_buffer_device gpu for %s: KV leaves from GPU memory, NIXL's default (kv_buffer_device cuda)", strings.Join(pools, ", "))})
	}
	if p.Router.BlockSize == 0 {
		notes = append(notes, Note{Text: fmt.Sprintf("block size %d tokens: no worker sets one (%s's default)", planfile.DefaultBlockSize, engine)})
	}
	return notes
}

// EngineDefaults fills, for display, the pool fields a manifest leaves to
// the engine, and returns field → what the default means. Complete's
// validation fills the same values.
func EngineDefaults(p *planfile.Plan) map[string]string {
	out := map[string]string{}
	for _, name := range p.PoolNames() {
		pl, f := p.Pools[name], func(k string) string { return "pools." + name + "." + k }
		if !p.Has(f("workers")) && pl.Workers == 0 {
			pl.Workers = 1
			out[f("workers")] = "one replica"
		}
		if !p.Has(f("tp")) && pl.TP == 0 {
			pl.TP = max(1, p.Model.TP)
			out[f("tp")] = "no tensor-parallel argument: one GPU per engine"
		}
		if !p.Has(f("gpu_memory_utilization")) && pl.GPUMemoryUtilization == 0 {
			out[f("gpu_memory_utilization")] = utilDefault(p.Runtime.Engine) // 0: the engine's default for its version
		}
		if !p.Has(f("max_model_len")) {
			out[f("max_model_len")] = "the model's full context"
		}
		if !p.Has(f("enforce_eager")) {
			out[f("enforce_eager")] = "CUDA graphs are captured"
		}
		if !p.Has(f("kv_buffer_device")) && pl.KVBufferDevice == "" && pl.Role != planfile.RoleAggregated {
			pl.KVBufferDevice = planfile.BufferGPU
			out[f("kv_buffer_device")] = "NIXL's kv_buffer_device cuda"
		}
	}
	return out
}

// utilDefault says where the planned memory fraction comes from when a
// manifest sets none.
func utilDefault(engine string) string {
	switch engine {
	case "sglang":
		return "SGLang derives --mem-fraction-static from the GPU's memory (kvplan engines show sglang)"
	case "trtllm":
		return "TensorRT-LLM's free_gpu_memory_fraction default (kvplan engines show trtllm)"
	}
	return "vLLM's --gpu-memory-utilization default (kvplan engines show vllm)"
}
