package models

import (
	"math"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

func TestNewWeights(t *testing.T) {
	cases := []struct {
		name     string
		m        catalog.Model
		tp       int
		total    int64
		perRank  int64
		fromCat  bool
		embedded int64
	}{
		// Tied embeddings: params_total already counts the one matrix;
		// 596,049,920 × 2 = 1,192,099,840. Embedding 151,936 × 1,024 = 155,582,464, once.
		{"qwen3-0.6b bf16 tied", catalog.Model{Name: "q", ParamsTotal: 596_049_920, WeightDtype: "bf16", TiedEmbeddings: true,
			VocabSize: 151936, HiddenSize: 1024}, 1, 1_192_099_840, 1_192_099_840, false, 155_582_464},
		// 70,553,706,496 × 2 = 141,107,412,992; / 4 = 35,276,853,248. Untied: 2 × 128,256 × 8,192 = 2,101,346,304.
		{"llama-70b tp4", catalog.Model{Name: "l", ParamsTotal: 70_553_706_496, WeightDtype: "bf16", VocabSize: 128256, HiddenSize: 8192},
			4, 141_107_412_992, 35_276_853_248, false, 2_101_346_304},
		// fp8: 671,026,419,200 × 1; / 8 = 83,878,302,400.
		{"deepseek-v3 fp8 tp8", catalog.Model{Name: "d", ParamsTotal: 671_026_419_200, WeightDtype: "fp8"},
			8, 671_026_419_200, 83_878_302_400, false, 0},
		// int4: 7 × 0.5 = 3.5 → ceil 4 bytes; tp 3: ceil(4 / 3) = 2.
		{"int4 rounding", catalog.Model{Name: "i", ParamsTotal: 7, WeightDtype: "int4"}, 3, 4, 2, false, 0},
		// mxfp4: 1,000 × 4.25 / 8 = 531.25 → 532.
		{"mxfp4", catalog.Model{Name: "x", ParamsTotal: 1000, WeightDtype: "mxfp4"}, 0, 532, 532, false, 0},
		// weights_bytes from the catalog wins over params × dtype: 65,000,000,000 / 2 = 32,500,000,000.
		{"catalog weights_bytes", catalog.Model{Name: "w", ParamsTotal: 116_829_156_672, WeightDtype: "mxfp4", WeightsBytes: 65_000_000_000},
			2, 65_000_000_000, 32_500_000_000, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := NewWeights(&c.m, c.tp)
			if err != nil {
				t.Fatal(err)
			}
			if w.TotalBytes != c.total || w.PerRankBytes != c.perRank || w.FromCatalog != c.fromCat || w.EmbeddingParams != c.embedded {
				t.Errorf("got total %d, per rank %d, from catalog %v, embedding %d; want %d, %d, %v, %d",
					w.TotalBytes, w.PerRankBytes, w.FromCatalog, w.EmbeddingParams, c.total, c.perRank, c.fromCat, c.embedded)
			}
		})
	}
	if _, err := NewWeights(&catalog.Model{Name: "bad", ParamsTotal: 1, WeightDtype: "fp3"}, 1); err == nil {
		t.Error("unknown weight dtype: no error")
	}
}

func TestMLPWidth(t *testing.T) {
	cases := []struct {
		name string
		m    catalog.Model
		want float64
	}{
		// Qwen3-0.6B: (596,049,920 − 155,582,464) / 28 / 1,024 − 128 × (2×16 + 2×8)
		// = 15,361.142857 − 6,144 = 9,218.285714 (3 × intermediate 3,072 = 9,216, plus the norms).
		{"qwen3-0.6b", catalog.Model{ParamsTotal: 596_049_920, TiedEmbeddings: true, VocabSize: 151936, HiddenSize: 1024,
			AttentionHeads: 16, KVHeads: 8, HeadDim: 128, Layers: 28}, 9218.285714},
		// Llama-3.1-70B: (70,553,706,496 − 2,101,346,304) / 80 / 8,192 − 128 × (2×64 + 2×8)
		// = 104,450.0125 − 18,432 = 86,018.0125 (3 × 28,672 = 86,016).
		{"llama-3.1-70b", catalog.Model{ParamsTotal: 70_553_706_496, VocabSize: 128256, HiddenSize: 8192,
			AttentionHeads: 64, KVHeads: 8, HeadDim: 128, Layers: 80}, 86018.0125},
		// MLA: active params, attention left in: (37,552,297,472 − 2×129,280×7,168) / 61 / 7,168 = 81,644.603044.
		{"deepseek-v3 MLA", catalog.Model{ParamsTotal: 671_026_419_200, ParamsActive: 37_552_297_472, VocabSize: 129280,
			HiddenSize: 7168, AttentionHeads: 128, KVHeads: 128, HeadDim: 192, Layers: 61,
			MLA: &catalog.MLA{KVLoraRank: 512, QKRopeHeadDim: 64}}, 81644.603044},
		{"no hidden size", catalog.Model{ParamsTotal: 1000, Layers: 2}, 0},
	}
	for _, c := range cases {
		if got := MLPWidth(&c.m); math.Abs(got-c.want) > 1e-5 {
			t.Errorf("%s: MLPWidth = %.6f, want %.6f", c.name, got, c.want)
		}
	}
}
