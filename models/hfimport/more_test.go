package hfimport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/models"
)

// The configs of testdata/models/more (one per architecture family that
// needs more than GQA, MLA or sliding windows; see the README there), with
// their KV figures worked out by hand from the config's dimensions.
//
// Element sizes: bf16 2 B, fp8 1 B, fp32 4 B. A GQA layer caches
// 2 × kv_heads × head_dim elements per token; an MLA layer one latent of
// kv_lora_rank + qk_rope_head_dim; an indexer key is index_head_dim fp8
// bytes plus one fp32 scale per 128 (128 → 132 B). A linear or Mamba layer's
// state is (conv_kernel − 1) × conv channels in the model dtype plus the
// recurrent state in its dtype (vLLM; SGLang keeps the recurrent state in
// fp32 unless the config pins one).
func TestImportMoreConfigs(t *testing.T) {
	tests := []struct {
		file                string
		layers              int
		layout              string
		kvDtype             string
		perToken, longToken int64 // BytesPerToken, FullBytesPerToken
		tokens              int
		request             int64 // RequestBytes(tokens), vLLM convention
		stateVLLM           int64
		stateSGLang         int64
		total, active       int64 // published parameter counts, ±3%; 0 = none published
		note                string
	}{
		// MLA 61 × (512 + 64) × 2 = 70,272 + indexer 61 × 132 = 8,052 → 78,324 per token
		{file: "deepseek-v3.2.json", layers: 61, layout: "61 full + indexer", kvDtype: "bf16",
			perToken: 78_324, longToken: 78_324, tokens: 131_072, request: 131_072 * 78_324,
			total: 671 * billion, active: 37 * billion, note: "61 of 61 layers keep an indexer key"},
		// MLA 78 × 1,152 = 89,856 + indexer 78 × 132 = 10,296 → 100,152 (GLM-5: 744B, 40B active)
		{file: "glm-5.json", layers: 78, layout: "78 full + indexer", kvDtype: "bf16",
			perToken: 100_152, longToken: 100_152, tokens: 1000, request: 100_152_000,
			total: 744 * billion, active: 40 * billion},
		// fp8 latents of 584 B: 2 window-only layers, 21 compressing 4 tokens (with an
		// indexer key of 132 B per entry), 20 compressing 128; every layer's window 128.
		// Short: 2 × 584 + (21 × 584 + ceil(21 × 584 / 4)) + ceil(21 × 132 / 4) + (20 × 584 + ceil(20 × 584 / 128))
		//      = 1,168 + 15,330 + 693 + 11,772 = 28,963; long: 3,066 + 693 + 92 = 3,851.
		// Compressor state (vLLM): ratio 4: 8 × 2,048 × 4 + indexer 8 × 512 × 4 = 81,920;
		// ratio 128: 128 × 1,024 × 4 = 524,288 → 21 × 81,920 + 20 × 524,288 = 12,206,080.
		// 131,072 tokens: 2 × 128 × 584 + 21 × (128 + 32,768) × 584 + 21 × 32,768 × 132
		//               + 20 × (128 + 1,024) × 584 + 12,206,080
		//   = 149,504 + 403,436,544 + 90,832,896 + 13,455,360 + 12,206,080 = 520,080,384
		// (every layer a 128-token sliding window, as a plain reading has it: 43 × 128 × 2,048 = 11,272,192)
		{file: "deepseek-v4-flash.json", layers: 43, kvDtype: "fp8",
			layout:   "2 sliding (window 128), 21 compressed (ratio 4, window 128) + indexer, 20 compressed (ratio 128, window 128)",
			perToken: 28_963, longToken: 3_851, tokens: 131_072, request: 520_080_384, stateVLLM: 12_206_080, stateSGLang: 12_206_080,
			// 284B total, 13B activated
			total: 284 * billion, active: 13 * billion, note: "the only KV format vLLM serves DeepSeek-V4 in"},
		// fp8 KV declared by the checkpoint: 61 × 576 × 1 = 35,136 per token;
		// 8,150 tokens = 286,358,400 B, the 286 MB hand-off of FACTS.md §2 (Kimi K2.5: 1.04T, 32B active)
		{file: "kimi-k2.5-nvfp4.json", layers: 61, kvDtype: "fp8", perToken: 35_136, longToken: 35_136,
			tokens: 8_150, request: 286_358_400, total: 1_040 * billion, active: 32 * billion, note: "declares an fp8 KV cache"},
		// 16 full × 2 × 4 × 256 × 1 (fp8 declared) = 32,768; 48 linear layers:
		// conv 3 × (2 × 16 × 128 + 48 × 128 = 10,240) × 2 = 61,440, recurrent 48 × 128 × 128 = 786,432 × 4
		// (mamba_ssm_dtype float32) = 3,145,728 → 3,207,168 × 48 = 153,944,064, under both engines
		{file: "qwen3.6-27b-nvfp4.json", layers: 64, layout: "48 linear, 16 full", kvDtype: "fp8",
			perToken: 32_768, longToken: 32_768, tokens: 1000, request: 32_768_000 + 153_944_064,
			stateVLLM: 153_944_064, stateSGLang: 153_944_064, total: 27 * billion},
		// The same in bf16: 16 × 2 × 4 × 256 × 2 = 65,536
		{file: "qwen3.5-27b.json", layers: 64, layout: "48 linear, 16 full", kvDtype: "bf16",
			perToken: 65_536, longToken: 65_536, tokens: 1000, request: 65_536_000 + 153_944_064,
			stateVLLM: 153_944_064, stateSGLang: 153_944_064, total: 27 * billion, note: "as mamba_ssm_dtype pins it"},
		// MLA on 24 layers: 24 × 576 × 2 = 27,648; 69 Kimi Delta Attention layers:
		// conv 3 × (3 × 96 × 128 = 36,864) × 2 = 221,184, recurrent 96 × 128 × 128 × 4 (fp32) = 6,291,456
		// → 6,512,640 × 69 = 449,372,160
		{file: "kimi-k3.json", layers: 93, layout: "69 linear, 24 full", kvDtype: "bf16",
			perToken: 27_648, longToken: 27_648, tokens: 1000, request: 27_648_000 + 449_372_160,
			stateVLLM: 449_372_160, stateSGLang: 449_372_160},
		// 49 attention layers (31 are no_op) × 2 × 8 × 128 × 2 = 200,704 (49.9B)
		{file: "llama-3-3-nemotron-super-49b-v1.json", layers: 49, kvDtype: "bf16", perToken: 200_704, longToken: 200_704,
			tokens: 1000, request: 200_704_000, total: 49_900 * million, note: "31 of 80 blocks hold no cache"},
		// 48 × 2 × 8 × 128 × 2 = 196,608; every 4th layer global: 12 × 4,096 = 49,152.
		// 131,072 tokens: 36 × 8,192 × 4,096 + 12 × 131,072 × 4,096 = 1,207,959,552 + 6,442,450,944
		// (Llama-4 Scout: 109B total; its "17B active" is 16.14B here + 1.03B of input
		// embedding, which this count leaves out, so it is not asserted)
		{file: "llama-4-scout-17b-16e-instruct.json", layers: 48, layout: "36 sliding (window 8192), 12 full", kvDtype: "bf16",
			perToken: 196_608, longToken: 49_152, tokens: 131_072, request: 7_650_410_496, total: 109 * billion,
			note: "every 4-th layer is a global (NoPE) layer"},
		// 60 × 2 × 4 × 128 × 2 = 122,880 + index keys 57 × 128 × 2 = 14,592 → 137,472
		{file: "minimax-m3.json", layers: 60, layout: "3 full, 57 full + indexer", kvDtype: "bf16",
			perToken: 137_472, longToken: 137_472, tokens: 1000, request: 137_472_000},
		// 10 attention × 2 × 8 × 128 × 2 = 40,960; 54 Mamba-2 layers:
		// conv 3 × (256 × 64 + 2 × 8 × 256 = 20,480) × 2 = 122,880, SSM 256 × 64 × 256 × 4 (fp32,
		// vLLM's NemotronH default) = 16,777,216 → 16,900,096 × 54 = 912,605,184
		{file: "nemotron-h-56b-base-8k.json", layers: 64, layout: "54 mamba, 10 full", kvDtype: "bf16",
			perToken: 40_960, longToken: 40_960, tokens: 8192, request: 8192*40_960 + 912_605_184,
			stateVLLM: 912_605_184, stateSGLang: 912_605_184, total: 56 * billion},
		// 12 attention × 2 × 2 × 128 × 2 = 12,288; 48 Mamba-2 layers:
		// conv 3 × (256 × 64 + 2 × 8 × 128 = 18,432) × 2 = 110,592, SSM 256 × 64 × 128 × 4 = 8,388,608
		// → 8,499,200 × 48 = 407,961,600 (550B total, 55B active)
		{file: "nvidia-nemotron-3-ultra-550b-a55b-bf16.json", layers: 60, layout: "48 mamba, 12 full", kvDtype: "bf16",
			perToken: 12_288, longToken: 12_288, tokens: 1000, request: 12_288_000 + 407_961_600,
			stateVLLM: 407_961_600, stateSGLang: 407_961_600, total: 550 * billion, active: 55 * billion,
			note: "the 108 entries of layers_block_type are the layers"},
		// 4 attention × 2 × 8 × 128 × 2 = 16,384; 28 Mamba-1 layers (inner 2 × 4,096 = 8,192, state 16):
		// vLLM 3 × 8,192 × 2 + 8,192 × 16 × 2 = 311,296 → 8,716,288;
		// SGLang 49,152 + 131,072 × 4 = 573,440 → 16,056,320 (52B total, 12B active)
		{file: "jamba-1.5-mini.json", layers: 32, layout: "28 mamba, 4 full", kvDtype: "bf16",
			perToken: 16_384, longToken: 16_384, tokens: 1000, request: 16_384_000 + 8_716_288,
			stateVLLM: 8_716_288, stateSGLang: 16_056_320, total: 52 * billion, active: 12 * billion},
		// No attention; 64 Mamba-1 layers of 311,296 (vLLM) or 573,440 (SGLang) (7.27B)
		{file: "falcon-mamba-7b.json", layers: 64, layout: "64 mamba", kvDtype: "bf16", tokens: 1000,
			request: 19_922_944, stateVLLM: 19_922_944, stateSGLang: 36_700_160, total: 7_270 * million},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			m, notes := importFile(t, filepath.Join("more", tt.file))
			if m.Layers != tt.layers || m.KVDtype != tt.kvDtype {
				t.Errorf("layers %d kv %s, want %d %s", m.Layers, m.KVDtype, tt.layers, tt.kvDtype)
			}
			if got := describeGroups(m.Layout); got != tt.layout {
				t.Errorf("layout %q, want %q", got, tt.layout)
			}
			kv := kvOf(t, m, models.KVOptions{})
			if got := kv.BytesPerToken(); got != tt.perToken {
				t.Errorf("bytes/token %d, want %d", got, tt.perToken)
			}
			if got := kv.FullBytesPerToken(); got != tt.longToken {
				t.Errorf("long-context bytes/token %d, want %d", got, tt.longToken)
			}
			if got := kv.RequestBytes(tt.tokens); got != tt.request {
				t.Errorf("request bytes(%d) %d, want %d", tt.tokens, got, tt.request)
			}
			if got := kv.StateBytesPerRequest(); got != tt.stateVLLM {
				t.Errorf("vllm state %d, want %d", got, tt.stateVLLM)
			}
			if got := kvOf(t, m, models.KVOptions{Engine: "sglang"}).StateBytesPerRequest(); got != tt.stateSGLang {
				t.Errorf("sglang state %d, want %d", got, tt.stateSGLang)
			}
			if tt.total > 0 && !within(m.ParamsTotal, tt.total, 0.03) {
				t.Errorf("params_total %d, want %d ± 3%%", m.ParamsTotal, tt.total)
			}
			if tt.active > 0 && !within(m.ParamsActive, tt.active, 0.03) {
				t.Errorf("params_active %d, want %d ± 3%%", m.ParamsActive, tt.active)
			}
			if tt.note != "" {
				wantNote(t, notes, tt.note)
			}
		})
	}
}

// Qwen3.6-27B-NVFP4's MIXED_PRECISION block, module by module (H = 5,120):
//
//	full attention (16 layers, FP8): q 5,120 × 24 × 256 × 2 (output gate) = 62,914,560,
//	    k and v 5,120 × 4 × 256 = 5,242,880 each, o 6,144 × 5,120 = 31,457,280 → 104,857,600
//	linear attention (48 layers, FP8): in_proj_qkv 5,120 × 10,240 = 52,428,800,
//	    in_proj_z 5,120 × 6,144 = 31,457,280, out_proj 31,457,280 → 115,343,360
//	    (bf16: in_proj_a and _b 2 × 245,760, conv 10,240 × 4, A_log and dt_bias 96, norm 128 → 532,704)
//	MLP (64 layers, NVFP4): 3 × 5,120 × 17,408 = 267,386,880; lm_head (NVFP4) 248,320 × 5,120 = 1,271,398,400
//	bf16: embedding 1,271,398,400, norms 64 × 10,240 + 5,120 = 660,480, q/k norms 16 × 512 = 8,192
//
//	fp8    16 × 104,857,600 + 48 × 115,343,360           = 7,214,202,880 params × 1 B
//	nvfp4  64 × 267,386,880 + 1,271,398,400             = 18,384,158,720 × 0.5625 B = 10,341,089,280
//	bf16   1,271,398,400 + 48 × 532,704 + 660,480 + 8,192 = 1,297,636,864 × 2 B   = 2,595,273,728
//	total  7,214,202,880 + 10,341,089,280 + 2,595,273,728 = 20,150,565,888 B
func TestImportMixedPrecisionWeights(t *testing.T) {
	m, notes := importFile(t, "more/qwen3.6-27b-nvfp4.json")
	if m.WeightsBytes != 20_150_565_888 || m.WeightDtype != "nvfp4" {
		t.Errorf("weights %d B %s, want 20,150,565,888 B nvfp4", m.WeightsBytes, m.WeightDtype)
	}
	if m.ParamsTotal != 7_214_202_880+18_384_158_720+1_297_636_864 {
		t.Errorf("params %d, want 26,895,998,464", m.ParamsTotal)
	}
	wantNote(t, notes, "fp8 7214202880 params")
	if m.Dtype != "bf16" {
		t.Errorf("dtype %q, want bf16 (the KV cache is fp8, the state stays bf16)", m.Dtype)
	}
}

// Quantization blocks that change weight bytes, not KV: none is refused.
func TestImportQuantizationBlocks(t *testing.T) {
	tests := []struct {
		name, quant string
		dtype       string
		bytes       int64 // weights_bytes; 0 = params × dtype (none set)
		note        string
	}{
		// llama(): H 1,024, intermediate 4,096, 8 heads of 128, 2 layers, vocab 1,000, untied.
		// Per layer: attention 4 × 1,024 × 1,024 = 4,194,304, MLP 3 × 1,024 × 4,096 = 12,582,912;
		// embedding and lm_head 1,024,000 each; norms 2 × 2,048 + 1,024 = 5,120.
		// Linear modules of the decoder: 2 × 16,777,216 = 33,554,432; the rest 2,053,120 stays bf16.
		{"fp8", `{"quant_method": "fp8"}`, "fp8", 33_554_432 + 2*2_053_120, ""},
		// int4, group 128, symmetric: 0.5 + 2/128 = 0.515625 B a weight: 17,301,504 + 4,106,240
		{"gptq", `{"quant_method": "gptq", "bits": 4, "group_size": 128}`, "int4", 17_301_504 + 4_106_240, ""},
		// awq with zero points: 0.5 + 2.5/128 = 0.51953125: 17,432,576 + 4,106,240
		{"awq", `{"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true}`, "int4", 17_432_576 + 4_106_240, ""},
		// modelopt NVFP4 also leaves the lm_head: 33,554,432 × 0.5625 = 18,874,368
		{"modelopt nvfp4", `{"quant_method": "modelopt", "quant_algo": "NVFP4"}`, "nvfp4", 18_874_368 + 4_106_240, ""},
		// no quant_method: read from quant_algo
		{"no quant_method", `{"quant_algo": "FP8"}`, "fp8", 33_554_432 + 4_106_240, "has no quant_method: read as modelopt"},
		// compressed-tensors 4-bit float in groups of 16 (nvfp4), attention ignored; targets
		// "Linear" take the lm_head too: MLP 2 × 12,582,912 × 0.5625 = 14,155,776,
		// lm_head 1,024,000 × 0.5625 = 576,000; bf16 attention 2 × 4,194,304 × 2 = 16,777,216,
		// embedding and norms (1,024,000 + 5,120) × 2 = 2,058,240
		{"compressed-tensors nvfp4", `{"quant_method": "compressed-tensors", "ignore": ["re:.*self_attn.*"], "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "float", "group_size": 16}}}}`,
			"nvfp4", 14_155_776 + 576_000 + 16_777_216 + 2_058_240, ""},
		// a block kvplan cannot read is a note, and the weights stay bf16
		{"unknown", `{"quant_method": "hqq"}`, "bf16", 0, `quant_method "hqq" is not one kvplan reads`},
		{"no format", `{"bits": 4}`, "bf16", 0, "no quant_method, and neither quant_algo nor config_groups"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, notes, err := ImportConfig([]byte(llama(`"quantization_config": `+tt.quant)), "q.json", "q")
			if err != nil {
				t.Fatal(err)
			}
			if m.WeightDtype != tt.dtype || m.WeightsBytes != tt.bytes || m.KVDtype != "bf16" {
				t.Errorf("weights %s %d B kv %s, want %s %d B bf16", m.WeightDtype, m.WeightsBytes, m.KVDtype, tt.dtype, tt.bytes)
			}
			if tt.note != "" {
				wantNote(t, notes, tt.note)
			}
		})
	}
}

// --weights-bytes gives the checkpoint's size, and it wins over the estimate.
func TestImportWeightsBytesOption(t *testing.T) {
	data := []byte(llama(`"quantization_config": {"quant_method": "fp8"}`))
	m, notes, err := Import(data, "q.json", Options{Name: "q", WeightsBytes: 40_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if m.WeightsBytes != 40_000_000 {
		t.Errorf("weights_bytes %d, want 40,000,000", m.WeightsBytes)
	}
	wantNote(t, notes, "from --weights-bytes replaces the 37660672")
}

// The state notes follow --engine.
func TestImportEngineNotes(t *testing.T) {
	for _, tt := range []struct{ engine, want string }{
		{"", "vllm 8716288 B (8.3 MiB), sglang 16056320 B (15 MiB)"},
		{"sglang", "sglang 16056320 B (15 MiB), vllm 8716288 B (8.3 MiB)"},
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "more", "jamba-1.5-mini.json"))
		if err != nil {
			t.Fatal(err)
		}
		_, notes, err := Import(data, "jamba.json", Options{Engine: tt.engine})
		if err != nil {
			t.Fatal(err)
		}
		wantNote(t, notes, tt.want)
	}
}

// GLM-5.2-style index sharing: only some layers run their own indexer.
func TestImportIndexShare(t *testing.T) {
	base := `"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "q_lora_rank": 256, "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 4`
	tests := []struct {
		extra string
		count int64 // layers with an indexer, of 10
	}{
		{``, 10},
		// max(i − 3 + 1, 0) % 4 == 0: layers 0, 1, 2 and 6 of 0..9
		{`, "index_topk_freq": 4, "index_skip_topk_offset": 3`, 4},
		{`, "index_topk_pattern": "FSSSFSSSFS"`, 3},
		{`, "indexer_types": ["full", "shared", "full", "shared", "shared", "shared", "shared", "shared", "shared", "full"]`, 3},
	}
	for _, tt := range tests {
		data := strings.Replace(llama(`"num_hidden_layers": 10`), `"model_type": "llama"`, `"model_type": "glm_moe_dsa", `+base+tt.extra, 1)
		m, _, err := ImportConfig([]byte(data), "dsa.json", "dsa")
		if err != nil {
			t.Fatalf("%s: %v", tt.extra, err)
		}
		kv := kvOf(t, m, models.KVOptions{})
		// 10 × 576 × 2 = 11,520 + count × 132
		if got, want := kv.BytesPerToken(), 11_520+tt.count*132; got != want {
			t.Errorf("%s: bytes/token %d, want %d", tt.extra, got, want)
		}
	}
}

// A modelopt checkpoint's separate hf_quant_config.json gives the weights and
// the KV format when config.json has no quantization_config.
func TestImportQuantConfigFile(t *testing.T) {
	q := []byte(`{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}}`)
	m, notes, err := Import([]byte(llama()), "config.json", Options{Name: "q", QuantConfig: q, QuantFile: "hf_quant_config.json"})
	if err != nil {
		t.Fatal(err)
	}
	// As modelopt FP8 in TestImportQuantizationBlocks: 33,554,432 × 1 + 2,053,120 × 2
	if m.WeightDtype != "fp8" || m.WeightsBytes != 37_660_672 || m.KVDtype != "fp8" || m.Dtype != "bf16" {
		t.Errorf("weights %s %d B, kv %s, dtype %s; want fp8 37,660,672 B, fp8, bf16", m.WeightDtype, m.WeightsBytes, m.KVDtype, m.Dtype)
	}
	wantNote(t, notes, "quantization read from hf_quant_config.json")
	_, _, err = Import([]byte(llama()), "config.json", Options{Name: "q", QuantConfig: []byte(`{"quantization": {"quant_algo": "FP8",}}`), QuantFile: "hf_quant_config.json"})
	if err == nil || !strings.HasPrefix(err.Error(), "hf_quant_config.json:1:") {
		t.Errorf("a malformed hf_quant_config.json: %v, want an error at hf_quant_config.json:1:", err)
	}
}
