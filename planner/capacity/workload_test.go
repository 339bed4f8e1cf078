package capacity_test

import (
	"testing"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/perf"
	. "github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/workload"
)

// fittedTimers is the engine model (package perf) as kvplan plan uses it.
func fittedTimers(cat *catalog.Catalog) TimerFactory {
	return func(s EngineSpec) (StepTimer, string, error) {
		m, err := perf.New(perf.Spec{Model: s.Model, GPU: s.GPU, Engine: s.Engine, TP: s.TP, WeightDtype: s.WeightDtype, KVDtype: s.KVDtype, Catalog: cat})
		if err != nil {
			return nil, "", err
		}
		return m, m.Fallback, nil
	}
}

// mooncakeQuery sizes Llama-3.1-8B on H100s for the Mooncake conversation
// excerpt at 2 requests/s, TTFT p95 ≤ 5 s and TPOT ≤ 50 ms.
func mooncakeQuery(t testing.TB, cat *catalog.Catalog) Query {
	t.Helper()
	w, err := workload.Read("../../testdata/sim/conversation_excerpt.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := cat.Model("llama-3.1-8b")
	g, _ := cat.GPU("h100-sxm")
	e, _ := cat.Engine("vllm")
	q := Query{Model: m, Engine: e, RatePerS: 2, Workload: w, GPUOptions: []*catalog.GPU{g}, Path: perf.Frontend(13), Timers: fittedTimers(cat)}
	q.SLO.TTFTMS, q.SLO.TPOTMeanMS = 5000, 50
	return q
}

func BenchmarkSearchMooncake(b *testing.B) {
	cat := testCatalog(b)
	for b.Loop() {
		if _, err := Search(mooncakeQuery(b, cat)); err != nil {
			b.Fatal(err)
		}
	}
}
