package goldenfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder stands in for a *testing.T to see what Check reports.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, format)
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "out.txt")
	Check(t, path, []byte("one\n"), true, "go test -update", false)
	if b, err := os.ReadFile(path); err != nil || string(b) != "one\n" {
		t.Fatalf("update wrote %q, %v", b, err)
	}
	r := &recorder{TB: t}
	Check(r, path, []byte("one\n"), false, "go test -update", false)
	if len(r.errors) != 0 {
		t.Errorf("equal output reported: %v", r.errors)
	}
	Check(r, path, []byte("two\n"), false, "go test -update", false)
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "--- got") {
		t.Errorf("a difference gave %v", r.errors)
	}
	r.errors = nil
	Check(r, path, []byte("two\n"), false, "go test -update", true)
	if len(r.errors) != 1 || strings.Contains(r.errors[0], "--- got") {
		t.Errorf("a quiet difference gave %v", r.errors)
	}
}
