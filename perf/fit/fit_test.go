package fit

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/internal/goldenfile"
)

var (
	fitFlag      = flag.Bool("fit", false, "refit the efficiencies (catalog/data/efficiencies.toml) and the held-out report (testdata/heldout.md); takes tens of minutes")
	update       = flag.Bool("update", false, "rewrite testdata/accuracy.md")
	iterations   = flag.Int("fit-iterations", 40, "L-BFGS iterations of the full fit")
	foldIters    = flag.Int("fold-iterations", 40, "L-BFGS iterations of each held-out fold")
	fitMechs     = flag.String("fit-mechanisms", "", "round 2's mechanisms TestFit fits with (moe_memory, custom_allreduce, eager_overlap, harness_request, link_class, activation_traffic; comma separated); empty: the shipped fit's")
	growKV       = flag.Bool("grow-kv", false, "replay vLLM rows with KV allocated as sequences grow and recompute preemption (perf.Limits.GrowKV); the committed tables are without it")
	saturatedADP = flag.Bool("saturated-attention-dp", false, "TestSaturatedThroughput: run NVIDIA's MoE rows of tp > 1 attention data-parallel with ep = tp (the other reading of its perf overview; the committed table is tensor-parallel)")
	fitHarness   = flag.String("fit-harness", "", "engines (or the source inferencex) whose rows TestFit replays as their harness ran them (perf.Load.AsHarness), comma separated; empty: the ramp replay for every row, as shipped")
)

// setHarness replays the rows of the engines named in list (comma
// separated; "inferencex" names the rows of that source, whose harness drew
// every request's lengths at random, so its clients cannot stay in phase) as
// their harness ran them, the others with the ramp replay.
func setHarness(cases []*Case, list string) {
	on := map[string]bool{}
	for _, e := range strings.Split(list, ",") {
		on[strings.TrimSpace(e)] = true
	}
	for _, c := range cases {
		c.Load.AsHarness = on[c.Engine] || on[c.Source]
	}
}

// load reads the cases over the embedded catalog.
func load(t testing.TB) (*catalog.Catalog, []Row, Space, []*Case, Exclusion) {
	t.Helper()
	GrowKV = *growKV
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("testdata", "serving_agg.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ReadRows(f)
	if err != nil {
		t.Fatal(err)
	}
	sp, cases, ex := Prepare(cat, rows)
	return cat, rows, sp, cases, ex
}

// report writes the accuracy tables of preds.
func report(b *bytes.Buffer, title string, preds []Prediction) {
	Format(b, title+", by engine and kind", Summarize(preds, ByKind))
	Format(b, title+", by model", Summarize(preds, ByModel))
	Format(b, title+", by GPU", Summarize(preds, ByGPU))
}

// TestAccuracy prints the in-sample accuracy of the catalog's efficiencies
// (what `kvplan perf` uses) on every usable measured row, and checks it is
// the table committed in testdata/accuracy.md (go test ./perf/fit -update
// rewrites it after a refit).
func TestAccuracy(t *testing.T) {
	cat, rows, _, cases, ex := load(t)
	preds := Predict(cases, FromCatalog(cat))
	var b bytes.Buffer
	FormatExclusions(&b, len(rows), len(cases), ex)
	report(&b, "In sample (the catalog's efficiencies)", preds)
	Format(&b, "Baseline: FLOPs at 40% of peak plus 13 ms for TTFT, the memory-bound floor for TPOT (kvplan before the engine model; nothing fitted)", Summarize(Baseline(cases), ByKind))
	t.Log(b.String())
	for _, p := range preds {
		if p.Err != nil {
			t.Errorf("%s (line %d): %v", p.Case.ID, p.Case.Line, p.Err)
		}
	}
	// A difference means the catalog's efficiencies changed without a refit.
	goldenfile.Check(t, filepath.Join("testdata", "accuracy.md"), b.Bytes(), *update, "go test ./perf/fit -run TestFit -fit, then go test ./perf/fit -update", false)
}

// TestFit refits the efficiencies on every usable row and writes them to
// catalog/data/efficiencies.toml, then holds out each model in turn (every
// row of it: its other GPUs, engines and dtypes too), fits on the rest and
// reports the error on the held-out model, and the same for each GPU
// (testdata/heldout.md). Run it with -fit; it takes an hour or more on two
// shared cores.
func TestFit(t *testing.T) {
	if !*fitFlag {
		t.Skip("refitting takes tens of minutes: go test ./perf/fit -run TestFit -fit -v -timeout 3h")
	}
	_, _, sp, cases, _ := load(t)
	setHarness(cases, *fitHarness)
	defer setHarness(cases, "")
	mech, err := ParseMechanisms(*fitMechs)
	if err != nil {
		t.Fatal(err)
	}
	sp.Mechanisms = mech
	start := time.Now()
	full := &Problem{Space: sp, Cases: cases}
	x, loss, err := full.Minimize(sp.Initial(), *iterations)
	if err != nil {
		t.Logf("full fit: %v", err)
	}
	t.Logf("full fit (harness replay for %q): loss %.4f, %v", *fitHarness, loss, time.Since(start))
	if sp.HarnessRequest {
		for e, name := range sp.Engines {
			t.Logf("%s on InferenceX's harness: request %.3f ms + %.4f µs a prompt token (the catalog's: %.3f ms + %.4f µs)", name,
				bounded("request_ms", x[sp.engine(e, eHarnessRequest)]), bounded("request_us_per_token", x[sp.engine(e, eHarnessRequestTok)]),
				bounded("request_ms", x[sp.engine(e, eRequest)]), bounded("request_us_per_token", x[sp.engine(e, eRequestTok)]))
		}
	}
	var ib bytes.Buffer
	Format(&ib, "In sample, the new fit", Summarize(Predict(cases, FromSpace(sp, x)), ByKind))
	t.Log(ib.String())
	var cb bytes.Buffer
	if err := WriteCatalog(&cb, sp, x, cases); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "catalog", "data", "efficiencies.toml"), cb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	var b bytes.Buffer
	for _, axis := range []struct {
		name string
		key  func(*Case) string
	}{{"model", ByModel}, {"GPU", ByGPU}} {
		held := holdOut(t, sp, cases, axis.key, start)
		fmt.Fprintf(&b, "\nHeld out by %s: each %s's rows predicted by a fit on the other %ss' rows only.\n", axis.name, axis.name, axis.name)
		report(&b, "Held-out "+axis.name+"s", held)
	}
	b.WriteString(simpleHeldOut(cases))
	t.Log(b.String())
	if err := os.WriteFile(filepath.Join("testdata", "heldout.md"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| all |") {
		t.Error("held-out report has no summary line")
	}
}

// holdOut fits once per value of key on the cases of the other values and
// predicts the held-out cases with that fit.
func holdOut(t *testing.T, sp Space, cases []*Case, key func(*Case) string, start time.Time) []Prediction {
	return HoldOut(cases, key, func(g string, train, test []*Case) []Prediction {
		p := &Problem{Space: sp, Cases: train}
		xg, lg, err := p.Minimize(sp.Initial(), *foldIters)
		if err != nil {
			t.Logf("fold %s: %v", g, err)
		}
		pred := Predict(test, FromSpace(sp, xg))
		var fb bytes.Buffer
		Format(&fb, fmt.Sprintf("fold %s held out (%d rows): loss %.4f, %v", g, len(test), lg, time.Since(start).Round(time.Second)), Summarize(pred, ByKind))
		t.Log(fb.String())
		return pred
	})
}

// TestSaturatedThroughput compares kvplan perf with NVIDIA's saturated
// TensorRT-LLM throughput (performance overview; not in the fit; Qwen3-30B-A3B
// and Llama 4 are models the fit never saw) and checks the table committed in
// testdata/saturated.md (-update rewrites it).
func TestSaturatedThroughput(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("testdata", "trtllm_max_throughput.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ReadSaturated(f)
	if err != nil {
		t.Fatal(err)
	}
	PredictSaturated(cat, rows, *saturatedADP)
	var b bytes.Buffer
	FormatSaturated(&b, rows)
	t.Log(b.String())
	if *saturatedADP {
		return // the other reading of the runs: not the committed table
	}
	for _, r := range rows {
		if r.Skip != "" && r.GPU != "GB200" {
			t.Logf("%s %s %s %d/%d not predicted: %s", r.Model, r.GPU, r.Precision, r.ISL, r.OSL, r.Skip)
		}
	}
	goldenfile.Check(t, filepath.Join("testdata", "saturated.md"), b.Bytes(), *update, "go test ./perf/fit -update, after a refit", false)
}

// simpleIters is the L-BFGS budget of each simple-baseline fit (eleven
// constants per engine: seconds for all its folds).
var simpleIters = flag.Int("simple-iterations", 300, "L-BFGS iterations of each simple-baseline fit")

// TestSimpleBaseline fits the simple baseline (simple.go: a roofline with
// eleven constants per engine and a closed-loop queue with a first-wave
// term) on the same rows as the engine model, holds out each model and each
// GPU the same way, and checks the tables committed in testdata/baseline.md
// (-update rewrites them). It runs in seconds.
func TestSimpleBaseline(t *testing.T) {
	_, _, _, cases, _ := load(t)
	fits := FitSimple(cases, *simpleIters)
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The simple fitted baseline (perf/fit/simple.go)\n\n")
	fmt.Fprintf(&b, "Eleven constants per engine, fitted on the %d rows the engine model is fitted on (`go test ./perf/fit -run TestSimpleBaseline -v`; -update rewrites this file).\n", len(cases))
	fmt.Fprintf(&b, "\n| engine | rows | k0 step ms | k1 memory | k2 decode FLOPs | k3 ms per log2 tp | k4 prefill ms | k5 prefill FLOPs | k6 attention | k7 prefill share | k8 TTFT ms | k9 first wave | k10 steps before TTFT |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var engines []string
	for e := range fits {
		engines = append(engines, e)
	}
	sort.Strings(engines)
	for _, e := range engines {
		f := fits[e]
		fmt.Fprintf(&b, "| %s | %d |", e, f.Rows)
		for _, k := range f.K {
			fmt.Fprintf(&b, " %.3g |", k)
		}
		fmt.Fprintln(&b)
	}
	in := PredictSimple(cases, fits)
	Format(&b, "Simple baseline in sample, by engine and kind", Summarize(in, ByKind))
	b.WriteString(simpleHeldOut(cases))
	t.Log(b.String())
	goldenfile.Check(t, filepath.Join("testdata", "baseline.md"), b.Bytes(), *update, "go test ./perf/fit -run TestSimpleBaseline -update", false)
}

// simpleHeldOut is the simple baseline's held-out tables, written into
// testdata/baseline.md and, beside the engine model's, testdata/heldout.md.
func simpleHeldOut(cases []*Case) string {
	var b bytes.Buffer
	Format(&b, "Simple baseline, held-out models (each model predicted by a fit on the other models' rows), by engine and kind", Summarize(HoldOutSimple(cases, ByModel, *simpleIters), ByKind))
	Format(&b, "Simple baseline, held-out GPUs (each GPU predicted by a fit on the other GPUs' rows), by engine and kind", Summarize(HoldOutSimple(cases, ByGPU, *simpleIters), ByKind))
	return b.String()
}

var (
	harnessEngines = flag.String("harness-engines", "vllm,trtllm,sglang", "engines whose rows TestReplayRefit replays as their harness ran them")
	foldModel      = flag.String("fold-model", "qwen3-32b", "the model TestReplayRefit holds out")
)

// TestReplayRefit compares the ramp replay (the shipped one) with the
// harness replay (perf.Load.AsHarness, for the engines -harness-engines
// names): each refitted from the same start for -fit-iterations, in sample
// and with -fold-model held out. It writes nothing; with -fit it takes
// about an hour on two shared cores at 15 iterations:
//
//	go test ./perf/fit -run TestReplayRefit -fit -fit-iterations 15 -v -timeout 3h
func TestReplayRefit(t *testing.T) {
	if !*fitFlag {
		t.Skip("refitting takes tens of minutes: go test ./perf/fit -run TestReplayRefit -fit -fit-iterations 15 -v -timeout 3h")
	}
	_, _, sp, cases, _ := load(t)
	for _, asHarness := range []bool{false, true} {
		setHarness(cases, map[bool]string{false: "", true: *harnessEngines}[asHarness])
		name := map[bool]string{false: "ramp replay", true: "harness replay (" + *harnessEngines + ")"}[asHarness]
		x, loss, err := (&Problem{Space: sp, Cases: cases}).Minimize(sp.Initial(), *iterations)
		if err != nil {
			t.Logf("%s: %v", name, err)
		}
		var b bytes.Buffer
		in := Predict(cases, FromSpace(sp, x))
		Format(&b, fmt.Sprintf("%s, in sample, %d iterations, loss %.4f", name, *iterations, loss), Summarize(in, ByKind))
		FormatBias(&b, name+", in sample", in, ByModelEngine)
		var train, test []*Case
		for _, c := range cases {
			if c.Group == *foldModel {
				test = append(test, c)
			} else {
				train = append(train, c)
			}
		}
		xg, _, _ := (&Problem{Space: sp, Cases: train}).Minimize(sp.Initial(), *iterations)
		held := Predict(test, FromSpace(sp, xg))
		Format(&b, fmt.Sprintf("%s, %s held out", name, *foldModel), Summarize(held, ByKind))
		FormatBias(&b, fmt.Sprintf("%s, %s held out", name, *foldModel), held, ByModelEngine)
		t.Log(b.String())
	}
}

var saturatedSensitivity = flag.Bool("saturated-sensitivity", false, "TestSaturatedSensitivity: print NVIDIA's saturated table under TensorRT-LLM host costs per sequence and all-reduce shares other than the shipped (a probe; nothing is fitted or committed)")

// TestSaturatedSensitivity is the probe docs/engine-model.md quotes under
// "An outside check": the saturated table with the TensorRT-LLM entries'
// seq_us and interconnect set to other values, one grid point a table.
func TestSaturatedSensitivity(t *testing.T) {
	if !*saturatedSensitivity {
		t.Skip("a probe: go test ./perf/fit -run TestSaturatedSensitivity -saturated-sensitivity -v")
	}
	f, err := os.Open(filepath.Join("testdata", "trtllm_max_throughput.csv"))
	if err != nil {
		t.Fatal(err)
	}
	table, err := ReadSaturated(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, ic := range []float64{0, 0.85} {
		for _, us := range []float64{0, 10, 15, 20} {
			cat, err := catalog.Load()
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range cat.Efficiencies {
				if e.Engine == "trtllm" {
					e.SeqUS = us
					if ic > 0 {
						e.Interconnect = ic
					}
				}
			}
			rows := append([]Saturated(nil), table...)
			PredictSaturated(cat, rows, false)
			var b bytes.Buffer
			FormatSaturated(&b, rows)
			summary, _, _ := strings.Cut(b.String(), "\n\n")
			t.Logf("seq_us %g µs, interconnect %s\n%s", us, map[bool]string{true: "as shipped", false: fmt.Sprint(ic)}[ic == 0], summary)
		}
	}
}
