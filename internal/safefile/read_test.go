package safefile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadFileRefusesNonRegular: a FIFO, a device and a directory are
// refused at once (a FIFO used to hang forever; /dev/zero grew to 8 GB).
func TestReadFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "plan.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	cases := []struct{ path, want string }{
		{fifo, "is a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "is a character device, not a regular file"},
		{dir, "is a directory, not a regular file"},
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(c.path, Plan); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrNotRegular) {
				t.Errorf("ReadFile(%s) = %v; want an error containing %q", c.path, err, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadFile(%s) hangs", c.path)
		}
	}
}

func TestReadFileCap(t *testing.T) {
	dir := t.TempDir()
	small := Kind{Name: "plan file", MaxBytes: 1 << 10}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("#"), 1<<10+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(big, small)
	if want := "plan file " + big + " is too large (1025 bytes): the cap for a plan file is 1 KiB"; err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	exact := filepath.Join(dir, "exact.toml")
	if err := os.WriteFile(exact, bytes.Repeat([]byte("#"), 1<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(exact, small); err != nil || len(data) != 1<<10 {
		t.Errorf("a file at the cap: %d bytes, %v", len(data), err)
	}
	// A file that reports no size (as /proc files do) is still capped.
	if _, err := ReadFrom(io.LimitReader(zeros{}, 1<<20), "stdin", small); err == nil || !strings.Contains(err.Error(), "the cap for a plan file is 1 KiB") {
		t.Errorf("endless reader: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.toml"), Plan); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadStdin(t *testing.T) {
	old := Stdin
	defer func() { Stdin = old }()
	Stdin = strings.NewReader("[model]\n")
	if data, err := ReadFile("-", Plan); err != nil || string(data) != "[model]\n" {
		t.Errorf("stdin: %q, %v", data, err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestLineReader(t *testing.T) {
	in := "a\r\nbb\n\nccc"
	lr := NewLineReader(strings.NewReader(in), 4)
	var got []string
	for {
		b, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	if strings.Join(got, "|") != "a|bb||ccc" || lr.Line() != 4 {
		t.Errorf("lines %q, last %d", got, lr.Line())
	}
	lr = NewLineReader(strings.NewReader("ok\n12345\nnext\n"), 4)
	if _, err := lr.Next(); err != nil {
		t.Fatal(err)
	}
	_, err := lr.Next()
	if !errors.Is(err, ErrLineTooLong) || err.Error() != "line too long: longer than the 4 bytes line cap" || lr.Line() != 2 {
		t.Errorf("long line: %v", err)
	}
	// One endless line of zeros: an error after the cap, not gigabytes.
	lr = NewLineReader(zeros{}, 1<<10)
	if _, err := lr.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("endless line: %v", err)
	}
}

// TestMillionIDLine: one trace line with a million hash ids took 1.4 GB in
// the trace reader; the line reader refuses it after its 1 MiB cap, having
// buffered no more than that.
func TestMillionIDLine(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"timestamp": 0, "input_length": 512000000, "output_length": 1, "hash_ids": [`)
	for i := range 1_000_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString("]}\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	lr := NewLineReader(strings.NewReader(b.String()), DefaultMaxLine)
	_, err := lr.Next()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrLineTooLong) || err.Error() != "line too long: longer than the 1 MiB line cap" {
		t.Errorf("err = %v", err)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 3<<20 {
		t.Errorf("allocated %d bytes for a refused line", a)
	}
}

// TestLineReaderBeyondBuffer: a cap larger than the read buffer (64 KiB)
// still returns a line of exactly the cap, with "\n" or "\r\n", and refuses
// one byte more.
func TestLineReaderBeyondBuffer(t *testing.T) {
	const limit = 200_000 // over three read buffers
	at := strings.Repeat("x", limit)
	cases := []struct {
		in      string
		want    []int // line lengths read before the end or the error
		tooLong bool
	}{
		{at + "\nab\n", []int{limit, 2}, false},
		{at + "\r\nab", []int{limit, 2}, false},
		{"ab\n" + at + "y\nnext\n", []int{2}, true},
		{"ab\n" + at + "y", []int{2}, true},
		{at, []int{limit}, false},
	}
	for i, c := range cases {
		lr := NewLineReader(strings.NewReader(c.in), limit)
		var got []int
		var err error
		for {
			var b []byte
			if b, err = lr.Next(); err != nil {
				break
			}
			got = append(got, len(b))
		}
		if !slices.Equal(got, c.want) || errors.Is(err, ErrLineTooLong) != c.tooLong || (!c.tooLong && err != io.EOF) {
			t.Errorf("case %d: lines %v, err %v; want %v, too long %v", i, got, err, c.want, c.tooLong)
		}
	}
}
