package manifest

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead: no input makes the reader panic or hang; it returns a plan or
// an error. Seeds are every manifest in testdata.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.yaml"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("kind: Pod\nspec:\n  containers:\n    - command: [sh, -c, 'vllm serve \"$(unclosed']\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Read("fuzz.yaml", data)
		if err != nil {
			return
		}
		if m.Plan == nil || len(m.Plan.Pools) == 0 {
			t.Fatalf("Read returned no error and no pools")
		}
		for _, n := range m.Plan.PoolNames() {
			_ = m.Plan.Pos("pools." + n + ".tp")
		}
		_, _, _ = Complete(m, nil, Supplement{GPU: map[string]string{"": "h100-sxm"}})
	})
}
