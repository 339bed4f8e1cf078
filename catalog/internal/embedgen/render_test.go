package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

// TestGeneratedFileCurrent fails when catalog/embedded_gen.go is not what
// the generator writes from data/*.toml today (stale data, or a hand edit).
func TestGeneratedFileCurrent(t *testing.T) {
	c, err := catalog.LoadEmbeddedTOML()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "embedded_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("catalog/embedded_gen.go differs from what data/*.toml gives: run `go generate ./catalog` and commit the result")
	}
}

// TestRenderLiterals checks the Go literals of each kind against text
// written out by hand.
func TestRenderLiterals(t *testing.T) {
	c := &catalog.Catalog{
		Models:  []*catalog.Model{{Name: "m", Aliases: []string{}, MLA: &catalog.MLA{KVLoraRank: 512}, Layout: []catalog.LayerGroup{{Kind: "full", Count: 2}}}},
		Links:   []*catalog.Link{{Name: "l", Shared: true, EffectiveBytesPerS: 1.25e8, LatencyMS: 0.2}},
		Engines: []*catalog.Engine{{Name: "e", Sources: map[string]string{"b": "2", "a": "1"}}},
	}
	got, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Aliases: []string{},", // empty, not nil: DeepEqual tells them apart
		"MLA: &MLA{\n\t\t\t\tKVLoraRank: 512,",
		"Layout: []LayerGroup{\n",
		"EffectiveBytesPerS: 1.25e+08,",
		"LatencyMS:          0.2,",
		"Shared:             true,",
		"\"a\": \"1\",\n\t\t\t\t\"b\": \"2\",", // sorted keys
	} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("generated code lacks %q:\n%s", want, got)
		}
	}
}
