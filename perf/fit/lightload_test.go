package fit

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/internal/goldenfile"
	"github.com/kvplan/kvplan/perf"
)

// TestLightLoad measures what a request pays at light load beyond kvplan's
// prefill, by engine and by benchmark source, to tell the harness from the
// engine (docs/engine-model.md leaves open whether the 50–95 ms a refit puts
// into request_ms belongs to the harnesses that measured the rows or to the
// engines). For every run of at most 4 clients that did not queue (TTFT
// under 5 s), the excess is the measured TTFT minus kvplan's TTFT with the
// catalog's efficiencies and no request cost (request_ms and
// request_us_per_token at 0), on the shipped ramp replay and on the harness
// replay (perf.Load.AsHarness: clients out of phase after their first
// request, so no lock-step waits). The two sources ran different harnesses
// and deployment scripts (InferenceX's dumps, AIConfigurator's gap-analysis
// runs): an excess that is the harness's differs between them for the same
// engine; one that is the engine's does not. An excess that is a prefill too
// slow grows with the prompt; a per-request cost does not.
func TestLightLoad(t *testing.T) {
	cat, _, _, cases, _ := load(t)
	type acc struct{ meas, ramp, harness, reqMS []float64 }
	groups := map[string]*acc{}
	add := func(key string, meas, ramp, harness, req float64) {
		a := groups[key]
		if a == nil {
			a = &acc{}
			groups[key] = a
		}
		a.meas = append(a.meas, meas)
		a.ramp = append(a.ramp, meas-ramp)
		a.harness = append(a.harness, meas-harness)
		a.reqMS = append(a.reqMS, req)
	}
	effFor := FromCatalog(cat)
	both := map[string]map[string]bool{} // engine model GPU -> sources with light-load rows
	for _, c := range cases {
		if c.Load.Concurrency > 4 || c.TTFTMS > 5000 {
			continue
		}
		eff, err := effFor(c)
		if err != nil {
			t.Fatal(err)
		}
		req := perf.Direct().Cost(&eff).MS(float64(c.Load.InputTokens))
		eff.RequestMS, eff.RequestUSTok = 0, 0
		ramp, err := c.Predict(&eff)
		if err != nil {
			t.Fatalf("%s (line %d): %v", c.ID, c.Line, err)
		}
		h := *c
		h.Load.AsHarness = true
		harness, err := h.Predict(&eff)
		if err != nil {
			t.Fatalf("%s (line %d), harness replay: %v", c.ID, c.Line, err)
		}
		prompt := "ISL ≤ 2k"
		if c.ISL > 2048 {
			prompt = "ISL > 2k"
		}
		add(fmt.Sprintf("%s | %s | %s", c.Engine, c.Source, prompt), c.TTFTMS, ramp.TTFTMS, harness.TTFTMS, req)
		same := fmt.Sprintf("%s | %s | %s", c.Engine, c.Group, c.GPU.Name)
		if both[same] == nil {
			both[same] = map[string]bool{}
		}
		both[same][c.Source] = true
		add("same: "+same+" | "+c.Source, c.TTFTMS, ramp.TTFTMS, harness.TTFTMS, req)
	}
	med := func(x []float64) float64 { m, _, _ := stats(x, 0); return m }
	var keys []string
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	row := func(b *bytes.Buffer, k string) {
		a := groups[k]
		fmt.Fprintf(b, "| %s | %d | %.0f | %.0f | %.0f | %.0f |\n", strings.TrimPrefix(k, "same: "), len(a.meas), med(a.meas), med(a.ramp), med(a.harness), med(a.reqMS))
	}
	var b bytes.Buffer
	b.WriteString("# Light-load TTFT beyond kvplan's prefill, by engine and benchmark source\n\n")
	b.WriteString("Runs of at most 4 clients that did not queue (measured TTFT < 5 s), each run once. Excess: measured TTFT minus kvplan's with the catalog's efficiencies and no request cost, on the shipped ramp replay and on the harness replay (clients out of phase, no lock-step waits); medians, ms. The last column is the request cost the shipped entries charge on the direct path (`request_ms + ISL × request_us_per_token`). `go test ./perf/fit -run TestLightLoad -v`; `-update` rewrites this file.\n\n")
	const cols = " rows | measured TTFT | excess, ramp replay | excess, harness replay | shipped request cost |\n"
	const nums = "---:|---:|---:|---:|---:|\n"
	b.WriteString("| engine | source | prompt |" + cols + "|---|---|---|" + nums)
	for _, k := range keys {
		if !strings.HasPrefix(k, "same: ") {
			row(&b, k)
		}
	}
	b.WriteString("\nThe same engine, model and GPU in both sources:\n\n")
	var same []string
	for _, k := range keys {
		if f := strings.Split(strings.TrimPrefix(k, "same: "), " | "); strings.HasPrefix(k, "same: ") && len(both[strings.Join(f[:3], " | ")]) == 2 {
			same = append(same, k)
		}
	}
	if len(same) == 0 {
		b.WriteString("none: no engine × model × GPU has light-load runs in both sources, so they cannot be told apart by model.\n")
	} else {
		b.WriteString("| engine | model | GPU | source |" + cols + "|---|---|---|---|" + nums)
	}
	for _, k := range same {
		row(&b, k)
	}
	t.Log(b.String())
	goldenfile.Check(t, filepath.Join("testdata", "lightload.md"), b.Bytes(), *update, "go test ./perf/fit -run TestLightLoad -update", false)
}
