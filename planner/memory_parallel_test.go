package planner

import (
	"strings"
	"testing"

	"github.com/kvplan/kvplan/models"
)

func dsv3Scenario(t *testing.T, engine string, lay models.Parallelism, redundant int) MemoryScenario {
	t.Helper()
	cat, m, g := modelOnGPU(t, "deepseek-v3", "h200")
	e, ver, err := cat.EngineVersion(engine, "")
	if err != nil {
		t.Fatal(err)
	}
	return MemoryScenario{Model: m, GPU: g, Engine: e, EngineVersion: ver, KV: models.KVOptions{TP: 1},
		MaxModelLen: 4096, Parallel: lay, RedundantExperts: redundant}
}

// DeepSeek-V3 at tp 1, dp 8, ep 8 with fp8 weights on H200: the weights of
// one rank, by hand from the config's numbers (catalog/data/models.toml):
//
//	embedding          129,280 × 7,168 = 926,679,040 params, untied: two matrices at 2 B
//	                   = 2 × 926,679,040 × 2 = 3,706,716,160 B
//	linear params      671,026,419,200 − 2 × 926,679,040 = 669,173,061,120
//	routed experts     58 MoE layers × 256 experts × 3 × 7,168 × 2,048 = 653,908,770,816 params
//	                   (= (671,026,419,200 − 36,625,618,432 − 926,679,040) × 256 / 248)
//	the rest, on every rank (tp 1): (669,173,061,120 − 653,908,770,816) × 1 B + 3,706,716,160
//	                   = 15,264,290,304 + 3,706,716,160 = 18,971,006,464 B
//	routed, per rank:  653,908,770,816 × 1 B / (tp × dp = 8) = 81,738,596,352 B (32 experts)
//	weights per rank   18,971,006,464 + 81,738,596,352 = 100,709,602,816 B (93.8 GiB)
//
// With 32 redundant experts (EPLB): 288 / 8 = 36 experts per rank,
// 653,908,770,816 × 288/256 / 8 = 91,955,920,896 B, 110,926,927,360 B in all.
// KV: MLA's latent, 61 layers × (512 + 64) × 2 B = 70,272 B per token on
// each rank (not divided by dp: each rank holds its own sequences' KV).
func TestMemoryDeepSeekV3DP8EP8(t *testing.T) {
	for _, engine := range []string{"vllm", "sglang", "trtllm"} {
		p, err := PlanMemory(dsv3Scenario(t, engine, models.Parallelism{TP: 1, DP: 8, EP: 8}, 0))
		if err != nil {
			t.Fatal(err)
		}
		if p.WeightsBytes != 100_709_602_816 {
			t.Errorf("%s: weights per rank %d, want 100,709,602,816 (by hand)", engine, p.WeightsBytes)
		}
		if p.RoutedWeightsBytes != 81_738_596_352 || p.ExpertsPerRank != 32 || p.MoETP != 1 || p.DP != 8 || p.EP != 8 {
			t.Errorf("%s: routed %d, experts/rank %g, moe tp %d, dp %d, ep %d", engine, p.RoutedWeightsBytes, p.ExpertsPerRank, p.MoETP, p.DP, p.EP)
		}
		if p.KVBytesPerToken != 70_272 {
			t.Errorf("%s: KV %d B/token per rank, want 70,272", engine, p.KVBytesPerToken)
		}
		if p.WorkerKVSlotsTokens != 8*p.KVSlotsTokens || p.KVSlotsTokens <= 0 {
			t.Errorf("%s: worker slots %d, rank slots %d", engine, p.WorkerKVSlotsTokens, p.KVSlotsTokens)
		}
	}
	p, err := PlanMemory(dsv3Scenario(t, "sglang", models.Parallelism{TP: 1, DP: 8, EP: 8}, 32))
	if err != nil {
		t.Fatal(err)
	}
	if p.WeightsBytes != 110_926_927_360 || p.ExpertsPerRank != 36 {
		t.Errorf("32 redundant experts: weights %d, experts/rank %g; want 110,926,927,360 and 36", p.WeightsBytes, p.ExpertsPerRank)
	}
	// tp 8, ep 8 (one 8-GPU node, MoE tp 1): the rest split 8 ways,
	// 18,971,006,464 / 8 = 2,371,375,808 B, plus 81,738,596,352 B of
	// routed experts = 84,109,972,160 B.
	sc := dsv3Scenario(t, "vllm", models.Parallelism{EP: 8}, 0)
	sc.KV.TP = 8
	if p, err = PlanMemory(sc); err != nil {
		t.Fatal(err)
	}
	if p.WeightsBytes != 84_109_972_160 || p.MoETP != 1 || p.ExpertsPerRank != 32 {
		t.Errorf("tp 8 ep 8: weights %d, MoE tp %d, experts/rank %g; want 84,109,972,160, 1, 32", p.WeightsBytes, p.MoETP, p.ExpertsPerRank)
	}
	// tp 1 alone: the whole model on one H200 (669 GB) does not fit.
	p, err = PlanMemory(dsv3Scenario(t, "sglang", models.Parallelism{}, 0))
	if err != nil {
		t.Fatal(err)
	}
	if p.ModelFits {
		t.Errorf("DeepSeek-V3 on one H200 fits (weights %d)", p.WeightsBytes)
	}
}

func TestMemoryLayoutErrors(t *testing.T) {
	for _, c := range []struct {
		lay       models.Parallelism
		redundant int
		want      string
	}{
		{models.Parallelism{DP: 8, EP: 3}, 0, "must divide tp × dp"},
		{models.Parallelism{DP: 6, EP: 6}, 0, "2 redundant experts (EPLB) would make it 258"},
		{models.Parallelism{DP: 8, EP: 8}, -1, "redundant experts must be >= 0"},
		{models.Parallelism{TP: 2}, 0, "disagrees with tp 1"},
	} {
		_, err := PlanMemory(dsv3Scenario(t, "vllm", c.lay, c.redundant))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v redundant %d: err %v, want %q", c.lay, c.redundant, err, c.want)
		}
	}
}
