package planner

import (
	"errors"
	"math"
	"testing"
)

func TestDerivationCheck(t *testing.T) {
	var d Derivation
	d.Add("kv_bytes_per_token", 114688, "B", "layers × kv_heads × head_dim × 2 × bytes", "28 × 8 × 128 × 2 × 2")
	if err := d.Check(); err != nil {
		t.Fatalf("finite figures: %v", err)
	}
	// A zero memory bandwidth in a user catalog made ITL infinite.
	bw := 0.0
	d.Add("itl_ms", 1.2e9/bw*1000, "ms", "weights / memory_bandwidth", "1.2e9 B / %g B/s", bw)
	err := d.Check()
	var fe *FigureError
	if !errors.As(err, &fe) || fe.Figure.Name != "itl_ms" ||
		err.Error() != "figure itl_ms is +Inf, not a finite number: weights / memory_bandwidth = 1.2e9 B / 0 B/s; check the inputs it is derived from" {
		t.Errorf("err = %v", err)
	}
	d = Derivation{{Name: "x", Value: math.NaN()}}
	if d.Check() == nil {
		t.Error("NaN passed")
	}
}
