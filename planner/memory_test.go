package planner

import (
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

const testMiB = 1 << 20

// testEngine holds the constants of the embedded vllm >= 0.21 profile
// (catalog/data/engines.toml), written out so that the hand arithmetic below
// does not move when the catalog is recalibrated.
func testEngine() *catalog.Engine {
	return &catalog.Engine{
		Name: "vllm", Family: catalog.FamilyVLLM, MemoryFraction: 0.92, MemoryFractionFlag: "--gpu-memory-utilization",
		ActivationHiddenCopies: 4.26, ActivationMLPCopies: 1, ActivationKeptHiddenCopies: 1, MoEWorkspaceCopies: 1,
		PPBufferHiddenCopies: 2, SamplerBytesPerLogit: 4, CUDAGraphsCharged: true, CUDAGraphMaxTokens: 512, DefaultBlockSize: 16,
		DefaultMaxNumBatchedTokens: 2048, DefaultMaxNumSeqs: 256,
		LargeGPUExclude: []string{"a100"}, LargeMaxNumBatchedTokens: 8192, LargeMaxNumSeqs: 1024,
		HostRetention: 1.25,

		NonTorchBytes:          256 * testMiB, // 268,435,456
		NonTorchEagerBytes:     45 * testMiB,  // 47,185,920
		NonTorchEager:          "45MiB",
		NonTorchPPBytes:        72 * testMiB,                                                                      // 75,497,472
		NonTorchTPBytes:        []catalog.TPBytes{{TP: 2, Bytes: 2120 * testMiB}, {TP: 4, Bytes: 2222 * testMiB}}, // 2,222 MiB = 2,329,935,872
		CUDAGraphBaseBytes:     395 * testMiB,                                                                     // 414,187,520
		CUDAGraphPerLayerBytes: 17 * testMiB,                                                                      // 17,825,792
		LargeGPUMemoryBytes:    70 << 30,                                                                          // 75,161,927,680
		HostBaselineRSSBytes:   2560 * testMiB,                                                                    // 2,684,354,560
		HostMarginBytes:        256 * testMiB,                                                                     // 268,435,456
	}
}

func qwen06() *catalog.Model {
	return &catalog.Model{Name: "qwen3-0.6b", ParamsTotal: 596_049_920, WeightDtype: "bf16", TiedEmbeddings: true,
		VocabSize: 151936, HiddenSize: 1024, AttentionHeads: 16, MaxContext: 40960, Layers: 28, KVHeads: 8, HeadDim: 128, KVDtype: "bf16"}
}

// rtx4060 is the FACTS.md §4 laptop GPU: 8,188 MiB in nvidia-smi, 7,973 MiB
// as CUDA sees it (the catalog's estimate).
func rtx4060() *catalog.GPU {
	return &catalog.GPU{Name: "rtx4060-laptop", MemoryBytes: 8188 * testMiB, CUDAMemoryBytes: 7973 * testMiB} // 8,360,296,448
}

// h100 is the H100 SXM: 81,559 MiB in nvidia-smi, 79.19 GiB (85,029,615,042 B) in CUDA.
func h100() *catalog.GPU {
	return &catalog.GPU{Name: "h100-sxm", MemoryBytes: 81559 * testMiB, CUDAMemoryBytes: 85_029_615_042}
}

// TestMemoryCalibration is the acceptance case of FACTS.md §4 on the
// embedded catalog at its default (newest) vLLM version, which the field
// study's vLLM 0.30/0.31 falls in: Qwen3-0.6B on an RTX 4060 Laptop, util
// 0.38, max-model-len 4096, enforce-eager, block 16 had 14,816 KV slots.
//
// The profile's non_torch_eager is fitted on this case (the interval of
// values that give 926 blocks is 44.1-45.8 MiB; TestMemoryQwenHandComputed
// writes the arithmetic out), so this is the calibration, not a check, of
// that one constant; the other terms come from the 0.19 logs and the sources.
func TestMemoryCalibration(t *testing.T) {
	c, m, g := modelOnGPU(t, "qwen3-0.6b", "rtx4060-laptop")
	e, v, err := c.EngineVersion("vllm", "")
	if err != nil {
		t.Fatal(err)
	}
	if !e.Holds("0.30.0") || !e.Holds("0.31.0") {
		t.Fatalf("default vllm entry %s does not hold the field study's 0.30/0.31", e.Range())
	}
	p, err := PlanMemory(MemoryScenario{Model: m, GPU: g, Engine: e, EngineVersion: v, GPUUtil: 0.38,
		EnforceEager: true, MaxModelLen: 4096, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	const measured = 14816
	if d := float64(p.KVSlotsTokens-measured) / measured; d < -0.01 || d > 0.01 {
		t.Errorf("kv_slots_tokens = %d, want within 1%% of %d (off by %.2f%%)\n%s", p.KVSlotsTokens, measured, 100*d, p.Derivation)
	}
}

// TestMemoryQwenHandComputed writes the FACTS.md §4 case out with the
// testEngine constants (vLLM >= 0.21), CUDA total 7,973 MiB:
//
//	requested  = 8,360,296,448 × 0.38                         = 3,176,912,650 (floor)
//	weights    = 596,049,920 × 2 (tied: counted once)         = 1,192,099,840
//	mlp_width  = (596,049,920 − 151,936×1,024) / 28 / 1,024 − 128 × (2×16 + 2×8)
//	           = 440,467,456 / 28,672 − 6,144                 = 9,218.2857
//	forward    = 2,048 × 2 × (4.26 × 1,024 + 9,218.2857)      = 55,625,833.3
//	sampler    = min(256, 2,048) × 151,936 × (4 + 2) + 2,048 × 1,024 × 2 × 1
//	           = 233,373,696 + 4,194,304                      = 237,568,000
//	activation = ceil(max(55,625,833.3, 237,568,000))         = 237,568,000
//	non-torch  = non_torch_eager 45 MiB                       = 47,185,920
//	CUDA graphs (enforce-eager)                               = 0
//	kv         = 3,176,912,650 − 1,192,099,840 − 237,568,000 − 47,185,920 = 1,700,058,890
//	blocks     = floor(1,700,058,890 / (16 × 114,688 = 1,835,008)) = floor(926.46) = 926
//	slots      = 926 × 16 = 14,816 (the measured figure)
//	(926 blocks need kv in [1,699,217,408, 1,701,052,416): non-torch in (46,192,394, 48,027,402] B = 44.1-45.8 MiB)
//	reserve(4096) = 256 blocks × 1,835,008 = 469,762,048 → concurrency floor(3.62) = 3
//	largest max_model_len: ceil(L / 16) ≤ 926 blocks → L = 926 × 16 = 14,816
func TestMemoryQwenHandComputed(t *testing.T) {
	p, err := PlanMemory(MemoryScenario{Model: qwen06(), GPU: rtx4060(), Engine: testEngine(), GPUUtil: 0.38,
		EnforceEager: true, MaxModelLen: 4096, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{
		"requested": 3_176_912_650, "weights": 1_192_099_840, "activation": 237_568_000, "non_torch": 47_185_920,
		"cuda_graph": 0, "kv_cache": 1_700_058_890, "blocks": 926, "slots": 14_816, "engine_tokens": 14_816,
		"max_len_request": 469_762_048, "concurrent": 3, "largest": 14_816,
		"batched": 2048, "seqs": 256,
	})
	if !p.MaxModelLenFits {
		t.Error("max_model_len 4096 should fit")
	}
}

// TestMemoryLlama70BTP4H100 is Llama-3.1-70B at tp 4 on H100 SXM (CUDA
// 79.19 GiB), util 0.9, CUDA graphs on and charged (vLLM >= 0.21),
// max_model_len = max context 131,072:
//
//	requested  = 85,029,615,042 × 0.9                          = 76,526,653,537 (floor)
//	weights    = ceil(70,553,706,496 × 2 / 4)                  = 35,276,853,248
//	large GPU (≥ 70 GiB, not A100) → max_num_batched_tokens 8,192, max_num_seqs 1,024
//	mlp_width  = (70,553,706,496 − 2×128,256×8,192) / 80 / 8,192 − 128 × (2×64 + 2×8)
//	           = 68,452,360,192 / 655,360 − 18,432             = 86,018.0125
//	forward    = 8,192 × 2 × (4.26 × 8,192 + 86,018.0125 / 4)  = 924,097,300.5
//	sampler    = 1,024 × 128,256 × (4 + 2) + 8,192 × 8,192 × 2 = 788,004,864 + 134,217,728 = 922,222,592
//	activation = ceil(max(924,097,300.5, 922,222,592))         = 924,097,301
//	non-torch  = non_torch_tp[4] 2,222 MiB                     = 2,329,935,872
//	CUDA graphs= 395 MiB + 17 MiB × 80                         = 1,840,250,880
//	kv         = 76,526,653,537 − 35,276,853,248 − 924,097,301 − 2,329,935,872 − 1,840,250,880
//	           = 36,155,516,236
//	KV/token per rank = 80 × 2 × (8/4 = 2 heads) × 128 × 2     = 81,920
//	blocks     = floor(36,155,516,236 / (16 × 81,920 = 1,310,720)) = 27,584
//	slots      = 27,584 × 16                                   = 441,344
//	reserve(131,072) = 131,072 × 81,920 = 10,737,418,240 → concurrency floor(3.37) = 3
func TestMemoryLlama70BTP4H100(t *testing.T) {
	m := &catalog.Model{Name: "llama-3.1-70b", ParamsTotal: 70_553_706_496, WeightDtype: "bf16", VocabSize: 128256,
		HiddenSize: 8192, AttentionHeads: 64, MaxContext: 131072, Layers: 80, KVHeads: 8, HeadDim: 128, KVDtype: "bf16"}
	p, err := PlanMemory(MemoryScenario{Model: m, KV: models.KVOptions{TP: 4}, GPU: h100(), Engine: testEngine(),
		GPUUtil: 0.9, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{
		"requested": 76_526_653_537, "weights": 35_276_853_248, "activation": 924_097_301, "non_torch": 2_329_935_872,
		"cuda_graph": 1_840_250_880, "kv_cache": 36_155_516_236, "blocks": 27_584, "slots": 441_344, "engine_tokens": 441_344,
		"max_len_request": 10_737_418_240, "concurrent": 3, "largest": 131072, "batched": 8192, "seqs": 1024,
		"bpt": 81_920,
	})
}

// TestMemoryDeepSeekV3MLA is an MLA mixture of experts: DeepSeek-V3 at tp 8
// on H200 (CUDA 139.80 GiB = 150,109,106,995 B), util 0.9, fp8 weights (the
// quantized layout: linear layers 1 B, embeddings 2 B), fp8 KV,
// max_model_len 32,768. MLA caches one latent per layer, not split by tp:
//
//	requested  = 150,109,106,995 × 0.9                         = 135,098,196,295 (floor)
//	weights    = ceil(((671,026,419,200 − 2×129,280×7,168) × 1 + 2×129,280×7,168 × 2) / 8)
//	           = ceil((669,173,061,120 + 3,706,716,160) / 8)   = 84,109,972,160
//	mlp_width  = (37,552,297,472 active − 2×129,280×7,168) / 61 / 7,168  (MLA: attention left in)
//	           = 35,698,939,392 / 437,248                      = 81,644.6030
//	forward    = 8,192 × 2 × 4.26 × 7,168 (MoE: no dense MLP term) = 500,296,581.1
//	sampler    = 1,024 × 129,280 × (4 + 2) + 8,192 × 7,168 × 2 = 794,296,320 + 117,440,512 = 911,736,832
//	MoE workspace = 8,192 × 2 × 1 × 81,644.6030 / 8            = 167,208,147.0
//	activation = ceil(911,736,832 + 167,208,147.0)             = 1,078,944,980
//	non-torch  = non_torch_tp[4] (the largest key ≤ 8)         = 2,329,935,872
//	CUDA graphs= 414,187,520 + 17,825,792 × 61                 = 1,501,560,832
//	kv         = 135,098,196,295 − 84,109,972,160 − 1,078,944,980 − 2,329,935,872 − 1,501,560,832
//	           = 46,077,782,451
//	KV/token   = 61 × (512 + 64) × 1                           = 35,136 (FACTS.md §2, fp8)
//	blocks     = floor(46,077,782,451 / (16 × 35,136 = 562,176)) = 81,963
//	slots      = 81,963 × 16                                   = 1,311,408
//	reserve(32,768) = 32,768 × 35,136 = 1,151,336,448 → concurrency floor(40.02) = 40
func TestMemoryDeepSeekV3MLA(t *testing.T) {
	m := &catalog.Model{Name: "deepseek-v3", ParamsTotal: 671_026_419_200, ParamsActive: 37_552_297_472, WeightDtype: "fp8",
		VocabSize: 129280, HiddenSize: 7168, AttentionHeads: 128, MaxContext: 163840, Layers: 61, KVHeads: 128, HeadDim: 192,
		KVDtype: "bf16", MTPLayers: 1, MLA: &catalog.MLA{KVLoraRank: 512, QKRopeHeadDim: 64}}
	h200 := &catalog.GPU{Name: "h200", MemoryBytes: 143771 * testMiB, CUDAMemoryBytes: 150_109_106_995}
	p, err := PlanMemory(MemoryScenario{Model: m, KV: models.KVOptions{TP: 8, KVDtype: "fp8"}, GPU: h200, Engine: testEngine(),
		GPUUtil: 0.9, MaxModelLen: 32768, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{
		"requested": 135_098_196_295, "weights": 84_109_972_160, "activation": 1_078_944_980,
		"cuda_graph": 1_501_560_832, "kv_cache": 46_077_782_451, "blocks": 81_963, "slots": 1_311_408,
		"max_len_request": 1_151_336_448, "concurrent": 40, "bpt": 35_136,
	})
}

// TestMemoryMistralSlidingWindow is Mistral-7B-v0.1, whose 32 layers all use
// a 4,096-token sliding window, on an RTX 4090 (CUDA 23.64 GiB =
// 25,383,256,719 B), util 0.9, enforce-eager, max_model_len 32,768:
//
//	requested  = 25,383,256,719 × 0.9                          = 22,844,931,047 (floor)
//	weights    = 7,241,732,096 × 2                             = 14,483,464,192
//	mlp_width  = (7,241,732,096 − 2×32,000×4,096) / 32 / 4,096 − 128 × (2×32 + 2×8)
//	           = 6,979,588,096 / 131,072 − 10,240              = 43,010.03125
//	forward    = 2,048 × 2 × (4.26 × 4,096 + 43,010.03125)     = 247,640,028.2
//	sampler    = 256 × 32,000 × 6 + 2,048 × 4,096 × 2          = 49,152,000 + 16,777,216 = 65,929,216
//	activation = ceil(247,640,028.2)                           = 247,640,029
//	non-torch  = non_torch_eager                               = 47,185,920
//	kv         = 22,844,931,047 − 14,483,464,192 − 247,640,029 − 47,185,920 = 8,066,640,906
//	KV/token   = 32 × 2 × 8 × 128 × 2                          = 131,072
//	no full-attention layer: blocks = floor(8,066,640,906 / (16 × 131,072 = 2,097,152)) = 3,846
//	slots      = 3,846 × 16                                    = 61,536
//	reserve(32,768) = (ceil(min(4,096 − 1 + 2,048, 32,768) / 16) + 1) × 16 × 131,072
//	           = (384 + 1) × 2,097,152                         = 807,403,520
//	concurrency = floor(8,066,640,906 / 807,403,520) = floor(9.99) = 9
func TestMemoryMistralSlidingWindow(t *testing.T) {
	m := &catalog.Model{Name: "mistral-7b-v0.1", ParamsTotal: 7_241_732_096, WeightDtype: "bf16", VocabSize: 32000,
		HiddenSize: 4096, AttentionHeads: 32, MaxContext: 32768, Layers: 32, KVHeads: 8, HeadDim: 128, KVDtype: "bf16",
		Layout: []catalog.LayerGroup{{Kind: catalog.LayerSliding, Count: 32, Window: 4096}}}
	rtx4090 := &catalog.GPU{Name: "rtx4090", MemoryBytes: 24564 * testMiB, CUDAMemoryBytes: 25_383_256_719}
	p, err := PlanMemory(MemoryScenario{Model: m, GPU: rtx4090, Engine: testEngine(), GPUUtil: 0.9, EnforceEager: true,
		MaxModelLen: 32768, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{
		"requested": 22_844_931_047, "weights": 14_483_464_192, "activation": 247_640_029, "kv_cache": 8_066_640_906,
		"blocks": 3_846, "slots": 61_536, "engine_tokens": 61_536, "max_len_request": 807_403_520, "concurrent": 9, "largest": 32768,
	})
}

// TestMemoryHybridLayout checks how slots are counted in full-attention
// tokens for a model with full and sliding layers, and how vLLM reports its
// cache size for it. A toy model with no overheads (zero engine constants,
// enforce-eager) isolates the KV arithmetic: 2 full + 2 sliding (window 32)
// layers, 1 kv head of dim 64, bf16, so each group costs 2 × 2 × 1 × 64 × 2
// = 512 B per token (256 B per layer).
//
//	kv         = 1,000,000 × 1.0 − 1,000 params × 2 B          = 998,000
//	reserve(256) = ceil(256/16) × 16 × 512                     (full: 131,072)
//	           + (ceil(min(32 − 1 + 64, 256) / 16) + 1) × 16 × 512  (sliding: (6 + 1) × 8,192 = 57,344)
//	           = 188,416 → concurrency floor(998,000 / 188,416) = 5
//	window reserve = 5 × 57,344                                = 286,720
//	blocks     = floor((998,000 − 286,720) / (16 × 512)) = floor(711,280 / 8,192) = 86
//	slots      = 86 × 16                                       = 1,376
//	vLLM's grouping: 2 full, 2 sliding → group size 2, 2 groups; blocks of one
//	pool = floor(998,000 / (16 × 256 × 2)) = 121; reported floor(121 / 2) × 16 = 960
func TestMemoryHybridLayout(t *testing.T) {
	m := &catalog.Model{Name: "toy-hybrid", ParamsTotal: 1000, WeightDtype: "bf16", MaxContext: 256, Layers: 4,
		KVHeads: 1, HeadDim: 64, KVDtype: "bf16", Layout: []catalog.LayerGroup{
			{Kind: catalog.LayerFull, Count: 2}, {Kind: catalog.LayerSliding, Count: 2, Window: 32}}}
	e := &catalog.Engine{Name: "bare", Family: catalog.FamilyVLLM, DefaultBlockSize: 16, HostRetention: 1}
	g := &catalog.GPU{Name: "toy", MemoryBytes: 1_000_000, CUDAMemoryBytes: 1_000_000}
	p, err := PlanMemory(MemoryScenario{Model: m, GPU: g, Engine: e, GPUUtil: 1, EnforceEager: true, BlockSize: 16,
		MaxNumBatchedTokens: 64, MaxNumSeqs: 4})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{
		"requested": 1_000_000, "weights": 2000, "activation": 0, "kv_cache": 998_000, "max_len_request": 188_416,
		"concurrent": 5, "blocks": 86, "slots": 1376, "largest": 256, "engine_tokens": 960,
	})
}

// TestMemoryMaxModelLenDoesNotFit: the calibration setup at the model's full
// 40,960-token context. One request needs 40,960 × 114,688 = 4,697,620,480 B
// but 1,700,058,890 B are available (TestMemoryQwenHandComputed), so vLLM
// refuses to start; the largest length is 926 blocks × 16 = 14,816 tokens.
func TestMemoryMaxModelLenDoesNotFit(t *testing.T) {
	p, err := PlanMemory(MemoryScenario{Model: qwen06(), GPU: rtx4060(), Engine: testEngine(), GPUUtil: 0.38,
		EnforceEager: true, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxModelLenFits || !p.ModelFits {
		t.Errorf("max_model_len_fits = %v, model_fits = %v; want false, true", p.MaxModelLenFits, p.ModelFits)
	}
	checkInts(t, p, map[string]int64{"max_len_request": 4_697_620_480, "largest": 14_816, "concurrent": 0, "slots": 14_816})
	if len(p.Findings) != 1 || !strings.Contains(p.Findings[0], "vllm will refuse to start") ||
		!strings.Contains(p.Findings[0], "largest max_model_len that fits is 14816") {
		t.Errorf("findings = %q", p.Findings)
	}
}

// TestMemoryModelDoesNotFit: Llama-3.1-70B without tensor parallelism on one
// H100 needs 141,107,412,992 B of weights, more than the 76,526,653,537 B
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
		{"util above one", func(s *MemoryScenario) { s.GPUUtil = 1.2 }, "outside (0, 1]"},
		{"util negative", func(s *MemoryScenario) { s.GPUUtil = -0.5 }, "outside (0, 1]"},
		{"negative limit", func(s *MemoryScenario) { s.LimitBytes = -1 }, "negative"},
		{"kv buffer", func(s *MemoryScenario) { s.KVBuffer = "cuda" }, `kv buffer "cuda" is not one of cpu, gpu`},
		{"negative pp", func(s *MemoryScenario) { s.PP = -1 }, "pp must be >= 1"},
		{"pp above layers", func(s *MemoryScenario) { s.PP = 29 }, "more than qwen3-0.6b's 28 layers"},
		{"dtype", func(s *MemoryScenario) { s.Dtype = "fp8" }, `dtype "fp8" is not one of fp32, fp16, bf16`},
		{"quantization", func(s *MemoryScenario) { s.Quantization = "int3" }, `quantization "int3" is not one of`},
		{"negative offload", func(s *MemoryScenario) { s.CPUOffloadCacheBytes = -1 }, "cpu offload cache"},
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
	a100 := &catalog.GPU{Name: "a100-80gb", MemoryBytes: 81920 * testMiB, CUDAMemoryBytes: 85_094_039_552}
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
		"min_limit": p.MinSafeLimitBytes, "decode": p.DecodeStagedBytes, "engine_tokens": p.EngineKVTokens,
		"offload": p.HostOffloadBytes,
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

func qwen32b() *catalog.Model {
	return &catalog.Model{Name: "qwen3-32b", ParamsTotal: 32_762_123_264, WeightDtype: "bf16", VocabSize: 151936, HiddenSize: 5120,
		AttentionHeads: 64, MaxContext: 40960, Layers: 64, KVHeads: 8, HeadDim: 128, KVDtype: "bf16"}
}

// sglangEngine holds the embedded sglang entry's constants, written out.
func sglangEngine() *catalog.Engine {
	return &catalog.Engine{Name: "sglang", Family: catalog.FamilySGLang, DefaultBlockSize: 1, DefaultMaxNumBatchedTokens: 8192,
		DefaultMaxNumSeqs: 256, HostRetention: 1.25, HostBaselineRSSBytes: 2560 * testMiB, HostMarginBytes: 256 * testMiB,
		InitOverheadBytes: 522 * testMiB, InitOverheadTPBytes: 1567 * testMiB,
		ReserveBaseBytes: 512 * testMiB, ReservePerPrefillTokenBytes: 3 * testMiB / 2, ReservePerGraphBatchBytes: 2 * testMiB,
		ReservePer8RanksBytes: 1024 * testMiB, ReserveFloorBytes: 10 << 30, ReserveFloorAboveBytes: 60 << 30,
		FractionBuckets: []catalog.FractionBucket{
			{Below: "20GiB", BelowBytes: 20 << 30, ChunkedPrefillSize: 2048, CUDAGraphMaxBS: 8},
			{Below: "35GiB", BelowBytes: 35 << 30, ChunkedPrefillSize: 2048, CUDAGraphMaxBS: 24, CUDAGraphMaxBSTP4: 80},
			{Below: "60GiB", BelowBytes: 60 << 30, ChunkedPrefillSize: 4096, CUDAGraphMaxBS: 32, CUDAGraphMaxBSTP4: 160},
			{Below: "160GiB", BelowBytes: 160 << 30, ChunkedPrefillSize: 8192, CUDAGraphMaxBS: 256, CUDAGraphMaxBSTP4: 512},
			{ChunkedPrefillSize: 16384, CUDAGraphMaxBS: 512},
		}}
}

// TestMemorySGLangHandComputed is SGLang's accounting (model_runner.py
// profile_max_num_token, server_args.py _handle_gpu_memory_settings) for
// Qwen3-32B on an H200 (CUDA 150,109,106,995 B = 143,155.2 MiB), tp 1, no
// mem_fraction_static given:
//
//	bucket < 160 GiB: chunked_prefill_size 8,192, cuda_graph_max_bs 256
//	reserved   = 512 + max(8,192, 2,048) × 1.5 + 256 × 2 + 1 × 1 / 8 × 1,024 = 13,440 MiB (above the 10 GiB floor)
//	fraction   = round((143,155.2 − 13,440) / 143,155.2, 3)    = 0.906
//	free       = 150,109,106,995 − 522 MiB (547,356,672)       = 149,561,750,323
//	requested  = floor(149,561,750,323 × 0.906)                = 135,502,945,792
//	weights    = 32,762,123,264 × 2                            = 65,524,246,528
//	kv         = 135,502,945,792 − 65,524,246,528              = 69,978,699,264
//	tokens     = floor(69,978,699,264 / (64 × 2 × 8 × 128 × 2 = 262,144)) = 266,947
func TestMemorySGLangHandComputed(t *testing.T) {
	h200 := &catalog.GPU{Name: "h200", MemoryBytes: 143771 * testMiB, CUDAMemoryBytes: 150_109_106_995}
	p, err := PlanMemory(MemoryScenario{Model: qwen32b(), GPU: h200, Engine: sglangEngine(), MaxModelLen: 32768})
	if err != nil {
		t.Fatal(err)
	}
	if p.GPUUtil != 0.906 {
		t.Errorf("mem_fraction_static = %g, want 0.906", p.GPUUtil)
	}
	checkInts(t, p, map[string]int64{"requested": 135_502_945_792, "weights": 65_524_246_528, "activation": 0, "non_torch": 0,
		"kv_cache": 69_978_699_264, "engine_tokens": 266_947, "slots": 266_947})
	// A given fraction replaces the heuristic: 0.8 × 149,561,750,323 = 119,649,400,258 − 65,524,246,528 = 54,125,153,730.
	p, err = PlanMemory(MemoryScenario{Model: qwen32b(), GPU: h200, Engine: sglangEngine(), GPUUtil: 0.8, MaxModelLen: 32768})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{"requested": 119_649_400_258, "kv_cache": 54_125_153_730})
}

// TestMemoryTRTLLMHandComputed is TensorRT-LLM's accounting
// (_torch/pyexecutor/_util.py _cal_max_tokens) for Llama-3.1-70B at tp 2 on
// a B200 (CUDA 178.35 GiB = 191,501,854,310 B), max_seq_len 32,768, with the
// embedded trtllm entry's constants:
//
//	weights    = ceil(70,553,706,496 × 2 / 2)                  = 70,553,706,496
//	forward    = 8,192 × 2 × (4.26 × 8,192 + 86,018.0125 / 2)  = 1,276,427,079.7
//	logits     = ceil(8,192 / 32,768) = 1 request × 128,256 × 2 + 8,192 × 8,192 × 2 = 134,474,240
//	activation = ceil(1,276,427,079.7)                         = 1,276,427,080
//	non-torch  = non_torch_tp[2] 3,697 MiB                     = 3,876,585,472
//	kv         = (191,501,854,310 − 70,553,706,496 − 1,276,427,080 − 3,876,585,472) × 0.9 = 104,215,621,735
//	tokens     = floor(104,215,621,735 / (80 × 2 × 4 × 128 × 2 = 163,840)) = 636,084, in blocks of 32 = 636,064
func TestMemoryTRTLLMHandComputed(t *testing.T) {
	e := &catalog.Engine{Name: "trtllm", Family: catalog.FamilyTRTLLM, MemoryFraction: 0.9, DefaultBlockSize: 32,
		DefaultMaxNumBatchedTokens: 8192, DefaultMaxNumSeqs: 2048, ActivationHiddenCopies: 4.26, ActivationMLPCopies: 1,
		ActivationKeptHiddenCopies: 1, MoEWorkspaceCopies: 1, HostRetention: 1.25,
		NonTorchBytes: 778 * testMiB, NonTorchTPBytes: []catalog.TPBytes{{TP: 2, Bytes: 3697 * testMiB}}}
	m := &catalog.Model{Name: "llama-3.1-70b", ParamsTotal: 70_553_706_496, WeightDtype: "bf16", VocabSize: 128256,
		HiddenSize: 8192, AttentionHeads: 64, MaxContext: 131072, Layers: 80, KVHeads: 8, HeadDim: 128, KVDtype: "bf16"}
	b200 := &catalog.GPU{Name: "b200", MemoryBytes: 183359 * testMiB, CUDAMemoryBytes: 191_501_854_310}
	p, err := PlanMemory(MemoryScenario{Model: m, KV: models.KVOptions{TP: 2}, GPU: b200, Engine: e, MaxModelLen: 32768})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{"weights": 70_553_706_496, "activation": 1_276_427_080, "non_torch": 3_876_585_472,
		"cuda_graph": 0, "kv_cache": 104_215_621_735, "engine_tokens": 636_064})
}

// TestMemoryPipelineInt4 is Llama-3.1-8B as an int4 (GPTQ, group 128)
// checkpoint over 2 pipeline stages on an H100, with the vLLM 0.19 constants
// (sampler 12.94 B/logit, non_torch_pp 72 MiB, graphs not charged), util 0.9:
//
//	linear     = (8,030,261,248 − 2 × 525,336,576) × (0.5 + 2/128) = 3,598,850,112
//	embeddings = 525,336,576 × 2 B each (the first stage's embedding, the last's lm_head) = 1,050,673,152
//	weights    = 3,598,850,112 × 16/32 + 1,050,673,152 = 2,850,098,208 on either stage
//	forward    = 8,192 × 2 × (4.26 × 4,096 + 43,010.03125)     = 990,560,112.6
//	sampler    = 1,024 × 128,256 × (12.94 + 2) + 8,192 × 4,096 × 2 = 2,029,240,975.4 (last stage only)
//	pp buffers = 8,192 × 2 × 4,096 × 2                         = 134,217,728
//	activation = stage 0: ceil(990,560,112.6 + 134,217,728) = 1,124,777,841; stage 1: ceil(2,029,240,975.4 + 134,217,728) = 2,163,458,704
//	requested  = floor(85,029,615,042 × 0.9)                   = 76,526,653,537
//	kv         = stage 0: 76,526,653,537 − 2,850,098,208 − 1,124,777,841 − 75,497,472 = 72,476,280,016
//	             stage 1: 76,526,653,537 − 2,850,098,208 − 2,163,458,704 − 75,497,472 = 71,437,599,153
//	tokens     = stage 1 (the smaller): floor(71,437,599,153 / (16 × 16 × 2 × 8 × 128 × 2 = 1,048,576)) × 16 = 1,090,048
func TestMemoryPipelineInt4(t *testing.T) {
	m := &catalog.Model{Name: "llama-3.1-8b", ParamsTotal: 8_030_261_248, WeightDtype: "bf16", VocabSize: 128256,
		HiddenSize: 4096, AttentionHeads: 32, MaxContext: 131072, Layers: 32, KVHeads: 8, HeadDim: 128, KVDtype: "bf16"}
	e := testEngine()
	e.SamplerBytesPerLogit, e.CUDAGraphsCharged = 12.94, false
	p, err := PlanMemory(MemoryScenario{Model: m, GPU: h100(), Engine: e, GPUUtil: 0.9, PP: 2, MaxModelLen: 8192,
		Quantization: "int4", BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{"weights": 2_850_098_208, "activation": 2_163_458_704, "non_torch": 75_497_472,
		"cuda_graph": 0, "kv_cache": 71_437_599_153, "engine_tokens": 1_090_048})
	if len(p.Stages) != 2 || p.Stages[0].KVCacheBytes != 72_476_280_016 || p.Stages[0].ActivationBytes != 1_124_777_841 {
		t.Errorf("stages = %+v", p.Stages)
	}
}

// TestMemoryHostOffloadCache: a pool's CPU offload cache counts against its
// memory limit. The FACTS.md §4 worker without staging needs 2,952,790,016 B
// (TestMemoryHostOOM); a 1 GiB offload cache makes it 4,026,531,840, over the
// 3,584 MiB limit by 268,435,456.
func TestMemoryHostOffloadCache(t *testing.T) {
	p, err := PlanMemory(MemoryScenario{Model: qwen06(), GPU: rtx4060(), Engine: testEngine(), GPUUtil: 0.38,
		EnforceEager: true, MaxModelLen: 4096, BlockSize: 16, LimitBytes: 3584 * testMiB, CPUOffloadCacheBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	checkInts(t, p, map[string]int64{"offload": 1 << 30, "required": 4_026_531_840, "headroom": -268_435_456, "max_safe": 0})
	if p.HostFits || len(p.Findings) != 1 || !strings.Contains(p.Findings[0], "CPU offload cache 1.0 GiB") {
		t.Errorf("host_fits %v, findings %q", p.HostFits, p.Findings)
	}
}

// modelOnGPU is the embedded catalog with one of its models and GPUs.
func modelOnGPU(t *testing.T, model, gpu string) (*catalog.Catalog, *catalog.Model, *catalog.GPU) {
	t.Helper()
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Model(model)
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.GPU(gpu)
	if err != nil {
		t.Fatal(err)
	}
	return c, m, g
}
