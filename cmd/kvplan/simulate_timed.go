package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/sim"
)

// timedFlags are simulate's flags for the timed simulation (--model and
// --gpu turn it on).
func timedFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "engine", Value: planner.DefaultEngine, Usage: "timed: serving engine whose memory accounting, defaults and fitted step times apply"},
		&cli.StringFlag{Name: "engine-version", Usage: "timed: the engine version whose memory profile applies (default: the catalog's newest)"},
		&cli.StringFlag{Name: "weight-dtype", Usage: "timed: matmul weights' dtype, e.g. fp8 (default: the model's)"},
		&cli.IntFlag{Name: flagSpecTok, Usage: "timed: tokens the model's MTP heads propose per step (with --acceptance-length)"},
		&cli.Float64Flag{Name: flagAccept, Usage: "timed: mean tokens accepted per target step, the bonus token included (1 to N + 1)"},
		maxNumBatchedTokensFlag("timed: tokens per engine iteration, vLLM's --max-num-batched-tokens (default: the engine's for the GPU)"),
		maxNumSeqsFlag("timed: running sequences per worker, vLLM's --max-num-seqs (default: the engine's for the GPU)"),
		&cli.IntFlag{Name: "prefill-workers", Usage: "timed, disaggregated: prefill workers (they hold the prefix caches the router sees); with --decode-workers and --link, instead of --workers"},
		&cli.IntFlag{Name: "decode-workers", Usage: "timed, disaggregated: decode workers"},
		&cli.StringFlag{Name: "link", Usage: "timed, disaggregated: the link the KV crosses, shared by every transfer in flight (kvplan links list)"},
	}, requestPathFlags(perf.PathFrontend)...)
}

// simulateSetup is how the timed simulation was set up, in simulate's JSON.
type simulateSetup struct {
	StepModel           string   `json:"step_model"`
	Engine              string   `json:"engine"`
	TP                  int      `json:"tp"`
	MaxNumBatchedTokens int      `json:"max_num_batched_tokens"`
	MaxNumSeqs          int      `json:"max_num_seqs"`
	SeparatePrefill     bool     `json:"separate_prefill"`
	RequestPath         string   `json:"request_path"`
	FrontendMS          float64  `json:"frontend_ms"`
	FrontendMSPerToken  float64  `json:"frontend_ms_per_token"`
	RampMS              float64  `json:"ramp_ms"`
	Load                string   `json:"load"`
	PrefillWorkers      int      `json:"prefill_workers,omitempty"`
	DecodeWorkers       int      `json:"decode_workers,omitempty"`
	Link                string   `json:"link,omitempty"`
	LinkRatePer         string   `json:"link_rate_per,omitempty"`
	ParallelPaths       int      `json:"parallel_paths,omitempty"`
	PairPaths           int      `json:"pair_paths,omitempty"`
	PathBytesPerToken   float64  `json:"path_bytes_per_token,omitempty"`
	PathBytesPerS       float64  `json:"path_bytes_per_s,omitempty"`
	Assumptions         []string `json:"assumptions"`
}

// timedRun is what the timed simulation adds to simulate's run.
type timedRun struct {
	engine     *sim.Engine
	workers    int // the workers the router sees: aggregated, or prefill
	slots      int
	slotsFrom  string
	setup      simulateSetup
	derivation planner.Derivation
}

// simTimed reads the timed simulation's flags and builds its engine; it
// returns nil when the run is cache-only (no --model and --gpu).
func simTimed(c *cli.Context, blockSize int) (*timedRun, error) {
	disagg := c.IsSet("prefill-workers") || c.IsSet("decode-workers") || c.IsSet("link")
	if c.String("model") == "" && c.String("gpu") == "" {
		for _, f := range []string{"prefill-workers", "decode-workers", "link", flagMaxNumBatchedTokens, flagMaxNumSeqs, "weight-dtype", "engine", "engine-version", flagSpecTok, flagAccept, "frontend-ms", "request-path"} {
			if c.IsSet(f) {
				return nil, fmt.Errorf("--%s is a setting of the timed simulation: give --model and --gpu too (without them simulate replays the caches only)", f)
			}
		}
		return nil, nil
	}
	if c.String("model") == "" || c.String("gpu") == "" {
		return nil, fmt.Errorf("the timed simulation needs both --model and --gpu (kvplan models list, kvplan gpus list)")
	}
	if c.IsSet("kv-slots") {
		return nil, fmt.Errorf("--kv-slots and --model/--gpu: the timed simulation takes each worker's KV slots from the memory model; leave --kv-slots out (or --model and --gpu for the cache-only replay)")
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return nil, err
	}
	sc := planner.SimulationScenario{Catalog: cat, EnforceEager: c.Bool(flagEnforceEager), BlockSize: blockSize}
	if sc.Path, err = requestPath(c); err != nil {
		return nil, err
	}
	if w := c.String("weight-dtype"); w != "" {
		if sc.WeightDtype, err = weightDtype(w); err != nil {
			return nil, err
		}
	}
	if c.IsSet(flagGPUUtil) { // else 0: the engine's default for its version, as kvplan memory
		if sc.GPUUtil, err = floatIn(c, flagGPUUtil, 0.01, 1, ""); err != nil {
			return nil, err
		}
	}
	if sc.Model, err = cat.Model(c.String("model")); err != nil {
		return nil, err
	}
	if sc.GPU, err = cat.GPU(c.String("gpu")); err != nil {
		return nil, err
	}
	if sc.Engine, sc.EngineVersion, err = cat.EngineVersion(strings.ToLower(c.String("engine")), c.String("engine-version")); err != nil {
		return nil, err
	}
	sc.VersionDefaulted = c.String("engine-version") == ""
	if sc.MaxModelLen, err = positive(c, flagMaxModelLen, true); err != nil {
		return nil, err
	}
	if sc.MaxNumBatchedTokens, err = positive(c, flagMaxNumBatchedTokens, true); err != nil {
		return nil, err
	}
	if sc.MaxNumSeqs, err = positive(c, flagMaxNumSeqs, true); err != nil {
		return nil, err
	}
	if sc.KV, err = kvFlags(c, sc.Model); err != nil {
		return nil, err
	}
	if c.IsSet(flagSpecTok) || c.IsSet(flagAccept) {
		if sc.SpeculativeTokens, err = intIn(c, flagSpecTok, intRange{1, 16, "tokens"}); err != nil {
			return nil, err
		}
		if !c.IsSet(flagAccept) {
			return nil, fmt.Errorf("simulate: --%s needs --%s (mean tokens accepted per step, 1 to %d)", flagSpecTok, flagAccept, sc.SpeculativeTokens+1)
		}
		sc.AcceptanceLength = c.Float64(flagAccept)
		lay := models.Parallelism{TP: max(1, sc.KV.TP), SpeculativeTokens: sc.SpeculativeTokens, AcceptanceLength: sc.AcceptanceLength}
		if err := perf.CheckLayout(sc.Model, sc.GPU, lay, 0, nil); err != nil {
			return nil, fmt.Errorf("simulate: %w", err)
		}
	}
	run := &timedRun{}
	var prefill, decode int
	if disagg {
		if c.IsSet("workers") {
			return nil, fmt.Errorf("--workers and --prefill-workers/--decode-workers: a disaggregated run counts its workers by role; leave --workers out")
		}
		if prefill, err = intIn(c, "prefill-workers", workersRange); err != nil {
			return nil, err
		}
		if decode, err = intIn(c, "decode-workers", workersRange); err != nil {
			return nil, err
		}
		if c.String("link") == "" {
			return nil, fmt.Errorf("a disaggregated run needs --link, the link its KV crosses (kvplan links list; e.g. --link 1gbe)")
		}
		if sc.Link, err = cat.Link(c.String("link")); err != nil {
			return nil, err
		}
		run.workers = prefill
	} else if run.workers, err = intIn(c, "workers", workersRange); err != nil {
		return nil, err
	}
	if sc.Layout, err = simLayout(c, cat, sc); err != nil {
		return nil, err
	}
	p, err := planner.PlanSimulation(sc)
	if err != nil {
		return nil, err
	}
	run.slots = int(planner.WorkerKVSlots(p.Memory)) // a worker of data-parallel ranks holds each rank's slots
	run.slotsFrom = fmt.Sprintf("%s on %s at %g (kvplan memory)", p.Memory.Model, p.Memory.GPU, p.Memory.GPUUtil)
	if !p.Layout.Plain() {
		run.slotsFrom = fmt.Sprintf("%s on %s (%s) at %g (kvplan memory: %d slots per data-parallel rank)", p.Memory.Model, p.Memory.GPU, p.Layout, p.Memory.GPUUtil, p.Memory.KVSlotsTokens)
	}
	run.engine = simEngine(p)
	run.setup = simulateSetup{StepModel: p.StepModel, Engine: sc.Engine.Name, TP: p.Memory.TP, MaxNumBatchedTokens: p.MaxNumBatchedTokens,
		MaxNumSeqs: p.MaxNumSeqs, SeparatePrefill: p.SeparatePrefill, RequestPath: p.RequestPath, FrontendMS: p.FrontendMS, FrontendMSPerToken: p.FrontendMSPerToken, RampMS: p.RampMS,
		Assumptions: p.Assumptions}
	if disagg {
		run.engine.DecodeWorkers = decode
		// One path per prefill–decode worker pair, as check and plan count
		// them (a host port per worker on a per-node link, its own rails on
		// a per-GPU one): decode worker i receives over path i mod pairs.
		pairs := min(prefill, decode)
		run.engine.Link = sim.Link{BytesPerS: p.PathBytesPerS, LatencyMS: p.LinkLatencyMS, BytesPerToken: p.PathBytesPerToken, Dedicated: !p.LinkShared, Paths: pairs}
		run.setup.PrefillWorkers, run.setup.DecodeWorkers, run.setup.Link, run.setup.PairPaths = prefill, decode, p.Link, pairs
		run.setup.LinkRatePer, run.setup.ParallelPaths = p.LinkRatePer, p.ParallelPaths
		run.setup.PathBytesPerToken, run.setup.PathBytesPerS = p.PathBytesPerToken, p.PathBytesPerS
	}
	run.derivation = p.Derivation
	return run, nil
}

// simEngine is the simulator's engine for a simulation plan (aggregated;
// the caller adds the decode side).
func simEngine(p *planner.SimulationPlan) *sim.Engine {
	return &sim.Engine{Step: p.Step, MaxNumBatchedTokens: p.MaxNumBatchedTokens, MaxNumSeqs: p.MaxNumSeqs,
		FrontendMS: p.FrontendMS, FrontendMSPerToken: p.FrontendMSPerToken, SeparatePrefill: p.SeparatePrefill}
}

// loadName says how requests are issued, for the setup.
func loadName(conc int, rate float64, trace bool) string {
	switch {
	case conc > 0:
		return fmt.Sprintf("closed loop of %d clients", conc)
	case rate > 0:
		return fmt.Sprintf("Poisson arrivals at %g requests/s", rate)
	case trace:
		return "the trace's timestamps"
	}
	return "closed loop of 1 client"
}
