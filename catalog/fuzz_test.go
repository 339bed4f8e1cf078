package catalog

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any bytes give a catalog or an error, never a panic.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"data/*.toml", "../testdata/catalog/*/*.toml", "../testdata/catalog/*/*/*.toml"} {
		files, _ := filepath.Glob(pattern)
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Parse("fuzz.toml", data)
	})
}
