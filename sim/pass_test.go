package sim

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestOnePassEqualsSeparateRuns: the one pass (policies on goroutines, fed
// from one parse and one history) gives, policy by policy, exactly what the
// same pass run sequentially gives and what each policy run alone gives.
func TestOnePassEqualsSeparateRuns(t *testing.T) {
	loads := passLoads()
	cfgs := []Config{
		{Workers: 4, CapacityBlocks: 400, Seed: 3},
		{Workers: 3, CapacityBlocks: 2000, Seed: 3, Concurrency: 8},
		{Workers: 9, CapacityBlocks: 150, Seed: 5, Concurrency: 1, SeenBlocks: 3000}, // forgets
		{Workers: 2, CapacityBlocks: 500, Seed: 7, RatePerS: 20},
		// Timed: aggregated under a Poisson load, and disaggregated in a
		// closed loop.
		{Workers: 3, CapacityBlocks: 3000, Seed: 2, RatePerS: 5,
			Engine: &Engine{Step: affineStep{base: 5, perPrefill: 0.01, perContext: 1e-4}, MaxNumBatchedTokens: 1024, MaxNumSeqs: 16}},
		{Workers: 2, CapacityBlocks: 3000, Seed: 2, Concurrency: 6,
			Engine: &Engine{Step: sqrtStep{}, MaxNumBatchedTokens: 2048, MaxNumSeqs: 16, DecodeWorkers: 2,
				Link: Link{BytesPerS: 1e9, BytesPerToken: 1e5, LatencyMS: 1}}},
	}
	for _, l := range loads {
		for ci, cfg := range cfgs {
			all, err := RunAll(l.open, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			src, err := l.open()
			if err != nil {
				t.Fatal(err)
			}
			seq, err := runPass(src, cfg, Policies(), false)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(all, seq) {
				t.Errorf("%s config %d: parallel pass differs from the sequential one", l.name, ci)
			}
			for i, pol := range Policies() {
				src, err := l.open()
				if err != nil {
					t.Fatal(err)
				}
				c := cfg
				c.Policy = pol
				alone, err := Run(src, c)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(alone, all[i]) {
					t.Errorf("%s config %d %s: alone\n%+v\nin the pass\n%+v", l.name, ci, pol, alone, all[i])
				}
			}
		}
	}
}

// testLoad is a workload the pass tests replay.
type testLoad struct {
	name string
	open func() (Source, error)
}

// passLoads is the excerpt at its 512-token blocks and at 16, and a
// synthetic workload of shared prefixes.
func passLoads() []testLoad {
	syn := Synthetic{Prefixes: 30, PrefixTokens: 900, Repeats: 8, TailTokens: 40, Seed: 2}
	return []testLoad{
		{"excerpt/512", func() (Source, error) { return OpenMooncake(excerptPath, 0, false) }},
		{"excerpt/16", func() (Source, error) { return OpenMooncake(excerptPath, 16, false) }},
		{"synthetic", func() (Source, error) { return syn.Open() }},
	}
}

// TestOnePassErrors: a malformed request stops the pass with the same error
// whichever policies run, and no goroutine is left waiting.
func TestOnePassErrors(t *testing.T) {
	for _, pols := range [][]string{{KVAware}, nil, {KVAwareApprox, RoundRobin}} {
		src := func() (Source, error) { return OpenMooncake("../testdata/sim/bad_lines.jsonl", 0, false) }
		_, err := RunAll(src, Config{Workers: 2, CapacityBlocks: 100}, pols)
		if err == nil || !strings.Contains(err.Error(), "bad_lines.jsonl:2: hash_ids") {
			t.Errorf("%v: error %v, want the line-2 error", pols, err)
		}
	}
	// A request inconsistent with its block size, after a full batch.
	reqs := make([]testReq, batchRequests+3)
	for i := range reqs {
		reqs[i] = testReq{keys: []uint64{uint64(i + 1)}}
	}
	reqs[batchRequests+1].partial = 20 // 36 tokens with one block of 16
	_, err := RunAll(func() (Source, error) { return &sliceSource{bs: 16, reqs: reqs}, nil }, Config{Workers: 2}, nil)
	if err == nil || !strings.Contains(err.Error(), "request 514: 1 full block ids for 36 input tokens") {
		t.Errorf("inconsistent request: %v", err)
	}
}

// nanStep is a broken engine model.
type nanStep struct{}

func (nanStep) StepMS(_, _, _ []int) float64 { return math.NaN() }

// TestPolicyPanicReachesCaller: a bug in a policy's goroutine (here a step
// model returning NaN) panics in RunAll's caller, where the CLI turns it into
// an internal error, instead of killing the process from another goroutine.
func TestPolicyPanicReachesCaller(t *testing.T) {
	syn := Synthetic{Prefixes: 3, PrefixTokens: 64, Repeats: 2, OutputTokens: 4, Seed: 1}
	cfg := Config{Workers: 2, CapacityBlocks: 100, Concurrency: 2, Engine: &Engine{Step: nanStep{}, MaxNumBatchedTokens: 256, MaxNumSeqs: 4}}
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "step-time model returned NaN") {
			t.Fatalf("recovered %v, want the step model's NaN", r)
		}
	}()
	_, _ = RunAll(func() (Source, error) { return syn.Open() }, cfg, []string{RoundRobin, KVAware, Random})
	t.Fatal("no panic")
}
