package catalog_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvplan/kvplan/catalog"
)

const hostileGPU = `[[gpu]]
name = "g"
memory = "16376MiB"
bf16_tflops = 80
memory_bandwidth = "512GB/s"
source = "test"
`

const hostileModel = `[[model]]
name = "m"
params_total = 1_000
weight_dtype = "bf16"
layers = 2
kv_heads = 8
head_dim = 128
kv_dtype = "bf16"
source = "test"
`

// TestHostileCatalogNumbers: the catalog values of issue 13 that were
// accepted (NaN and Inf peaks, a zero bandwidth that made ITL infinite,
// integers that overflowed into "-4 B per token") are refused at their line.
func TestHostileCatalogNumbers(t *testing.T) {
	cases := []struct {
		name, doc, replace, with, want string
	}{
		{"nan peak", hostileGPU, "bf16_tflops = 80", "bf16_tflops = nan", `x.toml:4: gpu "g": bf16_tflops: must be > 0 (got NaN)`},
		{"inf peak", hostileGPU, "bf16_tflops = 80", "bf16_tflops = inf", `x.toml:4: gpu "g": bf16_tflops: +Inf is not a finite number`},
		{"inf price", hostileGPU, "source", "usd_per_hour = inf\nsource", `x.toml:6: gpu "g": usd_per_hour: +Inf is not a finite number`},
		{"zero bandwidth", hostileGPU, `"512GB/s"`, `"0B/s"`, `x.toml:5: gpu "g": memory_bandwidth: must be > 0`},
		{"inf bandwidth", hostileGPU, `"512GB/s"`, `"InfGB/s"`, `memory_bandwidth: rate "InfGB/s" is not a finite number`},
		{"huge heads", hostileModel, "kv_heads = 8", "kv_heads = 9223372036854775807", `x.toml:6: model "m": kv_heads: 9223372036854775807 is out of range: want 1 to 16,384 heads`},
		{"heads past their range", hostileModel, "kv_heads = 8", "kv_heads = 20_000", `x.toml:6: model "m": kv_heads: 20000 is out of range: want 1 to 16,384 heads`},
		{"layers past their range", hostileModel, "layers = 2", "layers = 1_000_000", `x.toml:5: model "m": layers: 1000000 is out of range: want 1 to 10,000 layers`},
		{"head_dim past its range", hostileModel, "head_dim = 128", "head_dim = 1_000_000", `x.toml:7: model "m": head_dim: 1000000 is out of range: want 1 to 16,384`},
		{"params still at MaxInt", hostileModel, "params_total = 1_000", "params_total = 9223372036854775807", `params_total: 9223372036854775807 is too large: want at most 1,000,000,000,000,000`},
		{"huge params", hostileModel, "params_total = 1_000", "params_total = 9_000_000_000_000_000_000", "params_total: 9000000000000000000 is too large"},
	}
	for _, c := range cases {
		doc := strings.Replace(c.doc, c.replace, c.with, 1)
		_, err := catalog.Parse("x.toml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v\nwant it to contain %s", c.name, err, c.want)
		}
	}
	if _, err := catalog.Parse("x.toml", []byte(hostileGPU+hostileModel)); err != nil {
		t.Fatalf("the base entries are valid: %v", err)
	}
}

// TestCatalogSpecialFiles: a FIFO named *.toml in a catalog directory hung
// forever; /dev/zero grew to gigabytes. Both are refused at once.
func TestCatalogSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "a.toml"), 0o600); err != nil {
		t.Skipf("no FIFOs: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.toml")
	if err := os.WriteFile(big, []byte("#"+strings.Repeat(" ", 5<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{dir, "is a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "is a character device, not a regular file"},
		{big, "the cap for a catalog file is 4 MiB"},
	} {
		done := make(chan error, 1)
		go func() { _, err := catalog.Load(c.path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Load(%s) = %v; want %q", c.path, err, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Load(%s) hangs", c.path)
		}
	}
}
