package fit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/kvplan/kvplan/internal/goldenfile"
	"github.com/kvplan/kvplan/perf"
)

func loadParallel(t *testing.T) ([]*ParCase, string) {
	t.Helper()
	cat, rows, _, _, _ := load(t)
	cases, ex := PrepareParallel(cat, rows)
	dp := 0
	for _, c := range cases {
		if c.Layout.DP > 1 {
			dp++
		}
	}
	head := fmt.Sprintf("\nExpert- and data-parallel rows: %d of the %d rows of serving_agg.csv with moe_ep > 1 or attention_dp > 1 (%d with attention data parallelism), read by fit.LayoutOf", len(cases), len(cases)+exTotal(ex), dp)
	if len(ex) > 0 {
		var b bytes.Buffer
		FormatExclusions(&b, len(rows), len(cases), ex)
		head += "; left out:" + b.String()
	}
	return cases, head + ".\n"
}

// TestParallelAccuracy reports the shipped parallel constants
// (perf.ParallelEfficiencies) on the expert- and data-parallel rows, beside
// the plain-TP baseline, and checks the table committed in
// testdata/parallel_accuracy.md (-update rewrites it after a refit).
func TestParallelAccuracy(t *testing.T) {
	cases, head := loadParallel(t)
	var b bytes.Buffer
	b.WriteString(head)
	preds := ParPredict(cases, perf.ParallelEfficiencyFor)
	Format(&b, "In sample (the shipped parallel constants; dense efficiencies from the catalog)", Summarize(preds, ByKind))
	Format(&b, "In sample, by model", Summarize(preds, ByModel))
	Format(&b, "Attention data-parallel rows only", Summarize(filterDP(preds, cases), ByKind))
	Format(&b, "Baseline: tensor parallelism over the same GPUs (kvplan before the layout's terms; the catalog's efficiencies were fitted on many of these rows read that way)",
		Summarize(PlainBaseline(cases), ByKind))
	t.Log(b.String())
	goldenfile.Check(t, filepath.Join("testdata", "parallel_accuracy.md"), b.Bytes(), *update, "go test ./perf/fit -run TestParallelFit -fit, then go test ./perf/fit -run TestParallelAccuracy -update", false)
}

func filterDP(preds []Prediction, cases []*ParCase) []Prediction {
	var out []Prediction
	for i, c := range cases {
		if c.Layout.DP > 1 {
			out = append(out, preds[i])
		}
	}
	return out
}

// TestParallelFit fits the parallel constants per engine on every
// expert- and data-parallel row (in sample), then holds out each model in
// turn and reports the held-out error beside the baseline
// (testdata/parallel_heldout.md), and prints the values for
// perf/parallel_params.go.
func TestParallelFit(t *testing.T) {
	if !*fitFlag {
		t.Skip("go test ./perf/fit -run TestParallelFit -fit -v -timeout 1h")
	}
	cases, head := loadParallel(t)
	start := time.Now()
	prior := perf.ParallelEfficiencies["*"]
	full := FitParallel(cases, prior, 60)
	var code bytes.Buffer
	for _, f := range full {
		v := f.Value
		fmt.Fprintf(&code, "%q: {AllToAll: %.3f, AllToAllUS: %.1f, AllToAllNormalUS: %g, Imbalance: %.3f, EPLBImbalance: %g, P2PUS: %g, Rows: %d},  // loss %.4f\n",
			f.Engine, v.AllToAll, v.AllToAllUS, v.AllToAllNormalUS, v.Imbalance, v.EPLBImbalance, v.P2PUS, f.Rows, f.Loss)
	}
	t.Logf("full fit (%v):\n%s", time.Since(start), code.String())

	// Held out by model.
	models := map[string]bool{}
	for _, c := range cases {
		models[c.Group] = true
	}
	var order []string
	for m := range models {
		order = append(order, m)
	}
	sort.Strings(order)
	var held []Prediction
	var heldCases []*ParCase
	for _, m := range order {
		var train, test []*ParCase
		for _, c := range cases {
			if c.Group == m {
				test = append(test, c)
			} else {
				train = append(train, c)
			}
		}
		fits := FitParallel(train, prior, 60)
		by := map[string]perf.ParallelEfficiency{}
		for _, f := range fits {
			by[f.Engine] = f.Value
		}
		held = append(held, ParPredict(test, func(e string) perf.ParallelEfficiency {
			if v, ok := by[e]; ok {
				return v
			}
			return prior
		})...)
		heldCases = append(heldCases, test...)
		t.Logf("held out %s: %d rows (%v)", m, len(test), time.Since(start))
	}
	var b bytes.Buffer
	b.WriteString(head)
	fmt.Fprintf(&b, "\nFitted per engine on every row (in sample):\n\n```\n%s```\n", code.String())
	inSample := ParPredict(cases, func(e string) perf.ParallelEfficiency {
		for _, f := range full {
			if f.Engine == e {
				return f.Value
			}
		}
		return prior
	})
	Format(&b, "In sample (fitted constants)", Summarize(inSample, ByKind))
	Format(&b, "Held-out models (each model predicted by a fit on the others)", Summarize(held, ByKind))
	Format(&b, "Held-out models, by model", Summarize(held, ByModel))
	Format(&b, "Held-out models, attention data-parallel rows only", Summarize(filterDP(held, heldCases), ByKind))
	Format(&b, "Prior constants (nothing fitted on these rows)", Summarize(ParPredict(cases, func(string) perf.ParallelEfficiency { return prior }), ByKind))
	Format(&b, "Baseline: tensor parallelism over the same GPUs", Summarize(PlainBaseline(cases), ByKind))
	t.Log(b.String())
	if err := os.WriteFile(filepath.Join("testdata", "parallel_heldout.md"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exTotal(ex Exclusion) int {
	n := 0
	for _, v := range ex {
		n += v
	}
	return n
}
