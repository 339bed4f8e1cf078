package manifest

import (
	"os"
	"testing"
)

// BenchmarkReadShellScript reads a Deployment whose container starts vLLM
// from a `sh -c` script (testdata/manifests/forms/shell.yaml): the parse,
// the bounds computed before each expansion, and the expansion.
func BenchmarkReadShellScript(b *testing.B) {
	data, err := os.ReadFile("../testdata/manifests/forms/shell.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read("shell.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
