package benchresult

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedResults is the folder of real result files beside the repository
// (../shared/data/bench-results); tests and benchmarks that need it skip
// without it.
const sharedResults = "../../shared/data/bench-results"

// BenchmarkReadShared reads every file of ../shared/data/bench-results,
// one sub-benchmark each (the target: under 100 ms a file; the
// largest is a 1.7 MB vLLM file with per-request arrays).
func BenchmarkReadShared(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(sharedResults, "*", "*"))
	if len(files) == 0 {
		b.Skip("no ../shared/data/bench-results")
	}
	for _, f := range files {
		if filepath.Base(f) == "README.md" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(f), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Parse(f, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestReadSharedFiles: every file of ../shared/data/bench-results reads
// (skipped without it).
func TestReadSharedFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedResults, "*", "*"))
	if len(files) == 0 {
		t.Skip("no ../shared/data/bench-results")
	}
	for _, f := range files {
		if filepath.Base(f) == "README.md" {
			continue
		}
		if _, err := Read(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}
