package planner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/planfile"
)

// FuzzPlanDeployment: plans that parse, with hostile values, either fail
// with an error or give a deployment whose every figure is finite.
func FuzzPlanDeployment(f *testing.F) {
	for _, dir := range []string{"../examples", "../testdata/plans"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("[model]\nname = \"qwen3-0.6b\"\n[workload]\ninput_tokens = 100_000_000\noutput_tokens = 100_000_000\nconcurrency = 10_000_000\n[pools.p]\nrole = \"aggregated\"\ngpu = \"l4\"\nworkers = 100000\nmemory_limit = \"1\"\n"))
	cat, err := catalog.Load()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := planfile.Parse("fuzz.toml", data)
		if err != nil || p.Model.Config != "" {
			return // config.json plans read files: not fuzzed here
		}
		dep, err := PlanDeployment(cat, p)
		if err != nil {
			return
		}
		if err := dep.Derivation.Check(); err != nil {
			t.Fatalf("%v\nplan:\n%s", err, data)
		}
	})
}
