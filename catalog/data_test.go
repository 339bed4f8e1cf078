package catalog_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

// The ids the catalog must hold (issue 2, section 2).
var (
	requiredModels = []string{
		"qwen3-0.6b", "qwen3-8b", "qwen3-32b", "qwen3-235b-a22b",
		"llama-3.1-8b", "llama-3.1-70b", "llama-3.3-70b",
		"deepseek-v3", "mistral-7b-v0.1", "mixtral-8x7b", "gemma-2-9b",
		"gpt-oss-120b", "gemma-4-26b-a4b", "qwen3-next-80b-a3b",
	}
	requiredLinks = []string{
		"1gbe", "10gbe", "25gbe", "100gbe", "roce-200g", "ib-hdr", "ib-ndr", "ib-xdr",
		"nvlink3", "nvlink4", "nvlink5", "pcie4-x16", "pcie5-x16", "same-gpu-nixl", "host-tcp",
	}
	requiredGPUs = []string{
		"h100-sxm", "h200", "b200", "a100-80gb", "l40s", "l4", "a10g", "rtx4090", "rtx4060-laptop", "mi300x",
		// issue 8
		"a100-40gb", "rtx3090", "rtx5090", "rtx-a6000", "t4", "v100-32gb", "h100-pcie", "gh200", "b300", "mi325x",
		"gb200", "gb300",
	}
)

func load(t *testing.T, dirs ...string) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Load(dirs...)
	if err != nil {
		t.Fatalf("Load(%q): %v", dirs, err)
	}
	return c
}

func TestEmbeddedCatalogLoads(t *testing.T) {
	c := load(t)
	if len(c.Models) < 14 || len(c.Links) < 12 || len(c.GPUs) < 10 {
		t.Fatalf("catalog holds %d models, %d links, %d GPUs; want at least 14, 12, 10",
			len(c.Models), len(c.Links), len(c.GPUs))
	}
	var models, links, gpus []string
	for _, m := range c.Models {
		models = append(models, m.Name)
	}
	for _, l := range c.Links {
		links = append(links, l.Name)
	}
	for _, g := range c.GPUs {
		gpus = append(gpus, g.Name)
	}
	for _, want := range requiredModels {
		if !slices.Contains(models, want) {
			t.Errorf("model %q missing; have %v", want, models)
		}
	}
	for _, want := range requiredLinks {
		if !slices.Contains(links, want) {
			t.Errorf("link %q missing; have %v", want, links)
		}
	}
	for _, want := range requiredGPUs {
		if !slices.Contains(gpus, want) {
			t.Errorf("gpu %q missing; have %v", want, gpus)
		}
	}
}

func TestEveryEntryHasSourceAndPosition(t *testing.T) {
	c := load(t)
	check := func(kind, name, source, file string, line int) {
		if strings.TrimSpace(source) == "" {
			t.Errorf("%s %q has no source", kind, name)
		}
		if !strings.HasPrefix(file, "(embedded)/") || line <= 0 {
			t.Errorf("%s %q: position %s:%d, want (embedded)/FILE:LINE", kind, name, file, line)
		}
		if name != strings.ToLower(name) {
			t.Errorf("%s %q: name is not lower-case", kind, name)
		}
	}
	for _, m := range c.Models {
		check("model", m.Name, m.Source, m.File, m.Line)
	}
	for _, l := range c.Links {
		check("link", l.Name, l.Source, l.File, l.Line)
	}
	for _, g := range c.GPUs {
		check("gpu", g.Name, g.Source, g.File, g.Line)
	}
}

// Every GPU states what the memory and engine models read, with a price
// source even when the price is unknown, and CUDA sees less than nvidia-smi.
func TestGPUFieldsComplete(t *testing.T) {
	for _, g := range load(t).GPUs {
		if g.Arch == "" || g.CUDAMemory == "" || g.Interconnect == "" || g.InterconnectBandwidthBytes <= 0 || g.PriceSource == "" {
			t.Errorf("gpu %q: arch %q, cuda_memory %q, interconnect %q %q, price_source %q; want all set",
				g.Name, g.Arch, g.CUDAMemory, g.Interconnect, g.InterconnectBandwidth, g.PriceSource)
		}
		if g.CUDAMemoryBytes >= g.MemoryBytes {
			t.Errorf("gpu %q: cuda_memory %s not below memory %s", g.Name, g.CUDAMemory, g.Memory)
		}
		if g.FP16TFLOPS <= 0 {
			t.Errorf("gpu %q: fp16_tflops unset", g.Name)
		}
		if g.USDPerHourSpot > g.USDPerHour {
			t.Errorf("gpu %q: spot $%g above on-demand $%g", g.Name, g.USDPerHourSpot, g.USDPerHour)
		}
	}
}

// Every model carries the fields the weight accounting and prefill estimate
// use, and a layout (explicit groups or MLA) that covers its layers.
func TestModelFieldsComplete(t *testing.T) {
	for _, m := range load(t).Models {
		if m.HFID == "" || m.VocabSize <= 0 || m.HiddenSize <= 0 || m.AttentionHeads <= 0 || m.MaxContext <= 0 {
			t.Errorf("model %q: hf_id %q, vocab_size %d, hidden_size %d, attention_heads %d, max_context %d; want all set",
				m.Name, m.HFID, m.VocabSize, m.HiddenSize, m.AttentionHeads, m.MaxContext)
		}
		if m.MLA == nil && len(m.Layout) == 0 {
			t.Errorf("model %q: no [[model.layout]] groups and no [model.mla]", m.Name)
		}
		if m.MLA != nil && !m.HasAttention() {
			t.Errorf("model %q: MLA, but no layout group attends", m.Name)
		}
		if m.ParamsActive != 0 && m.ParamsActive >= m.ParamsTotal {
			t.Errorf("model %q: params_active %d not below params_total %d", m.Name, m.ParamsActive, m.ParamsTotal)
		}
	}
}

// MoE models carry their active parameters; dense ones leave it 0.
func TestMoEActiveParams(t *testing.T) {
	c := load(t)
	moe := map[string]bool{
		"qwen3-235b-a22b": true, "qwen3-30b-a3b": true, "qwen3-next-80b-a3b": true, "deepseek-v3": true,
		"kimi-k2": true, "mixtral-8x7b": true, "gpt-oss-120b": true, "gemma-4-26b-a4b": true,
		// the `models import` block
		"deepseek-v3.2": true, "deepseek-v4-flash": true, "deepseek-v4-pro": true, "glm-5": true, "glm-5.2": true,
		"kimi-k2.5": true, "kimi-k2.5-nvfp4": true, "qwen3.5-397b-a17b": true, "qwen3.6-35b-a3b-nvfp4": true,
		"llama-4-scout-17b-16e": true, "llama-4-maverick-17b-128e": true, "nemotron-3-nano-30b-a3b": true,
		"nemotron-3-super-120b-a12b-fp8": true, "nemotron-3-ultra-550b-a55b": true, "gpt-oss-20b": true,
		// the engine-model block
		"minimax-m2.5": true,
	}
	for name := range moe {
		m, err := c.Model(name)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if m.ParamsActive == 0 {
			t.Errorf("MoE model %q has no params_active", name)
		}
	}
	for _, m := range c.Models {
		if !moe[m.Name] && m.ParamsActive != 0 {
			t.Errorf("model %q: params_active %d set; add it to the MoE list of this test if it is MoE", m.Name, m.ParamsActive)
		}
	}
}

// Figures that later arithmetic depends on, spot-checked by hand.
func TestCatalogFigures(t *testing.T) {
	c := load(t)
	gpu := func(name string) *catalog.GPU {
		g, err := c.GPU(name)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	link := func(name string) *catalog.Link {
		l, err := c.Link(name)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, tc := range []struct {
		name string
		want int64
	}{
		{"rtx4060-laptop", 8188 << 20}, // FACTS §4: 8,188 MiB
		{"h100-sxm", 81559 << 20},
		{"a100-80gb", 81920 << 20},
		{"h200", 143771 << 20},
		{"l4", 23034 << 20},
		{"a10g", 23028 << 20},
		{"l40s", 46068 << 20},
		{"rtx4090", 24564 << 20},
	} {
		if got := gpu(tc.name).MemoryBytes; got != tc.want {
			t.Errorf("gpu %s memory = %d B, want %d", tc.name, got, tc.want)
		}
	}
	// CUDA-visible totals as the cited logs print them (GiB to 0.01).
	for _, tc := range []struct {
		name string
		gib  float64
	}{
		{"h100-sxm", 79.19}, // vLLM 0.19 logs: total_memory=79.19GiB
		{"a100-80gb", 79.25},
		{"b200", 178.35},
		{"h200", 139.80},
		{"t4", 14.58},
		{"mi300x", 191.98},
	} {
		got := float64(gpu(tc.name).CUDAMemoryBytes) / (1 << 30)
		if got < tc.gib-0.005 || got > tc.gib+0.005 {
			t.Errorf("gpu %s cuda memory = %.4f GiB, want %.2f", tc.name, got, tc.gib)
		}
	}
	for _, tc := range []struct {
		name               string
		nominal, effective float64 // bytes/s
		latencyMS          float64
		shared             bool
	}{
		{"1gbe", 125e6, 104e6, 0.2, true},           // FACTS §3: measured NIXL ~104 MB/s
		{"10gbe", 1.25e9, 1.0625e9, 0.1, true},      // 85% of 1.25 GB/s
		{"100gbe", 12.5e9, 10.625e9, 0.05, true},    // 85% of 12.5 GB/s
		{"ib-ndr", 50e9, 42.6e9, 0.01, true},        // FACTS §3: nixlbench 42.6 GB/s
		{"nvlink4", 450e9, 380e9, 0.01, true},       // FACTS §3: ~380 GB/s measured
		{"pcie4-x16", 32e9, 25e9, 0.01, true},       // FACTS §3: ~25 GB/s measured
		{"same-gpu-nixl", 128e9, 608e6, 0.05, true}, // FACTS §3: 608 MB/s measured
		{"host-tcp", 5e9, 1e9, 0.05, true},          // FACTS §3: ~1 GB/s estimated
	} {
		l := link(tc.name)
		if !near(l.NominalBytesPerS, tc.nominal) || !near(l.EffectiveBytesPerS, tc.effective) ||
			!near(l.LatencyMS, tc.latencyMS) || l.Shared != tc.shared {
			t.Errorf("link %s = nominal %g, effective %g B/s, latency %g ms, shared %v; want %g, %g, %g, %v",
				tc.name, l.NominalBytesPerS, l.EffectiveBytesPerS, l.LatencyMS, l.Shared,
				tc.nominal, tc.effective, tc.latencyMS, tc.shared)
		}
	}
}

func near(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-9*max(1, b)
}

// No name or alias resolves to two entries.
func TestNamesAreUnique(t *testing.T) {
	c := load(t)
	norm := func(s string) string {
		s = strings.ToLower(strings.TrimSpace(s))
		if i := strings.LastIndex(s, "/"); i >= 0 {
			s = s[i+1:]
		}
		return s
	}
	check := func(kind string, owners map[string]string, owner string, names ...string) {
		for _, n := range names {
			if n == "" {
				continue
			}
			k := norm(n)
			if o, ok := owners[k]; ok && o != owner {
				t.Errorf("%s name %q belongs to both %q and %q", kind, n, o, owner)
			}
			owners[k] = owner
		}
	}
	models, links, gpus := map[string]string{}, map[string]string{}, map[string]string{}
	for _, m := range c.Models {
		check("model", models, m.Name, append([]string{m.Name, m.HFID}, m.Aliases...)...)
	}
	for _, l := range c.Links {
		check("link", links, l.Name, append([]string{l.Name}, l.Aliases...)...)
	}
	for _, g := range c.GPUs {
		check("gpu", gpus, g.Name, append([]string{g.Name, g.GPUProduct}, g.Aliases...)...)
	}
}

func TestLookupIsForgiving(t *testing.T) {
	c := load(t)
	for _, tc := range []struct{ kind, in, want string }{
		{"model", "qwen3-0.6b", "qwen3-0.6b"},
		{"model", "Qwen/Qwen3-0.6B", "qwen3-0.6b"},
		{"model", "QWEN3-0.6B", "qwen3-0.6b"},
		{"model", "  qwen3-0.6b ", "qwen3-0.6b"},
		{"model", "meta-llama/Meta-Llama-3.1-8B", "llama-3.1-8b"},
		{"model", "Llama-3.1-8B-Instruct", "llama-3.1-8b"},
		{"model", "meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b"},
		{"model", "meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b"},
		{"model", "deepseek-ai/DeepSeek-V3", "deepseek-v3"},
		{"model", "openai/gpt-oss-120b", "gpt-oss-120b"},
		{"model", "google/gemma-4-26B-A4B", "gemma-4-26b-a4b"},
		{"model", "Qwen/Qwen3-Next-80B-A3B-Instruct", "qwen3-next-80b-a3b"},
		{"model", "mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"},
		{"link", "IB-NDR", "ib-ndr"},
		{"link", "ndr", "ib-ndr"},
		{"link", "nvlink", "nvlink4"},
		{"link", "same-gpu", "same-gpu-nixl"},
		{"gpu", "H100", "h100-sxm"},
		{"gpu", "h100-80gb", "h100-sxm"},
		{"gpu", "A100", "a100-80gb"},
		{"gpu", "RTX4090", "rtx4090"},
		{"gpu", "MI300X", "mi300x"},
		// the system names of shared/data/serving (AIConfigurator's systems)
		{"gpu", "h100_sxm", "h100-sxm"},
		{"gpu", "h200_sxm", "h200"},
		{"gpu", "b200_sxm", "b200"},
		{"gpu", "b300_sxm", "b300"},
		{"gpu", "gb200", "gb200"},
		{"gpu", "gb300", "gb300"},
		{"gpu", "a100_sxm", "a100-80gb"},
		{"gpu", "Tesla-T4", "t4"},
	} {
		var got string
		var err error
		switch tc.kind {
		case "model":
			var m *catalog.Model
			if m, err = c.Model(tc.in); err == nil {
				got = m.Name
			}
		case "link":
			var l *catalog.Link
			if l, err = c.Link(tc.in); err == nil {
				got = l.Name
			}
		case "gpu":
			var g *catalog.GPU
			if g, err = c.GPU(tc.in); err == nil {
				got = g.Name
			}
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %q = %q, %v; want %q", tc.kind, tc.in, got, err, tc.want)
		}
	}
}

func TestUnknownNameOffersClosest(t *testing.T) {
	c := load(t)
	for _, tc := range []struct {
		kind, in, first string
	}{
		{"model", "qwen3-06b", "qwen3-0.6b"},
		{"model", "qwen3-0.6", "qwen3-0.6b"},
		{"model", "llama-3.1-7b", "llama-3.1-70b"},
		{"model", "deepsek-v3", "deepseek-v3"},
		{"link", "ib-ndr400", "ib-ndr"},
		{"link", "roce200g", "roce-200g"},
		{"gpu", "h100-nvl", "h100-sxm"},
		{"gpu", "rtx4080", "rtx4090"},
	} {
		var err error
		switch tc.kind {
		case "model":
			_, err = c.Model(tc.in)
		case "link":
			_, err = c.Link(tc.in)
		case "gpu":
			_, err = c.GPU(tc.in)
		}
		var nf *catalog.NotFoundError
		if !errors.As(err, &nf) {
			t.Errorf("%s %q: err = %v, want a *NotFoundError", tc.kind, tc.in, err)
			continue
		}
		if nf.Kind != tc.kind || nf.Name != tc.in {
			t.Errorf("%s %q: NotFoundError{Kind %q, Name %q}", tc.kind, tc.in, nf.Kind, nf.Name)
		}
		if len(nf.Closest) == 0 || nf.Closest[0] != tc.first {
			t.Errorf("%s %q: closest = %v, want %q first", tc.kind, tc.in, nf.Closest, tc.first)
		}
		if len(nf.Closest) > 3 {
			t.Errorf("%s %q: %d closest names offered, want at most 3", tc.kind, tc.in, len(nf.Closest))
		}
	}

	_, err := c.Model("qwen3-06b")
	want := `unknown model "qwen3-06b"; did you mean qwen3-0.6b`
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "(kvplan models list shows them all)") {
		t.Errorf("error = %v, want it to start %q and end with the list hint", err, want)
	}

	// Nothing close: no suggestions, still a NotFoundError.
	_, err = c.GPU("zzzzzzzz")
	var nf *catalog.NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("gpu zzzzzzzz: err = %v, want *NotFoundError", err)
	}
}
