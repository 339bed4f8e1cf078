package calibrate

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvplan/kvplan/benchresult"
)

// sharedResults is ../shared/data/bench-results, beside the repository.
const sharedResults = "../../shared/data/bench-results"

// accuracySet is runs of one set-up at several load points or lengths.
type accuracySet struct {
	name  string
	files []string
	given Given
	note  string
}

var accuracySets = []accuracySet{
	{"SGLang, Llama-3.3-70B, 4 × H200 (TP4), rates 1–16 and ShareGPT 4, 8", []string{"sglang/h200-4x_llama-3.3-70b-instruct_tp4_online_rates1-16.jsonl"},
		Given{Model: "llama-3.3-70b", GPU: "h200", TP: 4}, "the file has median TTFT and ITL and mean E2E, no TPOT"},
	{"vLLM, Llama-3.2-3B, 4 × L40S (4 replicas), 10 / 30 / inf req/s × 3 routers", []string{"vllm/l40s-4x_llama-3.2-3b-instruct_4x1gpu_isl1000-osl500_rates10-30-inf.jsonl"},
		Given{}, "the three router modes (no-features, base, kvcache) are predicted alike: round-robin, no prefix reuse"},
	{"TensorRT-LLM, Llama-3.1-70B FP8, 8 × H100 (TP8), 128/128 and 1024/1024 offline", []string{
		"trtllm-bench/h100-8x_llama-3.1-70b-instruct_fp8_tp8_trt0.16_isl128-osl128_stdout.txt",
		"trtllm-bench/h100-8x_llama-3.1-70b-instruct_fp8_tp8_trt0.16_isl1024-osl1024_stdout.txt"},
		Given{GPU: "h100-sxm"}, "throughput only"},
	{"inference-perf (BLIS training), Llama-2-70B, H100 (TP4), 8 and 20 req/s", []string{
		"inference-perf/blis-train_h100sxm_llama-2-70b_tp4_general_stage0-rate8_lifecycle.json",
		"inference-perf/blis-train_h100sxm_llama-2-70b_tp4_general_stage1-rate20_lifecycle.json"},
		Given{Model: "llama-2-70b", GPU: "h100-sxm", TP: 4, MaxNumSeqs: 128, MaxNumBatchedTokens: 2048}, "the file's TPOT (9.3 ms) is below the bf16 weights' bandwidth bound at TP4 (≈ 10.3 ms): the set-up is not what the repository states"},
}

// TestHeldOutAccuracy measures the targets on ../shared: each run
// of a set predicted by a calibration on the set's other runs (leave one
// out; with two runs, each from the other), against the shipped entry.
// Slow (minutes): KVPLAN_ACCURACY=1 go test ./calibrate -run TestHeldOutAccuracy -v
func TestHeldOutAccuracy(t *testing.T) {
	if os.Getenv("KVPLAN_ACCURACY") == "" {
		t.Skip("set KVPLAN_ACCURACY=1 (minutes)")
	}
	if _, err := os.Stat(sharedResults); err != nil {
		t.Skip("no ../shared/data/bench-results")
	}
	cat := loadCat(t)
	type row struct {
		set, run, metric string
		before, after    float64
	}
	var all []row
	var b strings.Builder
	b.WriteString("| set | run | figure | measured | before | after (left out) |\n|---|---|---|---:|---:|---:|\n")
	for _, s := range accuracySets {
		var cases []Case
		for _, f := range s.files {
			file, err := benchresult.Read(filepath.Join(sharedResults, f))
			if err != nil {
				t.Fatal(err)
			}
			cs, err := Resolve(cat, file, s.given)
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, cs...)
		}
		t0 := time.Now()
		held := make([]Figures, len(cases))
		before := make([]Figures, len(cases))
		if len(cases) >= 3 {
			res, err := Calibrate(cases, Options{Date: "2026-01-31"})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res.Runs {
				held[i], before[i] = *r.ErrHeld, r.ErrBefore
			}
		} else {
			for i := range cases {
				res, err := Calibrate(without2(cases, i), Options{Date: "2026-01-31"})
				if err != nil {
					t.Fatal(err)
				}
				e := res.Fitted
				m := MeasuredFigures(cases[i].Run.Measured)
				pa, err := cases[i].Predict(&e)
				if err != nil {
					t.Fatal(err)
				}
				pb, err := cases[i].Predict(nil)
				if err != nil {
					t.Fatal(err)
				}
				held[i], before[i] = pa.Figures.Only(m).ErrorAgainst(m), pb.Figures.Only(m).ErrorAgainst(m)
			}
		}
		t.Logf("%s: %d runs, %v", s.name, len(cases), time.Since(t0).Round(time.Second))
		for i, c := range cases {
			m := MeasuredFigures(c.Run.Measured)
			for _, keys := range [][]string{{"ttft_ms", "ttft_ms_p50"}, {"tpot_ms", "tpot_ms_p50"}, {"output_tokens_per_s"}} {
				for _, k := range keys {
					mt := metricByKey(k)
					eb, ea := before[i].Get(mt), held[i].Get(mt)
					if eb == nil || ea == nil {
						continue
					}
					fmt.Fprintf(&b, "| %s | %s | %s | %.4g | %+.1f%% | %+.1f%% |\n", s.name, c.Run.Label, k, *m.Get(mt), 100**eb, 100**ea)
					all = append(all, row{s.name, c.Run.Label, strings.TrimSuffix(k, "_p50"), math.Abs(*eb), math.Abs(*ea)})
					break
				}
			}
		}
	}
	b.WriteString("\n| set | figure | runs | median abs error before | after (left out) |\n|---|---|---:|---:|---:|\n")
	sets := append([]string{}, func() []string {
		var n []string
		for _, s := range accuracySets {
			n = append(n, s.name)
		}
		return n
	}()...)
	for _, set := range append(sets, "all") {
		for _, metric := range []string{"ttft_ms", "tpot_ms", "output_tokens_per_s"} {
			var eb, ea []float64
			for _, r := range all {
				if (set == "all" || r.set == set) && r.metric == metric {
					eb, ea = append(eb, r.before), append(ea, r.after)
				}
			}
			if len(eb) > 0 {
				fmt.Fprintf(&b, "| %s | %s | %d | %.1f%% | %.1f%% |\n", set, metric, len(eb), 100*Median(eb), 100*Median(ea))
			}
		}
	}
	t.Logf("\n%s", b.String())
	if out := os.Getenv("KVPLAN_ACCURACY_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func without2(cs []Case, i int) []Case {
	var out []Case
	for j := range cs {
		if j != i {
			out = append(out, cs[j])
		}
	}
	return out
}
