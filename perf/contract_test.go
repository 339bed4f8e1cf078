package perf_test

import (
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/sim"
)

// The timed simulator takes the engine model through its StepTimer
// interface (TEAM.md contract).
var _ sim.StepTimer = (*perf.Model)(nil)
