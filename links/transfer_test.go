package links

import (
	"math"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

func TestTime(t *testing.T) {
	gbe := &catalog.Link{Name: "1gbe", EffectiveBytesPerS: 104e6, LatencyMS: 0.2, Shared: true}
	nvl := &catalog.Link{Name: "nvlink", EffectiveBytesPerS: 380e9, LatencyMS: 0.01, Shared: false}
	cases := []struct {
		name       string
		link       *catalog.Link
		bytes      int64
		n          int
		isolatedMS float64
		sharedMS   float64
	}{
		// Qwen3-0.6B, 3000 tokens: 344,064,000 B / 104 MB/s = 3.3083077 s, + 0.2 ms.
		{"1gbe alone", gbe, 344_064_000, 1, 3308.5077, 3308.5077},
		// Four in flight: each gets 26 MB/s, so 344,064,000 / 26e6 = 13.2332308 s, + 0.2 ms.
		{"1gbe shared by 4", gbe, 344_064_000, 4, 3308.5077, 13233.4308},
		// Not shared: 1 GB / 380 GB/s = 2.6316 ms, + 0.01 ms, whatever the count.
		{"nvlink unshared", nvl, 1_000_000_000, 8, 2.6416, 2.6416},
		// Nothing to send costs the latency alone.
		{"empty", gbe, 0, 3, 0.2, 0.2},
	}
	for _, c := range cases {
		got, err := Time(c.link, c.bytes, c.n)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if math.Abs(got.IsolatedMS-c.isolatedMS) > 1e-3 || math.Abs(got.SharedMS-c.sharedMS) > 1e-3 {
			t.Errorf("%s: isolated %.4f shared %.4f; want %.4f, %.4f", c.name, got.IsolatedMS, got.SharedMS, c.isolatedMS, c.sharedMS)
		}
	}
}

func TestTimeRejectsBadInput(t *testing.T) {
	gbe := &catalog.Link{Name: "1gbe", EffectiveBytesPerS: 104e6, Shared: true}
	if _, err := Time(gbe, -1, 1); err == nil {
		t.Error("negative bytes accepted")
	}
	if _, err := Time(gbe, 1, 0); err == nil {
		t.Error("zero concurrency accepted")
	}
	if _, err := Time(&catalog.Link{Name: "x"}, 1, 1); err == nil {
		t.Error("link without throughput accepted")
	}
}
