package fit

import (
	"encoding/csv"
	"os"
	"regexp"
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
		w.Write([]string{get("id"), get("backend"), get("backend_version"), img, get("model_path"), get("system"),
			get("precision"), get("gemm_quant_mode"), get("moe_quant_mode"), get("isl"), get("osl"), get("batch_size"), conc,
			get("tp_size"), get("pp_size"), get("attention_dp_size"), get("moe_tp_size"), get("moe_ep_size"),
			get("silicon_ttft_ms"), get("silicon_tpot_ms")})
		n++
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d rows", n)
}
