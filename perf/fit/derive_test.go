package fit

import (
	"encoding/csv"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDeriveServingRows rewrites testdata/serving_agg.csv from the shared
// measurements when KVPLAN_SERVING_CSV names
// ../shared/data/serving/measured_ttft_tpot.csv: every aggregated-serving row,
// with the columns the fit reads. It is skipped otherwise.
func TestDeriveServingRows(t *testing.T) {
	src := os.Getenv("KVPLAN_SERVING_CSV")
	if src == "" {
		t.Skip("set KVPLAN_SERVING_CSV to ../shared/data/serving/measured_ttft_tpot.csv to regenerate testdata/serving_agg.csv")
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	reC := regexp.MustCompile(`silicon_concurrency=(\d+)`)
	reDay := regexp.MustCompile(`measured=(\d{4}-\d{2}-\d{2})`)
	reCfg := regexp.MustCompile(`config_id=(\d+)`)
	reRun := regexp.MustCompile(`workflow_run_id=(\d+)`)
	reImg := regexp.MustCompile(`(?:image=|; )([a-z0-9./#_-]+(?:vllm|sglang|tensorrt|release)[^;]*)$`)
	out, err := os.Create("testdata/serving_agg.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w := csv.NewWriter(out)
	w.Write(header)
	n := 0
	for _, r := range rows[1:] {
		get := func(k string) string { return r[col[k]] }
		if get("mode") != "agg" {
			continue
		}
		conc := ""
		if m := reC.FindStringSubmatch(get("silicon_data_source")); m != nil {
			conc = m[1]
		}
		img := ""
		if m := reImg.FindStringSubmatch(get("silicon_data_source")); m != nil {
			img = m[1]
		}
		day, run := "", ""
		if m := reDay.FindStringSubmatch(get("silicon_data_source")); m != nil {
			day = m[1]
		}
		cfg, wf := reCfg.FindStringSubmatch(get("silicon_data_source")), reRun.FindStringSubmatch(get("silicon_data_source"))
		if cfg != nil && wf != nil {
			run = cfg[1] + "/" + wf[1]
		}
		// kimi-k2.5-gap-analysis.csv and qwen3.5-397b-gap-analysis.csv hold
		// InferenceX runs (each of their 123 rows is one, rounded to 0.01 ms);
		// the gap-analysis runs are those of aic-auto-gap-analysis.
		source := SourceInferenceX
		if strings.Contains(get("silicon_data_source"), "aic-auto-gap-analysis") {
			source = SourceGapAnalysis
		}
		w.Write([]string{get("id"), get("backend"), get("backend_version"), img, get("model_path"), get("system"),
			get("precision"), get("gemm_quant_mode"), get("moe_quant_mode"), get("isl"), get("osl"), get("batch_size"), conc,
			get("tp_size"), get("pp_size"), get("attention_dp_size"), get("moe_tp_size"), get("moe_ep_size"),
			get("silicon_ttft_ms"), get("silicon_tpot_ms"), source, day, run})
		n++
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d rows", n)
}

// TestSimplePredictHandComputed writes the simple baseline's arithmetic out
// for one set of features and constants (k = 1, 1, 1, 1, 2, 1, 1, 1, 10, 0.5, 1):
//
//	t_d   = 1 + 1×10 (mem) + 1×2 (decode FLOPs) + 1×1 (log₂ tp 2)   = 14 ms
//	t_p   = 2 + 1×50 (prefill FLOPs) + 1×5 (attention)            = 57 ms
//	TPOT  = 14 + 1 × 4 running × 57 / 100 output tokens            = 16.28 ms
//	TTFT₀ = 10 + 57 × (1 + 0.5 × (4 − 1)) + 1 × 14                 = 166.5 ms
//	queue = (8 clients / 4 − 1) × (166.5 + 99 × 16.28)             = 1,778.22 ms
//	TTFT  = 166.5 + 1,778.22                                       = 1,944.72 ms
//
// and with 4 clients (no queue) TTFT = 166.5 ms.
func TestSimplePredictHandComputed(t *testing.T) {
	k := []float64{1, 1, 1, 1, 2, 1, 1, 1, 10, 0.5, 1}
	f := simpleFeatures{mem: 10, dflops: 2, pflops: 50, pattn: 5, log2tp: 1, b: 4, c: 8, osl: 100, ok: true}
	ttft, tpot := simplePredict(f, k)
	if math.Abs(tpot-16.28) > 1e-9 || math.Abs(ttft-1944.72) > 1e-9 {
		t.Errorf("TTFT %.4f TPOT %.4f, want 1944.72 and 16.28", ttft, tpot)
	}
	f.c = 4
	if ttft, _ := simplePredict(f, k); math.Abs(ttft-166.5) > 1e-9 {
		t.Errorf("TTFT without a queue %.4f, want 166.5", ttft)
	}
}
