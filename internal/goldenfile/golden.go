// Package goldenfile compares what a test produced with a file committed under
// testdata, or rewrites that file when the test runs with -update. Every
// package's golden tests go through it, so they fail and regenerate alike.
package goldenfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Check compares got with the file at path; with update it writes got there
// instead (creating the directory). rerun is the command that rewrites the
// file, named in the failure, which also shows both sides unless quiet (a
// binary or very long file).
func Check(t testing.TB, path string, got []byte, update bool, rerun string, quiet bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (%s writes it)", err, rerun)
	}
	if bytes.Equal(got, want) {
		return
	}
	if quiet {
		t.Errorf("%s differs from what the test produced (review, then %s)", path, rerun)
		return
	}
	t.Errorf("%s differs from what the test produced (review, then %s):\n--- got\n%s\n--- want\n%s", path, rerun, got, want)
}
