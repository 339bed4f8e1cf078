package fit

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kvplan/kvplan/catalog"
)

func TestScratch(t *testing.T) {
	if os.Getenv("SCRATCH") == "" {
		t.Skip()
	}
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open("testdata/serving_agg.csv")
	rows, err := ReadRows(f)
	if err != nil {
		t.Fatal(err)
	}
	sp, cases, ex := Prepare(cat, rows)
	FormatExclusions(os.Stdout, len(rows), len(cases), ex)
	t.Logf("space %+v len %d", sp, sp.Len())
	p := &Problem{Space: sp, Cases: cases}
	x0 := sp.Initial()
	t0 := time.Now()
	l := p.Loss(x0)
	t.Logf("loss %.4f in %v", l, time.Since(t0))
	preds := Predict(cases, FromSpace(sp, x0))
	Format(os.Stdout, "by kind", Summarize(preds, ByKind))
	Format(os.Stdout, "by model", Summarize(preds, ByModel))
}

func TestScratchFit(t *testing.T) {
	if os.Getenv("SCRATCHFIT") == "" {
		t.Skip()
	}
	cat, _ := catalog.Load()
	f, _ := os.Open("testdata/serving_agg.csv")
	rows, _ := ReadRows(f)
	sp, cases, _ := Prepare(cat, rows)
	p := &Problem{Space: sp, Cases: cases}
	t0 := time.Now()
	x, l, err := p.Minimize(sp.Initial(), 40)
	t.Logf("loss %.4f err %v in %v", l, err, time.Since(t0))
	for gi, g := range sp.GPUs {
		for ei, e := range sp.Engines {
			for di, d := range sp.Dtypes {
				eff := sp.Efficiency(x, gi, ei, di)
				t.Logf("%s %s %s gemm %.2f mem %.2f attn %.2f moe %.2f step %.2f layer %.1f req %.1f ramp %.0f ar %.1f ic %.2f", g, e, d, eff.GEMM, eff.Memory, eff.Attention, eff.MoE, eff.StepMS, eff.LayerUS, eff.RequestMS, eff.RampMS, eff.AllReduceUS, eff.Interconnect)
			}
		}
	}
	preds := Predict(cases, FromSpace(sp, x))
	Format(os.Stdout, "by kind", Summarize(preds, ByKind))
	Format(os.Stdout, "by model", Summarize(preds, ByModel))
	Format(os.Stdout, "by gpu", Summarize(preds, ByGPU))
}

func TestScratchBias(t *testing.T) {
	if os.Getenv("BIAS") == "" {
		t.Skip()
	}
	cat, _ := catalog.Load()
	f, _ := os.Open("testdata/serving_agg.csv")
	rows, _ := ReadRows(f)
	sp, cases, _ := Prepare(cat, rows)
	x := sp.Initial()
	preds := Predict(cases, FromSpace(sp, x))
	type agg struct{ n, lt, lp float64 }
	by := map[string]*agg{}
	for _, p := range preds {
		c := p.Case
		if p.Err != nil {
			continue
		}
		for _, k := range []string{
			fmt.Sprintf("%s %s %s tp%d", c.Engine, c.Group, c.Dtype, c.TP),
			fmt.Sprintf("%s %s C%d", c.Engine, c.Group, c.Load.Concurrency),
			fmt.Sprintf("%s %s osl%d", c.Engine, c.Group, c.OSL),
			fmt.Sprintf("%s %s isl%d", c.Engine, c.Group, c.ISL),
		} {
			a := by[k]
			if a == nil {
				a = &agg{}
				by[k] = a
			}
			a.n++
			a.lt += math.Log(p.TTFTMS / c.TTFTMS)
			a.lp += math.Log(p.TPOTMS / c.TPOTMS)
		}
	}
	var keys []string
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a := by[k]
		if strings.Contains(k, os.Getenv("BIAS")) {
			fmt.Printf("%-45s n %4.0f  ttft x%.2f  tpot x%.2f\n", k, a.n, math.Exp(a.lt/a.n), math.Exp(a.lp/a.n))
		}
	}
}

func TestScratchLine(t *testing.T) {
	if os.Getenv("LINE") == "" {
		t.Skip()
	}
	cat, _ := catalog.Load()
	f, _ := os.Open("testdata/serving_agg.csv")
	rows, _ := ReadRows(f)
	sp, cases, _ := Prepare(cat, rows)
	p := &Problem{Space: sp, Cases: cases}
	x0 := sp.Initial()
	for _, i := range []int{pGemm0, pMem0, sp.engine(2, eRamp), sp.engine(2, eStep)} {
		for _, d := range []float64{-0.2, -0.1, -0.05, -0.02, 0, 0.02, 0.05, 0.1, 0.2} {
			x := append([]float64(nil), x0...)
			x[i] += d
			fmt.Printf("param %d d %+.2f loss %.5f\n", i, d, p.Loss(x))
		}
	}
}
