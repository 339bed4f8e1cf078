package main

import (
	"errors"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/planner/capacity"
)

// planTimers builds the engine model of each worker `kvplan plan` sizes.
// Tests replace it with a stand-in.
var planTimers = func(cat *catalog.Catalog) capacity.TimerFactory {
	return func(capacity.EngineSpec) (capacity.StepTimer, string, error) {
		return nil, "", errors.New("the engine model (package perf) is not on this branch yet")
	}
}
