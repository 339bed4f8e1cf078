package manifest

import (
	"strings"
	"testing"

	"github.com/kvplan/kvplan/planfile"
)

func noteTexts(ns []Note) string {
	var b strings.Builder
	for _, n := range ns {
		b.WriteString(n.String() + "\n")
	}
	return b.String()
}

// TestCompleteFlagsAndDefaults: --gpu names every pool's GPU; the workload
// and link the manifest cannot say are assumed and listed.
func TestCompleteFlagsAndDefaults(t *testing.T) {
	m := read(t, "dynamo/vllm_disagg_router.yaml")
	p, notes, err := Complete(m, nil, Supplement{GPU: map[string]string{"": "h100-sxm"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range p.PoolNames() {
		if p.Pools[n].GPU != "h100-sxm" || p.Pools[n].GPUMemoryUtilization != 0 || p.Pools[n].Workers != 2 {
			t.Errorf("pool %s: %+v", n, *p.Pools[n])
		}
	}
	if w := p.Workload; w.InputTokens != DefaultInputTokens || w.OutputTokens != DefaultOutputTokens || w.Concurrency != 1 || p.Link.Name != DefaultLink {
		t.Errorf("workload %+v link %q", w, p.Link.Name)
	}
	text := noteTexts(notes)
	for _, want := range []string{"1500 prompt tokens", "1 request in flight", "over ib-ndr", "gpu_memory_utilization for VllmDecodeWorker, VllmPrefillWorker: the manifest sets none, so the engine's default for its version applies", "kv_buffer_device gpu"} {
		if !strings.Contains(text, want) {
			t.Errorf("notes lack %q:\n%s", want, text)
		}
	}
	// The original manifest plan is untouched.
	if m.Plan.Pools["VllmDecodeWorker"].GPU != "" || m.Plan.Workload.InputTokens != 0 {
		t.Errorf("Complete changed the manifest's plan")
	}
}

func TestCompleteErrors(t *testing.T) {
	m := read(t, "dynamo/vllm_disagg_router.yaml")
	_, _, err := Complete(m, nil, Supplement{})
	want := "dynamo/vllm_disagg_router.yaml:19:5: pools.VllmDecodeWorker.gpu: no GPU for pool(s) VllmDecodeWorker, VllmPrefillWorker"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("no GPU: %v\nwant %s", err, want)
	}
	_, _, err = Complete(m, nil, Supplement{GPU: map[string]string{"VllmDecodeWorker": "h100-sxm"}})
	if err == nil || !strings.Contains(err.Error(), "pools.VllmPrefillWorker.gpu: no GPU for pool(s) VllmPrefillWorker") {
		t.Errorf("one pool without GPU: %v", err)
	}
	// A value the manifest states that validation refuses points at the manifest.
	m2 := read(t, "forms/shell.yaml")
	m2.Plan.Pools["vllm-shell"].MemoryLimit = "48 gigs"
	_, _, err = Complete(m2, nil, Supplement{})
	if err == nil || !strings.Contains(err.Error(), "forms/shell.yaml:39:23: pools.vllm-shell.memory_limit") {
		t.Errorf("bad memory limit: %v", err)
	}
}

// TestCompleteWithPlanFile: a plan file that points at the manifest adds the
// GPU, memory limit, link and workload; where it contradicts the manifest,
// the manifest wins and the conflict is a note; a flag wins over both.
func TestCompleteWithPlanFile(t *testing.T) {
	file, err := planfile.Parse("plans/review.toml", []byte(`[deployment]
manifest = "../dynamo/vllm_disagg_router.yaml"

[workload]
input_tokens = 3000
concurrency = 8

[pools.VllmPrefillWorker]
gpu = "l40s"
memory_limit = "8Gi"
workers = 4

[pools.VllmDecodeWorker]
gpu = "h100-sxm"

[link]
name = "1gbe"

[router]
mode = "round-robin"
`))
	if err != nil {
		t.Fatal(err)
	}
	if file.ManifestPath() != "dynamo/vllm_disagg_router.yaml" {
		t.Errorf("manifest path %q", file.ManifestPath())
	}
	m := read(t, "dynamo/vllm_disagg_router.yaml")
	p, notes, err := Complete(m, file, Supplement{InputTokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	pre := p.Pools["VllmPrefillWorker"]
	checks := []struct {
		name      string
		got, want any
	}{
		{"prefill gpu from the plan file", pre.GPU, "l40s"},
		{"its place", p.Pos("pools.VllmPrefillWorker.gpu").String(), "plans/review.toml:9"},
		{"memory limit from the plan file", pre.MemoryLimitBytes, int64(8 << 30)},
		{"workers: the manifest's", pre.Workers, 2},
		{"router: the manifest's", p.Router.Mode, planfile.RouterKV},
		{"link from the plan file", p.Link.Name, "1gbe"},
		{"input tokens from the flag", p.Workload.InputTokens, 2000},
		{"the flag's value has no place: its table's", p.Pos("workload.input_tokens").String(), "plans/review.toml:4"},
		{"concurrency from the plan file", p.Workload.Concurrency, 8},
		{"role still at the manifest", p.Pos("pools.VllmPrefillWorker.role").String(), "dynamo/vllm_disagg_router.yaml:56:15"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	text := noteTexts(notes)
	for _, want := range []string{
		"plans/review.toml:11: pools.VllmPrefillWorker.workers in the plan file is ignored: the manifest says 2 (dynamo/vllm_disagg_router.yaml:41:17)",
		"plans/review.toml:20: router.mode in the plan file is ignored: the manifest says kv",
		"plans/review.toml:5: workload.input_tokens 3000 is replaced by --isl",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("notes lack %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "1500 prompt tokens") || strings.Contains(text, "over ib-ndr") {
		t.Errorf("assumed what the plan file says:\n%s", text)
	}

	bad, err := planfile.Parse("plans/bad.toml", []byte("[deployment]\nmanifest = \"x.yaml\"\n\n[pools.prefil]\ngpu = \"l40s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Complete(m, bad, Supplement{})
	if err == nil || !strings.Contains(err.Error(), `plans/bad.toml:4: pools.prefil: the manifest has no pool "prefil": its pools are VllmDecodeWorker, VllmPrefillWorker`) {
		t.Errorf("unknown pool: %v", err)
	}
}

// TestGPULabels: a node label names the GPU; a GKE label is read as the
// catalog name without its vendor prefix; --gpu replaces a label, with a note.
func TestGPULabels(t *testing.T) {
	known := func(n string) bool { return n == "l4" || n == "h100-sxm" }
	m := read(t, "forms/args.yaml")
	p, notes, err := Merge(m, nil, Supplement{KnownGPU: known})
	if err != nil {
		t.Fatal(err)
	}
	if g := p.Pools["vllm-pod"].GPU; g != "l4" || !strings.Contains(noteTexts(notes), "forms/args.yaml:14:26: vllm-pod: GPU label nvidia-l4 read as the catalog's l4") {
		t.Errorf("gpu %q notes %s", g, noteTexts(notes))
	}
	p, notes, err = Merge(m, nil, Supplement{GPU: map[string]string{"": "h100-sxm"}, KnownGPU: known})
	if err != nil {
		t.Fatal(err)
	}
	if g := p.Pools["vllm-pod"].GPU; g != "h100-sxm" || !strings.Contains(noteTexts(notes), "pools.vllm-pod.gpu nvidia-l4 is replaced by --gpu h100-sxm") {
		t.Errorf("gpu %q notes %s", g, noteTexts(notes))
	}
}

// TestOffloadCacheCounts: KVBM's DYN_KVBM_CPU_CACHE_GB is 10^9-byte GB for
// the worker; it reaches the plan as bytes of host memory.
func TestOffloadCacheCounts(t *testing.T) {
	m := read(t, "forms/kvbm.yaml")
	p, _, err := Complete(m, nil, Supplement{GPU: map[string]string{"": "h100-sxm"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Pools["prefill"].CPUOffloadCacheBytes; got != 100_000_000_000 {
		t.Errorf("KVBM cache %d B, want 100 × 10^9", got)
	}
	if got := p.Pools["prefill"].MemoryLimitBytes; got != 64<<30 {
		t.Errorf("memory limit %d", got)
	}
}
