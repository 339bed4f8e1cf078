package main

import (
	"math"
	"testing"
)

// TestSimulateFrontendMS: --frontend-ms replaces the engine model's fitted
// request_ms + request_us_per_token × prompt tokens. One client at a time
// meets an idle worker, so each request's TTFT is its frontend time plus its
// prefill, and the mean TTFT moves by exactly the difference of the two
// frontends: 26 − (request_ms + 1,500 × request_us_per_token / 1000) for
// the 1,500-token prompts (the 24 tail tokens are the prompt's last 24,
// changed every send).
func TestSimulateFrontendMS(t *testing.T) {
	args := []string{"simulate", "--model", "qwen3-0.6b", "--gpu", "rtx4090", "--synthetic", "6x1500x2", "--tail-tokens", "24",
		"--workers", "1", "--policy", "round-robin", "--output-tokens", "16"}
	meanTTFT := func(res map[string]any) float64 {
		p := res["policies"].([]any)[0].(map[string]any)
		return p["ttft_ms"].(map[string]any)["mean"].(float64)
	}
	fitted := runJSON(t, 0, args...)
	timed := fitted["timed"].(map[string]any)
	fe, perTok := timed["frontend_ms"].(float64), timed["frontend_ms_per_token"].(float64)
	if fe <= 0 || perTok <= 0 {
		t.Fatalf("the fitted frontend: %v ms + %v ms a token", fe, perTok)
	}
	given := runJSON(t, 0, append(args, "--frontend-ms", "26")...)
	if g := given["timed"].(map[string]any); g["frontend_ms"].(float64) != 26 || g["frontend_ms_per_token"].(float64) != 0 {
		t.Errorf("--frontend-ms 26: timed %v", g)
	}
	want := 26 - (fe + 1500*perTok)
	if got := meanTTFT(given) - meanTTFT(fitted); math.Abs(got-want) > 1e-6 {
		t.Errorf("mean TTFT moved by %.6f ms, want 26 − (%.4f + 1500 × %.7f) = %.6f", got, fe, perTok, want)
	}
}
