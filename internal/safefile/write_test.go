package safefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func content(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.toml")

	if err := WriteAtomic(p, []byte("new\n"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if content(t, p) != "new\n" || !slices.Equal(names(t, dir), []string{"m.toml"}) {
		t.Fatalf("new file: %q, dir %v", content(t, p), names(t, dir))
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}

	err := WriteAtomic(p, []byte("other\n"), WriteOptions{})
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "add --force") {
		t.Errorf("existing without overwrite: %v", err)
	}
	if content(t, p) != "new\n" {
		t.Error("refused write changed the file")
	}

	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(p, []byte("v2\n"), WriteOptions{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); content(t, p) != "v2\n" || st.Mode().Perm() != 0o600 {
		t.Errorf("overwrite: %q mode %v (want v2, 0600 kept)", content(t, p), st.Mode().Perm())
	}
}

// TestWriteAtomicFailure: a write that fails half-way leaves the old file
// intact, and a failed write to a new path leaves nothing (the old code
// truncated in place, and left an empty file behind).
func TestWriteAtomicFailure(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.toml")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	half := func(w io.Writer) error {
		if _, err := w.Write([]byte("half of the ne")); err != nil {
			return err
		}
		return boom
	}
	err := WriteAtomicFunc(p, WriteOptions{Overwrite: true}, half)
	if !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
	if content(t, p) != "old\n" || !slices.Equal(names(t, dir), []string{"m.toml"}) {
		t.Errorf("after failure: %q, dir %v", content(t, p), names(t, dir))
	}
	fresh := filepath.Join(dir, "fresh.toml")
	if err := WriteAtomicFunc(fresh, WriteOptions{}, half); !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
	if !slices.Equal(names(t, dir), []string{"m.toml"}) {
		t.Errorf("failed new write left %v", names(t, dir))
	}
	// A directory that does not exist: nothing is created.
	if err := WriteAtomic(filepath.Join(dir, "no", "such.toml"), []byte("x"), WriteOptions{}); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

// TestWriteAtomicSymlinks: a link, dangling or not, is not followed without
// --force (a dangling link used to count as "not existing"); with it, the
// link's target is written and the link stays a link.
func TestWriteAtomicSymlinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.toml")
	link := filepath.Join(dir, "link.toml")
	dangling := filepath.Join(dir, "dangling.toml")
	if err := os.WriteFile(real, []byte("real\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.toml", link); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	if err := os.Symlink("gone.toml", dangling); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, dangling} {
		err := WriteAtomic(p, []byte("x"), WriteOptions{Overwrite: true})
		if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
			t.Errorf("%s without follow: %v", filepath.Base(p), err)
		}
	}
	if content(t, real) != "real\n" {
		t.Fatal("refused write changed the target")
	}
	if _, err := os.Lstat(filepath.Join(dir, "gone.toml")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("refused write created the dangling target")
	}
	force := WriteOptions{Overwrite: true, FollowSymlink: true}
	if err := WriteAtomic(link, []byte("through\n"), force); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 || content(t, real) != "through\n" {
		t.Errorf("follow: link replaced or target not written (%q)", content(t, real))
	}
	if err := WriteAtomic(dangling, []byte("made\n"), force); err != nil {
		t.Fatal(err)
	}
	if content(t, filepath.Join(dir, "gone.toml")) != "made\n" {
		t.Error("dangling link's target not created")
	}
	loop := filepath.Join(dir, "loop.toml")
	if err := os.Symlink("loop.toml", loop); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(loop, []byte("x"), force); err == nil || !strings.Contains(err.Error(), "symbolic links in a row") {
		t.Errorf("link loop: %v", err)
	}
}

func TestWriteAtomicRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteAtomic(sub, []byte("x"), WriteOptions{Overwrite: true, FollowSymlink: true})
	if err == nil || !strings.Contains(err.Error(), "it is a directory") {
		t.Errorf("directory target: %v", err)
	}
	err = WriteAtomic("/dev/null", []byte("x"), WriteOptions{Overwrite: true})
	if err == nil || !strings.Contains(err.Error(), "character device") {
		t.Errorf("device target: %v", err)
	}
}

// TestWriteAtomicMissingDirectory: a path in a directory that does not
// exist says so, not the name of the temporary file it could not create.
func TestWriteAtomicMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nodir", "plan.toml")
	err := WriteAtomic(path, []byte("x"), WriteOptions{})
	if err == nil {
		t.Fatal("wrote into a directory that does not exist")
	}
	want := "the directory " + filepath.Join(dir, "nodir") + string(filepath.Separator) + " does not exist: create it first"
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), ".tmp-") {
		t.Fatalf("got %q, want it to contain %q and no temporary name", err, want)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = WriteAtomic(filepath.Join(file, "plan.toml"), []byte("x"), WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("a file as the directory: got %v", err)
	}
}
