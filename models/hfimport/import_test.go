package hfimport

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

// importFile imports a fixture under testdata/models, named by its base name.
func importFile(t *testing.T, rel string) (*catalog.Model, []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", rel))
	if err != nil {
		t.Fatal(err)
	}
	m, notes, err := ImportConfig(data, filepath.Base(rel), "")
	if err != nil {
		t.Fatalf("import %s: %v", rel, err)
	}
	return m, notes
}

func kvOf(t *testing.T, m *catalog.Model, opts models.KVOptions) *models.KV {
	t.Helper()
	kv, err := models.NewKV(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// within reports whether got is within tol (a fraction) of want.
func within(got, want int64, tol float64) bool {
	d := float64(got-want) / float64(want)
	return d >= -tol && d <= tol
}

const (
	million = int64(1_000_000)
	billion = int64(1_000_000_000)
)

// The config.json files of FACTS §2 (verbatim copies under testdata/models):
// bytes per token against the published figures, and parameters against the
// model cards within 3%.
func TestImportSharedConfigs(t *testing.T) {
	tests := []struct {
		file          string
		name, hfID    string
		bytesPerToken int64 // FACTS §2, bf16
		fullPerToken  int64 // full-attention layers only
		paramsTotal   int64 // published
		paramsActive  int64 // published, MoE only
	}{
		// 28 layers × 2 × 8 kv heads × head_dim 128 × 2 bytes
		{"Qwen--Qwen3-0.6B.json", "qwen3-0.6b", "Qwen/Qwen3-0.6B", 114_688, 114_688, 600 * million, 0},
		// 36 × 2 × 8 × 128 × 2
		{"Qwen--Qwen3-8B.json", "qwen3-8b", "Qwen/Qwen3-8B", 147_456, 147_456, 8_200 * million, 0},
		// 64 × 2 × 8 × 128 × 2
		{"Qwen--Qwen3-32B.json", "qwen3-32b", "Qwen/Qwen3-32B", 262_144, 262_144, 32_800 * million, 0},
		// 94 × 2 × 4 × 128 × 2
		{"Qwen--Qwen3-235B-A22B.json", "qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B", 192_512, 192_512, 235 * billion, 22 * billion},
		// 32 × 2 × 8 × (4096/32 = 128) × 2
		{"meta-llama--Meta-Llama-3.1-8B.json", "meta-llama-3.1-8b", "meta-llama/Meta-Llama-3.1-8B", 131_072, 131_072, 8_030 * million, 0},
		// 80 × 2 × 8 × (8192/64 = 128) × 2 = 320 KiB
		{"meta-llama--Meta-Llama-3.1-70B.json", "meta-llama-3.1-70b", "meta-llama/Meta-Llama-3.1-70B", 327_680, 327_680, 70_600 * million, 0},
		// MLA: 61 × (kv_lora_rank 512 + qk_rope_head_dim 64) × 2; the MTP layer is not counted
		{"deepseek-ai--DeepSeek-V3.json", "deepseek-v3", "deepseek-ai/DeepSeek-V3", 70_272, 70_272, 671 * billion, 37 * billion},
		// 32 × 2 × 8 × (4096/32 = 128) × 2 (no FACTS figure; Mixtral 46.7B / 12.9B)
		{"mistralai--Mixtral-8x7B-v0.1.json", "mixtral-8x7b-v0.1", "mistralai/Mixtral-8x7B-v0.1", 131_072, 131_072, 46_700 * million, 12_900 * million},
		// 36 × 2 × 8 × head_dim 64 × 2 = 73,728; its 18 full layers: 18 × 2,048 = 36,864
		// (model card: 116.83B total, 5.13B active)
		{"openai--gpt-oss-120b.json", "gpt-oss-120b", "openai/gpt-oss-120b", 73_728, 36_864, 116_830 * million, 5_130 * million},
		// sliding: 25 × 2 × 8 × 256 × 2 = 204,800; full: 5 × 2 × 2 × 512 × 2 = 20,480
		// (model card: 25.2B total, 3.8B active)
		{"google--gemma-4-26B-A4B.json", "gemma-4-26b-a4b", "google/gemma-4-26B-A4B", 225_280, 20_480, 25_200 * million, 3_800 * million},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			m, _ := importFile(t, tt.file)
			if m.Name != tt.name || m.HFID != tt.hfID {
				t.Errorf("name %q hf_id %q, want %q %q", m.Name, m.HFID, tt.name, tt.hfID)
			}
			if want := []string{tt.hfID}; !reflect.DeepEqual(m.Aliases, want) {
				t.Errorf("aliases %v, want %v", m.Aliases, want)
			}
			if want := "imported from " + tt.file + " by kvplan models import"; m.Source != want {
				t.Errorf("source %q, want %q", m.Source, want)
			}
			kv := kvOf(t, m, models.KVOptions{})
			if got := kv.BytesPerToken(); got != tt.bytesPerToken {
				t.Errorf("bytes/token %d, want %d", got, tt.bytesPerToken)
			}
			if got := kv.FullBytesPerToken(); got != tt.fullPerToken {
				t.Errorf("full-attention bytes/token %d, want %d", got, tt.fullPerToken)
			}
			if !within(m.ParamsTotal, tt.paramsTotal, 0.03) {
				t.Errorf("params_total %d, want %d ± 3%%", m.ParamsTotal, tt.paramsTotal)
			}
			if tt.paramsActive == 0 && m.ParamsActive != 0 {
				t.Errorf("params_active %d for a dense model, want 0 (= total)", m.ParamsActive)
			}
			if tt.paramsActive != 0 && !within(m.ParamsActive, tt.paramsActive, 0.03) {
				t.Errorf("params_active %d, want %d ± 3%%", m.ParamsActive, tt.paramsActive)
			}
		})
	}
}

// Exact parameter counts where the checkpoint's own count is public (the
// Hugging Face safetensors totals), and the regressions of the formula.
func TestImportParamsExact(t *testing.T) {
	tests := []struct {
		file          string
		total, active int64
	}{
		{"Qwen--Qwen3-0.6B.json", 596_049_920, 0},                // = the catalog's qwen3-0.6b entry
		{"meta-llama--Meta-Llama-3.1-8B.json", 8_030_261_248, 0}, // safetensors total
		{"meta-llama--Meta-Llama-3.1-70B.json", 70_553_706_496, 0},
		{"mistralai--Mixtral-8x7B-v0.1.json", 46_702_792_704, 12_748_853_248},
		{"variants/mistralai--Mistral-7B-v0.1.json", 7_241_732_096, 0},
		// DeepSeek-V3: 671.0B without the 14B MTP module; active 36.6B
		// (the published 37B includes the input embedding, 0.93B)
		{"deepseek-ai--DeepSeek-V3.json", 671_026_404_352, 36_625_603_584},
		// gpt-oss-120b: 114.66B in experts, 4 of 128 active per layer
		{"openai--gpt-oss-120b.json", 116_789_336_640, 5_131_598_400},
	}
	for _, tt := range tests {
		m, _ := importFile(t, tt.file)
		if m.ParamsTotal != tt.total || m.ParamsActive != tt.active {
			t.Errorf("%s: params %d / %d, want %d / %d", tt.file, m.ParamsTotal, m.ParamsActive, tt.total, tt.active)
		}
	}
}

func TestImportDeepSeekFP8(t *testing.T) {
	m, notes := importFile(t, "deepseek-ai--DeepSeek-V3.json")
	if m.WeightDtype != "fp8" || m.KVDtype != "bf16" || m.MTPLayers != 1 || m.Layers != 61 {
		t.Errorf("weight %s kv %s mtp %d layers %d, want fp8 bf16 1 61", m.WeightDtype, m.KVDtype, m.MTPLayers, m.Layers)
	}
	if m.MLA == nil || m.MLA.KVLoraRank != 512 || m.MLA.QKRopeHeadDim != 64 {
		t.Fatalf("mla %+v, want 512 / 64", m.MLA)
	}
	// 61 × 576 × 1 byte
	if got := kvOf(t, m, models.KVOptions{KVDtype: "fp8"}).BytesPerToken(); got != 35_136 {
		t.Errorf("fp8 bytes/token %d, want 35,136", got)
	}
	// MLA is not split by tensor parallelism.
	if got := kvOf(t, m, models.KVOptions{TP: 8}).BytesPerToken(); got != 70_272 {
		t.Errorf("tp 8 bytes/token %d, want 70,272", got)
	}
	wantNote(t, notes, "1 multi-token-prediction layer(s) are not counted")
}

func TestImportGPTOSS(t *testing.T) {
	m, notes := importFile(t, "openai--gpt-oss-120b.json")
	if m.WeightDtype != "mxfp4" || m.KVDtype != "bf16" || m.HeadDim != 64 {
		t.Errorf("weight %s kv %s head_dim %d, want mxfp4 bf16 64", m.WeightDtype, m.KVDtype, m.HeadDim)
	}
	want := []catalog.LayerGroup{{Kind: "sliding", Count: 18, Window: 128}, {Kind: "full", Count: 18}}
	if !reflect.DeepEqual(m.Layout, want) {
		t.Errorf("layout %+v, want %+v", m.Layout, want)
	}
	// 114,661,785,600 expert parameters × 4.25/8 + 2,127,551,040 others × 2
	// = 60,914,073,600 + 4,255,102,080, about the 65 GB of the published checkpoint.
	if m.WeightsBytes != 65_169_175_680 {
		t.Errorf("weights_bytes %d, want 65,169,175,680", m.WeightsBytes)
	}
	// A request of 4,096 tokens: 18 sliding layers hold 128 tokens, 18 full hold all.
	// 128 × 18 × 2,048 + 4,096 × 18 × 2,048 = 4,718,592 + 150,994,944
	if got := kvOf(t, m, models.KVOptions{}).RequestBytes(4096); got != 155_713_536 {
		t.Errorf("request bytes %d, want 155,713,536", got)
	}
	wantNote(t, notes, "head_dim 64 differs from hidden_size/num_attention_heads 45; using head_dim")
	wantNote(t, notes, "torch_dtype and dtype are missing: assuming bf16")
}

func TestImportGemma4(t *testing.T) {
	m, notes := importFile(t, "google--gemma-4-26B-A4B.json")
	want := []catalog.LayerGroup{
		{Kind: "sliding", Count: 25, Window: 1024},
		{Kind: "full", Count: 5, KVHeads: 2, HeadDim: 512}, // num_global_key_value_heads × global_head_dim
	}
	if !reflect.DeepEqual(m.Layout, want) {
		t.Errorf("layout %+v, want %+v", m.Layout, want)
	}
	if m.KVHeads != 8 || m.HeadDim != 256 || !m.TiedEmbeddings || m.Layers != 30 {
		t.Errorf("kv_heads %d head_dim %d tied %t layers %d, want 8 256 true 30", m.KVHeads, m.HeadDim, m.TiedEmbeddings, m.Layers)
	}
	// K = V shares the projection, not the cache: both are kept.
	wantNote(t, notes, "KV bytes are not halved")
	wantNote(t, notes, "the decoder is read from text_config")
}

// Hand-made configs of every variant in FACTS §2.
func TestImportVariants(t *testing.T) {
	tests := []struct {
		file          string
		name          string
		layers        int
		bytesPerToken int64
		fullPerToken  int64
		stateBytes    int64 // per request
		layout        string
		note          string
	}{
		// bare sliding_window: 32 × 2 × 8 × 128 × 2, every layer windowed
		{"mistralai--Mistral-7B-v0.1.json", "mistral-7b-v0.1", 32, 131_072, 0, 0,
			"32 sliding (window 4096)", "every layer is a sliding window"},
		// head_dim null → 2048/16 = 128: 4 × 2 × 4 × 128 × 2
		{"null-head-dim.json", "null-head-dim", 4, 8_192, 8_192, 0, "", ""},
		// num_kv_heads 2: 2 × 2 × 2 × (1024/8 = 128) × 2
		{"kv-num_kv_heads.json", "kv-num_kv_heads", 2, 2_048, 2_048, 0, "", ""},
		// n_head_kv 1 (Falcon MQA): 2 × 2 × 1 × 128 × 2
		{"kv-n_head_kv.json", "kv-n_head_kv", 2, 1_024, 1_024, 0, "", ""},
		// multi_query_group_num 2, kv_channels 128 (ChatGLM): 2 × 2 × 2 × 128 × 2
		{"kv-multi_query_group_num.json", "kv-multi_query_group_num", 2, 2_048, 2_048, 0, "", ""},
		// no kv heads → MHA: 2 × 2 × 8 × 128 × 2
		{"kv-absent-mha.json", "kv-absent-mha", 2, 8_192, 8_192, 0, "", "kv_heads = num_attention_heads 8 (MHA)"},
		// text_config: 32 × 2 × 32 × 128 × 2
		{"text-config-wrapper.json", "vision-wrapper-7b", 32, 524_288, 524_288, 0, "", "read from text_config"},
		// sliding_window_pattern 6: layers 5, 11, 17, 23 full.
		// 22 × 2 × 1 × 256 × 2 = 22,528 sliding + 4 × 1,024 = 4,096 full
		{"gemma3-sliding-pattern.json", "gemma3-sliding-pattern", 26, 26_624, 4_096, 0,
			"22 sliding (window 512), 4 full", ""},
		// Gemma-2 alternation: 42 × 2 × 8 × 256 × 2 = 344,064; 21 full × 8,192
		{"gemma2-alternating.json", "gemma2-alternating", 42, 344_064, 172_032, 0,
			"21 sliding (window 4096), 21 full", "layers alternate sliding"},
		// use_sliding_window false: all full. 24 × 2 × 2 × (896/14 = 64) × 2
		{"qwen2-sliding-off.json", "qwen2-sliding-off", 24, 12_288, 12_288, 0, "", "sliding_window 32768 is not used"},
		// use_sliding_window true, max_window_layers 21: layers 21-23 sliding; 21 × 512 full
		{"qwen2-sliding-on.json", "qwen2-sliding-on", 24, 12_288, 10_752, 0, "21 full, 3 sliding (window 4096)", ""},
		// full_attention_interval 4: 12 full × 2 × 2 × 256 × 2 = 24,576; 36 linear layers of
		// (32·128·128 = 524,288 + 3 × (2·16·128 + 32·128) = 24,576) × 2 = 1,097,728 bytes
		{"Qwen--Qwen3-Next-80B-A3B-Instruct.json", "qwen3-next-80b-a3b-instruct", 48, 24_576, 24_576, 39_518_208,
			"36 linear, 12 full", ""},
		// the same as an explicit layer_types list
		{"qwen3-next-layer-types.json", "qwen3-next-layer-types", 48, 24_576, 24_576, 39_518_208,
			"36 linear, 12 full", ""},
		// hybrid_override_pattern: 4 '*' × 2 × 8 × 128 × 2 = 16,384; 27 'M' of
		// SSM 128·80·128 = 1,310,720 × 4 B (fp32: vLLM's NemotronH default, the
		// config pins none) + conv 3 × (10,240 + 2·8·128) = 36,864 × 2 B
		// = 5,242,880 + 73,728 = 5,316,608; × 27 = 143,548,416. 25 '-' blocks hold nothing
		{"nemotron-h-pattern.json", "nemotron-h-9b-like", 31, 16_384, 16_384, 143_548_416,
			"27 mamba, 4 full", "25 of 56 blocks hold no cache"},
		// GPT-2 small's shape (n_inner null = 4 × 768), MHA: 12 × 2 × 12 × 64 × 2 = 36,864
		{"gpt2.json", "gpt2", 12, 36_864, 36_864, 0, "", "n_inner is null: the MLP is 4 × n_embd = 3072 wide"},
		// google/gemma-3-27b-it: text_config leaves out vocab_size and sliding_window_pattern
		// (Gemma3TextConfig's 262,208 and 6): 52 sliding × 2 × 16 × 128 × 2 = 425,984
		// + 10 full × 8,192 = 81,920, the catalog's gemma-3-27b figures
		{"google--gemma-3-27b-it.json", "gemma-3-27b-it", 62, 507_904, 81_920, 0,
			"52 sliding (window 1024), 10 full", "sliding_window_pattern 6, vocab_size 262208: transformers' Gemma3TextConfig defaults"},
		// layers_block_type, mamba_ssm_cache_dtype float32: 1 attention × 2 × 2 × 64 × 2 = 512;
		// 2 mamba of 8·64·16 × 4 + 3 × (512 + 32) × 2 = 32,768 + 3,264 = 36,032
		{"layers-block-type.json", "tiny-hybrid", 3, 512, 512, 72_064, "2 mamba, 1 full", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			m, notes := importFile(t, filepath.Join("variants", tt.file))
			kv := kvOf(t, m, models.KVOptions{})
			if m.Name != tt.name || m.Layers != tt.layers {
				t.Errorf("name %q layers %d, want %q %d", m.Name, m.Layers, tt.name, tt.layers)
			}
			if got := kv.BytesPerToken(); got != tt.bytesPerToken {
				t.Errorf("bytes/token %d, want %d", got, tt.bytesPerToken)
			}
			if got := kv.FullBytesPerToken(); got != tt.fullPerToken {
				t.Errorf("full bytes/token %d, want %d", got, tt.fullPerToken)
			}
			if got := kv.StateBytesPerRequest(); got != tt.stateBytes {
				t.Errorf("state bytes %d, want %d", got, tt.stateBytes)
			}
			if got := describeGroups(m.Layout); got != tt.layout {
				t.Errorf("layout %q, want %q", got, tt.layout)
			}
			if tt.note != "" {
				wantNote(t, notes, tt.note)
			}
		})
	}
}

// Parameters of the hand-made configs that copy a published model's shape.
func TestImportVariantParams(t *testing.T) {
	tests := []struct {
		file          string
		total, active int64 // published
	}{
		{"mistralai--Mistral-7B-v0.1.json", 7_240 * million, 0},
		{"gemma2-alternating.json", 9_240 * million, 0},             // Gemma-2-9B's shape, tied by default
		{"text-config-wrapper.json", 6_740 * million, 0},            // Llama-2-7B's shape
		{"Qwen--Qwen3-Next-80B-A3B-Instruct.json", 80 * billion, 0}, // "80B total" (3.56B active here vs the "A3B" name)
		{"nemotron-h-pattern.json", 8_890 * million, 0},             // NVIDIA-Nemotron-Nano-9B-v2's shape
		{"gpt2.json", 124 * million, 0},                             // GPT-2 small: 124M (its 0.8M learned positions and the biases are not counted)
	}
	for _, tt := range tests {
		m, _ := importFile(t, filepath.Join("variants", tt.file))
		if !within(m.ParamsTotal, tt.total, 0.03) {
			t.Errorf("%s: params_total %d, want %d ± 3%%", tt.file, m.ParamsTotal, tt.total)
		}
	}
	m, _ := importFile(t, "variants/Qwen--Qwen3-Next-80B-A3B-Instruct.json")
	if m.ParamsActive != 3_563_764_480 {
		t.Errorf("qwen3-next params_active %d, want 3,563,764,480", m.ParamsActive)
	}
}

func TestImportDtypes(t *testing.T) {
	m, notes := importFile(t, "variants/gemma2-alternating.json")
	if m.WeightDtype != "bf16" || m.KVDtype != "bf16" {
		t.Errorf("float32 gemma2: weight %s kv %s, want bf16 bf16", m.WeightDtype, m.KVDtype)
	}
	wantNote(t, notes, "torch_dtype is float32")
	m, _ = importFile(t, "variants/null-head-dim.json")
	if m.WeightDtype != "fp16" || m.KVDtype != "fp16" {
		t.Errorf("float16: weight %s kv %s, want fp16 fp16", m.WeightDtype, m.KVDtype)
	}
}

// Every error class, with the message the user sees.
func TestImportErrors(t *testing.T) {
	files := []struct{ file, want string }{
		{"syntax-error.json", `syntax-error.json:4:3: JSON syntax: invalid character '"' after object key:value pair`},
		{"missing-layers.json", "missing-layers.json: num_hidden_layers: missing (also looked for n_layer, num_layers)"},
		{"layer-types-count.json", "layer-types-count.json:11:3: layer_types: has 40 entries but num_hidden_layers is 48"},
		{"sliding-without-window.json", "sliding-without-window.json:11:3: sliding_window: missing or null, but layer_types has 5 sliding layers"},
		{"contradictory-kv-heads.json", "contradictory-kv-heads.json:8:3: num_kv_heads: is 4 but num_key_value_heads is 8; they name the same thing"},
		{"head-dim-indivisible.json", "head-dim-indivisible.json: head_dim: missing or null, and hidden_size 1000 is not divisible by num_attention_heads 64"},
	}
	for _, tt := range files {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "broken", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = ImportConfig(data, tt.file, "")
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.file, err, tt.want)
		}
	}

	// Inline configs: each key on its own line, so line N is the (N-1)th key.
	tests := []struct {
		name, json, want string
	}{
		{"empty", ``, "config.json: JSON syntax: the file is empty; expected a config.json object"},
		{"truncated", "{\n  \"hidden_size\": 1024,\n", "config.json:3:1: JSON syntax: unexpected end of file"},
		{"not an object", `[1, 2]`, "config.json:1:1: expected a JSON object (a Hugging Face config.json), got a list"},
		{"trailing data", "{}\n{}", "config.json:2:1: JSON syntax: data after the top-level object"},
		{"text_config not an object", "{\n  \"text_config\": 5\n}", "config.json:2:3: text_config: is a number; expected the decoder's config object"},
		{"layers zero", llama(`"num_hidden_layers": 0`), "config.json:2:3: num_hidden_layers: must be > 0 (got 0)"},
		{"layers a string", llama(`"num_hidden_layers": "28"`), "config.json:2:3: num_hidden_layers: is a string; expected an integer"},
		{"head_dim zero", llama(`"head_dim": 0`), "config.json:2:3: head_dim: must be > 0 (got 0)"},
		{"kv heads above heads", llama(`"num_key_value_heads": 16`), "config.json:2:3: num_key_value_heads: 16 is more than num_attention_heads 8"},
		{"kv heads not dividing", llama(`"num_key_value_heads": 3`), "config.json:2:3: num_key_value_heads: 3 does not divide num_attention_heads 8"},
		{"unknown dtype", llama(`"torch_dtype": "int3"`), `config.json:2:3: torch_dtype: "int3" is not one of bf16, bfloat16, float, float16, float32, fp16, fp32, half`},
		{"dtype contradiction", llama(`"dtype": "float16"`), `config.json:2:3: dtype: is "float16" but torch_dtype is "bfloat16"; they name the same thing`},
		{"unknown compressed-tensors format", llama(`"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 2, "type": "int"}}}}`),
			"config.json:2:3: quantization_config: config_groups.g.weights: 2-bit int weights (group_size 0) are not a format kvplan knows; expected 8-bit float or int, 4-bit int, or 4-bit float in groups of 16 (nvfp4) or 32 (mxfp4)"},
		{"bad ignore regex", llama(`"quantization_config": {"quant_method": "fp8", "ignore": ["re:(unclosed"]}`),
			"config.json:2:3: quantization_config: not a regular expression (missing closing )): \"re:(unclosed\""},
		{"unknown layer type", llama(`"layer_types": ["full_attention", "cross_attention"]`),
			`config.json:2:3: layer_types: entry 1 is "cross_attention"; expected full_attention, sliding_attention, chunked_attention, linear_attention or mamba`},
		{"sliding while switched off", llama(`"layer_types": ["full_attention", "sliding_attention"]`, `"sliding_window": 128`, `"use_sliding_window": false`),
			"config.json:2:3: layer_types: has 1 sliding_attention layers but use_sliding_window is false"},
		{"interval contradicts layer_types", llama(`"layer_types": ["linear_attention", "linear_attention"]`, `"full_attention_interval": 2`),
			"config.json:2:3: layer_types: entry 1 is linear attention, but full_attention_interval 2 makes it full"},
		{"pattern length", llama(`"hybrid_override_pattern": "M*M"`), "config.json:2:3: hybrid_override_pattern: has 3 entries but num_hidden_layers is 2"},
		{"pattern char", llama(`"hybrid_override_pattern": "M?"`), `config.json:2:3: hybrid_override_pattern: entry 1 is '?'; expected M (Mamba), * (attention), - (MLP) or E (MoE)`},
		{"mamba dims missing", llama(`"hybrid_override_pattern": "M*"`), "config.json: mamba_num_heads: missing (also looked for mamba_n_heads)"},
		{"linear dims missing", llama(`"full_attention_interval": 2`), "config.json: linear_num_value_heads: missing"},
		{"sliding on without max_window_layers", llama(`"use_sliding_window": true`, `"sliding_window": 4096`),
			"config.json: max_window_layers: missing, but use_sliding_window is true; it says how many bottom layers keep full attention"},
		{"kv sharing", llama(`"num_kv_shared_layers": 1`),
			"config.json:2:3: num_kv_shared_layers: is 1: layers that reuse another layer's KV cache are not supported by the catalog's layout"},
		{"experts without top-k", llama(`"num_experts": 8`),
			"config.json: num_experts_per_tok: missing (also looked for experts_per_token, top_k_experts, moe_topk, num_experts_per_token)"},
		{"top-k above experts", llama(`"num_local_experts": 8`, `"num_experts_per_tok": 9`), "config.json:3:3: num_experts_per_tok: 9 is more than the 8 experts"},
		{"unsupported model type", strings.Replace(llama(), `"llama"`, `"zamba2"`, 1),
			`config.json:8:3: model_type: "zamba2" is not supported: kvplan cannot read Zamba2's shared attention blocks from config.json; write the catalog entry by hand`},
		{"absurd layers", llama(`"num_hidden_layers": 1000000000000`), "config.json:2:3: num_hidden_layers: is 1000000000000; no real model has a dimension above 16777216"},
		{"absurd size", llama(`"hidden_size": 16777216`, `"intermediate_size": 16777216`, `"num_hidden_layers": 5000`),
			"config.json:4:3: num_hidden_layers: with these dimensions the model would have more than 10^15 parameters; check the config"},
		{"MLA without rope dim", llama(`"kv_lora_rank": 512`), "config.json: qk_rope_head_dim: missing"},
		{"duplicate key", strings.Replace(llama(`"num_hidden_layers": 2`), `"vocab_size": 1000`, `"num_hidden_layers": 4`, 1),
			"config.json:6:3: num_hidden_layers: appears twice in the same object (first on line 2); JSON readers keep only one of them, so say which you mean"},
		{"duplicate nested key", llama(`"quantization_config": {"quant_method": "fp8",` + "\n" + `  "quant_method": "awq"}`),
			"config.json:3:3: quantization_config.quant_method: appears twice in the same object (first on line 2); JSON readers keep only one of them, so say which you mean"},
		{"Infinity where a number is needed", llama(`"num_hidden_layers": Infinity`),
			"config.json:2:3: num_hidden_layers: is the non-finite number Infinity; expected an integer"},
		{"NaN where a string is needed", llama(`"torch_dtype": NaN`),
			"config.json:2:3: torch_dtype: is the non-finite number NaN; expected a string"},
		{"Infinity after it on the line", llama(`"time_step_limit": [0.0, -Infinity], "head_dim": "x"`),
			"config.json:2:40: head_dim: is a string; expected an integer"},
		{"bare word", llama(`"time_step_limit": Infinite`), "config.json:2:22: JSON syntax: invalid character 'I' looking for beginning of value"},
		{"invalid UTF-8", llama(`"architectures": ["Caf` + "\xe9" + `"]`), "config.json:2:25: invalid UTF-8 (byte 0xe9); a config.json must be UTF-8 text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ImportConfig([]byte(tt.json), "config.json", "x")
			if err == nil || err.Error() != tt.want {
				t.Errorf("\n got %v\nwant %s", err, tt.want)
			}
			var ie *ImportError
			if err != nil && !asImportError(err, &ie) {
				t.Errorf("error %T is not an *ImportError", err)
			}
		})
	}
}

func asImportError(err error, target **ImportError) bool {
	e, ok := err.(*ImportError)
	*target = e
	return ok
}

// llama is a small valid config with extra keys first, one key per line:
// the first extra key is on line 2.
func llama(extra ...string) string {
	lines := append(append([]string{}, extra...),
		`"hidden_size": 1024`, `"intermediate_size": 4096`, `"num_attention_heads": 8`,
		`"num_hidden_layers": 2`, `"vocab_size": 1000`, `"torch_dtype": "bfloat16"`, `"model_type": "llama"`)
	seen := map[string]bool{}
	var out []string
	for _, l := range lines {
		k, _, _ := strings.Cut(l, ":")
		if !seen[k] {
			seen[k] = true
			out = append(out, "  "+l)
		}
	}
	return "{\n" + strings.Join(out, ",\n") + "\n}\n"
}

func TestImportNames(t *testing.T) {
	data := []byte(llama())
	tests := []struct {
		file, given         string
		name, hfID, aliases string
	}{
		{"Qwen--Qwen3-0.6B.json", "", "qwen3-0.6b", "Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B"},
		{"/home/u/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/0123abc/config.json", "", "qwen3-8b", "Qwen/Qwen3-8B", "Qwen/Qwen3-8B"},
		{"models/My-Model/config.json", "", "my-model", "", ""},
		{"Qwen--Qwen3-0.6B.json", "My-Qwen", "my-qwen", "Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B"},
		{"config.json", "Org/Thing-1B", "thing-1b", "Org/Thing-1B", "Org/Thing-1B"},
	}
	for _, tt := range tests {
		m, _, err := ImportConfig(data, tt.file, tt.given)
		if err != nil {
			t.Errorf("%s %q: %v", tt.file, tt.given, err)
			continue
		}
		if m.Name != tt.name || m.HFID != tt.hfID || strings.Join(m.Aliases, ",") != tt.aliases {
			t.Errorf("%s %q: name %q hf_id %q aliases %v, want %q %q %q", tt.file, tt.given, m.Name, m.HFID, m.Aliases, tt.name, tt.hfID, tt.aliases)
		}
	}
	// _name_or_path wins over the file name.
	m, _ := importFile(t, "variants/null-head-dim.json")
	if m.HFID != "example/null-head-dim" {
		t.Errorf("hf_id %q, want example/null-head-dim", m.HFID)
	}

	for _, tt := range []struct{ file, given, want string }{
		{"config.json", "", "config.json: name: cannot derive a model name from the file name or _name_or_path; pass --name"},
		{"x.json", "my model", `x.json: name: "my model" is not a usable catalog name; use lower-case letters, digits, '.', '-', '_' and '+' (pass --name)`},
	} {
		_, _, err := ImportConfig(data, tt.file, tt.given)
		if err == nil || err.Error() != tt.want {
			t.Errorf("\n got %v\nwant %s", err, tt.want)
		}
	}
}

// Every fixture's entry, printed by EncodeTOML, parses back through the
// catalog's validation to the same entry with the same KV arithmetic.
func TestEncodeTOMLRoundTrip(t *testing.T) {
	var files []string
	for _, g := range []string{"*.json", "variants/*.json"} {
		m, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "models", g))
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found %d fixtures, want at least 20", len(files))
	}
	var all []byte
	for _, f := range files {
		rel, _ := filepath.Rel(filepath.Join("..", "..", "testdata", "models"), f)
		m, _ := importFile(t, rel)
		out, err := EncodeTOML(m)
		if err != nil {
			t.Fatal(err)
		}
		c, err := catalog.Parse("imported.toml", out)
		if err != nil {
			t.Fatalf("%s: %v\n%s", rel, err, out)
		}
		if len(c.Models) != 1 {
			t.Fatalf("%s: %d models parsed, want 1", rel, len(c.Models))
		}
		got := *c.Models[0]
		got.File, got.Line = "", 0
		if !reflect.DeepEqual(&got, m) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", rel, got, *m)
		}
		if a, b := kvOf(t, &got, models.KVOptions{}).RequestBytes(10_000), kvOf(t, m, models.KVOptions{}).RequestBytes(10_000); a != b {
			t.Errorf("%s: request bytes %d after the round trip, want %d", rel, a, b)
		}
		all = append(append(all, out...), '\n')
	}
	// Appended one after another, the blocks make one valid catalog file.
	c, err := catalog.Parse("all.toml", all)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Models) != len(files) {
		t.Errorf("%d models in the appended file, want %d", len(c.Models), len(files))
	}
}

func TestEncodeTOMLText(t *testing.T) {
	m, _ := importFile(t, "openai--gpt-oss-120b.json")
	out, err := EncodeTOML(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `[[model]]
name = "gpt-oss-120b"
aliases = ["openai/gpt-oss-120b"]
hf_id = "openai/gpt-oss-120b"
params_total = 116_789_336_640
params_active = 5_131_598_400
weight_dtype = "mxfp4"
weights_bytes = 65_169_175_680
tied_embeddings = false
vocab_size = 201_088
hidden_size = 2880
attention_heads = 64
max_context = 131_072
layers = 36
kv_heads = 8
head_dim = 64
kv_dtype = "bf16"
source = "imported from openai--gpt-oss-120b.json by kvplan models import"

[[model.layout]]
kind = "sliding"
count = 18
window = 128

[[model.layout]]
kind = "full"
count = 18
`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if got := tomlString("a\"b\\c\x01"); got != `"a\"b\\c\u0001"` {
		t.Errorf("tomlString %s", got)
	}
}

func wantNote(t *testing.T, notes []string, sub string) {
	t.Helper()
	for _, n := range notes {
		if strings.Contains(n, sub) {
			return
		}
	}
	t.Errorf("no note contains %q; notes:\n  %s", sub, strings.Join(notes, "\n  "))
}

// FuzzImportConfig: no input panics; whatever imports also validates,
// round-trips, and gives sane KV arithmetic under every state convention:
// no negative figure, a request's bytes never shrink as it grows, and an
// empty request holds just the state. `go test` runs the seeds: every fixture.
func FuzzImportConfig(f *testing.F) {
	for _, g := range []string{"*.json", "variants/*.json", "broken/*.json", "more/*.json"} {
		files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "models", g))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte(llama(`"num_hidden_layers": 1000000000000`)))
	f.Add([]byte(llama(`"hidden_size": 16777216`, `"intermediate_size": 16777216`, `"num_hidden_layers": 5000`)))
	f.Add([]byte(llama(`"time_step_limit": [0.0, Infinity]`, `"quantization_config": {"quant_algo": "NVFP4"}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, err := ImportConfig(data, "config.json", "fuzz")
		if err != nil {
			return
		}
		out, err := EncodeTOML(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := catalog.Parse("fuzz.toml", out); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, engine := range models.StateConventions {
			for _, tp := range []int{1, 8} {
				kv, err := models.NewKV(m, models.KVOptions{Engine: engine, TP: tp})
				if err != nil {
					t.Fatalf("NewKV: %v\n%s", err, out)
				}
				if kv.BytesPerToken() < 0 || kv.FullBytesPerToken() < 0 || kv.StateBytesPerRequest() < 0 {
					t.Fatalf("negative KV figure %d %d %d\n%s", kv.BytesPerToken(), kv.FullBytesPerToken(), kv.StateBytesPerRequest(), out)
				}
				if got := kv.RequestBytes(0); got != kv.StateBytesPerRequest() {
					t.Fatalf("empty request %d B, want the state %d B\n%s", got, kv.StateBytesPerRequest(), out)
				}
				prev := int64(0)
				for _, n := range []int{1, 127, 128, 4096, 131_072, 1 << 20} {
					b := kv.RequestBytes(n)
					if b < prev {
						t.Fatalf("request bytes shrink: %d B at %d tokens after %d B\n%s", b, n, prev, out)
					}
					prev = b
					for _, g := range kv.Groups {
						if r := g.ReserveBytes(n, 16, 8192); r < 0 {
							t.Fatalf("negative reservation %d for %s\n%s", r, g.Kind, out)
						}
					}
				}
			}
		}
	})
}
