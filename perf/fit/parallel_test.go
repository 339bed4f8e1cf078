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
		head += "; left out: " + ex.String()
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
	formatSegments(&b, cases, preds, PlainBaseline(cases))
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

// formatSegments writes the layout model beside the plain-TP baseline per
// engine × layout kind (attention data-parallel or expert-parallel only) ×
// weight dtype: median |error| and median signed error (predicted /
// measured − 1) of TTFT and TPOT, over the rows both predict. A segment
// where the baseline wins points at a wrong or missing mechanism there.
func formatSegments(b *bytes.Buffer, cases []*ParCase, preds, base []Prediction) {
	type acc struct{ lt, lp, bt, bp []float64 }
	seg := map[string]*acc{}
	for i, c := range cases {
		kind := "ep only"
		if c.Layout.DP > 1 {
			kind = "attention dp"
		}
		key := c.Engine + " | " + kind + " | " + c.Dtype
		a := seg[key]
		if a == nil {
			a = &acc{}
			seg[key] = a
		}
		p, q := preds[i], base[i]
		if p.Err != nil || q.Err != nil || !(p.TTFTMS > 0) || !(q.TTFTMS > 0) || !(p.TPOTMS > 0) || !(q.TPOTMS > 0) {
			continue
		}
		a.lt = append(a.lt, p.TTFTMS/c.TTFTMS-1)
		a.lp = append(a.lp, p.TPOTMS/c.TPOTMS-1)
		a.bt = append(a.bt, q.TTFTMS/c.TTFTMS-1)
		a.bp = append(a.bp, q.TPOTMS/c.TPOTMS-1)
	}
	med := func(x []float64, abs bool) string {
		y := make([]float64, len(x))
		for i, v := range x {
			if abs && v < 0 {
				v = -v
			}
			y[i] = v
		}
		m, _, _ := stats(y, 0)
		if abs {
			return pct(m)
		}
		return fmt.Sprintf("%+.1f%%", 100*m)
	}
	var keys []string
	for k := range seg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString("\nBy segment: the layout model beside the baseline (rows both predict; |error| and signed median of predicted / measured − 1)\n\n")
	b.WriteString("| engine | layout | weights | rows | TTFT layout | TTFT baseline | TTFT layout signed | TTFT baseline signed | TPOT layout | TPOT baseline | TPOT layout signed | TPOT baseline signed |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, k := range keys {
		a := seg[k]
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", k, len(a.lt),
			med(a.lt, true), med(a.bt, true), med(a.lt, false), med(a.bt, false),
			med(a.lp, true), med(a.bp, true), med(a.lp, false), med(a.bp, false))
	}
}
