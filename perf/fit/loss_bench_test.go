package fit

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
)

// TestGradientIsFiniteDifferences: Problem.Gradient, which predicts again
// only the cases a step moves, is gonum's forward-difference gradient bit for
// bit, and Loss (parallel over cases) is the serial sum written out here.
func TestGradientIsFiniteDifferences(t *testing.T) {
	_, _, sp, cases, _ := load(t)
	var some []*Case
	for i, c := range cases {
		if i%15 == 0 {
			c.Load.AsHarness = c.Engine == "vllm" // both replays among the cases
			some = append(some, c)
		}
	}
	defer func() {
		for _, c := range some {
			c.Load.AsHarness = false
		}
	}()
	p := &Problem{Space: sp, Cases: some}
	x := sp.Initial()
	for i := range x {
		x[i] += 0.03 * math.Sin(float64(i)) // off the initial point, where some offsets are 0
	}

	// The loss of the Problem's doc comment, serially (s and the ridge as
	// variables: as constants Go would fold 2 × 0.2 × 0.2 exactly).
	s, ridge := 0.2, 0.02
	rho := func(r float64) float64 { return 2 * s * s * (math.Sqrt(1+(r/s)*(r/s)) - 1) }
	var sum, wsum float64
	for _, c := range some {
		eff := sp.Efficiency(x, c.g, c.e, c.d)
		w := 1 / math.Sqrt(float64(c.rowsInGroup))
		wsum += w
		r, err := c.Predict(&eff)
		if err != nil || !(r.TTFTMS > 0) || !(r.TPOTMS > 0) {
			sum += w * failedPenalty
			continue
		}
		sum += w * (rho(math.Log(r.TTFTMS/c.TTFTMS)) + rho(math.Log(r.TPOTMS/c.TPOTMS)))
	}
	want := sum / wsum
	for _, i := range sp.Offsets() {
		want += ridge * x[i] * x[i]
	}
	if got := p.Loss(x); got != want {
		t.Errorf("Loss %v, serial sum %v", got, want)
	}

	ref := fd.Gradient(nil, p.Loss, x, &fd.Settings{Formula: fd.Forward, Step: 0.01, Concurrent: true})
	got := make([]float64, len(x))
	p.Gradient(got, x)
	nonzero := 0
	for i := range x {
		if got[i] != ref[i] {
			t.Errorf("∂/∂x[%d]: %v, fd.Gradient %v", i, got[i], ref[i])
		}
		if got[i] != 0 {
			nonzero++
		}
	}
	if nonzero < len(x)/2 {
		t.Errorf("only %d of %d partial derivatives are nonzero", nonzero, len(x))
	}
}

// BenchmarkLoss times one evaluation of the fit loss, and one gradient
// (Problem.Gradient against gonum's fd.Gradient evaluating the whole loss
// once per parameter), with the ramp replay (shipped) and the harness
// replay for vLLM and TensorRT-LLM, on every 8th usable measured row (all
// of them take a minute a pass, too long for CI's one pass of every
// benchmark; the ratios are the same, since both gradients scale with the
// rows).
func BenchmarkLoss(b *testing.B) {
	_, _, sp, all, _ := load(b)
	var cases []*Case
	for i, c := range all {
		if i%8 == 0 {
			cases = append(cases, c)
		}
	}
	p := &Problem{Space: sp, Cases: cases}
	x := sp.Initial()
	g := make([]float64, len(x))
	for _, harness := range []bool{false, true} {
		name := map[bool]string{false: "ramp", true: "harness"}[harness]
		for _, c := range cases {
			c.Load.AsHarness = harness && c.Engine != "sglang"
		}
		b.Run(name+"/loss", func(b *testing.B) {
			for b.Loop() {
				p.Loss(x)
			}
		})
		b.Run(name+"/gradient", func(b *testing.B) {
			for b.Loop() {
				p.Gradient(g, x)
			}
		})
		b.Run(name+"/fd.Gradient", func(b *testing.B) {
			for b.Loop() {
				fd.Gradient(g, p.Loss, x, &fd.Settings{Formula: fd.Forward, Step: 0.01, Concurrent: true})
			}
		})
	}
	for _, c := range cases {
		c.Load.AsHarness = false
	}
}
