package fit

import "testing"

// TestSameRun: a row repeats an earlier run when the engine, GPU, lengths,
// concurrency and both figures to 0.01 ms agree, whatever its id, layout
// encoding or model name (the copies in the shared file differ in those);
// a run that differs in a figure by more than the rounding is another run.
func TestSameRun(t *testing.T) {
	first := Row{ID: "dsr1_h200_sglang_fp8_agg_1024x1024_c4_cfg81", Engine: "sglang", System: "h200_sxm", ModelPath: "deepseek-ai/DeepSeek-V3",
		ISL: 1024, OSL: 1024, Concurrency: 4, TP: 8, TTFTMS: 307.790671, TPOTMS: 10.08063, Source: SourceInferenceX}
	copyOf := first
	copyOf.ID, copyOf.ModelPath, copyOf.TP, copyOf.MoETP = "2026_04_06_deepseek_r1_h200_sxm_sglang_fp8_agg_1024x1024_c4_tp8_ep1_37", "deepseek-ai/DeepSeek-R1", 64, 8
	rounded := first
	rounded.ID, rounded.TTFTMS, rounded.TPOTMS, rounded.Source = "gap_analysis_copy", 307.79, 10.08, SourceGapAnalysis
	other := first
	other.TTFTMS = 307.81 // 0.02 ms apart: another run
	longer := first
	longer.OSL = 8192
	seen := runs{}
	for _, tc := range []struct {
		name string
		r    Row
		want bool
	}{{"first", first, false}, {"copy with another id, layout and model name", copyOf, true}, {"copy rounded to 0.01 ms", rounded, true},
		{"TTFT 0.02 ms apart", other, false}, {"another output length", longer, false}} {
		if got := seen.again(tc.r); got != tc.want {
			t.Errorf("%s: again = %v, want %v", tc.name, got, tc.want)
		}
	}
}
