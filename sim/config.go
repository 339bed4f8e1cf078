package sim

import (
	"errors"
	"fmt"
	"math"
)

// Service-time model defaults. A request that starts at time t completes at
//
//	t + PrefillMSPerToken × (InputTokens − cached tokens) + DecodeMSPerToken × OutputTokens
//
// whatever else its worker is doing: the model orders completions, it does
// not simulate batching or queueing on the GPU. The defaults are rough
// figures for Qwen3-0.6B from FACTS §5: a ~1,500-token prefill took ~44 ms on
// the 24 GB GPU (≈ 0.03 ms a token), and at concurrency 32 the server
// produced ~1,500 tokens/s, about 47 tokens/s a stream (≈ 20 ms a token).
const (
	DefaultPrefillMSPerToken = 0.03
	DefaultDecodeMSPerToken  = 20.0
)

// Dynamo KV router defaults (FACTS §5).
const (
	DefaultPrefillLoadScale = 1.0
	DefaultOverlapCredit    = 1.0
)

// progressEvery is how many requests pass between Progress calls.
const progressEvery = 4096

// Config describes the simulated cluster and how requests are issued.
type Config struct {
	// Workers is the number of workers (at least 1).
	Workers int
	// CapacityBlocks is each worker's KV capacity in blocks; 0 or less
	// means unbounded.
	CapacityBlocks int
	// BlockSize is the tokens per block. 0 takes the source's; any other
	// value must equal the source's (sources are built with a block size).
	BlockSize int
	// Policy is a name from Policies (not "all"; see RunAll). Empty means
	// kv-aware.
	Policy string
	// Seed seeds the random policy.
	Seed uint64
	// PrefillLoadScale and OverlapCredit are the kv-aware cost parameters,
	// Dynamo's prefill_load_scale (the weight of the prefill term) and
	// overlap_score_credit (the blocks of prefill each overlapping block
	// takes off). 0 means Dynamo's default of 1 unless ExplicitZero is
	// set.
	PrefillLoadScale float64
	OverlapCredit    float64
	// Concurrency is the most requests in flight, issued in order; each
	// waits for the earliest completion when the limit is reached, so 1 is
	// sequential (a closed loop of Concurrency clients). 0 follows the
	// source's arrival times if it is Timed (or RatePerS), with no limit on
	// requests in flight, and is 1 otherwise. Arrival times are ignored when
	// Concurrency > 0. Completions due at or before an arrival are processed
	// before it is routed.
	Concurrency int
	// RatePerS, when above 0, replaces the arrival times with a Poisson
	// process of that many requests a second (exponential gaps from a PCG
	// seeded with Seed, its own stream). It excludes Concurrency > 0.
	RatePerS float64
	// Burstiness, with RatePerS, draws the gaps between arrivals from a
	// gamma distribution of that shape and mean 1/RatePerS, as vLLM bench's
	// --burstiness: 1 (or 0) is the Poisson process, below 1 burstier, above
	// 1 more even; the gaps' squared coefficient of variation is 1/Burstiness.
	Burstiness float64
	// RampMS spreads a closed loop's first Concurrency requests evenly over
	// that many milliseconds (request k of them is sent at RampMS × (k + ½)
	// / Concurrency), as a benchmark's clients start up; 0 sends them all
	// at once. Only with Concurrency > 0.
	RampMS float64
	// Engine, when set, turns on the timed simulation: every worker is an
	// engine that batches (see Engine). Nil is the cache-only simulation,
	// whose clock is PrefillMSPerToken and DecodeMSPerToken.
	Engine *Engine
	// PrefillMSPerToken and DecodeMSPerToken set the service-time model;
	// 0 means the Default values unless ExplicitZero is set.
	PrefillMSPerToken float64
	DecodeMSPerToken  float64
	// ExplicitZero makes a 0 in PrefillLoadScale, OverlapCredit,
	// PrefillMSPerToken or DecodeMSPerToken mean zero (no overlap credit,
	// say) instead of the field's default. DefaultConfig sets it together
	// with every default, so the way to set an exact 0 is
	//
	//	cfg := sim.DefaultConfig()
	//	cfg.OverlapCredit = 0
	//
	// A Config literal leaves it false: 0 then means the default, as before.
	ExplicitZero bool
	// SeenBlocks bounds the block ids remembered to tell repeat requests
	// (and, for kv-aware-approx, where blocks were sent): 0 means
	// DefaultSeenBlocks, a negative value means no bound (memory then grows
	// with the distinct blocks of the workload, about 16 to 32 bytes each).
	// Nothing is forgotten, and results are exact, until a run references
	// about SeenBlocks/2 distinct blocks; past that, blocks not referenced
	// for a while are forgotten (see Memory in the package doc).
	SeenBlocks int
	// Progress, if set, is called with the number of requests done so far,
	// every 4,096 requests and at the end. RunAll counts across policies.
	Progress func(done int)
}

// DefaultConfig returns a Config with every default filled in and
// ExplicitZero set, so that any field can then be set to 0 exactly: one
// worker, unbounded capacity, the source's block size, kv-aware routing,
// Dynamo's cost parameters, the default service-time model, arrival times
// (or one at a time for an untimed source) and DefaultSeenBlocks.
func DefaultConfig() Config {
	return Config{
		Workers:           1,
		Policy:            defaultPolicy,
		PrefillLoadScale:  DefaultPrefillLoadScale,
		OverlapCredit:     DefaultOverlapCredit,
		PrefillMSPerToken: DefaultPrefillMSPerToken,
		DecodeMSPerToken:  DefaultDecodeMSPerToken,
		ExplicitZero:      true,
		SeenBlocks:        DefaultSeenBlocks,
	}
}

// loadMode is how requests are issued.
type loadMode int

const (
	loadClosed loadMode = iota // at most Concurrency in flight, in order
	loadTrace                  // at the source's arrival times
	loadRate                   // at Poisson arrival times (RatePerS)
)

// settle fills defaults and checks cfg against the source.
func (cfg Config) settle(src Source) (Config, loadMode, error) {
	if cfg.Workers < 1 {
		return cfg, 0, fmt.Errorf("workers: %d, want at least 1", cfg.Workers)
	}
	if cfg.Concurrency < 0 {
		return cfg, 0, fmt.Errorf("concurrency: %d, want 0 (follow the trace) or more", cfg.Concurrency)
	}
	if cfg.RatePerS < 0 || math.IsNaN(cfg.RatePerS) || math.IsInf(cfg.RatePerS, 0) {
		return cfg, 0, fmt.Errorf("rate: %g requests/s, want a finite rate above 0 (or 0 for none)", cfg.RatePerS)
	}
	if !(cfg.Burstiness >= 0) || math.IsInf(cfg.Burstiness, 0) || cfg.Burstiness > 1e6 || (cfg.Burstiness > 0 && cfg.Burstiness < 1e-3) {
		return cfg, 0, fmt.Errorf("burstiness: %g, want a gamma shape between 0.001 and 1,000,000 (1 = Poisson), or 0 for Poisson", cfg.Burstiness)
	}
	if cfg.Burstiness > 0 && cfg.Burstiness != 1 && cfg.RatePerS <= 0 {
		return cfg, 0, errors.New("burstiness: shapes the gaps of an open-loop rate; give RatePerS with it")
	}
	if !(cfg.RampMS >= 0) || math.IsInf(cfg.RampMS, 0) {
		return cfg, 0, fmt.Errorf("ramp: %g ms, want a finite time ≥ 0", cfg.RampMS)
	}
	if cfg.RampMS > 0 && cfg.Concurrency < 1 {
		return cfg, 0, errors.New("ramp: the clients' start-up ramp needs a closed loop (Concurrency > 0)")
	}
	if cfg.RatePerS > 0 && cfg.Concurrency > 0 {
		return cfg, 0, fmt.Errorf("rate %g requests/s and concurrency %d: give one load, an open-loop rate or a closed-loop concurrency", cfg.RatePerS, cfg.Concurrency)
	}
	if src == nil {
		return cfg, 0, errors.New("no workload source")
	}
	bs := src.BlockSize()
	if bs < 1 {
		return cfg, 0, fmt.Errorf("block size: source reports %d", bs)
	}
	if cfg.BlockSize == 0 {
		cfg.BlockSize = bs
	} else if cfg.BlockSize != bs {
		return cfg, 0, fmt.Errorf("block size: config says %d tokens but the source was built with %d", cfg.BlockSize, bs)
	}
	if cfg.Policy == "" {
		cfg.Policy = defaultPolicy
	}
	if !cfg.ExplicitZero {
		if cfg.PrefillLoadScale == 0 {
			cfg.PrefillLoadScale = DefaultPrefillLoadScale
		}
		if cfg.OverlapCredit == 0 {
			cfg.OverlapCredit = DefaultOverlapCredit
		}
		if cfg.PrefillMSPerToken == 0 {
			cfg.PrefillMSPerToken = DefaultPrefillMSPerToken
		}
		if cfg.DecodeMSPerToken == 0 {
			cfg.DecodeMSPerToken = DefaultDecodeMSPerToken
		}
	}
	for _, v := range [...]float64{cfg.PrefillLoadScale, cfg.OverlapCredit, cfg.PrefillMSPerToken, cfg.DecodeMSPerToken} {
		if !(v >= 0) || math.IsInf(v, 1) {
			return cfg, 0, errors.New("prefill load scale, overlap credit and per-token times must be finite and not negative")
		}
	}
	if cfg.SeenBlocks == 0 {
		cfg.SeenBlocks = DefaultSeenBlocks
	}
	if cfg.Engine != nil {
		e, err := cfg.Engine.settle(cfg)
		if err != nil {
			return cfg, 0, err
		}
		cfg.Engine = &e
	}
	mode := loadClosed
	switch {
	case cfg.Concurrency > 0:
	case cfg.RatePerS > 0:
		mode = loadRate
	default:
		if t, ok := src.(Timed); ok && t.Timed() {
			mode = loadTrace
		} else {
			cfg.Concurrency = 1
		}
	}
	return cfg, mode, nil
}
