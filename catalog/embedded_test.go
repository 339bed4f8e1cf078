package catalog

import (
	"reflect"
	"testing"
)

// TestEmbeddedGenerated fails while embedded_gen.go is stale: the catalog
// the binary carries must be exactly what data/*.toml says.
func TestEmbeddedGenerated(t *testing.T) {
	fromTOML, err := LoadEmbeddedTOML()
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := embeddedCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(compiled, fromTOML) {
		t.Fatal("catalog/embedded_gen.go is stale: data/*.toml changed since it was generated; run `go generate ./catalog` and commit the result")
	}
	if len(compiled.Models) == 0 || len(compiled.GPUs) == 0 || len(compiled.Links) == 0 || len(compiled.Engines) == 0 {
		t.Fatalf("an empty kind: %d models, %d GPUs, %d links, %d engines", len(compiled.Models), len(compiled.GPUs), len(compiled.Links), len(compiled.Engines))
	}
}

// TestEmbeddedSlicesOwn: every Load gets slices of its own, so merging or
// dropping entries in one catalog leaves the next Load's as they were; the
// entries themselves are shared package data (embedded_gen.go), which no
// caller changes (the test binary of cmd/kvplan checks, after running
// every command, that they are still what data/*.toml says).
func TestEmbeddedSlicesOwn(t *testing.T) {
	a, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	first := a.Models[0]
	a.Models[0] = &Model{Name: "replaced"}
	a.GPUs = nil
	b, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if b.Models[0] != first || len(b.GPUs) == 0 {
		t.Fatal("Load returned slices shared with an earlier call")
	}
}

// TestLoadSorted: Load sorts only when user entries were merged, so the
// embedded catalog must come in the order sort gives.
func TestLoadSorted(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	sorted, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	sorted.sort()
	if !reflect.DeepEqual(c, sorted) {
		t.Fatal("the embedded catalog is not in sort's order: Load must sort it")
	}
}

func BenchmarkLoadEmbedded(b *testing.B) {
	for b.Loop() {
		if _, err := Load(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadEmbeddedTOML(b *testing.B) {
	for b.Loop() {
		if _, err := LoadEmbeddedTOML(); err != nil {
			b.Fatal(err)
		}
	}
}
