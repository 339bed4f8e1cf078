package tomlpos

import "testing"

const doc = `# a catalog
[[model]]
name = "a"
layers = 2
tags = [
  "x",
]

[[model]]
name = "b"
bogus = 1
[model.mla]
kv_lora_rank = 512
[[model.layout]]
kind = "full"
[[model.layout]]
kind = "sliding"

[pools.prefill]
role = "prefill"
"quoted" = 3
`

func TestIndex(t *testing.T) {
	x := New([]byte(doc))
	cases := []struct {
		name string
		got  int
		want int
	}{
		{"first name", x.Line([]string{"model", "name"}, 0), 3},
		{"second name", x.Line([]string{"model", "name"}, 1), 10},
		{"unknown key", x.Line([]string{"model", "bogus"}, 0), 11},
		{"sub-table key", x.InArray("model", 1, "mla", "kv_lora_rank"), 13},
		{"header when key absent", x.InArray("model", 0, "head_dim"), 2},
		{"key in element", x.InArray("model", 0, "layers"), 4},
		{"no element", x.InArray("model", 5, "layers"), 0},
		{"nested array belongs to its element", x.InArray("model", 1, "layout", "kind"), 15},
		{"plain table", x.Line([]string{"pools", "prefill", "role"}, 0), 20},
		{"quoted key", x.Line([]string{"pools", "prefill", "quoted"}, 0), 21},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: line %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestDecodeStrictUnknownKey(t *testing.T) {
	type mla struct {
		Rank int `toml:"kv_lora_rank"`
	}
	type model struct {
		Name string `toml:"name"`
		MLA  *mla   `toml:"mla"`
	}
	var v struct {
		Models []model `toml:"model"`
	}
	data := "[[model]]\nname = \"a\"\n\n[[model]]\nname = \"b\"\n[model.mla]\nkv_lora_rank = 1\nrope = 2\n"
	_, err := DecodeStrict("m.toml", []byte(data), &v)
	want := "m.toml:8: model.mla.rope: unknown key; accepted here: kv_lora_rank"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	_, err = DecodeStrict("m.toml", []byte("[[model]]\nname = \n"), &v)
	if e, ok := err.(*Error); !ok || e.Line != 2 {
		t.Fatalf("syntax error = %#v, want line 2", err)
	}
}
