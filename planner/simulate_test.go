package planner

import (
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

// TestPlanSimulationLinkPaths: the bytes one path of the link carries per
// prompt token, from the published KV sizes of FACTS §2.
func TestPlanSimulationLinkPaths(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		model, gpu, link string
		tp               int
		paths            int
		perToken         float64
	}{
		// Qwen3-0.6B: 114,688 B a token. 1 GbE is one path per node: the
		// whole KV crosses it, at any tp (tp 2 splits the 8 kv heads 4 + 4).
		{"qwen3-0.6b", "rtx4090", "1gbe", 1, 1, 114688},
		{"qwen3-0.6b", "rtx4090", "1gbe", 2, 1, 114688},
		// InfiniBand NDR is a rail per GPU: each of 2 ranks sends its half.
		{"qwen3-0.6b", "h100-sxm", "ib-ndr", 2, 2, 57344},
		// Llama-3.1-70B: 327,680 B a token over 8 rails, 40,960 each.
		{"llama-3.1-70b", "h100-sxm", "ib-ndr", 8, 8, 40960},
		// DeepSeek-V3's MLA latent (70,272 B a token) is replicated on every
		// rank: each of 8 rails carries one copy.
		{"deepseek-v3", "h200", "ib-ndr", 8, 8, 70272},
	}
	for _, tc := range cases {
		sc := SimulationScenario{GPUUtil: 0.9, BlockSize: 16, MaxModelLen: 8192, KV: models.KVOptions{TP: tc.tp}, Catalog: cat}
		if sc.Model, err = cat.Model(tc.model); err != nil {
			t.Fatal(err)
		}
		if sc.GPU, err = cat.GPU(tc.gpu); err != nil {
			t.Fatal(err)
		}
		if sc.Engine, err = cat.Engine(DefaultEngine); err != nil {
			t.Fatal(err)
		}
		if sc.Link, err = cat.Link(tc.link); err != nil {
			t.Fatal(err)
		}
		p, err := PlanSimulation(sc)
		if err != nil {
			t.Fatalf("%s tp %d on %s: %v", tc.model, tc.tp, tc.link, err)
		}
		if p.ParallelPaths != tc.paths || p.PathBytesPerToken != tc.perToken || p.PathBytesPerS != sc.Link.EffectiveBytesPerS {
			t.Errorf("%s tp %d on %s: %d paths of %v B a token at %v B/s; want %d of %v",
				tc.model, tc.tp, tc.link, p.ParallelPaths, p.PathBytesPerToken, p.PathBytesPerS, tc.paths, tc.perToken)
		}
		// The capacity is the memory model's, whole blocks.
		if int64(p.CapacityBlocks)*16 != p.Memory.KVSlotsTokens || p.CapacityBlocks < 1 {
			t.Errorf("%s: %d blocks for %d slots", tc.model, p.CapacityBlocks, p.Memory.KVSlotsTokens)
		}
	}
}

// TestPlanSimulationRefusesWorkersThatCannotStart: weights that leave no
// KV cache, and a max_model_len vLLM would refuse, say what to change.
func TestPlanSimulationRefusesWorkersThatCannotStart(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	m70, _ := cat.Model("llama-3.1-70b")
	m06, _ := cat.Model("qwen3-0.6b")
	l4, _ := cat.GPU("l4")
	laptop, _ := cat.GPU("rtx4060-laptop")
	eng, _ := cat.Engine(DefaultEngine)
	cases := []struct {
		sc   SimulationScenario
		want string
	}{
		// 70B in bf16 is ~141 GB of weights: far beyond one 24 GB L4.
		{SimulationScenario{Catalog: cat, Model: m70, GPU: l4, Engine: eng, GPUUtil: 0.9, BlockSize: 16, MaxModelLen: 4096, KV: models.KVOptions{TP: 1}}, "leaves no room for a KV cache"},
		// Qwen3-0.6B at 0.38 of the laptop GPU holds ~14,800 tokens: a
		// max_model_len of 32,768 does not fit one request.
		{SimulationScenario{Catalog: cat, Model: m06, GPU: laptop, Engine: eng, GPUUtil: 0.38, EnforceEager: true, BlockSize: 16, MaxModelLen: 32768, KV: models.KVOptions{TP: 1}}, "vLLM refuses to start"},
	}
	for _, tc := range cases {
		_, err := PlanSimulation(tc.sc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s on %s: error %v, want %q", tc.sc.Model.Name, tc.sc.GPU.Name, err, tc.want)
		}
	}
}
