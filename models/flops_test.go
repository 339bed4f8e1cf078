package models

import (
	"math"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

func TestPrefillFLOPs(t *testing.T) {
	dense := &catalog.Model{ParamsTotal: 1_000_000, Layers: 2, AttentionHeads: 4, KVHeads: 2, HeadDim: 8}
	w, a := PrefillFLOPs(dense, 10)
	// weights: 2 × 1e6 × 10 = 2e7 (no vocabulary given: nothing to take off)
	// attention: 2 layers × 4 × 4 heads × 8 × (10 × 11 / 2 = 55 pairs) = 14,080
	if w != 2e7 || a != 14080 {
		t.Errorf("dense: weights %g attention %g; want 2e7, 14080", w, a)
	}
	moe := &catalog.Model{ParamsTotal: 10_000_000, ParamsActive: 1_000_000, Layers: 2, AttentionHeads: 4, KVHeads: 2, HeadDim: 8,
		Layout: []catalog.LayerGroup{{Kind: "sliding", Count: 1, Window: 4}, {Kind: "linear", Count: 1, StateBytes: 1}}}
	w, a = PrefillFLOPs(moe, 10)
	// weights use active params: 2 × 1e6 × 10 = 2e7
	// sliding window 4 over 10 tokens: 4×5/2 = 10 pairs for the first 4, then 6 × 4 = 24: 34 pairs
	// 1 layer × 4 × 4 heads × 8 × 34 = 4,352; the linear layer adds none.
	if w != 2e7 || math.Abs(a-4352) > 1e-9 {
		t.Errorf("moe: weights %g attention %g; want 2e7, 4352", w, a)
	}
	hybrid := &catalog.Model{ParamsTotal: 1_000_000, Layers: 2, AttentionHeads: 4, KVHeads: 2, HeadDim: 8,
		Layout: []catalog.LayerGroup{{Kind: "compressed", Count: 1, Window: 4, Ratio: 5}, {Kind: "mamba", Count: 1, SSMStateElements: 1}}}
	_, a = PrefillFLOPs(hybrid, 10)
	// compressed: the window's 34 pairs + 10² / (2 × 5) = 10 compressed pairs = 44;
	// 1 layer × 4 × 4 heads × 8 × 44 = 5,632; the Mamba layer adds none.
	if math.Abs(a-5632) > 1e-9 {
		t.Errorf("hybrid: attention %g; want 5632", a)
	}
}

func TestMatmulParams(t *testing.T) {
	cases := []struct {
		name string
		m    catalog.Model
		want int64
	}{
		// Tied: one 100 × 10 matrix counted once comes off: 10,000 − 1,000.
		{"tied", catalog.Model{ParamsTotal: 10_000, VocabSize: 100, HiddenSize: 10, TiedEmbeddings: true}, 9_000},
		// Untied: input and output embeddings: 10,000 − 2 × 1,000.
		{"untied", catalog.Model{ParamsTotal: 10_000, VocabSize: 100, HiddenSize: 10}, 8_000},
		// MoE active already excludes the input embedding: 5,000 − 1,000.
		{"moe", catalog.Model{ParamsTotal: 50_000, ParamsActive: 5_000, VocabSize: 100, HiddenSize: 10}, 4_000},
	}
	for _, c := range cases {
		if got := MatmulParams(&c.m); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	// Qwen3-0.6B: 596,049,920 − 151,936 × 1,024 (tied) = 440,467,456; prefill of
	// 1,500 tokens = 2 × 440,467,456 × 1,500 + 2 × 151,936 × 1,024 = 1,321,402,368,000 + 311,164,928 = 1,321,713,532,928
	// weight FLOPs; attention 28 × 4 × 16 × 128 × (1,500 × 1,501 / 2) = 229,376 × 1,125,750 = 258,220,032,000.
	q := &catalog.Model{ParamsTotal: 596_049_920, VocabSize: 151_936, HiddenSize: 1024, TiedEmbeddings: true,
		Layers: 28, AttentionHeads: 16, KVHeads: 8, HeadDim: 128}
	w, a := PrefillFLOPs(q, 1500)
	if w != 1_321_713_532_928 || a != 258_220_032_000 {
		t.Errorf("qwen3-0.6b: weights %.0f attention %.0f", w, a)
	}
}
