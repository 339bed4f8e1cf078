package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepPlot golden-tests the data of a sweep's curve: x = 1000 / TPOT,
// y = output tokens/s per GPU, one point per concurrency (a row without a
// TPOT is left out).
func TestSweepPlot(t *testing.T) {
	p := sweepPlot("llama-3.1-8b on 1 × h100-sxm", "tp1 bf16", []sweepPoint{
		{1, 8, 120}, {8, 10, 800}, {64, 20, 3200}, {128, 0, 0},
	})
	if n := len(p.Series[0].Points); n != 3 || p.Series[0].Points[0].X != 125 || p.Series[0].Points[2].X != 50 {
		t.Errorf("points %+v, want 3 with x = 1000/8 = 125 … 1000/20 = 50", p.Series[0].Points)
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "perf-sweep-plot.json", string(data)+"\n")
}

// TestPerfSweepPlotFlag checks that kvplan perf --sweep --plot writes the
// curve as an SVG, and that --plot alone is a usage error.
func TestPerfSweepPlotFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sweep.svg")
	args := []string{"perf", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--isl", "1024", "--osl", "1024"}
	if _, errs, code := kvplan(t, append(append([]string{}, args...), "--sweep", "concurrency=1,8,64", "--plot", path)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	svg, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(svg), "<svg") || !strings.Contains(string(svg), "tp1 bf16") {
		t.Errorf("--plot wrote no curve: %v\n%.200s", err, svg)
	}
	if _, _, code := kvplan(t, append(append([]string{}, args...), "--concurrency", "8", "--plot", path+"2")...); code != 2 {
		t.Errorf("--plot without --sweep: exit %d, want 2", code)
	}
}
