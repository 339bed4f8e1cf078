package hfimport

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkImport imports the largest fixtures: DeepSeek-V4-Flash's
// compressed layout and Qwen3.6's MIXED_PRECISION block of 401 modules.
func BenchmarkImport(b *testing.B) {
	for _, f := range []string{"deepseek-v4-flash.json", "qwen3.6-27b-nvfp4.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "more", f))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(f, func(b *testing.B) {
			for range b.N {
				if _, _, err := ImportConfig(data, f, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
