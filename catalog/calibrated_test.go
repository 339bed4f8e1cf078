package catalog

import (
	"strings"
	"testing"
)

const calibratedEntry = `[[efficiency]]
gpu = "l40s"
engine = "vllm"
dtype = "bf16"
gemm = 0.8
memory = 0.8
attention = 0.5
moe = 0.7
interconnect = 0.4
allreduce_us = 30
step_ms = 2
layer_us = 6
eager_layer_us = 300
request_ms = 40
request_us_per_token = 3
ramp_ms = 20
rows = 9
source = "kvplan calibrate"
`

// TestCalibratedFields: calibrated_from and calibrated_at go together, the
// date is a date, and the entry says where its values come from.
func TestCalibratedFields(t *testing.T) {
	cases := []struct {
		extra, want string // want: "" = loads
	}{
		{"calibrated_from = \"a.json, b.json\"\ncalibrated_at = \"2026-01-31\"\n", ""},
		{"calibrated_from = \"a.json\"\n", `c.toml:1: efficiency "l40s × vllm × bf16": calibrated_at: missing: a calibrated entry (calibrated_from) says when it was calibrated, as YYYY-MM-DD`},
		{"calibrated_at = \"2026-01-31\"\n", "calibrated_from: missing: a calibrated entry (calibrated_at) names the result files it was fitted on"},
		{"calibrated_from = \"a.json\"\ncalibrated_at = \"31/01/2026\"\n", `calibrated_at: "31/01/2026" is not a date such as 2026-01-31`},
	}
	for _, c := range cases {
		cat, err := Parse("c.toml", []byte(calibratedEntry+c.extra))
		if c.want == "" {
			if err != nil {
				t.Fatalf("%q: %v", c.extra, err)
			}
			e := cat.Efficiencies[0]
			if !e.Calibrated() || e.Provenance() != "calibrated by kvplan calibrate on 2026-01-31 from a.json, b.json" {
				t.Errorf("provenance %q", e.Provenance())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.extra, err, c.want)
		}
	}
	cat, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range cat.Efficiencies {
		if e.Calibrated() || !strings.HasPrefix(e.Provenance(), "the shipped fit (") {
			t.Errorf("%s: provenance %q", e.Key(), e.Provenance())
		}
	}
}
