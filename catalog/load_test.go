package catalog_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/internal/tomlpos"
)

const testdata = "../testdata/catalog"

// A user catalog directory is merged over the embedded one: an entry of the
// same name replaces the embedded entry, a new name is added, and one file
// may hold models, links and GPUs.
func TestUserCatalogMerge(t *testing.T) {
	base := load(t)
	dir := filepath.Join(testdata, "override")
	c := load(t, dir)

	if len(c.Models) != len(base.Models)+1 || len(c.Links) != len(base.Links)+1 || len(c.GPUs) != len(base.GPUs)+1 {
		t.Fatalf("merged catalog: %d models, %d links, %d GPUs; want %d, %d, %d (one new of each)",
			len(c.Models), len(c.Links), len(c.GPUs), len(base.Models)+1, len(base.Links)+1, len(base.GPUs)+1)
	}

	// Replaced: the name in the file is "Qwen3-0.6B"; names are lower-cased,
	// so it replaces the embedded qwen3-0.6b instead of adding a second one.
	m, err := c.Model("qwen3-0.6b")
	if err != nil {
		t.Fatal(err)
	}
	wantFile := filepath.Join(dir, "models.toml")
	if m.Name != "qwen3-0.6b" || m.KVDtype != "fp8" || m.File != wantFile || m.Line != 4 ||
		!strings.HasPrefix(m.Source, "user override") {
		t.Errorf("qwen3-0.6b = {name %q, kv_dtype %q, %s:%d, source %q}; want the override at %s:4 with fp8",
			m.Name, m.KVDtype, m.File, m.Line, m.Source, wantFile)
	}
	// The replacement is whole: fields the override leaves out are empty,
	// not inherited from the embedded entry.
	if len(m.Aliases) != 0 || m.VocabSize != 0 {
		t.Errorf("override kept embedded fields: aliases %v, vocab_size %d", m.Aliases, m.VocabSize)
	}

	// Added: a model, a link and a GPU from the same file.
	if m, err := c.Model("acme/House-Model-3B"); err != nil || m.Name != "house-model-3b" {
		t.Errorf("new model: %v, %v", m, err)
	}
	if l, err := c.Link("lab-25gbe"); err != nil || l.EffectiveBytesPerS != 2.6e9 || l.File != wantFile {
		t.Errorf("new link: %+v, %v", l, err)
	}
	if g, err := c.GPU("lab-gpu"); err != nil || g.MemoryBytes != 16376<<20 || g.File != wantFile {
		t.Errorf("new gpu: %+v, %v", g, err)
	}

	// Replaced from a second file of the same directory.
	l, err := c.Link("1gbe")
	if err != nil {
		t.Fatal(err)
	}
	if l.EffectiveBytesPerS != 90e6 || l.LatencyMS != 0.5 || l.File != filepath.Join(dir, "links.toml") {
		t.Errorf("1gbe = %g B/s, %g ms from %s; want the override 90 MB/s, 0.5 ms", l.EffectiveBytesPerS, l.LatencyMS, l.File)
	}
	// Aliases of a replaced entry go with it.
	if _, err := c.Link("gige"); err == nil {
		t.Errorf("alias gige of the embedded 1gbe still resolves after the override")
	}

	// The embedded catalog itself is untouched by a merge.
	again := load(t)
	if m, _ := again.Model("qwen3-0.6b"); m.KVDtype != "bf16" {
		t.Errorf("embedded qwen3-0.6b changed to kv_dtype %q after a merge", m.KVDtype)
	}

	// Entries stay sorted by name after the merge.
	for i := 1; i < len(c.Models); i++ {
		if c.Models[i-1].Name >= c.Models[i].Name {
			t.Errorf("models not sorted: %q before %q", c.Models[i-1].Name, c.Models[i].Name)
		}
	}
}

// A single file may be given instead of a directory.
func TestUserCatalogSingleFile(t *testing.T) {
	c := load(t, filepath.Join(testdata, "override", "links.toml"))
	l, err := c.Link("1gbe")
	if err != nil || l.EffectiveBytesPerS != 90e6 {
		t.Errorf("1gbe = %+v, %v; want the 90 MB/s override", l, err)
	}
}

func TestUserCatalogMissingDir(t *testing.T) {
	_, err := catalog.Load(filepath.Join(testdata, "no-such-dir"))
	if err == nil || !strings.Contains(err.Error(), "no-such-dir") || !strings.Contains(err.Error(), catalog.EnvVar) {
		t.Errorf("err = %v; want one naming the directory and %s", err, catalog.EnvVar)
	}
}

// Each bad-input class gives a *tomlpos.Error naming file, line and field.
func TestBadCatalogFiles(t *testing.T) {
	bad := filepath.Join(testdata, "bad")
	for _, tc := range []struct {
		file  string
		line  int
		field string
		msg   string // a substring of Msg
		full  string // when set, the whole error string
	}{
		{
			file: "unknown-key.toml", line: 7, field: "model.kv_head",
			msg:  "unknown key; accepted here: aliases, attention_heads, dtype, head_dim, hf_id, hidden_size, kv_dtype, kv_heads, layers, layout, max_context, mla, moe, mtp_layers, name, params_active, params_total, source, tied_embeddings, vocab_size, weight_dtype, weights_bytes",
			full: bad + "/unknown-key.toml:7: model.kv_head: unknown key; accepted here: aliases, attention_heads, dtype, head_dim, hf_id, hidden_size, kv_dtype, kv_heads, layers, layout, max_context, mla, moe, mtp_layers, name, params_active, params_total, source, tied_embeddings, vocab_size, weight_dtype, weights_bytes",
		},
		{
			file: "unknown-layout-key.toml", line: 14, field: "model.layout.windw",
			msg: "unknown key; accepted here: conv_dim, conv_kernel, count, head_dim, index_bytes, kind, kv_heads, ratio, ssm_dtype, ssm_state_elements, state_bytes, window",
		},
		{
			file: "zero-layers.toml", line: 6, field: `model "no-layers": layers`,
			msg:  "must be > 0 (got 0)",
			full: bad + `/zero-layers.toml:6: model "no-layers": layers: must be > 0 (got 0)`,
		},
		{
			file: "negative-bandwidth.toml", line: 4, field: `link "backwards": nominal`,
			msg:  `rate "-10Gbps" is negative`,
			full: bad + `/negative-bandwidth.toml:4: link "backwards": nominal: rate "-10Gbps" is negative: want a rate such as 104MB/s, 25 GB/s, 1Gbps, 100Gb/s or 1.5GiB/s`,
		},
		{
			file: "negative-gpu-bandwidth.toml", line: 6, field: `gpu "backwards-gpu": memory_bandwidth`,
			msg: `rate "-1TB/s" is negative`,
		},
		{
			file: "efficiency-above-one.toml", line: 5, field: `link "too-good": efficiency`,
			msg:  "must be in (0, 1] (got 1.2)",
			full: bad + `/efficiency-above-one.toml:5: link "too-good": efficiency: must be in (0, 1] (got 1.2), or give effective = "104MB/s"`,
		},
		{
			file: "moe-memory-above-one.toml", line: 10, field: `efficiency "h100-sxm × vllm × bf16": moe_memory`,
			msg: "must be in (0, 1], or 0 for moe's value (got 1.5)",
		},
		{
			file: "malformed.toml", line: 4, field: "",
			msg: "TOML syntax: ",
		},
		{
			// source is absent, so the line is the entry's [[gpu]] header.
			file: "missing-source.toml", line: 2, field: `gpu "unsourced": source`,
			msg:  "missing: say where the figures come from",
			full: bad + `/missing-source.toml:2: gpu "unsourced": source: missing: say where the figures come from`,
		},
		{
			// The line is the model's first [[model.layout]] group.
			file: "layout-sum.toml", line: 11, field: `model "short-layout": layout`,
			msg:  "layer counts add up to 30, but layers is 28",
			full: bad + `/layout-sum.toml:11: model "short-layout": layout: layer counts add up to 30, but layers is 28`,
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(bad, tc.file)
			_, err := catalog.Load(path)
			var pe *tomlpos.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Load(%s): err = %v (%T), want a *tomlpos.Error", path, err, err)
			}
			if pe.File != path || pe.Line != tc.line || pe.Field != tc.field || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("got  {%s:%d field %q msg %q}\nwant {%s:%d field %q msg containing %q}",
					pe.File, pe.Line, pe.Field, pe.Msg, path, tc.line, tc.field, tc.msg)
			}
			if tc.full != "" && err.Error() != tc.full {
				t.Errorf("error string\n got %s\nwant %s", err.Error(), tc.full)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err.Error())
			}
		})
	}
}

// Every file under bad/ is covered by TestBadCatalogFiles, and the whole
// directory fails to load too (it stops at the first bad file, by name).
func TestBadDirFailsWhole(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdata, "bad", "*.toml"))
	if err != nil || len(files) < 7 {
		t.Fatalf("bad fixtures: %v, %v", files, err)
	}
	_, err = catalog.Load(filepath.Join(testdata, "bad"))
	var pe *tomlpos.Error
	if !errors.As(err, &pe) || !strings.HasSuffix(pe.File, "efficiency-above-one.toml") {
		t.Errorf("Load(bad/) = %v; want the first file by name, efficiency-above-one.toml", err)
	}
}

// Parse checks one file without the embedded entries, for models import.
func TestParseOneFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testdata, "override", "models.toml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Parse("user.toml", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Models) != 2 || len(c.Links) != 1 || len(c.GPUs) != 1 {
		t.Errorf("Parse: %d models, %d links, %d GPUs; want 2, 1, 1", len(c.Models), len(c.Links), len(c.GPUs))
	}
	if c.Models[0].Name != "house-model-3b" || c.Models[0].File != "user.toml" || c.Models[0].Line != 17 {
		t.Errorf("first model = %q at %s:%d; want house-model-3b at user.toml:17", c.Models[0].Name, c.Models[0].File, c.Models[0].Line)
	}
}

// An entry without a name is refused at its header line.
func TestEntryWithoutName(t *testing.T) {
	_, err := catalog.Parse("x.toml", []byte("[[link]]\nnominal = \"1Gbps\"\nefficiency = 0.9\nlatency = \"1ms\"\nsource = \"t\"\n"))
	if err == nil || err.Error() != "x.toml:1: link.name: missing: every entry needs a name" {
		t.Errorf("err = %v", err)
	}
}

// The layout kinds' rules, each with the message a user sees.
func TestLayoutGroupValidation(t *testing.T) {
	head := `[[model]]
name = "m"
params_total = 1000
weight_dtype = "bf16"
layers = 4
kv_heads = 2
head_dim = 64
kv_dtype = "bf16"
source = "test"
`
	mla := strings.Replace(head, "kv_heads = 2\nhead_dim = 64\n", "", 1) + "[model.mla]\nkv_lora_rank = 512\nqk_rope_head_dim = 64\n"
	tests := []struct{ name, toml, want string }{
		{"compressed ok", head + "[[model.layout]]\nkind = \"compressed\"\ncount = 4\nratio = 4\nwindow = 128\nindex_bytes = 132\nstate_bytes = 100\n", ""},
		{"mamba dims ok", head + "[[model.layout]]\nkind = \"mamba\"\ncount = 4\nconv_dim = 64\nconv_kernel = 4\nssm_state_elements = 1024\nssm_dtype = \"fp32\"\n", ""},
		{"linear by hand ok", head + "[[model.layout]]\nkind = \"linear\"\ncount = 4\nstate_bytes = 1024\n", ""},
		{"mla layout ok", mla + "[[model.layout]]\nkind = \"full\"\ncount = 2\nindex_bytes = 132\n[[model.layout]]\nkind = \"linear\"\ncount = 2\nssm_state_elements = 10\n", ""},
		{"compressed without ratio", head + "[[model.layout]]\nkind = \"compressed\"\ncount = 4\nwindow = 128\n",
			`x.toml:1: model "m": layout.ratio: layout[0]: a compressed layer needs ratio >= 2 tokens per entry (got 0)`},
		{"ratio on full", head + "[[model.layout]]\nkind = \"full\"\ncount = 4\nratio = 4\n",
			`x.toml:13: model "m": layout.ratio: layout[0]: ratio applies to compressed layers only (this one is full)`},
		{"window on full", head + "[[model.layout]]\nkind = \"full\"\ncount = 4\nwindow = 4\n",
			`x.toml:13: model "m": layout.window: layout[0]: a full-attention layer has no window (got 4); use kind = "sliding"`},
		{"indexer on sliding", head + "[[model.layout]]\nkind = \"sliding\"\ncount = 4\nwindow = 4\nindex_bytes = 132\n",
			`x.toml:14: model "m": layout.index_bytes: layout[0]: an indexer indexes the whole request: it goes with full or compressed layers, not sliding ones`},
		{"mamba without state", head + "[[model.layout]]\nkind = \"mamba\"\ncount = 4\n",
			`x.toml:1: model "m": layout.state_bytes: layout[0]: a mamba layer needs its state: ssm_state_elements > 0 (with conv_dim and conv_kernel), or state_bytes > 0 per request`},
		{"state both ways", head + "[[model.layout]]\nkind = \"linear\"\ncount = 4\nstate_bytes = 10\nssm_state_elements = 10\n",
			`x.toml:13: model "m": layout.state_bytes: layout[0]: give state_bytes or the state's dimensions (conv_dim, conv_kernel, ssm_state_elements), not both`},
		{"conv without kernel", head + "[[model.layout]]\nkind = \"mamba\"\ncount = 4\nconv_dim = 8\nssm_state_elements = 10\n",
			`x.toml:13: model "m": layout.conv_dim: layout[0]: conv_dim and conv_kernel go together (got 8 and 0)`},
		{"bad ssm dtype", head + "[[model.layout]]\nkind = \"mamba\"\ncount = 4\nssm_state_elements = 10\nssm_dtype = \"fp8\"\n",
			`x.toml:14: model "m": layout.ssm_dtype: layout[0]: "fp8" is not one of fp32, bf16, fp16 (or leave it out for the engine's default)`},
		{"state dims on attention", head + "[[model.layout]]\nkind = \"full\"\ncount = 4\nconv_kernel = 4\n",
			`x.toml:13: model "m": layout.conv_kernel: layout[0]: conv_dim, conv_kernel, ssm_state_elements and ssm_dtype apply to linear and mamba layers (this one is full)`},
		{"window on mamba", head + "[[model.layout]]\nkind = \"mamba\"\ncount = 4\nwindow = 2\nstate_bytes = 1\n",
			`x.toml:11: model "m": layout.kind: layout[0]: a mamba layer keeps a state, no KV: window, ratio, index_bytes, kv_heads and head_dim do not apply`},
		{"mla group geometry", mla + "[[model.layout]]\nkind = \"full\"\ncount = 4\nhead_dim = 64\n",
			`x.toml:14: model "m": layout.head_dim: layout[0]: an MLA model's layers cache its latent: leave kv_heads and head_dim out`},
		{"unknown kind", head + "[[model.layout]]\nkind = \"ssm\"\ncount = 4\n",
			`x.toml:11: model "m": layout.kind: layout[0]: kind "ssm" is not one of full, sliding, compressed, linear, mamba`},
		{"negative fp8 entry", strings.Replace(mla, "qk_rope_head_dim = 64\n", "qk_rope_head_dim = 64\nfp8_entry_bytes = -1\n", 1),
			`x.toml:11: model "m": mla.fp8_entry_bytes: must be >= 0 (got -1; 0 = one byte an element)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := catalog.Parse("x.toml", []byte(tt.toml))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}
