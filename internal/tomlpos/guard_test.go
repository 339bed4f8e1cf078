package tomlpos

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGuardRefusesHostileShapes: the shapes of issue 13 (a 60 KB dotted key
// took over 10 s and 4 GB; 5,000 nested inline tables 1.1 GB) are refused
// at once, with the line.
func TestGuardRefusesHostileShapes(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"dotted key", "ok = 1\n" + strings.Repeat("a.", 30000) + "a = 1\n", "x.toml:2: a key with more than 32 dotted parts"},
		{"dotted header", "[" + strings.Repeat("a.", 40) + "a]\n", "x.toml:1: a key with more than 32 dotted parts"},
		{"quoted parts", strings.Repeat(`"a" . `, 40) + "b = 1\n", "more than 32 dotted parts"},
		{"nested inline tables", "x = " + strings.Repeat("{a=", 5000) + "1" + strings.Repeat("}", 5000) + "\n", "x.toml:1: arrays and inline tables nested more than 32 deep"},
		{"nested arrays", "x = " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000), "nested more than 32 deep"},
		{"long bare key", strings.Repeat("k", 300) + " = 1\n", "a key of 300 bytes is refused"},
		{"long quoted key", "[pools.\"" + strings.Repeat("p", 1000) + "\"]\n", "a key of 1000 bytes is refused"},
	}
	for _, c := range cases {
		start := time.Now()
		var v map[string]any
		_, err := DecodeStrict("x.toml", []byte(c.doc), &v)
		var te *Error
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &te) {
			t.Errorf("%s: err = %.200v; want %q", c.name, err, c.want)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", c.name, d)
		}
	}
}

// TestGuardAcceptsRealFiles: every TOML file of the repository passes, and
// so do strings, comments and floats that look like keys or nesting.
func TestGuardAcceptsRealFiles(t *testing.T) {
	var files []string
	for _, pat := range []string{"../../catalog/data/*.toml", "../../rules/*.toml", "../../examples/*.toml", "../../testdata/*/*.toml", "../../testdata/*/*/*.toml", "../../rules/data/*/*.toml"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d files found", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := Guard(f, data); err != nil {
			t.Errorf("%v", err)
		}
	}
	ok := `s = "` + strings.Repeat("a.", 100) + `"
m = """
[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g
"""
l = '''` + strings.Repeat("{", 50) + `'''
# ` + strings.Repeat("x.", 100) + `
f = [1.5, 2.5e10, 1979-05-27T07:32:00.999]
e = "esc \" [[[[ "
`
	if err := Guard("ok.toml", []byte(ok)); err != nil {
		t.Errorf("false alarm: %v", err)
	}
}
