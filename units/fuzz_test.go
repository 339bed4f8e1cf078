package units

import (
	"math"
	"strconv"
	"testing"
)

// FuzzGrammar: no input makes a parser panic or return a negative, NaN or
// infinite value; a parsed size or count reads back the same from its
// decimal form; sizes and quantities share one grammar.
func FuzzGrammar(f *testing.F) {
	for _, s := range []string{"4GiB", "1.5Gi", "2.7 GiB", "272MB", "1e6", "1.5k", "104MB/s", "1Gbps",
		"0.5ms", "1m30s", "20µs", "-1", "NaN", "Inf", "1e400", "0x10", "100m", "4Gb", "1_000", "8EiB", ".5", "5.", "1e", "2E"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if b, err := ParseBytes(s); err == nil {
			if b < 0 {
				t.Fatalf("ParseBytes(%q) = %d < 0", s, b)
			}
			if again, err := ParseBytes(strconv.FormatInt(b, 10)); err != nil || again != b {
				t.Fatalf("ParseBytes(%q) = %d does not read back: %d, %v", s, b, again, err)
			}
			if q, err := ParseQuantity(s); err != nil || q != b {
				t.Fatalf("ParseQuantity(%q) = %d, %v; ParseBytes says %d", s, q, err, b)
			}
		}
		if c, err := ParseCount(s); err == nil {
			if c < 0 {
				t.Fatalf("ParseCount(%q) = %d < 0", s, c)
			}
			if again, err := ParseCount(strconv.FormatInt(c, 10)); err != nil || again != c {
				t.Fatalf("ParseCount(%q) = %d does not read back", s, c)
			}
		}
		for name, parse := range map[string]func(string) (float64, error){"ParseRate": ParseRate, "ParseMS": ParseMS, "ParseNumber": ParseNumber} {
			if v, err := parse(s); err == nil && (v < 0 || math.IsNaN(v) || math.IsInf(v, 0)) {
				t.Fatalf("%s(%q) = %v", name, s, v)
			}
		}
	})
}
