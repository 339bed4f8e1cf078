package models_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/models/hfimport"
)

func loadCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Load()
	if err != nil {
		t.Fatalf("catalog.Load: %v", err)
	}
	return c
}

func kvOf(t *testing.T, c *catalog.Catalog, name string, opts models.KVOptions) *models.KV {
	t.Helper()
	m, err := c.Model(name)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := models.NewKV(m, opts)
	if err != nil {
		t.Fatalf("NewKV(%s, %+v): %v", name, opts, err)
	}
	return kv
}

// kvCase is one catalog model's KV geometry at its default dtype, TP 1.
type kvCase struct {
	perToken  int64 // BytesPerToken: every attention layer, full and sliding
	fullOnly  int64 // FullBytesPerToken: layers that keep every token (full, MLA)
	state     int64 // StateBytesPerRequest: linear-attention state
	published bool  // perToken is a FACTS.md §2 reference figure
}

// Every catalog model, with its bytes/token written out by hand.
// b = bytes per element (bf16 = 2); per layer = 2 (K and V) × kv heads × head_dim × b.
var kvTable = map[string]kvCase{
	// FACTS.md §2 reference figures.
	"qwen3-0.6b":      {114_688, 114_688, 0, true}, // 28 layers × 2 × 8 kv heads × 128 × 2 B
	"qwen3-8b":        {147_456, 147_456, 0, true}, // 36 × 2 × 8 × 128 × 2
	"qwen3-32b":       {262_144, 262_144, 0, true}, // 64 × 2 × 8 × 128 × 2
	"qwen3-235b-a22b": {192_512, 192_512, 0, true}, // 94 × 2 × 4 × 128 × 2
	"llama-3.1-8b":    {131_072, 131_072, 0, true}, // 32 × 2 × 8 × 128 × 2
	"minimax-m2.5":    {253_952, 253_952, 0, true}, // 62 × 2 × 8 × 128 × 2
	"llama-3.1-70b":   {327_680, 327_680, 0, true}, // 80 × 2 × 8 × 128 × 2 = 320 KiB
	"llama-3.3-70b":   {327_680, 327_680, 0, true}, // 80 × 2 × 8 × 128 × 2 = 320 KiB
	"deepseek-v3":     {70_272, 70_272, 0, true},   // MLA: 61 layers × (512 + 64) × 2 B; MTP layer not counted
	// gpt-oss-120b: 18 sliding (window 128) + 18 full, each 2 × 8 × 64 × 2 = 2,048 B
	"gpt-oss-120b": {73_728, 36_864, 0, true}, // all 36 × 2,048; full only 18 × 2,048

	// Other catalog models.
	"qwen3-30b-a3b":   {98_304, 98_304, 0, false},   // 48 × 2 × 4 × 128 × 2
	"llama-3.2-1b":    {32_768, 32_768, 0, false},   // 16 × 2 × 8 × 64 × 2
	"kimi-k2":         {70_272, 70_272, 0, false},   // MLA: 61 × (512 + 64) × 2
	"mixtral-8x7b":    {131_072, 131_072, 0, false}, // 32 × 2 × 8 × 128 × 2, no sliding window
	"mistral-7b-v0.1": {131_072, 0, 0, false},       // 32 sliding (window 4096) × 2 × 8 × 128 × 2; no full layer
	// gemma-2-9b: 21 sliding (4096) + 21 full, each 2 × 8 × 256 × 2 = 8,192 B
	"gemma-2-9b": {344_064, 172_032, 0, false}, // 42 × 8,192; full 21 × 8,192
	// gemma-3-27b: 52 sliding (1024) + 10 full, each 2 × 16 × 128 × 2 = 8,192 B
	"gemma-3-27b": {507_904, 81_920, 0, false}, // 62 × 8,192; full 10 × 8,192
	// gemma-4-26b-a4b: 25 sliding (1024) × 2 × 8 × 256 × 2 = 25 × 8,192 = 204,800
	//                + 5 full × 2 × 2 global kv heads × 512 global head_dim × 2 = 5 × 4,096 = 20,480
	"gemma-4-26b-a4b": {225_280, 20_480, 0, false},
	// qwen3-next-80b-a3b: 12 full × 2 × 2 × 256 × 2 = 12 × 2,048 = 24,576;
	// 36 linear layers × 1,097,728 B state = 39,518,208 B per request
	// (state per layer: (32 × 128 × 128 + 3 × (2 × 16 × 128 + 32 × 128)) × 2 B)
	"qwen3-next-80b-a3b": {24_576, 24_576, 39_518_208, false},

	// The `models import` block. Per token while inside every window, per token at
	// long context, state per request (vLLM convention).
	// MLA latent 576 × 2 B = 1,152 per layer; DSA indexer key 128 fp8 + 4 B scale = 132.
	"deepseek-v3.2": {78_324, 78_324, 0, false},   // 61 × 1,152 + 61 × 132
	"glm-5":         {100_152, 100_152, 0, false}, // 78 × 1,152 + 78 × 132
	"glm-5.2":       {92_628, 92_628, 0, false},   // 78 × 1,152 + 21 indexers (index sharing) × 132
	"kimi-k2.5":     {70_272, 70_272, 0, false},   // 61 × 1,152
	// fp8 KV declared by the checkpoint: 61 × 576 × 1
	"kimi-k2.5-nvfp4": {35_136, 35_136, 0, false},
	// DeepSeek-V4, fp8 latents of 584 B, windows of 128; compressor state per layer
	// 81,920 (ratio 4, with the indexer's) or 524,288 (ratio 128).
	// Flash: 2 window-only, 21 ratio 4 (indexer 132 B per entry), 20 ratio 128:
	//   2 × 584 + 21 × 584 + ceil(12,264 / 4) + ceil(21 × 132 / 4) + 20 × 584 + ceil(11,680 / 128)
	//   = 1,168 + 12,264 + 3,066 + 693 + 11,680 + 92 = 28,963; long 3,066 + 693 + 92 = 3,851;
	//   state 21 × 81,920 + 20 × 524,288 = 12,206,080
	"deepseek-v4-flash": {28_963, 3_851, 12_206_080, false},
	// Pro: 31 ratio 128, 30 ratio 4:
	//   31 × 584 + ceil(18,104 / 128) + 30 × 584 + ceil(17,520 / 4) + ceil(30 × 132 / 4)
	//   = 18,104 + 142 + 17,520 + 4,380 + 990 = 41,136; long 142 + 4,380 + 990 = 5,512;
	//   state 31 × 524,288 + 30 × 81,920 = 18,710,528
	"deepseek-v4-pro": {41_136, 5_512, 18_710_528, false},
	// Qwen3.5/3.6: full layers 2 × kv heads × 256 × b; Gated DeltaNet state per layer
	// (4 − 1) × (2 × 16 × 128 + v_heads × 128) × 2 + v_heads × 128 × 128 × 4 (mamba_ssm_dtype float32)
	"qwen3.5-27b": {65_536, 65_536, 153_944_064, false}, // 16 × 2 × 4 × 256 × 2; 48 × (61,440 + 3,145,728)
	// 15 × 2 × 2 × 256 × 2 = 30,720; 45 × (3 × 12,288 × 2 + 64 × 128 × 128 × 4) = 45 × 4,268,032
	"qwen3.5-397b-a17b": {30_720, 30_720, 192_061_440, false},
	"qwen3.6-27b-nvfp4": {32_768, 32_768, 153_944_064, false}, // fp8 KV declared: 16 × 2 × 4 × 256 × 1
	// 10 × 2 × 2 × 256 × 2 = 20,480; 30 × (3 × 8,192 × 2 + 32 × 128 × 128 × 4) = 30 × 2,146,304
	"qwen3.6-35b-a3b-nvfp4": {20_480, 20_480, 64_389_120, false},
	// Llama-4: 48 × 2 × 8 × 128 × 2; every 4th layer global: 12 × 4,096 (36 chunked, window 8,192)
	"llama-4-scout-17b-16e":     {196_608, 49_152, 0, false},
	"llama-4-maverick-17b-128e": {196_608, 49_152, 0, false},
	// Nemotron-3: attention layers 2 × 2 kv heads × 128 × b; Mamba-2 state per layer
	// (4 − 1) × conv_dim × 2 + heads × 64 × state × 4 (mamba_ssm_cache_dtype float32)
	// Nano: 6 × 1,024 = 6,144; 23 × (3 × 6,144 × 2 + 64 × 64 × 128 × 4) = 23 × 2,134,016
	"nemotron-3-nano-30b-a3b": {6_144, 6_144, 49_082_368, false},
	// Super (fp8 KV from its hf_quant_config.json): 8 × 512 = 4,096;
	// 40 × (3 × 10,240 × 2 + 128 × 64 × 128 × 4) = 40 × 4,255,744
	"nemotron-3-super-120b-a12b-fp8": {4_096, 4_096, 170_229_760, false},
	// Ultra: 12 × 1,024 = 12,288; 48 × (3 × 18,432 × 2 + 256 × 64 × 128 × 4) = 48 × 8,499,200
	"nemotron-3-ultra-550b-a55b": {12_288, 12_288, 407_961_600, false},
	// gpt-oss-20b: 12 sliding (window 128) + 12 full, each 2 × 8 × 64 × 2 = 2,048
	"gpt-oss-20b": {49_152, 24_576, 0, false},
}

func TestBytesPerTokenEveryModel(t *testing.T) {
	c := loadCatalog(t)
	for _, m := range c.Models {
		t.Run(m.Name, func(t *testing.T) {
			want, ok := kvTable[m.Name]
			if !ok {
				t.Fatalf("catalog model %q has no hand-written row in kvTable", m.Name)
			}
			kv, err := models.NewKV(m, models.KVOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := kv.BytesPerToken(); got != want.perToken {
				t.Errorf("BytesPerToken = %d, want %d", got, want.perToken)
			}
			if got := kv.FullBytesPerToken(); got != want.fullOnly {
				t.Errorf("FullBytesPerToken = %d, want %d", got, want.fullOnly)
			}
			if got := kv.StateBytesPerRequest(); got != want.state {
				t.Errorf("StateBytesPerRequest = %d, want %d", got, want.state)
			}
			if kv.KVDtype != m.KVDtype || kv.TP != 1 {
				t.Errorf("defaults: kv dtype %q, tp %d; want %q, 1", kv.KVDtype, kv.TP, m.KVDtype)
			}
		})
	}
	for name := range kvTable {
		if _, err := c.Model(name); err != nil {
			t.Errorf("kvTable row %q: %v", name, err)
		}
	}
}

// Every FACTS.md §2 reference figure, including the dtype variants.
func TestFACTSReferenceFigures(t *testing.T) {
	c := loadCatalog(t)
	for _, tc := range []struct {
		model string
		opts  models.KVOptions
		full  bool // FullBytesPerToken instead of BytesPerToken
		want  int64
	}{
		{"qwen3-0.6b", models.KVOptions{}, false, 114_688},
		{"qwen3-8b", models.KVOptions{}, false, 147_456},
		{"qwen3-32b", models.KVOptions{}, false, 262_144},
		{"qwen3-235b-a22b", models.KVOptions{}, false, 192_512},
		{"llama-3.1-8b", models.KVOptions{}, false, 131_072},
		{"llama-3.1-70b", models.KVOptions{}, false, 327_680},
		{"llama-3.3-70b", models.KVOptions{}, false, 327_680},
		{"deepseek-v3", models.KVOptions{}, false, 70_272},
		{"deepseek-v3", models.KVOptions{KVDtype: "fp8"}, false, 35_136}, // 61 × 576 × 1 B
		{"gpt-oss-120b", models.KVOptions{}, false, 73_728},
		{"gpt-oss-120b", models.KVOptions{}, true, 36_864},
	} {
		kv := kvOf(t, c, tc.model, tc.opts)
		got := kv.BytesPerToken()
		if tc.full {
			got = kv.FullBytesPerToken()
		}
		if got != tc.want {
			t.Errorf("%s %+v full=%v: %d B/token, want %d", tc.model, tc.opts, tc.full, got, tc.want)
		}
	}
}

// The Done-when figure of issue 2: 3000 tokens of Qwen3-0.6B.
func TestQwen3_06B3000Tokens(t *testing.T) {
	kv := kvOf(t, loadCatalog(t), "qwen3-0.6b", models.KVOptions{})
	if got := kv.RequestBytes(3000); got != 344_064_000 { // 3000 × 114,688
		t.Errorf("RequestBytes(3000) = %d, want 344,064,000", got)
	}
	// FACTS.md §4: one request of 2,371 tokens is ~272 MB.
	if got := kv.RequestBytes(2371); got != 271_925_248 { // 2371 × 114,688
		t.Errorf("RequestBytes(2371) = %d, want 271,925,248", got)
	}
}

func TestRequestBytes(t *testing.T) {
	c := loadCatalog(t)
	for _, tc := range []struct {
		model  string
		opts   models.KVOptions
		tokens int
		want   int64
	}{
		// Mistral: every layer is sliding with window 4096.
		{"mistral-7b-v0.1", models.KVOptions{}, 1000, 131_072_000},    // 1000 × 131,072
		{"mistral-7b-v0.1", models.KVOptions{}, 4096, 536_870_912},    // 4096 × 131,072
		{"mistral-7b-v0.1", models.KVOptions{}, 8000, 536_870_912},    // capped: 4096 × 131,072
		{"mistral-7b-v0.1", models.KVOptions{}, 100_000, 536_870_912}, // capped: 4096 × 131,072
		// Mixtral has no window: every token stays.
		{"mixtral-8x7b", models.KVOptions{}, 8000, 1_048_576_000}, // 8000 × 131,072
		// gpt-oss-120b: 18 sliding layers hold at most 128 tokens.
		{"gpt-oss-120b", models.KVOptions{}, 100, 7_372_800},    // 100 × 73,728
		{"gpt-oss-120b", models.KVOptions{}, 8000, 299_630_592}, // 8000 × 36,864 + 128 × 36,864 = 294,912,000 + 4,718,592
		{"gpt-oss-120b", models.KVOptions{}, 128, 9_437_184},    // 128 × 73,728
		// Gemma-2-9b: 21 sliding layers cap at 4096 tokens.
		{"gemma-2-9b", models.KVOptions{}, 8192, 2_113_929_216}, // 8192 × 172,032 + 4096 × 172,032 = 1,409,286,144 + 704,643,072
		// Gemma-4 26B-A4B: 25 sliding layers (window 1024) + 5 full layers of their own geometry.
		{"gemma-4-26b-a4b", models.KVOptions{}, 4096, 293_601_280}, // 1024 × 204,800 + 4096 × 20,480 = 209,715,200 + 83,886,080
		// Qwen3-Next: full layers grow with tokens, the linear state does not.
		{"qwen3-next-80b-a3b", models.KVOptions{}, 0, 39_518_208},       // state only: 36 × 1,097,728
		{"qwen3-next-80b-a3b", models.KVOptions{}, 1000, 64_094_208},    // 1000 × 24,576 + 39,518,208
		{"qwen3-next-80b-a3b", models.KVOptions{}, 10_000, 285_278_208}, // 10,000 × 24,576 + 39,518,208
		// At tp 2 the state's heads split too: 39,518,208 / 2 = 19,759,104 per rank, and the
		// full layers keep max(1, 2/2) = 1 kv head: 12 × 2 × 1 × 256 × 2 = 12,288 B/token.
		{"qwen3-next-80b-a3b", models.KVOptions{TP: 2}, 1000, 32_047_104}, // 1000 × 12,288 + 19,759,104
		// DeepSeek-V3, fp8 KV: 35,136 B/token.
		{"deepseek-v3", models.KVOptions{KVDtype: "fp8"}, 8150, 286_358_400}, // 8150 × 35,136
		// FACTS.md §2 check: Kimi-K2.5 (the same MLA geometry as K2) at 8,150 tokens with fp8 KV hands over 286 MB.
		{"kimi-k2", models.KVOptions{KVDtype: "fp8"}, 8150, 286_358_400}, // 8150 × 61 × 576 × 1 B
		// FACTS.md §2 check: LLaMA3-70B at 128k tokens is 40 GiB.
		{"llama-3.1-70b", models.KVOptions{}, 131_072, 42_949_672_960}, // 131,072 × 327,680 = 40 GiB
	} {
		kv := kvOf(t, c, tc.model, tc.opts)
		if got := kv.RequestBytes(tc.tokens); got != tc.want {
			t.Errorf("%s %+v: RequestBytes(%d) = %d, want %d", tc.model, tc.opts, tc.tokens, got, tc.want)
		}
	}
}

// The linear state is a constant per request: it does not grow with tokens
// and does not depend on how many tokens are in the request.
func TestLinearStateConstantPerRequest(t *testing.T) {
	kv := kvOf(t, loadCatalog(t), "qwen3-next-80b-a3b", models.KVOptions{})
	const perToken, state = 24_576, 39_518_208
	for _, n := range []int{1, 17, 4096, 262_144} {
		if got := kv.RequestBytes(n) - int64(n)*perToken; got != state {
			t.Errorf("RequestBytes(%d) − %d × %d = %d, want the constant state %d", n, n, perToken, got, state)
		}
	}
	// A dtype override changes the KV of the full layers, not the state
	// (its size is fixed in the catalog at bf16).
	fp8 := kvOf(t, loadCatalog(t), "qwen3-next-80b-a3b", models.KVOptions{KVDtype: "fp8"})
	if got := fp8.BytesPerToken(); got != 12_288 { // 12 × 2 × 2 × 256 × 1
		t.Errorf("fp8 BytesPerToken = %d, want 12,288", got)
	}
	if got := fp8.StateBytesPerRequest(); got != state {
		t.Errorf("fp8 StateBytesPerRequest = %d, want %d", got, state)
	}
}

func TestTensorParallel(t *testing.T) {
	c := loadCatalog(t)
	for _, tc := range []struct {
		model string
		tp    int
		want  int64 // bytes/token per rank
	}{
		{"qwen3-0.6b", 0, 114_688},        // tp 0 = 1
		{"qwen3-0.6b", 1, 114_688},        // 28 × 2 × 8 × 128 × 2
		{"qwen3-0.6b", 2, 57_344},         // 28 × 2 × (8/2 = 4) × 128 × 2
		{"qwen3-0.6b", 8, 14_336},         // 28 × 2 × (8/8 = 1) × 128 × 2
		{"qwen3-0.6b", 16, 14_336},        // 28 × 2 × max(1, 8/16) × 128 × 2: heads replicated
		{"qwen3-235b-a22b", 4, 48_128},    // 94 × 2 × (4/4 = 1) × 128 × 2
		{"qwen3-235b-a22b", 8, 48_128},    // 94 × 2 × max(1, 4/8) × 128 × 2
		{"llama-3.1-70b", 8, 40_960},      // 80 × 2 × (8/8 = 1) × 128 × 2
		{"deepseek-v3", 8, 70_272},        // MLA is not split: 61 × 576 × 2
		{"kimi-k2", 16, 70_272},           // MLA is not split
		{"gpt-oss-120b", 4, 18_432},       // 36 × 2 × (8/4 = 2) × 64 × 2
		{"gemma-4-26b-a4b", 2, 112_640},   // 25 × 2 × 4 × 256 × 2 + 5 × 2 × (2/2 = 1) × 512 × 2 = 102,400 + 10,240
		{"gemma-4-26b-a4b", 4, 61_440},    // 25 × 2 × 2 × 256 × 2 + 5 × 2 × max(1, 2/4) × 512 × 2 = 51,200 + 10,240
		{"qwen3-next-80b-a3b", 2, 12_288}, // 12 × 2 × (2/2 = 1) × 256 × 2
		{"qwen3-next-80b-a3b", 4, 12_288}, // 12 × 2 × max(1, 2/4) × 256 × 2
	} {
		kv := kvOf(t, c, tc.model, models.KVOptions{TP: tc.tp})
		if got := kv.BytesPerToken(); got != tc.want {
			t.Errorf("%s tp %d: %d B/token per rank, want %d", tc.model, tc.tp, got, tc.want)
		}
		if tc.tp > 1 && kv.TP != tc.tp {
			t.Errorf("%s tp %d: KV.TP = %d", tc.model, tc.tp, kv.TP)
		}
	}
}

func TestKVDtypeOverride(t *testing.T) {
	c := loadCatalog(t)
	for _, tc := range []struct {
		model, dtype string
		want         int64
	}{
		{"qwen3-0.6b", "bf16", 114_688}, // 28 × 2 × 8 × 128 × 2
		{"qwen3-0.6b", "fp16", 114_688}, // 2 B
		{"qwen3-0.6b", "fp8", 57_344},   // 28 × 2 × 8 × 128 × 1
		{"qwen3-0.6b", "int8", 57_344},  // 1 B
		{"qwen3-0.6b", "fp32", 229_376}, // 4 B
		{"llama-3.1-70b", "fp8", 163_840},
		{"gpt-oss-120b", "fp8", 36_864},    // 36 × 2 × 8 × 64 × 1
		{"mistral-7b-v0.1", "fp8", 65_536}, // 32 × 2 × 8 × 128 × 1
	} {
		kv := kvOf(t, c, tc.model, models.KVOptions{KVDtype: tc.dtype})
		if got := kv.BytesPerToken(); got != tc.want || kv.KVDtype != tc.dtype {
			t.Errorf("%s %s: %d B/token (dtype %q), want %d", tc.model, tc.dtype, got, kv.KVDtype, tc.want)
		}
	}
	// TP and dtype together.
	kv := kvOf(t, c, "llama-3.1-70b", models.KVOptions{KVDtype: "fp8", TP: 4})
	if got := kv.BytesPerToken(); got != 40_960 { // 80 × 2 × (8/4 = 2) × 128 × 1
		t.Errorf("llama-3.1-70b fp8 tp 4: %d, want 40,960", got)
	}
}

func TestUnknownKVDtype(t *testing.T) {
	c := loadCatalog(t)
	m, err := c.Model("qwen3-0.6b")
	if err != nil {
		t.Fatal(err)
	}
	for _, dtype := range []string{"fp4", "int4", "mxfp4", "float16", "BF16x", "nope"} {
		kv, err := models.NewKV(m, models.KVOptions{KVDtype: dtype})
		if err == nil {
			t.Errorf("NewKV with kv dtype %q = %+v, want an error", dtype, kv)
			continue
		}
		if !strings.Contains(err.Error(), dtype) || !strings.Contains(err.Error(), "bf16, fp16, fp8, int8") {
			t.Errorf("kv dtype %q: error %q should name the dtype and what is accepted", dtype, err)
		}
	}
}

// Layer groups are visible to the explain output: kinds, counts, windows.
func TestGroups(t *testing.T) {
	c := loadCatalog(t)
	kv := kvOf(t, c, "gpt-oss-120b", models.KVOptions{})
	if len(kv.Groups) != 2 || !kv.HasWindows() {
		t.Fatalf("gpt-oss-120b groups = %+v", kv.Groups)
	}
	s, f := kv.Groups[0], kv.Groups[1]
	if s.Kind != "sliding" || s.Count != 18 || s.Window != 128 || s.BytesPerTokenEach != 2048 ||
		f.Kind != "full" || f.Count != 18 || f.Window != 0 || f.BytesPerTokenEach != 2048 {
		t.Errorf("gpt-oss-120b groups = %+v", kv.Groups)
	}

	ds := kvOf(t, c, "deepseek-v3", models.KVOptions{TP: 8})
	if len(ds.Groups) != 1 || ds.Groups[0].Kind != "mla" || ds.Groups[0].Count != 61 ||
		ds.Groups[0].KVHeadsPerRank != 1 || ds.Groups[0].HeadDim != 576 || ds.HasWindows() {
		t.Errorf("deepseek-v3 groups = %+v", ds.Groups)
	}

	g4 := kvOf(t, c, "gemma-4-26b-a4b", models.KVOptions{})
	if len(g4.Groups) != 2 || g4.Groups[1].KVHeadsPerRank != 2 || g4.Groups[1].HeadDim != 512 ||
		g4.Groups[0].KVHeadsPerRank != 8 || g4.Groups[0].HeadDim != 256 {
		t.Errorf("gemma-4-26b-a4b groups = %+v", g4.Groups)
	}

	qn := kvOf(t, c, "qwen3-next-80b-a3b", models.KVOptions{})
	if qn.HasWindows() || len(qn.Groups) != 2 || qn.Groups[0].Kind != "linear" || qn.Groups[0].StateBytesEach != 1_097_728 ||
		qn.Groups[0].BytesPerTokenEach != 0 {
		t.Errorf("qwen3-next-80b-a3b groups = %+v", qn.Groups)
	}

	if kvOf(t, c, "qwen3-0.6b", models.KVOptions{}).HasWindows() {
		t.Errorf("qwen3-0.6b has no sliding window")
	}
}

// The catalog's gemma-3-27b entry is what `models import` makes of the
// public config.json (testdata/models/variants/google--gemma-3-27b-it.json):
// the same layout and KV geometry.
func TestGemma3EntryMatchesImport(t *testing.T) {
	c := loadCatalog(t)
	m, err := c.Model("gemma-3-27b")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "testdata", "models", "variants", "google--gemma-3-27b-it.json"))
	if err != nil {
		t.Fatal(err)
	}
	imported, _, err := hfimport.ImportConfig(data, "google--gemma-3-27b-it.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Layout, imported.Layout) || m.KVHeads != imported.KVHeads || m.HeadDim != imported.HeadDim ||
		m.VocabSize != imported.VocabSize || m.MaxContext != imported.MaxContext || m.TiedEmbeddings != imported.TiedEmbeddings {
		t.Errorf("catalog %+v\nimport  %+v", m, imported)
	}
}
