package planfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kvplan/kvplan/units"
)

// FuzzParse: any bytes give a plan or an error, never a panic; an accepted
// plan holds finite numbers within the stated limits, and its model.config
// stays inside the plan's directory.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"../examples", "../testdata/plans", "../testdata/plans/invalid"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.toml", data)
		if err != nil {
			return
		}
		w := p.Workload
		if w.InputTokens < 1 || w.InputTokens > MaxTokens || w.OutputTokens > MaxTokens || w.Concurrency > MaxConcurrency ||
			!units.Finite(w.RequestRate, p.SLO.TTFTMS, p.SLO.ITLMS, p.Link.ThroughputBytesPerS, p.Link.LatencyMS) ||
			p.Model.TP > MaxTP || p.Router.BlockSize > MaxBlockSize {
			t.Fatalf("accepted out-of-range values: %+v %+v %+v", w, p.SLO, p.Link)
		}
		if p.Model.Config != "" && p.escapes(p.Model.Config) != "" {
			t.Fatalf("accepted model.config %q outside the plan's directory", p.Model.Config)
		}
		for _, name := range p.PoolNames() {
			pl := p.Pools[name]
			if pl.Workers < 1 || pl.Workers > MaxWorkers || !(pl.GPUMemoryUtilization >= 0 && pl.GPUMemoryUtilization <= 1) || p.PoolTP(pl) > MaxTP {
				t.Fatalf("pool %q accepted with %+v", name, pl)
			}
			_ = p.Line("pools." + name + ".gpu")
		}
	})
}
