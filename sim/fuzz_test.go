package sim

import (
	"bytes"
	"os"
	"testing"
)

// FuzzMooncakeReader: any trace bytes stream as requests or stop with an
// error, never a panic, and a run over what parses completes.
func FuzzMooncakeReader(f *testing.F) {
	for _, p := range []string{"../testdata/sim/bad_lines.jsonl", "../testdata/sim/conversation_excerpt.jsonl"} {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data[:min(len(data), 4096)])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, skip := range []bool{false, true} {
			src := NewMooncakeReader(bytes.NewReader(data), "fuzz.jsonl", 128, skip)
			_, _ = Run(src, Config{Workers: 2, CapacityBlocks: 64, Policy: KVAware})
		}
	})
}
