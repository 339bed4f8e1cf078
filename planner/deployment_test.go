package planner

import (
	"math"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/planfile"
)

func deploy(t *testing.T, plan string) *Deployment {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	p, err := planfile.Parse("plan.toml", []byte(plan))
	if err != nil {
		t.Fatal(err)
	}
	dep, err := PlanDeployment(cat, p)
	if err != nil {
		t.Fatal(err)
	}
	return dep
}

// TestDeploymentPoolTP: each pool runs at its own tp.
func TestDeploymentPoolTP(t *testing.T) {
	dep := deploy(t, `
[model]
name = "llama-3.1-70b"
tp = 4
[workload]
input_tokens = 4000
output_tokens = 300
concurrency = 16
[pools.prefill]
role = "prefill"
gpu = "h100-sxm"
max_num_batched_tokens = 16384
[pools.decode]
role = "decode"
workers = 2
gpu = "h100-sxm"
tp = 8
max_num_seqs = 64
[link]
name = "ib-ndr"
`)
	pre, dec := dep.pool("prefill"), dep.pool("decode")
	// GPUs: 1 × 4 + 2 × 8 = 20, on whole AWS p5.48xlarge instances of 8 H100s
	// at $55.04 (catalog/data/instances.toml): the decode workers take one
	// each and the prefill worker half of a third, so 3 × $55.04 = $165.12.
	if dep.GPUs != 20 || pre.GPUs != 4 || dec.GPUs != 16 || math.Abs(dep.USDPerHour-3*55.04) > 1e-9 {
		t.Errorf("GPUs %d (%d + %d), $%.2f/h; want 20 (4 + 16), 3 × $55.04", dep.GPUs, pre.GPUs, dec.GPUs, dep.USDPerHour)
	}
	// Weights per rank: ceil(70,553,706,496 × 2 / 4) = 35,276,853,248 and / 8 = 17,638,426,624.
	if pre.Memory.TP != 4 || pre.Memory.WeightsBytes != 35_276_853_248 || dec.Memory.TP != 8 || dec.Memory.WeightsBytes != 17_638_426_624 {
		t.Errorf("per-rank weights: prefill tp %d %d B, decode tp %d %d B", pre.Memory.TP, pre.Memory.WeightsBytes, dec.Memory.TP, dec.Memory.WeightsBytes)
	}
	// KV per rank per token: 80 layers × 2 × (8 / tp) heads × 128 × 2 B = 81,920 at tp 4, 40,960 at tp 8.
	if pre.KV.KVBytesPerToken != 81920 || dec.KV.KVBytesPerToken != 40960 {
		t.Errorf("KV per rank per token: %d, %d", pre.KV.KVBytesPerToken, dec.KV.KVBytesPerToken)
	}
	// The engine limits reach the memory model.
	if pre.Memory.MaxNumBatchedTokens != 16384 || dec.Memory.MaxNumSeqs != 64 {
		t.Errorf("engine limits: %d batched tokens, %d seqs", pre.Memory.MaxNumBatchedTokens, dec.Memory.MaxNumSeqs)
	}
	// The transfer: the 8 decode ranks pull 1 kv head each, 8 × 4,000 × 40,960 =
	// 1,310,720,000 B over min(4, 8) = 4 rails; 2 decode workers and 1 prefill worker
	// make min(1, 2) = 1 worker pair.
	d := dep.Disagg
	if d.TP != 4 || d.DecodeTP != 8 || d.KVBytesPerRequest != 1_310_720_000 || d.ParallelPaths != 4 || d.BytesPerPath != 327_680_000 || d.WorkerPairs != 1 {
		t.Errorf("transfer: tp %d → %d, %d B over %d paths (%d each), %d pairs", d.TP, d.DecodeTP, d.KVBytesPerRequest, d.ParallelPaths, d.BytesPerPath, d.WorkerPairs)
	}
	if d.InFlightSource != "concurrency" {
		t.Errorf("in flight from %q, want concurrency", d.InFlightSource)
	}
}

// TestDeploymentWeightsDoNotFit: DeepSeek-V3 at tp 8 on H100, and what would fit.
func TestDeploymentWeightsDoNotFit(t *testing.T) {
	dep := deploy(t, `
[model]
name = "deepseek-v3"
kv_dtype = "fp8"
tp = 8
[workload]
input_tokens = 2000
output_tokens = 500
[pools.workers]
role = "aggregated"
gpu = "h100-sxm"
max_model_len = 32768
gpu_memory_utilization = 0.9
`)
	pp := dep.pool("workers")
	f := pp.Fit
	// An fp8 checkpoint keeps its embeddings at 16 bits: ((671,026,419,200 − 2 × 129,280 × 7,168) × 1
	// + 2 × 926,679,040 × 2) / 8 = 84,109,972,160 B per rank > the CUDA total 79.19 GiB
	// (85,029,615,043 B) × 0.9 = 76,526,653,538 B.
	if f.Fits || pp.Memory.WeightsBytes != 84_109_972_160 || pp.Memory.RequestedBytes != 76_526_653_538 {
		t.Fatalf("fits %v, weights %d, requested %d", f.Fits, pp.Memory.WeightsBytes, pp.Memory.RequestedBytes)
	}
	if f.ShortBytes != f.RequiredBytes-76_526_653_538 || f.ShortBytes < 84_109_972_160-76_526_653_538 {
		t.Errorf("short by %d of required %d", f.ShortBytes, f.RequiredBytes)
	}
	// tp 16 halves the weights per rank to 41.9 GB (128 query heads divide by 16). Of the
	// catalog GPUs with more memory than the H100's 81,559 MiB, the smallest are the
	// A100 80GB (81,920 MiB × 0.9 = 77.3 GB: too small) and the GH200 (97,871 MiB
	// × 0.9 = 92.4 GB: holds 83.9 GB at tp 8). The weights are fp8 already.
	if f.MinTP != 16 || f.GPU != "gh200" || f.FP8Fits {
		t.Errorf("what would fit: tp %d, gpu %q, fp8 %v; want 16, gh200, false", f.MinTP, f.GPU, f.FP8Fits)
	}
	if pp.Memory.KVSlotsTokens != 0 || pp.InFlight.MaxRequestsThatFit != 0 {
		t.Errorf("a pool that cannot start has %d slots, %d requests fit", pp.Memory.KVSlotsTokens, pp.InFlight.MaxRequestsThatFit)
	}
}

// TestDeploymentWeightDtype: model.weight_dtype = "fp8" stores a bf16 model's
// linear layers at 1 B (its embeddings stay at 2 B).
func TestDeploymentWeightDtype(t *testing.T) {
	dep := deploy(t, `
[model]
name = "llama-3.1-70b"
weight_dtype = "fp8"
tp = 2
[workload]
input_tokens = 1000
[pools.workers]
role = "aggregated"
gpu = "h100-sxm"
`)
	// ceil(((70,553,706,496 − 2 × 1,050,673,152) × 1 B + 2 × 1,050,673,152 × 2 B) / 2) = 36,327,526,400.
	if w := dep.pool("workers").Memory.WeightsBytes; w != 36_327_526_400 || dep.Model.WeightDtype != "fp8" {
		t.Errorf("fp8 weights per rank %d (%s), want 36,327,526,400", w, dep.Model.WeightDtype)
	}
	cat, _ := catalog.Load()
	p, err := planfile.Parse("plan.toml", []byte("[model]\nname = \"qwen3-8b\"\nweight_dtype = \"fp6\"\n[workload]\ninput_tokens = 1\n[pools.a]\nrole = \"aggregated\"\ngpu = \"l4\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PlanDeployment(cat, p); err == nil || !strings.Contains(err.Error(), "plan.toml:3: model.weight_dtype: \"fp6\" is not a weight dtype") {
		t.Errorf("bad weight dtype: %v", err)
	}
}

// TestDeploymentKVInFlight: the L4 plan, counted in whole blocks.
func TestDeploymentKVInFlight(t *testing.T) {
	plan := `
[model]
name = "qwen3-8b"
[workload]
input_tokens = 4500
output_tokens = 250
concurrency = 32
%s
[pools.workers]
role = "aggregated"
workers = 4
gpu = "l4"
max_model_len = 8192
gpu_memory_utilization = 0.9
%s
`
	cases := []struct {
		name, workload, router string
		tokens, maxFit         int
	}{
		// 8 per worker × ceil(4,750 / 16) = 297 blocks × 16 = 38,016 tokens; 22,720
		// slots = 1,420 blocks hold floor(1,420 / 297) = 4 requests.
		{"no prefixes", "", "", 38016, 4},
		// 2 prefixes of 4,000 tokens (250 full blocks), both on every worker under
		// round-robin: (8 × 47 + 2 × 250) × 16 = 14,016; max: (1,420 − 500) / 47 = 19.
		{"shared prefixes, round-robin", "prefixes = 2\nprefix_tokens = 4000\nrepeats = 16", "", 14016, 19},
		// Under the KV router each worker holds ceil(2 / 4) = 1 prefix:
		// (8 × 47 + 1 × 250) × 16 = 10,016; max: (1,420 − 250) / 47 = 24.
		{"shared prefixes, kv router", "prefixes = 2\nprefix_tokens = 4000\nrepeats = 16", "[router]\nmode = \"kv\"", 10016, 24},
	}
	for _, c := range cases {
		dep := deploy(t, strings.Replace(strings.Replace(plan, "%s", c.workload, 1), "%s", c.router, 1))
		pp := dep.pool("workers")
		// vLLM 0.31 on an L4 (CUDA 22.05 GiB), util 0.9: 21,308,241,346 − weights 16,381,470,720
		// − sampler 256 × 151,936 × 6 + 2,048 × 4,096 × 2 = 250,150,912 − non-torch 268,435,456
		// − CUDA graphs (395 + 17 × 36) MiB = 1,055,916,032 → 3,352,268,226 B = 1,420 blocks of 2,359,296 B.
		if pp.Memory.KVSlotsTokens != 22720 {
			t.Fatalf("%s: %d slots; the hand figures assume 22,720 (kvplan memory --model qwen3-8b --gpu l4 --max-model-len 8192 --gpu-util 0.9)", c.name, pp.Memory.KVSlotsTokens)
		}
		if pp.InFlight.TokensNeeded != c.tokens || pp.InFlight.MaxRequestsThatFit != c.maxFit {
			t.Errorf("%s: %d tokens, %d fit; want %d, %d", c.name, pp.InFlight.TokensNeeded, pp.InFlight.MaxRequestsThatFit, c.tokens, c.maxFit)
		}
	}
}

// TestDeploymentPrefillCapacity: request_rate against the prefill floor.
func TestDeploymentPrefillCapacity(t *testing.T) {
	dep := deploy(t, `
[model]
name = "qwen3-8b"
[workload]
input_tokens = 4500
output_tokens = 250
concurrency = 24
request_rate = 10
[pools.workers]
role = "aggregated"
workers = 4
gpu = "l4"
max_model_len = 8192
`)
	c := dep.pool("workers").Prefill
	// The prefill time is the engine model's (its figures are checked by hand in
	// package perf): 4,500 tokens on an idle L4 worker under vLLM, in chunks of
	// the L4's default max_num_batched_tokens, 2,048 (a GPU under 70 GiB).
	cat, _ := catalog.Load()
	m, _ := cat.Model("qwen3-8b")
	g, _ := cat.GPU("l4")
	em, err := perf.New(perf.Spec{Model: m, GPU: g, Engine: "vllm", TP: 1, Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	want := em.PrefillMS(4500, 2048)
	if math.Abs(c.PrefillMS-want) > 1e-9 || c.UncachedTokens != 4500 {
		t.Errorf("prefill %.3f ms for %d uncached tokens; the engine model gives %.3f ms for 4,500", c.PrefillMS, c.UncachedTokens, want)
	}
	// 10 requests/s × the prefill time, rounded up; capacity 4 workers × 4,500 / prefill.
	if need := int(math.Ceil(10 * want / 1000)); c.WorkersNeeded != need {
		t.Errorf("%d workers needed, want ceil(10/s × %.3f ms) = %d", c.WorkersNeeded, want, need)
	}
	if capacity := 4 * 4500 / want * 1000; c.DemandTokensPerS != 45000 || math.Abs(c.CapacityTokensPerS-capacity) > 1e-6 {
		t.Errorf("demand %.0f, capacity %.1f tokens/s; want 45,000 and %.1f", c.DemandTokensPerS, c.CapacityTokensPerS, capacity)
	}
}

// TestDeploymentEngineDefaultFraction: a pool that leaves
// gpu_memory_utilization out gets the engine's default for the version in
// use, as kvplan memory does: vLLM 0.9 before v0.21 and 0.92 from it (vLLM
// PR #38284, catalog/data/engines.toml).
func TestDeploymentEngineDefaultFraction(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    float64
	}{{"", 0.92}, {"0.31.0", 0.92}, {"0.21.0", 0.92}, {"0.19.0", 0.9}} {
		runtime := ""
		if tc.version != "" {
			runtime = "[runtime]\nengine_version = \"" + tc.version + "\"\n"
		}
		dep := deploy(t, `
[model]
name = "qwen3-8b"
[workload]
input_tokens = 1000
output_tokens = 100
[pools.workers]
role = "aggregated"
gpu = "h100-sxm"
`+runtime)
		if got := dep.pool("workers").Memory.GPUUtil; got != tc.want {
			t.Errorf("engine version %q: gpu_memory_utilization %g, want %g", tc.version, got, tc.want)
		}
	}
}

// TestDeploymentRequestPath: router.request_path = "direct" (a worker that
// runs the engine's own server) puts the engine model's fitted request cost
// where a frontend's 13 ms stands, in the TTFT of an aggregated and a
// disaggregated plan alike; by hand, 1,500 prompt tokens on the shipped
// vLLM entry cost request_ms + 1,500 × request_us_per_token / 1000.
func TestDeploymentRequestPath(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	eff, err := cat.EfficiencyFor("rtx4090", "vllm", "bf16") // the entry the engine model takes
	if err != nil {
		t.Fatal(err)
	}
	direct := eff.RequestMS + 1500*eff.RequestUSTok/1000
	for _, tc := range []struct{ name, pools string }{
		{"aggregated", "[pools.w]\nrole = \"aggregated\"\ngpu = \"rtx4090\"\n"},
		{"disaggregated", "[pools.p]\nrole = \"prefill\"\ngpu = \"rtx4090\"\n[pools.d]\nrole = \"decode\"\ngpu = \"rtx4090\"\n[link]\nname = \"pcie4-x16\"\n"},
	} {
		plan := "[model]\nname = \"qwen3-0.6b\"\n[workload]\ninput_tokens = 1500\noutput_tokens = 16\nconcurrency = 1\n" + tc.pools
		fe, dir := deploy(t, plan), deploy(t, plan+"[router]\nrequest_path = \"direct\"\n")
		if fe.PrefillMS != dir.PrefillMS || fe.PrefillMS <= 0 {
			t.Fatalf("%s: prefill %.3f and %.3f ms: the path must not move it", tc.name, fe.PrefillMS, dir.PrefillMS)
		}
		if got, want := fe.TTFTMS-dir.TTFTMS, DefaultFrontendMS-direct; math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: TTFT %.4f (frontend) − %.4f (direct) = %.4f ms, want 13 − %.4f = %.4f", tc.name, fe.TTFTMS, dir.TTFTMS, got, direct, want)
		}
	}
	if _, err := planfile.Parse("plan.toml", []byte("[model]\nname = \"qwen3-0.6b\"\n[router]\nrequest_path = \"dirct\"\n[pools.w]\ngpu = \"l4\"\n")); err == nil || !strings.Contains(err.Error(), "router.request_path") || !strings.Contains(err.Error(), "did you mean direct") {
		t.Errorf("request_path \"dirct\": %v; want an error at router.request_path with \"did you mean\"", err)
	}
}
