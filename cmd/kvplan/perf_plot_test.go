package main

import (
	"encoding/json"
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
