package catalog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kvplan/kvplan/units"
)

// FuzzParse: any bytes give a catalog or an error, never a panic, and an
// accepted catalog holds only finite numbers within MaxInt, and positive
// memory sizes and bandwidths.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"data/*.toml", "../testdata/catalog/*/*.toml", "../testdata/catalog/*/*/*.toml"} {
		files, _ := filepath.Glob(pattern)
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("[[gpu]]\nname = \"g\"\nmemory = \"1Gi\"\nbf16_tflops = inf\nmemory_bandwidth = \"0B/s\"\nsource = \"s\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.toml", data)
		if err != nil {
			return
		}
		var entries []any
		for _, m := range c.Models {
			entries = append(entries, m)
		}
		for _, l := range c.Links {
			entries = append(entries, l)
			if !(l.EffectiveBytesPerS > 0) || !(l.LatencyMS >= 0) || !units.Finite(l.EffectiveBytesPerS, l.LatencyMS, l.NominalBytesPerS) {
				t.Fatalf("link %q: effective %g B/s, latency %g ms", l.Name, l.EffectiveBytesPerS, l.LatencyMS)
			}
		}
		for _, g := range c.GPUs {
			entries = append(entries, g)
			if g.MemoryBytes <= 0 || !(g.MemoryBandwidthBytes > 0) || !units.Finite(g.MemoryBandwidthBytes) {
				t.Fatalf("gpu %q: memory %d, bandwidth %g", g.Name, g.MemoryBytes, g.MemoryBandwidthBytes)
			}
		}
		for _, e := range c.Engines {
			entries = append(entries, e)
		}
		for _, e := range entries {
			if errs := numberErrs(e); len(errs) > 0 {
				t.Fatalf("accepted %v", errs)
			}
		}
	})
}
