package planner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

// TestMemoryVLLM08And09FromLogs checks the vLLM 0.8.x-0.9.1 and 0.9.2
// profiles against the terms two vLLM 0.19.0 start-up logs print
// (testdata/memory/vllm-logs; Llama-3.1-8B-Instruct, H100 80GB, util 0.95,
// max-model-len 8192, bf16, 8,192 batched tokens and 1,024 sequences).
// No start-up log of 0.8 or 0.9 was available, so the expectations are what
// those versions' accounting makes of the same measured terms, by hand:
//
// vLLM 0.8.0-0.9.1 (gpu_worker.py before PR #19312): kv = total × util −
// torch peak (weights + activation) − (CUDA used − torch allocated), the last
// being everything outside PyTorch, the start-up snapshot included:
//
//	tp 1: 75.23 − 14.99 − 1.89 − (0.51 snapshot + 0.25 forward) = 57.59 GiB
//	      57.59 GiB / 131,072 B a token (32 layers × 8 heads × 128 × 2 × 2 B)
//	      = 57.59 × 8,192 = 471,777 tokens
//	tp 2: 75.23 − 7.51 − 1.89 − (1.51 snapshot + 2.07 forward) = 62.25 GiB
//	      62.25 GiB / 65,536 B a token a rank = 62.25 × 16,384 = 1,019,904 tokens
//
// vLLM 0.9.2 (memory_profiling from the start-up snapshot, as 0.19): the
// logged figures themselves, 476,016 and 1,044,688 tokens.
//
// The logs print GiB to two decimals (±0.005 GiB a term, 0.03% of the KV),
// and kvplan predicts weights and activation rather than reading them, so
// the check allows 0.5%.
func TestMemoryVLLM08And09FromLogs(t *testing.T) {
	c, m, g := modelOnGPU(t, "llama-3.1-8b", "h100-sxm")
	logs := map[int]string{1: "meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--8192.excerpt.log", 2: "meta-llama-llama-3-1-8b---h100-80gb--tp2pp1dp1--8192.excerpt.log"}
	// The terms the hand calculation above reads, as each log prints them.
	printed := map[int][]string{
		1: {"non_torch_memory=0.51GiB", "torch peak memory increase: 1.89GiB; non-torch forward increase memory: 0.25GiB; weights memory: 14.99GiB", "GPU KV cache size: 476,016 tokens"},
		2: {"non_torch_memory=1.51GiB", "torch peak memory increase: 1.89GiB; non-torch forward increase memory: 2.07GiB; weights memory: 7.51GiB", "GPU KV cache size: 1,044,688 tokens"},
	}
	for tp, name := range logs {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "memory", "vllm-logs", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range printed[tp] {
			if !strings.Contains(string(data), s) {
				t.Errorf("%s does not print %q, which the hand calculation reads", name, s)
			}
		}
	}
	for _, tc := range []struct {
		version, wantMin string
		tp               int
		want             int64
	}{
		{"0.8.5", "0.8.0", 1, 471_777},
		{"0.8.5", "0.8.0", 2, 1_019_904},
		{"0.9.1", "0.8.0", 2, 1_019_904},
		{"0.9.2", "0.9.2", 1, 476_016},
		{"0.9.2", "0.9.2", 2, 1_044_688},
	} {
		e, v, err := c.EngineVersion("vllm", tc.version)
		if err != nil {
			t.Fatal(err)
		}
		if e.MinVersion != tc.wantMin {
			t.Errorf("vllm %s: entry from %s, want from %s", tc.version, e.MinVersion, tc.wantMin)
		}
		p, err := PlanMemory(MemoryScenario{Model: m, GPU: g, Engine: e, EngineVersion: v, GPUUtil: 0.95, KV: models.KVOptions{TP: tc.tp},
			MaxModelLen: 8192, BlockSize: 16})
		if err != nil {
			t.Fatal(err)
		}
		if p.MaxNumBatchedTokens != 8192 || p.MaxNumSeqs != 1024 {
			t.Errorf("vllm %s: H100 defaults %d/%d, want 8192/1024 ('h100' in the device name)", tc.version, p.MaxNumBatchedTokens, p.MaxNumSeqs)
		}
		if d := float64(p.EngineKVTokens-tc.want) / float64(tc.want); d < -0.005 || d > 0.005 {
			t.Errorf("vllm %s tp %d: %d KV tokens, want within 0.5%% of %d (%+.2f%%)\n%s", tc.version, tc.tp, p.EngineKVTokens, tc.want, 100*d, p.Derivation)
		}
	}
}

// TestMemoryVLLM08DefaultsByName: vLLM 0.8 and 0.9 chose the larger
// scheduler defaults when "h100" or "h200" is in the device name, not by
// memory: a B200 (178 GiB) and an A100 80GB keep 2,048 tokens and 256
// sequences, a GH200 ("NVIDIA GH200 480GB") gets the larger ones, as the
// H200 does.
func TestMemoryVLLM08DefaultsByName(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Model("qwen3-0.6b")
	if err != nil {
		t.Fatal(err)
	}
	for _, ver := range []string{"0.8.5", "0.9.2"} {
		e, v, err := c.EngineVersion("vllm", ver)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			gpu           string
			batched, seqs int
		}{{"b200", 2048, 256}, {"gb200", 2048, 256}, {"a100-80gb", 2048, 256}, {"mi300x", 2048, 256}, {"l4", 2048, 256},
			{"h100-sxm", 8192, 1024}, {"h100-pcie", 8192, 1024}, {"h200", 8192, 1024}, {"gh200", 8192, 1024}} {
			g, err := c.GPU(tc.gpu)
			if err != nil {
				t.Fatal(err)
			}
			p, err := PlanMemory(MemoryScenario{Model: m, GPU: g, Engine: e, EngineVersion: v, GPUUtil: 0.5, BlockSize: 16})
			if err != nil {
				t.Fatal(err)
			}
			if p.MaxNumBatchedTokens != tc.batched || p.MaxNumSeqs != tc.seqs {
				t.Errorf("vllm %s on %s: defaults %d/%d, want %d/%d", ver, tc.gpu, p.MaxNumBatchedTokens, p.MaxNumSeqs, tc.batched, tc.seqs)
			}
		}
	}
}
