package catalog

import (
	"math/rand/v2"
	"testing"
)

// TestNormalizesTo checks normalizesTo(s, want) against its definition,
// normalize(s) == want, on names with capitals, organisation prefixes,
// spaces, non-ASCII letters whose lower case is longer or shorter, and bad
// UTF-8; then on 20,000 random strings over the same pieces.
func TestNormalizesTo(t *testing.T) {
	names := []string{"Qwen/Qwen3-0.6B", "qwen3-0.6b", " QWEN3-0.6B ", "meta-llama/Llama-3.1-8B", "a/b/C", "/x", "x/", "",
		"İstanbul", "i̇stanbul", "ẞ", "ß", "K", "k", "\xff", "org/\xffA", "ÀB", "àb", "A\u0301"}
	wants := []string{"qwen3-0.6b", "llama-3.1-8b", "c", "x", "", "i̇stanbul", "ß", "k", "\ufffd", "\ufffda", "àb", "a\u0301"}
	check := func(s, want string) {
		if got, def := normalizesTo(s, want), normalize(s) == want; got != def {
			t.Fatalf("normalizesTo(%q, %q) = %v; normalize gives %q", s, want, got, normalize(s))
		}
	}
	for _, s := range names {
		for _, w := range wants {
			check(s, w)
		}
		check(s, normalize(s))
	}
	pieces := []string{"a", "Z", "/", " ", "-", ".", "İ", "ß", "ẞ", "K", "\xff", "é", "0"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var s string
		for range rng.IntN(6) {
			s += pieces[rng.IntN(len(pieces))]
		}
		check(s, normalize(s))
		check(s, normalize(names[rng.IntN(len(names))]))
	}
}
