package main

import (
	"strings"
	"testing"
)

// TestSimulateLayout: a timed simulation of DeepSeek-V3 on one worker of
// tp 1 × dp 8 with the experts over all 8 ranks holds each rank's KV
// slots: 8 × what kvplan memory gives one rank of the same layout. A
// layout the model cannot take exits 2 with the counts and what would be
// accepted.
func TestSimulateLayout(t *testing.T) {
	lay := []string{"--model", "deepseek-v3", "--weight-dtype", "fp8", "--gpu", "h200", "--tp", "1", "--data-parallel-size", "8", "--expert-parallel-size", "8"}
	rank := runJSON(t, 0, "memory", "--model", "deepseek-v3", "--quantization", "fp8", "--gpu", "h200", "--tp", "1",
		"--data-parallel-size", "8", "--expert-parallel-size", "8", "--max-model-len", "163840")
	sim := runJSON(t, 0, append(append([]string{"simulate"}, lay...), "--synthetic", "12x1500x6", "--osl", "64", "--concurrency", "16")...)
	perRank := numAt(t, rank, "kv_slots_tokens")
	if got := numAt(t, sim, "kv_slots_per_worker"); got != 8*perRank {
		t.Errorf("simulate's worker has %g KV slots, want 8 × memory's %g per rank", got, perRank)
	}
	_, errOut, code := kvplan(t, append(append([]string{"simulate"}, "--model", "deepseek-v3", "--gpu", "h200", "--tp", "1",
		"--data-parallel-size", "12", "--expert-parallel-size", "12"), "--synthetic", "12x1500x6", "--concurrency", "8")...)
	if code != ExitUsage || !strings.Contains(errOut, "expert-parallel-size 12 does not divide the 256 routed experts") {
		t.Errorf("exit %d, %q; want 2 naming the 256 experts", code, errOut)
	}
}
