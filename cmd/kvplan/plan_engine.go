package main

import (
	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/planner/capacity"
)

// planEngine is the engine model `kvplan plan`, `check` and `disagg` size
// with: the fitted engine model (package perf) of each worker, and the
// engine's schedule. An engine the engine model does not know is taken as
// vLLM, as the planner does. Tests replace it with a stand-in.
var planEngine = func(cat *catalog.Catalog) capacity.EngineModel {
	known := func(engine string) string {
		if _, ok := perf.Schedules[engine]; ok {
			return engine
		}
		return "vllm"
	}
	return capacity.EngineModel{
		Timers: func(s capacity.EngineSpec) (capacity.StepTimer, string, error) {
			m, err := perf.New(perf.Spec{Model: s.Model, GPU: s.GPU, Engine: known(s.Engine), TP: s.TP, Parallel: s.Parallel, Link: s.Link, RedundantExperts: s.RedundantExperts, EPLB: s.EPLB || s.RedundantExperts > 0, TwoBatchOverlap: s.TwoBatchOverlap,
				WeightDtype: s.WeightDtype, KVDtype: s.KVDtype, Catalog: cat})
			if err != nil {
				return nil, "", err
			}
			note := m.Fallback
			if m.Efficiency.Calibrated() { // the figures rest on the user's calibration: say whose
				if note != "" {
					note += "; "
				}
				note += "efficiencies " + m.Efficiency.Key() + " " + m.Efficiency.Provenance()
			}
			return m, note, nil
		},
		SeparatePrefill: func(engine string) bool { return perf.Schedules[known(engine)].SeparatePrefill },
	}
}
