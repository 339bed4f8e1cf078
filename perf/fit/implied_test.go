package fit

import (
	"math"
	"sort"
	"testing"
)

// TestMeasuredWithinPeak checks that no fitted row measured more matmul
// work a second than its GPUs' tensor peaks allow (MatmulShare ≤ 1), logs
// the rows nearest the peak (the ones no efficiency below 1 can predict
// with the rest of a step in it), and checks one row by hand.
func TestMeasuredWithinPeak(t *testing.T) {
	cat, _, _, cases, _ := load(t)
	type row struct {
		share float64
		c     *Case
	}
	var rows []row
	for _, c := range cases {
		eff, err := FromCatalog(cat)(c)
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.engineModel(&eff)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row{MatmulShare(c, m), c})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].share > rows[j].share })
	for _, r := range rows[:8] {
		c := r.c
		t.Logf("%.2f of the tensor peak in matmuls alone: %s %s %s × %s tp %d, %d/%d tokens, %d clients, TTFT %.1f ms, TPOT %.2f ms (line %d)",
			r.share, c.Engine, c.Group, c.Dtype, c.GPU.Name, c.TP, c.ISL, c.OSL, c.Load.Concurrency, c.TTFTMS, c.TPOTMS, c.Line)
		if r.share > 1 {
			t.Errorf("line %d measured more matmul work a second than the GPU's peak: %.2f", c.Line, r.share)
		}
	}

	// By hand: Llama-3.1-8B fp8 on one H200 (vLLM, gap analysis), 2,000
	// tokens in and 100 out, 64 clients, TTFT 121.7 ms, TPOT 9.74 ms.
	// Matmul weights: 8,030,261,248 parameters less the untied input and
	// output embeddings (2 × 128,256 × 4,096 = 1,050,673,152) =
	// 6,979,588,096, so 13.959 GFLOP a token, 2,100 tokens a request:
	// 29.31 TFLOP. Requests a second: 64 / (121.7 + 99 × 9.74 ms) = 64 /
	// 1.08596 s = 58.93. Work: 1.7274 PFLOP/s of the H200's 1,979 fp8:
	// 0.873.
	want := 64 / (121.7 + 99*9.74) * 1000 * 2100 * 2 * 6979588096 / 1979e12
	found := false
	for _, r := range rows {
		c := r.c
		if c.Engine == "vllm" && c.Group == "llama-3.1-8b" && c.GPU.Name == "h200" && c.TP == 1 && c.ISL == 2000 && c.OSL == 100 && c.Load.Concurrency == 64 {
			found = true
			if math.Abs(r.share-want) > 0.005*want || math.Abs(want-0.873) > 0.001 {
				t.Errorf("Llama-3.1-8B H200 2000/100 c64: matmul share %.4f, by hand %.4f (0.873)", r.share, want)
			}
		}
	}
	if !found {
		t.Error("the hand-checked row (Llama-3.1-8B fp8, H200, vLLM, 2000/100, 64 clients) is not among the fitted rows")
	}
}
