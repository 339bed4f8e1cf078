package main

import (
	"errors"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/planner/capacity"
)

// planEngine is the engine model `kvplan plan`, `check` and `disagg` size
// with: each worker's step times and the engine's schedule. Tests replace
// it with a stand-in.
var planEngine = func(cat *catalog.Catalog) capacity.EngineModel {
	return capacity.EngineModel{Timers: func(capacity.EngineSpec) (capacity.StepTimer, string, error) {
		return nil, "", errors.New("the engine model (package perf) is not on this branch yet")
	}}
}
