package calibrate

import (
	"os"
	"testing"

	"github.com/kvplan/kvplan/benchresult"
)

// benchCalibrate reads the files and calibrates on every run of them,
// leave-one-out fits included: what kvplan calibrate does.
func benchCalibrate(b *testing.B, files []string, g Given, noHeldOut bool) {
	cat := loadCat(b)
	b.ReportAllocs()
	for b.Loop() {
		var cases []Case
		for _, f := range files {
			file, err := benchresult.Read(td(f))
			if err != nil {
				b.Fatal(err)
			}
			cs, err := Resolve(cat, file, g)
			if err != nil {
				b.Fatal(err)
			}
			cases = append(cases, cs...)
		}
		res, err := Calibrate(cases, Options{Date: "2026-01-31", NoHeldOut: noHeldOut})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Evaluations), "predictions/op")
	}
}

// BenchmarkCalibrateTenClosedLoopFiles: ten files of closed-loop runs
// (ten copies of one real vLLM per-request file: 500 requests at
// concurrency 50, kvplan perf's replay).
func BenchmarkCalibrateTenClosedLoopFiles(b *testing.B) {
	f := "vllm/h100sxm-8x_qwen3-8b_tp8dp1_isl2048-osl128_c50_per-request_excerpt.json"
	benchCalibrate(b, []string{f, f, f, f, f, f, f, f, f, f}, Given{GPU: "h100-sxm", TP: 8}, false)
}

// BenchmarkCalibrateTimedSimFile: the nine runs of the L40S JSON-lines
// file (300 to 900 requests each at 10, 30 and inf req/s, four replicas:
// the timed simulator), the fit alone (--no-held-out): the nine
// leave-one-out fits take about nine times as long again, a minute on the
// machine of docs/calibrate.md (KVPLAN_SLOW_BENCH=1 runs them too).
func BenchmarkCalibrateTimedSimFile(b *testing.B) {
	benchCalibrate(b, []string{"vllm/l40s-4x_llama-3.2-3b-instruct_4x1gpu_isl1000-osl500_rates10-30-inf.jsonl"}, Given{}, os.Getenv("KVPLAN_SLOW_BENCH") == "")
}

// BenchmarkPredictRun is one prediction of each kind, the unit a fit
// repeats.
func BenchmarkPredictRun(b *testing.B) {
	cat := loadCat(b)
	for _, c := range []struct {
		name, file string
		g          Given
	}{
		{"closed-loop-c50", "vllm/h100sxm-8x_qwen3-8b_tp8dp1_isl2048-osl128_c50_per-request_excerpt.json", Given{GPU: "h100-sxm", TP: 8}},
		{"timed-sim-900-requests", "vllm/l40s-4x_llama-3.2-3b-instruct_4x1gpu_isl1000-osl500_rates10-30-inf.jsonl", Given{}},
	} {
		cs, err := Resolve(cat, read(b, c.file), c.g)
		if err != nil {
			b.Fatal(err)
		}
		cs = cs[len(cs)-1:]
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := cs[0].Predict(nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
