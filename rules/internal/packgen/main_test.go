package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFileCurrent fails when rules/default_gen.go is not what the
// generator writes from default.toml today (a changed pack, or a hand edit).
func TestGeneratedFileCurrent(t *testing.T) {
	want, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "default_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("rules/default_gen.go differs from what default.toml gives: run `go generate ./rules` and commit the result")
	}
}
