package planner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

// TestEngineCatalog loads engine entries from testdata/memory and checks that
// impossible constants are refused with the file, line and field.
func TestEngineCatalog(t *testing.T) {
	cases := []struct {
		file string
		want []string // substrings of the error; none = loads
	}{
		{"engine_good.toml", nil},
		{"engine_bad_retention.toml", []string{"engine_bad_retention.toml:20", `engine "bad-retention": host_retention`, "must be >= 1"}},
		{"engine_bad_size.toml", []string{"engine_bad_size.toml:4", `engine "bad-size": non_torch`, `"lots"`}},
		{"engine_missing_source.toml", []string{`engine "no-source": sources`, "missing a source for host_margin"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "memory", c.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cat, err := catalog.Parse(c.file, data)
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				e, err := cat.Engine("good")
				if err != nil {
					t.Fatal(err)
				}
				// 88 MiB = 92,274,688; 2,560 MiB = 2,684,354,560; 70 GiB = 75,161,927,680.
				if e.NonTorchBytes != 92_274_688 || e.HostBaselineRSSBytes != 2_684_354_560 || e.LargeGPUMemoryBytes != 75_161_927_680 {
					t.Errorf("sizes not resolved: %+v", e)
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded, want an error containing %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestEngineEmbedded: the embedded vllm engine loads, every constant has a
// source, and the values are those testEngine writes out.
func TestEngineEmbedded(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.Engine("vllm")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range catalog.EngineConstants {
		if e.Sources[k] == "" {
			t.Errorf("no source for %s", k)
		}
	}
	w := testEngine()
	if e.NonTorchBytes != w.NonTorchBytes || e.CUDAGraphBaseBytes != w.CUDAGraphBaseBytes ||
		e.CUDAGraphPerLayerBytes != w.CUDAGraphPerLayerBytes || e.HostBaselineRSSBytes != w.HostBaselineRSSBytes ||
		e.HostMarginBytes != w.HostMarginBytes || e.HostRetention != w.HostRetention ||
		e.SamplerBytesPerLogit != w.SamplerBytesPerLogit || e.ActivationHiddenCopies != w.ActivationHiddenCopies ||
		e.ActivationMLPCopies != w.ActivationMLPCopies || e.DefaultMaxNumBatchedTokens != w.DefaultMaxNumBatchedTokens ||
		e.DefaultMaxNumSeqs != w.DefaultMaxNumSeqs || e.LargeMaxNumBatchedTokens != w.LargeMaxNumBatchedTokens ||
		e.LargeMaxNumSeqs != w.LargeMaxNumSeqs || e.LargeGPUMemoryBytes != w.LargeGPUMemoryBytes ||
		e.DefaultBlockSize != w.DefaultBlockSize || e.CUDAGraphMaxTokens != w.CUDAGraphMaxTokens {
		t.Errorf("embedded vllm engine differs from testEngine (update the hand-computed tests):\n%+v", e)
	}
}
