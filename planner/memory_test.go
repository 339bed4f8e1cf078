package planner

import (
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

const testMiB = 1 << 20

// testEngine holds the same constants as the embedded vllm engine
// (catalog/data/engines.toml), written out so that the hand arithmetic below
// does not move when the catalog is recalibrated.
func testEngine() *catalog.Engine {
	return &catalog.Engine{
		Name: "vllm", ActivationElementBytes: 2, ActivationHiddenCopies: 2, ActivationMLPCopies: 1,
		SamplerBytesPerLogit: 6, CUDAGraphMaxTokens: 512, DefaultBlockSize: 16,
		DefaultMaxNumBatchedTokens: 2048, DefaultMaxNumSeqs: 256,
		LargeGPUExclude: []string{"a100"}, LargeMaxNumBatchedTokens: 8192, LargeMaxNumSeqs: 1024,
		HostRetention: 1.25,

		NonTorchBytes:          88 * testMiB,   // 92,274,688
		CUDAGraphBaseBytes:     64 * testMiB,   // 67,108,864
		CUDAGraphPerLayerBytes: 4 * testMiB,    // 4,194,304
		LargeGPUMemoryBytes:    70 << 30,       // 75,161,927,680
		HostBaselineRSSBytes:   2560 * testMiB, // 2,684,354,560
		HostMarginBytes:        256 * testMiB,  // 268,435,456
	}
}

func qwen06() *catalog.Model {
	return &catalog.Model{Name: "qwen3-0.6b", ParamsTotal: 596_049_920, WeightDtype: "bf16", TiedEmbeddings: true,
		VocabSize: 151936, HiddenSize: 1024, AttentionHeads: 16, MaxContext: 40960, Layers: 28, KVHeads: 8, HeadDim: 128, KVDtype: "bf16"}
}

func rtx4060() *catalog.GPU {
	return &catalog.GPU{Name: "rtx4060-laptop", MemoryBytes: 8188 * testMiB} // 8,585,740,288
}

func h100() *catalog.GPU { return &catalog.GPU{Name: "h100-sxm", MemoryBytes: 81559 * testMiB} } // 85,520,809,984

// TestMemoryCalibration is the acceptance case of FACTS.md §4 on the
// embedded catalog: Qwen3-0.6B on an RTX 4060 Laptop (8,188 MiB), util 0.38,
// max-model-len 4096, enforce-eager, block 16 had 14,816 KV slots.
func TestMemoryCalibration(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Model("qwen3-0.6b")
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.GPU("rtx4060-laptop")
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.Engine("vllm")
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanMemory(MemoryScenario{Model: m, GPU: g, Engine: e, GPUUtil: 0.38, EnforceEager: true,
		MaxModelLen: 4096, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	const measured = 14816
	if d := float64(p.KVSlotsTokens)/measured - 1; d < -0.01 || d > 0.01 {
		t.Errorf("kv_slots_tokens = %d, want within 1%% of %d (off by %.2f%%)\n%s", p.KVSlotsTokens, measured, 100*d, p.Derivation)
	}
	if !p.MaxModelLenFits || !p.ModelFits || len(p.Findings) != 0 {
		t.Errorf("calibration case should start cleanly: fits %v/%v, findings %q", p.ModelFits, p.MaxModelLenFits, p.Findings)
	}
}

// TestMemoryQwenHandComputed is the calibration case with the test engine,
// every term by hand:
//
//	requested  = 8,585,740,288 × 0.38                        = 3,262,581,309 (floor)
//	weights    = 596,049,920 × 2 (tied: counted once)         = 1,192,099,840
//	mlp_width  = (596,049,920 − 151,936×1,024) / 28 / 1,024 − 128 × (2×16 + 2×8)
//	           = 440,467,456 / 28,672 − 6,144                 = 9,218.2857
//	per token  = 2 × (2 × 1,024 + 9,218.2857)                 = 22,532.5714 B
//	forward    = 2,048 × 22,532.5714                          = 46,146,706.3
//	sampler    = min(256, 2,048) × 151,936 × 6                = 233,373,696
//	activation = ceil(46,146,706.3 + 233,373,696)             = 279,520,403
//	non-torch  = 88 MiB                                       = 92,274,688
//	CUDA graphs (enforce-eager)                               = 0
//	kv         = 3,262,581,309 − 1,192,099,840 − 279,520,403 − 92,274,688 = 1,698,686,378
//	blocks     = floor(1,698,686,378 / (16 × 114,688 = 1,835,008)) = floor(925.71) = 925
//	slots      = 925 × 16 = 14,800 (−0.11% from 14,816)
//	reserve(4096) = 256 blocks × 1,835,008 = 469,762,048 → concurrency floor(3.62) = 3
//	largest max_model_len: ceil(L / 16) ≤ 925 blocks → L = 925 × 16 = 14,800
func TestMemoryQwenHandComputed(t *testing.T) {
	p, err := PlanMemory(MemoryScenario{Model: qwen06(), GPU: rtx4060(), Engine: testEngine(), GPUUtil: 0.38,
		EnforceEager: true, MaxModelLen: 4096, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{
		"requested": 3_262_581_309, "weights": 1_192_099_840, "activation": 279_520_403, "non_torch": 92_274_688,
		"cuda_graph": 0, "kv_cache": 1_698_686_378, "blocks": 925, "slots": 14_800,
		"max_len_request": 469_762_048, "concurrent": 3, "largest": 14_800,
		"batched": 2048, "seqs": 256,
	})
	if !p.MaxModelLenFits {
		t.Error("max_model_len 4096 should fit")
	}
}

// TestMemoryLlama70BTP4H100 is Llama-3.1-70B at tp 4 on H100 SXM, util 0.9,
// CUDA graphs on, max_model_len = max context 131,072:
//
//	requested  = 81,559 MiB × 0.9 = 85,520,809,984 × 0.9     = 76,968,728,985 (floor)
//	weights    = ceil(70,553,706,496 × 2 / 4)                  = 35,276,853,248
//	large GPU (≥ 70 GiB, not A100) → max_num_batched_tokens 8,192, max_num_seqs 1,024
//	mlp_width  = (70,553,706,496 − 2×128,256×8,192) / 80 / 8,192 − 128 × (2×64 + 2×8)
//	           = 68,452,360,192 / 655,360 − 18,432             = 86,018.0125
//	per token  = 2 × (2 × 8,192 + 86,018.0125 / 4)             = 75,777.00625 B
//	forward    = 8,192 × 75,777.00625                          = 620,765,235.2
//	sampler    = 1,024 × 128,256 × 6                           = 788,004,864
//	activation = ceil(620,765,235.2 + 788,004,864)             = 1,408,770,100
//	CUDA graphs= 64 MiB + 4 MiB × 80 + min(512, 2×1,024, 8,192) × 75,777.00625
//	           = 67,108,864 + 335,544,320 + 38,797,827.2 → ceil = 441,451,012
//	kv         = 76,968,728,985 − 35,276,853,248 − 1,408,770,100 − 92,274,688 − 441,451,012
//	           = 39,749,379,937 (≈ 37.0 GiB)
//	KV/token per rank = 80 × 2 × (8/4 = 2 heads) × 128 × 2     = 81,920
//	blocks     = floor(39,749,379,937 / (16 × 81,920 = 1,310,720)) = 30,326
//	slots      = 30,326 × 16                                   = 485,216
//	reserve(131,072) = 131,072 × 81,920 = 10,737,418,240 → concurrency floor(3.70) = 3
func TestMemoryLlama70BTP4H100(t *testing.T) {
	m := &catalog.Model{Name: "llama-3.1-70b", ParamsTotal: 70_553_706_496, WeightDtype: "bf16", VocabSize: 128256,
		HiddenSize: 8192, AttentionHeads: 64, MaxContext: 131072, Layers: 80, KVHeads: 8, HeadDim: 128, KVDtype: "bf16"}
	p, err := PlanMemory(MemoryScenario{Model: m, KV: models.KVOptions{TP: 4}, GPU: h100(), Engine: testEngine(),
		GPUUtil: 0.9, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{
		"requested": 76_968_728_985, "weights": 35_276_853_248, "activation": 1_408_770_100, "non_torch": 92_274_688,
		"cuda_graph": 441_451_012, "kv_cache": 39_749_379_937, "blocks": 30_326, "slots": 485_216,
		"max_len_request": 10_737_418_240, "concurrent": 3, "largest": 131072, "batched": 8192, "seqs": 1024,
		"bpt": 81_920,
	})
}

// TestMemoryDeepSeekV3MLA is an MLA model: DeepSeek-V3 at tp 8 on H200
// (143,771 MiB), util 0.9, fp8 KV, max_model_len 32,768. MLA caches one
// latent per layer, not split by tp:
//
//	requested  = 143,771 MiB × 0.9 = 150,754,820,096 × 0.9     = 135,679,338,086 (floor)
//	weights    = ceil(671,026,419,200 × 1 (fp8) / 8)           = 83,878,302,400
//	mlp_width  = (37,552,297,472 active − 2×129,280×7,168) / 61 / 7,168  (MLA: attention left in)
//	           = 35,698,939,392 / 437,248                      = 81,644.6030
//	per token  = 2 × (2 × 7,168 + 81,644.6030 / 8)             = 49,083.1508 B
//	forward    = 8,192 × 49,083.1508                           = 402,089,171.0
//	sampler    = 1,024 × 129,280 × 6                           = 794,296,320
//	activation = ceil(402,089,171.0 + 794,296,320)             = 1,196,385,492
//	CUDA graphs= 67,108,864 + 4,194,304 × 61 + 512 × 49,083.1508
//	           = 67,108,864 + 255,852,544 + 25,130,573.2 → ceil = 348,091,982
//	kv         = 135,679,338,086 − 83,878,302,400 − 1,196,385,492 − 92,274,688 − 348,091,982
//	           = 50,164,283,524
//	KV/token   = 61 × (512 + 64) × 1                           = 35,136 (FACTS.md §2, fp8)
//	blocks     = floor(50,164,283,524 / (16 × 35,136 = 562,176)) = 89,232
//	slots      = 89,232 × 16                                   = 1,427,712
//	reserve(32,768) = 32,768 × 35,136 = 1,151,336,448 → concurrency floor(43.57) = 43
func TestMemoryDeepSeekV3MLA(t *testing.T) {
	m := &catalog.Model{Name: "deepseek-v3", ParamsTotal: 671_026_419_200, ParamsActive: 37_552_297_472, WeightDtype: "fp8",
		VocabSize: 129280, HiddenSize: 7168, AttentionHeads: 128, MaxContext: 163840, Layers: 61, KVHeads: 128, HeadDim: 192,
		KVDtype: "bf16", MTPLayers: 1, MLA: &catalog.MLA{KVLoraRank: 512, QKRopeHeadDim: 64}}
	h200 := &catalog.GPU{Name: "h200", MemoryBytes: 143771 * testMiB}
	p, err := PlanMemory(MemoryScenario{Model: m, KV: models.KVOptions{TP: 8, KVDtype: "fp8"}, GPU: h200, Engine: testEngine(),
		GPUUtil: 0.9, MaxModelLen: 32768, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{
		"requested": 135_679_338_086, "weights": 83_878_302_400, "activation": 1_196_385_492,
		"cuda_graph": 348_091_982, "kv_cache": 50_164_283_524, "blocks": 89_232, "slots": 1_427_712,
		"max_len_request": 1_151_336_448, "concurrent": 43, "bpt": 35_136,
	})
}

// TestMemoryMistralSlidingWindow is Mistral-7B-v0.1, whose 32 layers all use
// a 4,096-token sliding window, on an RTX 4090 (24,564 MiB), util 0.9,
// enforce-eager, max_model_len 32,768:
//
//	requested  = 25,757,220,864 × 0.9                          = 23,181,498,777 (floor)
//	weights    = 7,241,732,096 × 2                             = 14,483,464,192
//	mlp_width  = (7,241,732,096 − 2×32,000×4,096) / 32 / 4,096 − 128 × (2×32 + 2×8)
//	           = 6,979,588,096 / 131,072 − 10,240              = 43,010.03125
//	per token  = 2 × (2 × 4,096 + 43,010.03125)                = 102,404.0625 B
//	forward    = 2,048 × 102,404.0625                          = 209,723,520
//	sampler    = 256 × 32,000 × 6                              = 49,152,000
//	activation = 258,875,520
//	kv         = 23,181,498,777 − 14,483,464,192 − 258,875,520 − 92,274,688 = 8,346,884,377
//	KV/token   = 32 × 2 × 8 × 128 × 2                          = 131,072
//	no full-attention layer: blocks = floor(8,346,884,377 / (16 × 131,072 = 2,097,152)) = 3,980
//	slots      = 3,980 × 16                                    = 63,680
//	reserve(32,768) = (ceil(min(4,096 − 1 + 2,048, 32,768) / 16) + 1) × 16 × 131,072
//	           = (384 + 1) × 2,097,152                         = 807,403,520
//	concurrency = floor(8,346,884,377 / 807,403,520) = floor(10.34) = 10
func TestMemoryMistralSlidingWindow(t *testing.T) {
	m := &catalog.Model{Name: "mistral-7b-v0.1", ParamsTotal: 7_241_732_096, WeightDtype: "bf16", VocabSize: 32000,
		HiddenSize: 4096, AttentionHeads: 32, MaxContext: 32768, Layers: 32, KVHeads: 8, HeadDim: 128, KVDtype: "bf16",
		Layout: []catalog.LayerGroup{{Kind: catalog.LayerSliding, Count: 32, Window: 4096}}}
	rtx4090 := &catalog.GPU{Name: "rtx4090", MemoryBytes: 24564 * testMiB}
	p, err := PlanMemory(MemoryScenario{Model: m, GPU: rtx4090, Engine: testEngine(), GPUUtil: 0.9, EnforceEager: true,
		MaxModelLen: 32768, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{
		"requested": 23_181_498_777, "weights": 14_483_464_192, "activation": 258_875_520, "kv_cache": 8_346_884_377,
		"blocks": 3_980, "slots": 63_680, "max_len_request": 807_403_520, "concurrent": 10, "largest": 32768,
	})
}

// TestMemoryHybridLayout checks how slots are counted in full-attention
// tokens for a model with full and sliding layers. A toy model with no
// overheads (zero engine constants, enforce-eager) isolates the KV arithmetic:
// 2 full + 2 sliding (window 32) layers, 1 kv head of dim 64, bf16, so each
// group costs 2 × 2 × 1 × 64 × 2 = 512 B per token.
//
//	kv         = 1,000,000 × 1.0 − 1,000 params × 2 B          = 998,000
//	reserve(256) = ceil(256/16) × 16 × 512                     (full: 131,072)
//	           + (ceil(min(32 − 1 + 64, 256) / 16) + 1) × 16 × 512  (sliding: (6 + 1) × 8,192 = 57,344)
//	           = 188,416 → concurrency floor(998,000 / 188,416) = 5
//	window reserve = 5 × 57,344                                = 286,720
//	blocks     = floor((998,000 − 286,720) / (16 × 512)) = floor(711,280 / 8,192) = 86
//	slots      = 86 × 16                                       = 1,376
func TestMemoryHybridLayout(t *testing.T) {
	m := &catalog.Model{Name: "toy-hybrid", ParamsTotal: 1000, WeightDtype: "bf16", MaxContext: 256, Layers: 4,
		KVHeads: 1, HeadDim: 64, KVDtype: "bf16", Layout: []catalog.LayerGroup{
			{Kind: catalog.LayerFull, Count: 2}, {Kind: catalog.LayerSliding, Count: 2, Window: 32}}}
	e := &catalog.Engine{Name: "bare", ActivationElementBytes: 2, DefaultBlockSize: 16, HostRetention: 1}
	g := &catalog.GPU{Name: "toy", MemoryBytes: 1_000_000}
	p, err := PlanMemory(MemoryScenario{Model: m, GPU: g, Engine: e, GPUUtil: 1, EnforceEager: true, BlockSize: 16,
		MaxNumBatchedTokens: 64, MaxNumSeqs: 4})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{
		"requested": 1_000_000, "weights": 2000, "activation": 0, "kv_cache": 998_000, "max_len_request": 188_416,
		"concurrent": 5, "blocks": 86, "slots": 1376, "largest": 256,
	})
}

// TestMemoryMaxModelLenDoesNotFit: the calibration setup at the model's full
// 40,960-token context. One request needs 40,960 × 114,688 = 4,697,620,480 B
// but 1,698,686,378 B are available (TestMemoryQwenHandComputed), so vLLM
// refuses to start; the largest length is 925 blocks × 16 = 14,800 tokens.
func TestMemoryMaxModelLenDoesNotFit(t *testing.T) {
	p, err := PlanMemory(MemoryScenario{Model: qwen06(), GPU: rtx4060(), Engine: testEngine(), GPUUtil: 0.38,
		EnforceEager: true, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxModelLenFits || !p.ModelFits {
		t.Errorf("max_model_len_fits = %v, model_fits = %v; want false, true", p.MaxModelLenFits, p.ModelFits)
	}
	checkInts(t, p, map[string]int64{"max_len_request": 4_697_620_480, "largest": 14_800, "concurrent": 0, "slots": 14_800})
	if len(p.Findings) != 1 || !strings.Contains(p.Findings[0], "vLLM will refuse to start") ||
		!strings.Contains(p.Findings[0], "largest max_model_len that fits is 14800") {
		t.Errorf("findings = %q", p.Findings)
	}
}

// TestMemoryModelDoesNotFit: Llama-3.1-70B without tensor parallelism on one
// H100 needs 141,107,412,992 B of weights, more than the 76,968,728,985 B
// requested: a finding, not an error.
func TestMemoryModelDoesNotFit(t *testing.T) {
	m := &catalog.Model{Name: "llama-3.1-70b", ParamsTotal: 70_553_706_496, WeightDtype: "bf16", VocabSize: 128256,
		HiddenSize: 8192, AttentionHeads: 64, MaxContext: 131072, Layers: 80, KVHeads: 8, HeadDim: 128, KVDtype: "bf16"}
	p, err := PlanMemory(MemoryScenario{Model: m, GPU: h100(), Engine: testEngine(), GPUUtil: 0.9, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if p.ModelFits || p.MaxModelLenFits {
		t.Errorf("model_fits = %v, max_model_len_fits = %v; want false", p.ModelFits, p.MaxModelLenFits)
	}
	checkInts(t, p, map[string]int64{"weights": 141_107_412_992, "kv_cache": 0, "blocks": 0, "slots": 0, "concurrent": 0, "largest": 0})
	if len(p.Findings) != 1 || !strings.Contains(p.Findings[0], "model does not fit") {
		t.Errorf("findings = %q", p.Findings)
	}
}

// TestMemoryHostOOM is the measured failure of FACTS.md §4: a 3,584 MiB
// prefill worker staging Qwen3-0.6B requests of 2,371 tokens at concurrency 4.
//
//	request KV = 2,371 × 114,688                               = 271,925,248 (~272 MB)
//	staged     = 4 × 271,925,248 × 1.25                        = 1,359,626,240
//	required   = 2,684,354,560 + 1,359,626,240 + 268,435,456   = 4,312,416,256
//	limit      = 3,584 MiB                                     = 3,758,096,384
//	headroom   = 3,758,096,384 − 4,312,416,256                 = −554,319,872
//	max safe   = floor((3,758,096,384 − 2,684,354,560 − 268,435,456) / (271,925,248 × 1.25))
//	           = floor(805,306,368 / 339,906,560) = floor(2.37) = 2
//	min limit  = ceil(4,312,416,256 / 1 MiB) = 4,113 MiB       = 4,312,793,088
//	decode     = 4 × 271,925,248                               = 1,087,700,992
func TestMemoryHostOOM(t *testing.T) {
	p, err := PlanMemory(MemoryScenario{Model: qwen06(), GPU: rtx4060(), Engine: testEngine(), GPUUtil: 0.38,
		EnforceEager: true, MaxModelLen: 4096, BlockSize: 16,
		LimitBytes: 3584 * testMiB, KVBuffer: KVBufferCPU, Concurrency: 4, InputTokens: 2371})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{
		"request_kv": 271_925_248, "staged": 1_359_626_240, "required": 4_312_416_256, "limit": 3_758_096_384,
		"headroom": -554_319_872, "max_safe": 2, "min_limit": 4_312_793_088, "decode": 1_087_700_992,
	})
	if p.HostFits {
		t.Error("host_fits = true, want false")
	}
	if len(p.Findings) != 1 || !strings.HasPrefix(p.Findings[0], "OOM risk") ||
		!strings.Contains(p.Findings[0], "at most 2 request(s)") || !strings.Contains(p.Findings[0], "4113Mi") {
		t.Errorf("findings = %q", p.Findings)
	}

	// The same worker without staging (GPU buffer) fits, as it did in every
	// KV-routing test: required = 2,684,354,560 + 268,435,456 = 2,952,790,016,
	// headroom = 3,758,096,384 − 2,952,790,016 = 805,306,368.
	p, err = PlanMemory(MemoryScenario{Model: qwen06(), GPU: rtx4060(), Engine: testEngine(), GPUUtil: 0.38,
		EnforceEager: true, MaxModelLen: 4096, BlockSize: 16,
		LimitBytes: 3584 * testMiB, KVBuffer: KVBufferGPU, Concurrency: 4, InputTokens: 2371})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{"staged": 0, "required": 2_952_790_016, "headroom": 805_306_368, "max_safe": -1})
	if !p.HostFits || len(p.Findings) != 0 {
		t.Errorf("host_fits = %v, findings %q; want true, none", p.HostFits, p.Findings)
	}

	// A measured baseline overrides the engine's: 1,500 MiB = 1,572,864,000.
	// required = 1,572,864,000 + 1,359,626,240 + 268,435,456 = 3,200,925,696 ≤ 3,758,096,384;
	// max safe = floor((3,758,096,384 − 1,572,864,000 − 268,435,456) / 339,906,560) = floor(5.64) = 5.
	p, err = PlanMemory(MemoryScenario{Model: qwen06(), GPU: rtx4060(), Engine: testEngine(), GPUUtil: 0.38,
		EnforceEager: true, MaxModelLen: 4096, BlockSize: 16, BaselineRSSBytes: 1500 * testMiB,
		LimitBytes: 3584 * testMiB, KVBuffer: KVBufferCPU, Concurrency: 4, InputTokens: 2371})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{"required": 3_200_925_696, "headroom": 557_170_688, "max_safe": 5})
	if !p.HostFits {
		t.Error("host_fits = false with a 1,500 MiB baseline")
	}
}

// TestMemoryHostTP: with tensor parallelism every rank stages its share, so
// the worker's request KV is per-rank KV × tp. Llama-3.1-70B tp 4: 1,000
// tokens × 81,920 B × 4 = 327,680,000 (= 1,000 × 327,680, FACTS.md §2).
// No limit: max safe concurrency is unbounded (-1), headroom 0.
func TestMemoryHostTP(t *testing.T) {
	m := &catalog.Model{Name: "llama-3.1-70b", ParamsTotal: 70_553_706_496, WeightDtype: "bf16", VocabSize: 128256,
		HiddenSize: 8192, AttentionHeads: 64, MaxContext: 131072, Layers: 80, KVHeads: 8, HeadDim: 128, KVDtype: "bf16"}
	p, err := PlanMemory(MemoryScenario{Model: m, KV: models.KVOptions{TP: 4}, GPU: h100(), Engine: testEngine(),
		GPUUtil: 0.9, BlockSize: 16, KVBuffer: KVBufferCPU, Concurrency: 2, InputTokens: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// staged = 2 × 327,680,000 × 1.25 = 819,200,000; required = 2,684,354,560 + 819,200,000 + 268,435,456 = 3,771,990,016
	checkInts(t, p, map[string]int64{"request_kv": 327_680_000, "staged": 819_200_000, "required": 3_771_990_016,
		"limit": 0, "headroom": 0, "max_safe": -1, "min_limit": 3_772_776_448})
}

func TestMemoryInputErrors(t *testing.T) {
	base := func() MemoryScenario {
		return MemoryScenario{Model: qwen06(), GPU: rtx4060(), Engine: testEngine(), GPUUtil: 0.38, BlockSize: 16, MaxModelLen: 4096}
	}
	cases := []struct {
		name string
		edit func(*MemoryScenario)
		want string
	}{
		{"util zero", func(s *MemoryScenario) { s.GPUUtil = 0 }, "outside (0, 1]"},
		{"util above one", func(s *MemoryScenario) { s.GPUUtil = 1.2 }, "outside (0, 1]"},
		{"util negative", func(s *MemoryScenario) { s.GPUUtil = -0.5 }, "outside (0, 1]"},
		{"negative limit", func(s *MemoryScenario) { s.LimitBytes = -1 }, "negative"},
		{"kv buffer", func(s *MemoryScenario) { s.KVBuffer = "cuda" }, `kv buffer "cuda" is not one of cpu, gpu`},
		{"zero block size", func(s *MemoryScenario) { s.BlockSize = 0 }, "block size must be > 0"},
		{"negative block size", func(s *MemoryScenario) { s.BlockSize = -16 }, "block size must be > 0"},
		{"max len above context", func(s *MemoryScenario) { s.MaxModelLen = 50000 }, "above qwen3-0.6b's max context 40960"},
		{"negative concurrency", func(s *MemoryScenario) { s.Concurrency = -1 }, "concurrency"},
		{"negative input tokens", func(s *MemoryScenario) { s.InputTokens = -1 }, "input tokens"},
		{"negative baseline", func(s *MemoryScenario) { s.BaselineRSSBytes = -1 }, "baseline"},
		{"no engine", func(s *MemoryScenario) { s.Engine = nil }, "no engine"},
		{"no gpu", func(s *MemoryScenario) { s.GPU = nil }, "no GPU"},
		{"kv dtype", func(s *MemoryScenario) { s.KV.KVDtype = "int4" }, "kv dtype"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := base()
			c.edit(&sc)
			_, err := PlanMemory(sc)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := PlanMemory(base()); err != nil {
		t.Errorf("base scenario: %v", err)
	}
}

// TestMemoryLargeGPUDefaults: an A100 80GB keeps vLLM's small defaults
// although it has more than 70 GiB; an H100 gets the large ones.
func TestMemoryLargeGPUDefaults(t *testing.T) {
	a100 := &catalog.GPU{Name: "a100-80gb", MemoryBytes: 81920 * testMiB}
	for _, c := range []struct {
		gpu           *catalog.GPU
		batched, seqs int64
	}{{a100, 2048, 256}, {h100(), 8192, 1024}, {rtx4060(), 2048, 256}} {
		p, err := PlanMemory(MemoryScenario{Model: qwen06(), GPU: c.gpu, Engine: testEngine(), GPUUtil: 0.5, BlockSize: 16})
		if err != nil {
			t.Fatal(err)
		}
		if int64(p.MaxNumBatchedTokens) != c.batched || int64(p.MaxNumSeqs) != c.seqs {
			t.Errorf("%s: defaults %d/%d, want %d/%d", c.gpu.Name, p.MaxNumBatchedTokens, p.MaxNumSeqs, c.batched, c.seqs)
		}
	}
}

// TestMemoryDerivationComplete: every JSON figure of the contract is
// explained in the derivation.
func TestMemoryDerivationComplete(t *testing.T) {
	p, err := PlanMemory(MemoryScenario{Model: qwen06(), GPU: rtx4060(), Engine: testEngine(), GPUUtil: 0.38,
		MaxModelLen: 4096, BlockSize: 16, LimitBytes: 3584 * testMiB, KVBuffer: KVBufferCPU, Concurrency: 4, InputTokens: 2371})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range p.Derivation {
		have[f.Name] = true
	}
	for _, n := range []string{"kv_slots_tokens", "kv_blocks", "kv_cache_bytes", "weights_bytes", "max_concurrent_at_max_len",
		"host_required_bytes", "host_headroom_bytes", "max_safe_concurrency", "min_safe_limit_bytes", "requested_bytes",
		"activation_bytes", "non_torch_bytes", "cuda_graph_bytes", "largest_fitting_max_model_len", "decode_staged_bytes"} {
		if !have[n] {
			t.Errorf("derivation lacks %s", n)
		}
	}
}

func checkInts(t *testing.T, p *MemoryPlan, want map[string]int64) {
	t.Helper()
	got := map[string]int64{
		"requested": p.RequestedBytes, "weights": p.WeightsBytes, "activation": p.ActivationBytes,
		"non_torch": p.NonTorchBytes, "cuda_graph": p.CUDAGraphBytes, "kv_cache": p.KVCacheBytes,
		"blocks": p.KVBlocks, "slots": p.KVSlotsTokens, "max_len_request": p.MaxModelLenRequestBytes,
		"concurrent": p.MaxConcurrentAtMaxLen, "largest": int64(p.LargestFittingMaxModelLen),
		"batched": int64(p.MaxNumBatchedTokens), "seqs": int64(p.MaxNumSeqs), "bpt": p.KVBytesPerToken,
		"request_kv": p.RequestKVBytes, "staged": p.HostStagedBytes, "required": p.HostRequiredBytes,
		"limit": p.HostLimitBytes, "headroom": p.HostHeadroomBytes, "max_safe": p.MaxSafeConcurrency,
		"min_limit": p.MinSafeLimitBytes, "decode": p.DecodeStagedBytes,
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Fatalf("checkInts: unknown figure %q", k)
		}
		if g != w {
			t.Errorf("%s = %d, want %d", k, g, w)
		}
	}
	if t.Failed() {
		t.Logf("derivation:\n%s", p.Derivation)
	}
}
