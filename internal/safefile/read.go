package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
)

// Kind is a kind of input file: its name in messages and its size cap.
type Kind struct {
	Name     string // "plan file", "catalog file", ...
	MaxBytes int64
}

// The kinds of file kvplan reads whole, with their caps. The largest real
// files are far below: the embedded catalog's biggest file is 24 KB, a
// Hugging Face config.json a few KB, the default rule pack 20 KB.
var (
	Plan        = Kind{Name: "plan file", MaxBytes: 4 << 20}
	Catalog     = Kind{Name: "catalog file", MaxBytes: 4 << 20}
	RulePack    = Kind{Name: "rule pack", MaxBytes: 4 << 20}
	RuleTest    = Kind{Name: "rule test file", MaxBytes: 4 << 20}
	ModelConfig = Kind{Name: "config.json", MaxBytes: 4 << 20}
	QuantConfig = Kind{Name: "quantization config", MaxBytes: 4 << 20} // hf_quant_config.json
	Manifest    = Kind{Name: "manifest", MaxBytes: 4 << 20}
	// BenchResult is a benchmark tool's result file: per-request arrays
	// with generated texts make them large (the largest real one here is
	// 1.7 MB for 500 requests).
	BenchResult = Kind{Name: "benchmark result file", MaxBytes: 64 << 20}
)

// Kinds lists the kinds above, for documentation and tests.
func Kinds() []Kind {
	return []Kind{Plan, Catalog, RulePack, RuleTest, ModelConfig, QuantConfig, Manifest, BenchResult}
}

// Stdin is what "-" reads; tests may replace it.
var Stdin io.Reader = os.Stdin

// ReadFile reads the whole file at path, or stdin when path is "-", as a
// file of kind k: it must be a regular file of at most k.MaxBytes bytes.
func ReadFile(path string, k Kind) ([]byte, error) {
	if path == "-" {
		return ReadFrom(Stdin, "stdin", k)
	}
	f, err := Open(path, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > k.MaxBytes {
		return nil, tooLarge(path, k, strconv.FormatInt(st.Size(), 10)+" bytes")
	}
	return ReadFrom(f, path, k)
}

// ReadFrom reads r to its end, refusing more than k.MaxBytes bytes; name
// labels errors.
func ReadFrom(r io.Reader, name string, k Kind) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, k.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", k.Name, name, err)
	}
	if int64(len(data)) > k.MaxBytes {
		return nil, tooLarge(name, k, "more than that")
	}
	return data, nil
}

func tooLarge(name string, k Kind, size string) error {
	return fmt.Errorf("%s %s is too large (%s): the cap for a %s is %s", k.Name, name, size, k.Name, formatCap(k.MaxBytes))
}

func formatCap(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// ErrNotRegular is wrapped by the error of Open for anything but a regular
// file.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading if it is a regular file (after following
// symbolic links) and refuses anything else without blocking: opening a
// FIFO for reading would wait for a writer forever, so the file is opened
// non-blocking and checked before it is read. k names the kind in errors.
func Open(path string, k Kind) (*os.File, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err // *fs.PathError: "open x: no such file or directory"
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s %s is %s, %w: kvplan reads a %s from a regular file, or from stdin with -", k.Name, path, describe(st.Mode()), ErrNotRegular, k.Name)
	}
	if err := clearNonBlocking(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", k.Name, err)
	}
	return f, nil
}

func describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file (" + m.Type().String() + ")"
}
