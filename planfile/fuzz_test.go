package planfile

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any bytes give a plan or an error, never a panic.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"../examples", "../testdata/plans", "../testdata/plans/invalid"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.toml", data)
		if err == nil && p != nil {
			for _, name := range p.PoolNames() {
				_ = p.Line("pools." + name + ".gpu")
			}
		}
	})
}
