package models

import (
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

func TestParallelismCounts(t *testing.T) {
	// TRT-LLM's "tp 8 ep 2" is MoE TP 4 × EP 2 (TensorRT-LLM's MoE docs).
	p := Parallelism{TP: 8, EP: 2}
	if p.GPUs() != 8 || p.MoETP() != 4 || p.String() != "tp8 ep2" {
		t.Fatalf("tp8 ep2: gpus %d moe tp %d %q", p.GPUs(), p.MoETP(), p.String())
	}
	// DeepSeek-style DP attention: tp1 dp8 ep8 on 8 GPUs, experts not tensor-split.
	p = Parallelism{TP: 1, DP: 8, EP: 8}
	if p.GPUs() != 8 || p.MoETP() != 1 || p.Plain() {
		t.Fatalf("tp1 dp8 ep8: gpus %d moe tp %d plain %v", p.GPUs(), p.MoETP(), p.Plain())
	}
	if (Parallelism{TP: 4, PP: 2}).GPUs() != 8 || !(Parallelism{TP: 4}).Plain() {
		t.Fatal("pp counts")
	}
}

func TestParallelismCheck(t *testing.T) {
	moe := &catalog.Model{Name: "m", Layers: 61, MoE: &catalog.MoE{Experts: 256, ExpertsPerToken: 8}}
	dense := &catalog.Model{Name: "d", Layers: 32}
	for _, c := range []struct {
		p    Parallelism
		m    *catalog.Model
		want string
	}{
		{Parallelism{TP: 1, DP: 8, EP: 8}, moe, ""},
		{Parallelism{TP: 8, EP: 3}, moe, "must divide tp × dp"},
		// 256 experts over 12 ranks: 22 per rank needs 264, 8 redundant.
		{Parallelism{TP: 1, DP: 12, EP: 12}, moe, "8 redundant experts (EPLB) would make it 264"},
		{Parallelism{TP: 8, EP: 8}, dense, "needs a mixture-of-experts model"},
		{Parallelism{TP: 1, PP: 64}, moe, "exceeds the 61 layers"},
		{Parallelism{TP: 8, SpeculativeTokens: 1, AcceptanceLength: 2.5}, moe, "between 1 and speculative-tokens + 1 = 2"},
		{Parallelism{TP: 8, AcceptanceLength: 1.8}, moe, "without speculative-tokens"},
		{Parallelism{TP: -1}, moe, "must be >= 1"},
	} {
		err := c.p.Check(c.m)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.p, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %s: got %v, want %q", c.p.raw(), c.m.Name, err, c.want)
		}
	}
}
