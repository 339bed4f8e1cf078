package models_test

import (
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

// Models built in the test, so that each new layout kind is checked against
// figures worked out by hand here, independently of the importer.

// dsaModel is DeepSeek-V3.2's cache: an MLA latent of 512 + 64 on 61 layers,
// and a sparse-attention indexer key of 128 fp8 + one fp32 scale (132 B).
func dsaModel() *catalog.Model {
	return &catalog.Model{Name: "dsa", Layers: 61, KVDtype: "bf16",
		MLA:    &catalog.MLA{KVLoraRank: 512, QKRopeHeadDim: 64, FP8EntryBytes: 656},
		Layout: []catalog.LayerGroup{{Kind: "full", Count: 61, IndexBytes: 132}}}
}

// v4Model is DeepSeek-V4-Flash's cache: one 448 + 64 latent per entry (584 B
// packed fp8), 2 window-only layers, 21 layers compressing 4 tokens into one
// entry with an indexer, 20 compressing 128, each with a window of 128.
func v4Model() *catalog.Model {
	return &catalog.Model{Name: "v4", Layers: 43, KVDtype: "fp8",
		MLA: &catalog.MLA{KVLoraRank: 448, QKRopeHeadDim: 64, FP8EntryBytes: 584},
		Layout: []catalog.LayerGroup{
			{Kind: "sliding", Count: 2, Window: 128},
			{Kind: "compressed", Count: 21, Ratio: 4, Window: 128, IndexBytes: 132, StateBytes: 81_920},
			{Kind: "compressed", Count: 20, Ratio: 128, Window: 128, StateBytes: 524_288},
		}}
}

// mambaModel is Jamba-1.5-Mini's shape: 4 attention layers (8 kv heads ×
// 128) and 28 Mamba layers with an 8,192-channel conv of kernel 4 and an SSM
// state of 8,192 × 16 elements.
func mambaModel(ssmDtype string) *catalog.Model {
	return &catalog.Model{Name: "mamba", Layers: 32, KVHeads: 8, HeadDim: 128, KVDtype: "bf16",
		Layout: []catalog.LayerGroup{
			{Kind: "mamba", Count: 28, ConvDim: 8192, ConvKernel: 4, SSMStateElements: 8192 * 16, SSMDtype: ssmDtype},
			{Kind: "full", Count: 4},
		}}
}

func newKV(t *testing.T, m *catalog.Model, opts models.KVOptions) *models.KV {
	t.Helper()
	kv, err := models.NewKV(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func TestNewLayoutKinds(t *testing.T) {
	tests := []struct {
		name          string
		m             *catalog.Model
		opts          models.KVOptions
		tokens        int
		perToken      int64 // BytesPerToken
		longPerToken  int64 // FullBytesPerToken
		state         int64 // StateBytesPerRequest
		request       int64 // RequestBytes(tokens)
		groups, kinds string
	}{
		// bf16: latent 61 × 576 × 2 = 70,272; indexer 61 × 132 = 8,052
		{"dsa bf16", dsaModel(), models.KVOptions{}, 100_000, 78_324, 78_324, 0,
			100_000 * 78_324, "2", "mla,indexer"},
		// fp8: the packed latent 61 × 656 = 40,016; the indexer is fp8 already: 8,052
		{"dsa fp8", dsaModel(), models.KVOptions{KVDtype: "fp8"}, 8_150, 48_068, 48_068, 0,
			8_150 * 48_068, "2", "mla,indexer"},
		// Indexer and latent are not split by tp.
		{"dsa tp 8", dsaModel(), models.KVOptions{TP: 8}, 10, 78_324, 78_324, 0, 783_240, "2", "mla,indexer"},
		// Short request (100 tokens, inside every window), per token:
		//   sliding 2 × 584 = 1,168
		//   c4  21 × 584 = 12,264 + ceil(12,264 / 4) = 3,066  → 15,330
		//   idx ceil(21 × 132 / 4) = 693
		//   c128 20 × 584 = 11,680 + ceil(11,680 / 128) = ceil(91.25) = 92 → 11,772
		//   total 1,168 + 15,330 + 693 + 11,772 = 28,963; long-context rate 3,066 + 693 + 92 = 3,851
		// State: 21 × 81,920 + 20 × 524,288 = 1,720,320 + 10,485,760 = 12,206,080.
		// A request of 131,072 tokens:
		//   sliding 2 × 128 × 584                   =     149,504
		//   c4   21 × (128 + 131,072/4) × 584        = 21 × 32,896 × 584 = 403,436,544
		//   idx  21 × (131,072/4) × 132              = 21 × 32,768 × 132 =  90,832,896
		//   c128 20 × (128 + 131,072/128) × 584      = 20 × 1,152 × 584  =  13,455,360
		//   + state 12,206,080                       → 520,080,384
		{"v4 long", v4Model(), models.KVOptions{}, 131_072, 28_963, 3_851, 12_206_080, 520_080_384, "4",
			"sliding,compressed,indexer,compressed"},
		// 100 tokens: 2 × 100 × 584 = 116,800; c4 21 × (100 + 25) × 584 = 1,533,000;
		// idx 21 × 25 × 132 = 69,300; c128 20 × (100 + 0) × 584 = 1,168,000; + 12,206,080
		{"v4 short", v4Model(), models.KVOptions{}, 100, 28_963, 3_851, 12_206_080,
			116_800 + 1_533_000 + 69_300 + 1_168_000 + 12_206_080, "4", "sliding,compressed,indexer,compressed"},
		// bf16 entries of 512 × 2 = 1,024 B at 131,072 tokens:
		//   2 × 128 × 1,024 + 21 × 32,896 × 1,024 + 90,832,896 + 20 × 1,152 × 1,024 + 12,206,080
		//   = 262,144 + 707,395,584 + 90,832,896 + 23,592,960 + 12,206,080 = 834,289,664
		{"v4 bf16", v4Model(), models.KVOptions{KVDtype: "bf16"}, 131_072, 2*1024 + 21*1024 + 21*1024/4 + 693 + 20*1024 + 20*1024/128,
			21*1024/4 + 693 + 20*1024/128, 12_206_080, 834_289_664, "4", "sliding,compressed,indexer,compressed"},
		// vLLM: per Mamba layer (4 − 1) × 8,192 × 2 + 131,072 × 2 = 49,152 + 262,144 = 311,296;
		// 28 layers 8,716,288. Attention 4 × 2 × 8 × 128 × 2 = 16,384 B/token.
		{"mamba vllm", mambaModel(""), models.KVOptions{}, 1000, 16_384, 16_384, 8_716_288,
			16_384_000 + 8_716_288, "2", "mamba,full"},
		// SGLang: the SSM state in fp32: 49,152 + 131,072 × 4 = 573,440 per layer; 28 × = 16,056,320
		{"mamba sglang", mambaModel(""), models.KVOptions{Engine: "sglang"}, 1000, 16_384, 16_384, 16_056_320,
			16_384_000 + 16_056_320, "2", "mamba,full"},
		// A config that pins fp32 for the SSM state: vLLM follows it.
		{"mamba vllm fp32", mambaModel("fp32"), models.KVOptions{}, 0, 16_384, 16_384, 16_056_320, 16_056_320, "2", "mamba,full"},
		// tp 2: conv 3 × 4,096 × 2 = 24,576, ssm 65,536 × 2 = 131,072: 28 × 155,648 = 4,358,144;
		// attention 4 × 2 × 4 × 128 × 2 = 8,192
		{"mamba vllm tp 2", mambaModel(""), models.KVOptions{TP: 2}, 1, 8_192, 8_192, 4_358_144, 8_192 + 4_358_144, "2", "mamba,full"},
		// An fp8 KV cache leaves the state in the model dtype.
		{"mamba vllm fp8 kv", mambaModel(""), models.KVOptions{KVDtype: "fp8"}, 1, 8_192, 8_192, 8_716_288, 8_192 + 8_716_288, "2", "mamba,full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := newKV(t, tt.m, tt.opts)
			if got := kv.BytesPerToken(); got != tt.perToken {
				t.Errorf("bytes/token %d, want %d", got, tt.perToken)
			}
			if got := kv.FullBytesPerToken(); got != tt.longPerToken {
				t.Errorf("long-context bytes/token %d, want %d", got, tt.longPerToken)
			}
			if got := kv.StateBytesPerRequest(); got != tt.state {
				t.Errorf("state %d, want %d", got, tt.state)
			}
			if got := kv.RequestBytes(tt.tokens); got != tt.request {
				t.Errorf("request bytes(%d) %d, want %d", tt.tokens, got, tt.request)
			}
			var kinds []string
			for _, g := range kv.Groups {
				kinds = append(kinds, g.Kind)
			}
			if got := strings.Join(kinds, ","); got != tt.kinds {
				t.Errorf("groups %s, want %s", got, tt.kinds)
			}
		})
	}
}

// Kimi-K2.5 with fp8 KV at 8,150 input tokens hands 286 MB from prefill to
// decode (FACTS.md §2): 61 × 576 × 1 B × 8,150 = 286,358,400 B.
func TestKimiK25HandOff(t *testing.T) {
	m := &catalog.Model{Name: "kimi", Layers: 61, KVDtype: "bf16", MLA: &catalog.MLA{KVLoraRank: 512, QKRopeHeadDim: 64}}
	if got := newKV(t, m, models.KVOptions{KVDtype: "fp8"}).RequestBytes(8_150); got != 286_358_400 {
		t.Errorf("request bytes %d, want 286,358,400", got)
	}
}

// What vLLM's allocator reserves per request, group by group.
func TestReserveBytes(t *testing.T) {
	kv := newKV(t, v4Model(), models.KVOptions{})
	// 1,000 tokens, block 16, 8,192 batched tokens.
	// sliding: (ceil(min(127 + 8,192, 1,000) / 16) + 1) × 16 × 2 × 584 = 64 × 16 × 1,168 = 1,196,032
	// c4: the window 64 × 16 × 21 × 584 = 12,558,336; compressed ceil(1,000 / 64) = 16 blocks:
	//     16 × 16 × 21 × 584 = 3,139,584; state 1,720,320 → 17,418,240
	// idx: ceil(1,000 / 64) × 16 × 21 × 132 = 16 × 16 × 2,772 = 709,632
	// c128: window 64 × 16 × 20 × 584 = 11,960,320; compressed ceil(1,000 / 2,048) = 1 block:
	//     16 × 20 × 584 = 186,880; state 10,485,760 → 22,632,960
	want := []int64{1_196_032, 17_418_240, 709_632, 22_632_960}
	for i, g := range kv.Groups {
		if got := g.ReserveBytes(1000, 16, 8192); got != want[i] {
			t.Errorf("group %d (%s): reserve %d, want %d (%s)", i, g.Kind, got, want[i], g.ReserveValues(1000, 16, 8192))
		}
	}
	mk := newKV(t, mambaModel(""), models.KVOptions{})
	// Mamba: the state, 8,716,288; full: ceil(1,000 / 16) × 16 × 16,384 = 63 × 16 × 16,384 = 16,515,072
	if a, b := mk.Groups[0].ReserveBytes(1000, 16, 8192), mk.Groups[1].ReserveBytes(1000, 16, 8192); a != 8_716_288 || b != 16_515_072 {
		t.Errorf("mamba model reserves %d + %d, want 8,716,288 + 16,515,072", a, b)
	}
}

func TestStateConventions(t *testing.T) {
	tests := []struct {
		engine, want string
		known        bool
	}{
		{"", "vllm", true}, {"vllm", "vllm", true}, {"SGLang", "sglang", true}, {"sglang-0.5", "sglang", true},
		{"vllm-0.19", "vllm", true}, {"trtllm", "vllm", false},
	}
	for _, tt := range tests {
		s := models.StateConventionFor(tt.engine)
		if s.Engine != tt.want || (s.Note == "") != tt.known {
			t.Errorf("%q: convention %s note %q, want %s known %t", tt.engine, s.Engine, s.Note, tt.want, tt.known)
		}
		if !strings.Contains(s.Describe(), "conv_kernel − 1 columns") {
			t.Errorf("%q: %s", tt.engine, s.Describe())
		}
	}
}
