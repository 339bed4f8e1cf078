package models_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

// TestCheckTP: the counts come from each model's config.json (FACTS.md §2
// and the catalog's sources); the rules are vLLM's (see CheckTP).
func TestCheckTP(t *testing.T) {
	c := loadCatalog(t)
	model := func(name string) *catalog.Model {
		m, err := c.Model(name)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// A Qwen2.5-7B-like geometry: 28 query heads, 4 kv heads. tp 7 divides the
	// query heads but neither divides nor is divided by the kv heads.
	qwen25 := &catalog.Model{Name: "qwen2.5-7b-like", AttentionHeads: 28, KVHeads: 4, HeadDim: 128, Layers: 28}
	cases := []struct {
		name  string
		m     *catalog.Model
		tp    int
		why   string // "" = accepted
		valid []int
	}{
		{"70b tp 8", model("llama-3.1-70b"), 8, "", nil},
		// tp 16 > 8 kv heads: each kv head is replicated on 2 ranks, which vLLM accepts.
		{"70b tp 16 replicates kv", model("llama-3.1-70b"), 16, "", nil},
		{"70b tp 3", model("llama-3.1-70b"), 3, "64 attention heads are not divisible by tp 3", []int{1, 2, 4, 8, 16, 32, 64}},
		{"kv heads", qwen25, 7, "4 kv heads are not divisible by tp 7, nor tp by them", []int{1, 2, 4, 28}}, // 14: 4 % 14 and 14 % 4 are not 0,
		// MLA: the 128 kv heads of the config are not a constraint, the 128 query heads are.
		{"deepseek tp 3", model("deepseek-v3"), 3, "128 attention heads are not divisible by tp 3", []int{1, 2, 4, 8, 16, 32, 64}},
		{"deepseek tp 16", model("deepseek-v3"), 16, "", nil},
		// Gemma-4: 16 query heads, sliding layers 8 kv heads, full layers 2; tp 4
		// replicates the full layers' 2 heads.
		{"gemma-4 tp 4", model("gemma-4-26b-a4b"), 4, "", nil},
		{"gemma-4 tp 32", model("gemma-4-26b-a4b"), 32, "16 attention heads are not divisible by tp 32", []int{1, 2, 4, 8, 16}},
	}
	for _, tc := range cases {
		err := models.CheckTP(tc.m, tc.tp)
		if tc.why == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var te *models.TPError
		if !errors.As(err, &te) {
			t.Fatalf("%s: %v, want a TPError", tc.name, err)
		}
		if te.Why != tc.why || !slices.Equal(te.Valid, tc.valid) {
			t.Errorf("%s: why %q valid %v; want %q %v", tc.name, te.Why, te.Valid, tc.why, tc.valid)
		}
		if !strings.Contains(err.Error(), "not divisible") || !strings.HasPrefix(err.Error(), "tp ") {
			t.Errorf("%s: message %q", tc.name, err)
		}
	}
	if err := models.CheckTP(qwen25, 0); err == nil {
		t.Error("tp 0 accepted")
	}
}

func TestCheckContext(t *testing.T) {
	m := &catalog.Model{Name: "qwen3-8b", MaxContext: 40960}
	if err := models.CheckContext(m, 40960); err != nil {
		t.Error(err)
	}
	err := models.CheckContext(m, 40961)
	if err == nil || err.Error() != "40961 tokens are past qwen3-8b's max context of 40960 tokens (max_position_embeddings)" {
		t.Errorf("got %v", err)
	}
	if err := models.CheckContext(&catalog.Model{Name: "x"}, 1<<30); err != nil {
		t.Errorf("no max context: %v", err)
	}
}
