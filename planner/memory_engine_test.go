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
		{"engine_bad_retention.toml", []string{"engine_bad_retention.toml:31", `engine "bad-retention": host_retention`, "must be >= 1"}},
		{"engine_bad_size.toml", []string{"engine_bad_size.toml:9", `engine "bad-size": non_torch`, `"lots"`}},
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

// TestEngineEmbedded: every embedded engine entry loads with a source for
// each constant of its family, the default vllm entry is the newest release
// listed (0.31.0, v0.21 and later), and its values are those testEngine
// writes out.
func TestEngineEmbedded(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Engines {
		for _, k := range catalog.EngineConstants(e.FamilyOf()) {
			if e.Sources[k] == "" {
				t.Errorf("%s %s: no source for %s", e.Name, e.Range(), k)
			}
		}
	}
	e, v, err := c.EngineVersion("vllm", "")
	if err != nil {
		t.Fatal(err)
	}
	if v != "0.31.0" || e.MinVersion != "0.21.0" {
		t.Errorf("default vllm = %s (%s), want 0.31.0 (>= 0.21.0)", v, e.Range())
	}
	w := testEngine()
	tp := func(x *catalog.Engine) []catalog.TPBytes { return x.NonTorchTPBytes }
	if e.NonTorchBytes != w.NonTorchBytes || e.NonTorchEagerBytes != w.NonTorchEagerBytes || e.NonTorchPPBytes != w.NonTorchPPBytes ||
		len(tp(e)) != len(tp(w)) || tp(e)[0] != tp(w)[0] || tp(e)[1] != tp(w)[1] ||
		e.CUDAGraphBaseBytes != w.CUDAGraphBaseBytes || e.CUDAGraphPerLayerBytes != w.CUDAGraphPerLayerBytes ||
		e.CUDAGraphsCharged != w.CUDAGraphsCharged || e.MemoryFraction != w.MemoryFraction ||
		e.HostBaselineRSSBytes != w.HostBaselineRSSBytes || e.HostMarginBytes != w.HostMarginBytes || e.HostRetention != w.HostRetention ||
		e.SamplerBytesPerLogit != w.SamplerBytesPerLogit || e.ActivationHiddenCopies != w.ActivationHiddenCopies ||
		e.ActivationMLPCopies != w.ActivationMLPCopies || e.ActivationKeptHiddenCopies != w.ActivationKeptHiddenCopies ||
		e.MoEWorkspaceCopies != w.MoEWorkspaceCopies || e.PPBufferHiddenCopies != w.PPBufferHiddenCopies ||
		e.DefaultMaxNumBatchedTokens != w.DefaultMaxNumBatchedTokens ||
		e.DefaultMaxNumSeqs != w.DefaultMaxNumSeqs || e.LargeMaxNumBatchedTokens != w.LargeMaxNumBatchedTokens ||
		e.LargeMaxNumSeqs != w.LargeMaxNumSeqs || e.LargeGPUMemoryBytes != w.LargeGPUMemoryBytes ||
		e.DefaultBlockSize != w.DefaultBlockSize || e.CUDAGraphMaxTokens != w.CUDAGraphMaxTokens {
		t.Errorf("embedded vllm engine differs from testEngine (update the hand-computed tests):\n%+v", e)
	}
}

// TestEngineVersions: a version picks the entry whose range holds it; a
// version no entry holds, or that is not a version, is an error that says
// which ranges exist.
func TestEngineVersions(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		engine, version, wantMin, wantErr string
	}{
		{"vllm", "0.19.0", "0.10.0", ""},
		{"vllm", "v0.20.2", "0.10.0", ""},
		{"vllm", "0.21.0", "0.21.0", ""},
		{"vllm", "0.21.0rc1", "0.10.0", ""}, // a release candidate comes before its release
		{"vllm", "0.31.1", "0.21.0", ""},
		{"vllm", "0.9.2", "0.9.2", ""},
		{"vllm", "0.9.1", "0.8.0", ""},
		{"vllm", "0.7.3", "", "no profile for this version"},
		{"vllm", "latest", "", "not a version"},
		{"sglang", "0.5.10", "0.5.4", ""},
		{"trtllm", "1.3.0rc15", "1.0.0", ""},
		{"vlm", "0.19.0", "", "did you mean vllm"},
	} {
		e, v, err := c.EngineVersion(tc.engine, tc.version)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s %s: err %v, want %q", tc.engine, tc.version, err, tc.wantErr)
			}
			continue
		}
		if err != nil || e.MinVersion != tc.wantMin || v != tc.version {
			t.Errorf("%s %s: entry %v (err %v), version %q; want the entry from %s", tc.engine, tc.version, e, err, v, tc.wantMin)
		}
	}
}
