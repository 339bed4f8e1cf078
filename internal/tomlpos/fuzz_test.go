package tomlpos

import (
	"strings"
	"testing"
)

// FuzzDecodeStrict: any document decodes or fails with an *Error (never a
// panic), and every key the index finds has its line.
func FuzzDecodeStrict(f *testing.F) {
	f.Add([]byte(doc))
	f.Add([]byte("a.b.c = 1\n[x]\ny = {z = [1, {w = 2}]}\n"))
	f.Add([]byte("s = \"\"\"\nmulti\n\"\"\"\n[[t]]\nk = 'lit'\n"))
	f.Add([]byte(strings.Repeat("a.", 40) + "a = 1"))
	type layout struct {
		Kind string `toml:"kind"`
	}
	type model struct {
		Name   string   `toml:"name"`
		Layout []layout `toml:"layout"`
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v struct {
			Model []model                   `toml:"model"`
			Pools map[string]map[string]any `toml:"pools"`
			X     map[string]any            `toml:"x"`
		}
		idx, err := DecodeStrict("f.toml", data, &v)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		for i, e := range idx.Entries {
			if l := idx.Line(e.Path, 0); l <= 0 || l > e.Line {
				t.Fatalf("entry %d %v at line %d: Line says %d", i, e.Path, e.Line, l)
			}
			if e.Root != "" && idx.InArray(e.Root, e.Array) == 0 {
				t.Fatalf("entry %d: no header for %s[%d]", i, e.Root, e.Array)
			}
		}
	})
}
