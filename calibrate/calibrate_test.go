package calibrate

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/benchresult"
	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/sim"
)

func td(rel string) string { return filepath.Join("..", "testdata", "benchresults", rel) }

func loadCat(t testing.TB) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Load(td("catalog"))
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func read(t testing.TB, rel string) *benchresult.File {
	t.Helper()
	f, err := benchresult.Read(td(rel))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestResolveFromTheFile: what the files state is taken, names resolved
// against the catalog as files write them.
func TestResolveFromTheFile(t *testing.T) {
	cat := loadCat(t)
	// --metadata gpu=4xNVIDIA_L40S, decode_replicas "4", model_id meta-llama/Llama-3.2-3B-Instruct.
	cs, err := Resolve(cat, read(t, "vllm/l40s-4x_llama-3.2-3b-instruct_4x1gpu_isl1000-osl500_rates10-30-inf.jsonl"), Given{})
	if err != nil {
		t.Fatal(err)
	}
	s := cs[0].Setup
	if s.GPU.Name != "l40s" || s.Model.Name != "llama-3.2-3b" || s.Replicas != 4 || s.TP != 1 || s.Engine != "vllm" || s.GPUs() != 4 || len(cs) != 9 {
		t.Errorf("l40s set-up %s on %s, %d replicas × tp %d, %s; %d runs", s.Model.Name, s.GPU.Name, s.Replicas, s.TP, s.Engine, len(cs))
	}
	if cs[2].Load.Kind != benchresult.LoadBurst || cs[0].Load.RatePerS != 10 || cs[0].Load.Prompts != 300 {
		t.Errorf("loads %+v / %+v", cs[0].Load, cs[2].Load)
	}
	// server_info: model_path /workspace/qwen-3-8b, tp_size 4, dp_size 2, version 0.5.9.
	cs, err = Resolve(cat, read(t, "sglang/h100sxm-8x_qwen3-8b_tp4dp2_isl1024-osl128_c100_per-request_excerpt.jsonl"), Given{GPU: "h100-sxm"})
	if err != nil {
		t.Fatal(err)
	}
	s = cs[0].Setup
	if s.Model.Name != "qwen3-8b" || s.TP != 4 || s.Replicas != 2 || s.Engine != "sglang" || s.GPUs() != 8 || len(cs[0].Load.InputLens) != 6 {
		t.Errorf("sglang set-up %s, tp %d × %d, %s, %d lengths", s.Model.Name, s.TP, s.Replicas, s.Engine, len(cs[0].Load.InputLens))
	}
	// trtllm-bench: TP 8, FP8 weights and KV, max runtime batch 2048.
	cs, err = Resolve(cat, read(t, "trtllm-bench/h100-8x_llama-3.1-70b-instruct_fp8_tp8_trt0.16_isl128-osl128_report-excerpt.txt"), Given{GPU: "h100-sxm"})
	if err != nil {
		t.Fatal(err)
	}
	s = cs[0].Setup
	if s.Key() != "h100-sxm × trtllm × fp8" || s.TP != 8 || s.KVDtype != "fp8" || s.MaxNumSeqs != 2048 || cs[0].Load.Kind != benchresult.LoadOffline {
		t.Errorf("trtllm set-up %s tp %d kv %s batch %d, %s", s.Key(), s.TP, s.KVDtype, s.MaxNumSeqs, cs[0].Load.Kind)
	}
}

// TestGamma: the gaps' distribution has the gamma's mean k and variance k
// (unit scale), for shapes below, at and above 1.
func TestGamma(t *testing.T) {
	for _, k := range []float64{0.5, 1, 50} {
		rng := rand.New(rand.NewPCG(1, 2))
		const n = 200_000
		var s, s2 float64
		for range n {
			x := gamma(rng, k)
			s += x
			s2 += x * x
		}
		mean := s / n
		v := s2/n - mean*mean
		if math.Abs(mean/k-1) > 0.01 || math.Abs(v/k-1) > 0.03 {
			t.Errorf("shape %g: mean %.4f, variance %.4f; want %g and %g", k, mean, v, k, k)
		}
	}
}

// TestArrivals: the source sends as the benchmark did.
func TestArrivals(t *testing.T) {
	last := func(ld Load) (float64, int) {
		src := newBenchSource(ld, 16, 7)
		var r sim.Request
		var t0 float64
		n := 0
		for {
			ok, err := src.Next(&r)
			if err != nil {
				panic(err)
			}
			if !ok {
				return t0, n
			}
			t0, n = r.ArrivalMS, n+1
		}
	}
	// 2,001 sends at 10 req/s, Poisson: 2,000 gaps of 100 ms on average (±3σ = ±6.7%).
	end, n := last(Load{Kind: benchresult.LoadRate, RatePerS: 10, Burstiness: 1, Prompts: 2001, InputTokens: 100, OutputTokens: 10})
	if n != 2001 || math.Abs(end/200_000-1) > 0.067 {
		t.Errorf("Poisson: %d sends, the last at %.0f ms; want 2001 and about 200,000 ms", n, end)
	}
	// Evenly spaced at 4 req/s: the 11th send at exactly 10 × 250 ms.
	if end, _ := last(Load{Kind: benchresult.LoadRate, RatePerS: 4, EvenGaps: true, Prompts: 11, InputTokens: 100, OutputTokens: 10}); end != 2500 {
		t.Errorf("even gaps: the last send at %g ms, want 2500", end)
	}
	if end, _ := last(Load{Kind: benchresult.LoadBurst, Prompts: 50, InputTokens: 100, OutputTokens: 10}); end != 0 {
		t.Errorf("a burst: the last send at %g ms, want 0", end)
	}
}

// syntheticCases are closed-loop runs of qwen3-8b on one h100-sxm (vLLM)
// whose "measured" figures are the engine model's own with known
// efficiencies truth: what a fit must recover.
func syntheticCases(t testing.TB, truth catalog.Efficiency) []Case {
	cat := loadCat(t)
	var cases []Case
	for i, l := range []struct{ c, isl, osl int }{{1, 2048, 128}, {8, 2048, 128}, {32, 2048, 128}, {16, 512, 512}, {64, 512, 512}} {
		c := Case{File: "synthetic", Run: benchresult.Run{Index: i, Label: "synthetic"}}
		c.Setup = Setup{Catalog: cat, Model: mustModel(t, cat, "qwen3-8b"), GPU: mustGPU(t, cat, "h100-sxm"), Engine: "vllm", TP: 1, Replicas: 1, WeightDtype: "bf16"}
		c.Load = Load{Kind: benchresult.LoadConcurrency, Concurrency: l.c, Prompts: 10 * l.c, InputTokens: float64(l.isl), OutputTokens: float64(l.osl)}
		tr := truth
		p, err := c.Predict(&tr)
		if err != nil {
			t.Fatal(err)
		}
		f := p.Figures
		c.Run.Measured = benchresult.Metrics{TTFT: benchresult.Dist{Mean: f.TTFTMS}, TPOT: benchresult.Dist{Mean: f.TPOTMS}, OutputTokensPerS: f.OutputTokensPerS}
		c.Run.Workload.Completed = c.Load.Prompts
		cases = append(cases, c)
	}
	return cases
}

func mustModel(t testing.TB, cat *catalog.Catalog, n string) *catalog.Model {
	m, err := cat.Model(n)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustGPU(t testing.TB, cat *catalog.Catalog, n string) *catalog.GPU {
	g, err := cat.GPU(n)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func shippedFor(t testing.TB, gpu, engine, dtype string) catalog.Efficiency {
	m, err := loadCat(t).EfficiencyFor(gpu, engine, dtype)
	if err != nil {
		t.Fatal(err)
	}
	return *m.Efficiency
}

// TestRecovery: runs made by the engine model with memory 0.70 (shipped
// ~0.83) and request_ms 20 (shipped ~5) are fitted back: the predictions
// after match them (within half the fit's assumed noise), a load point left out of the fit is predicted as the
// truth predicts it, and what the runs cannot see (moe for a dense model;
// interconnect and allreduce_us at tp 1) stays exactly as shipped. The
// fitted values themselves need not be the truth: with fixed lengths,
// memory trades against step_ms and request_ms against the per-token and
// eager-layer costs (docs/calibrate.md), and the fit takes the trade the
// prior prefers.
func TestRecovery(t *testing.T) {
	shipped := shippedFor(t, "h100-sxm", "vllm", "bf16")
	truth := shipped
	truth.Memory, truth.RequestMS = 0.70, 20
	cases := syntheticCases(t, truth)
	res, err := Calibrate(cases, Options{Files: []string{"synthetic"}, Date: "2026-01-31"})
	if err != nil {
		t.Fatal(err)
	}
	// The fit trades the runs' residuals (σ = MeasurementSigma) against the
	// prior's pull toward the shipped entry: noise-free runs are matched to
	// within half the noise the fit assumes, not exactly. The closed loop's
	// TTFT only improves: it jumps between regimes (at 32 clients, 2048/128,
	// request_ms 7 → 10 → 20 moves it −31% → 0% → +25% of the truth's at
	// memory 0.83), so no fit reaches it smoothly.
	for _, s := range res.Summary {
		bound := MeasurementSigma / 2
		if s.Metric == "ttft_ms" {
			bound = s.Before
		}
		if s.After > bound || s.After >= s.Before {
			t.Errorf("%s: median |error| %.1f%% before, %.1f%% after; want under %.0f%% after", s.Metric, 100*s.Before, 100*s.After, 100*bound)
		}
	}
	// A load point between the fitted ones: 24 clients, 1024 in / 256 out.
	probe := cases[0]
	probe.Load = Load{Kind: benchresult.LoadConcurrency, Concurrency: 24, Prompts: 240, InputTokens: 1024, OutputTokens: 256}
	tr, fit := truth, res.Fitted
	want, err := probe.Predict(&tr)
	if err != nil {
		t.Fatal(err)
	}
	got, err := probe.Predict(&fit)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := probe.Predict(nil)
	for _, m := range []Metric{metricByKey("tpot_ms"), metricByKey("output_tokens_per_s")} {
		w, g, b := *want.Figures.Get(m), *got.Figures.Get(m), *before.Figures.Get(m)
		if math.Abs(g/w-1) > 0.10 || math.Abs(g/w-1) >= math.Abs(b/w-1) {
			t.Errorf("left-out load point %s: truth %.2f, shipped %.2f (%+.1f%%), fitted %.2f (%+.1f%%)", m.Key, w, b, 100*(b/w-1), g, 100*(g/w-1))
		}
	}
	for _, p := range res.Params {
		switch p.Name {
		case "moe", "interconnect", "allreduce_us":
			if p.Constrained || p.Fitted != p.Shipped || p.Elasticity != 0 {
				t.Errorf("%s: constrained %v, %v → %v (elasticity %g); a tp-1 dense model cannot see it", p.Name, p.Constrained, p.Shipped, p.Fitted, p.Elasticity)
			}
		case "memory", "request_ms":
			if !p.Constrained {
				t.Errorf("%s is not constrained by runs that it changes", p.Name)
			}
		}
	}
	if !res.HeldOut || res.Fitted.Key() != "h100-sxm × vllm × bf16" || res.Fitted.Rows != len(cases) || !res.Fitted.Calibrated() {
		t.Errorf("fitted entry %s (rows %d, calibrated %v), held out %v", res.Fitted.Key(), res.Fitted.Rows, res.Fitted.Calibrated(), res.HeldOut)
	}
}

// TestRecoveryOpenLoop: the same with runs at request rates (the timed
// simulator), whose figures, averaged over every request, change smoothly
// with the efficiencies: every figure is matched, TTFT included, and a rate
// left out of the fit is predicted as the truth predicts it.
func TestRecoveryOpenLoop(t *testing.T) {
	cat := loadCat(t)
	shipped := shippedFor(t, "l4", "vllm", "bf16")
	truth := shipped
	// Within one prior factor (PriorFactor 2) of the shipped entry: a truth
	// far outside it is pulled back by the prior, by design.
	truth.Memory, truth.RequestMS = 0.60, 2*shipped.RequestMS
	mk := func(i int, rate float64) Case {
		c := Case{File: "synthetic", Run: benchresult.Run{Index: i, Label: "synthetic"}, rigs: &rigs{by: map[int]*planner.PerfRig{}}}
		c.Setup = Setup{Catalog: cat, Model: mustModel(t, cat, "qwen3-0.6b"), GPU: mustGPU(t, cat, "l4"), Engine: "vllm", TP: 1, Replicas: 1, WeightDtype: "bf16"}
		c.Load = Load{Kind: benchresult.LoadRate, RatePerS: rate, Burstiness: 1, Prompts: 150, InputTokens: 1500, OutputTokens: 128}
		return c
	}
	var cases []Case
	for i, rate := range []float64{2, 6, 12} {
		c := mk(i, rate)
		tr := truth
		p, err := c.Predict(&tr)
		if err != nil {
			t.Fatal(err)
		}
		f := p.Figures
		c.Run.Measured = benchresult.Metrics{TTFT: benchresult.Dist{Mean: f.TTFTMS}, TPOT: benchresult.Dist{Mean: f.TPOTMS}, OutputTokensPerS: f.OutputTokensPerS}
		c.Run.Workload.Completed = c.Load.Prompts
		cases = append(cases, c)
	}
	res, err := Calibrate(cases, Options{Date: "2026-01-31", NoHeldOut: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Summary {
		if s.After > MeasurementSigma/2 || s.After >= s.Before && s.Before > 0.01 {
			t.Errorf("%s: median |error| %.1f%% before, %.1f%% after", s.Metric, 100*s.Before, 100*s.After)
		}
	}
	probe := mk(9, 9)
	tr, fit := truth, res.Fitted
	want, _ := probe.Predict(&tr)
	got, _ := probe.Predict(&fit)
	before, _ := probe.Predict(nil)
	for _, m := range []Metric{metricByKey("ttft_ms"), metricByKey("tpot_ms")} {
		w, g, b := *want.Figures.Get(m), *got.Figures.Get(m), *before.Figures.Get(m)
		if math.Abs(g/w-1) > 0.10 || math.Abs(g/w-1) >= math.Abs(b/w-1) {
			t.Errorf("9 req/s left out, %s: truth %.2f, shipped %.2f (%+.1f%%), fitted %.2f (%+.1f%%)", m.Key, w, b, 100*(b/w-1), g, 100*(g/w-1))
		}
	}
}

// TestLeftOutRunIsNotSeen: a run's left-out prediction comes from a fit on
// the other runs only: changing what it measured does not change it.
func TestLeftOutRunIsNotSeen(t *testing.T) {
	shipped := shippedFor(t, "h100-sxm", "vllm", "bf16")
	truth := shipped
	truth.Memory, truth.RequestMS = 0.70, 20
	a := syntheticCases(t, truth)
	b := syntheticCases(t, truth)
	m := b[2].Run.Measured
	twice := func(p *float64) *float64 { v := 2 * *p; return &v }
	b[2].Run.Measured = benchresult.Metrics{TTFT: benchresult.Dist{Mean: twice(m.TTFT.Mean)}, TPOT: benchresult.Dist{Mean: twice(m.TPOT.Mean)}, OutputTokensPerS: twice(m.OutputTokensPerS)}
	ra, err := Calibrate(a, Options{Date: "2026-01-31"})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Calibrate(b, Options{Date: "2026-01-31"})
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := ra.Runs[2].HeldOut, rb.Runs[2].HeldOut
	if *pa.TTFTMS != *pb.TTFTMS || *pa.TPOTMS != *pb.TPOTMS || *pa.OutputTokensPerS != *pb.OutputTokensPerS {
		t.Errorf("run 3 left out: %v/%v/%v, and with its measurements doubled %v/%v/%v", *pa.TTFTMS, *pa.TPOTMS, *pa.OutputTokensPerS, *pb.TTFTMS, *pb.TPOTMS, *pb.OutputTokensPerS)
	}
	if *ra.Runs[2].After.TTFTMS == *rb.Runs[2].After.TTFTMS {
		t.Error("the in-sample fit does not see run 3 either: the test proves nothing")
	}
}

// TestTRTLLMOtherLength: the two trtllm-bench runs (Llama-3.1-70B FP8, 8 ×
// H100, TensorRT-LLM 0.16; not in any fit) are predicted by the shipped
// entry within 10%, replayed as trtllm-bench ran them: CUDA graphs up to its
// max batch size (with decode past 512 sequences eager they were −23.9% and
// −17.6%). Calibrated on one length, the other moves the wrong way, because
// the shipped errors have opposite signs (docs/calibrate.md §5): the test
// holds that to what it is, each length within 15% of its measurement.
func TestTRTLLMOtherLength(t *testing.T) {
	cat := loadCat(t)
	files := []string{"trtllm-bench/h100-8x_llama-3.1-70b-instruct_fp8_tp8_trt0.16_isl128-osl128_report-excerpt.txt",
		"trtllm-bench/h100-8x_llama-3.1-70b-instruct_fp8_tp8_trt0.16_isl1024-osl1024_report-excerpt.txt"}
	var cases []Case
	for _, f := range files {
		cs, err := Resolve(cat, read(t, f), Given{GPU: "h100-sxm"})
		if err != nil {
			t.Fatal(err)
		}
		if cs[0].Setup.CUDAGraphMaxBatch != cs[0].Setup.MaxNumSeqs || cs[0].Setup.MaxNumSeqs == 0 {
			t.Fatalf("%s: CUDA graphs up to %d, the max batch size is %d", f, cs[0].Setup.CUDAGraphMaxBatch, cs[0].Setup.MaxNumSeqs)
		}
		cases = append(cases, cs...)
	}
	for i := range cases {
		fit, other := cases[i], cases[1-i]
		res, err := Calibrate([]Case{fit}, Options{Date: "2026-01-31"})
		if err != nil {
			t.Fatal(err)
		}
		before, err := other.Predict(nil)
		if err != nil {
			t.Fatal(err)
		}
		e := res.Fitted
		after, err := other.Predict(&e)
		if err != nil {
			t.Fatal(err)
		}
		meas := *other.Run.Measured.OutputTokensPerS
		eb, ea := *before.Figures.OutputTokensPerS/meas-1, *after.Figures.OutputTokensPerS/meas-1
		t.Logf("fitted on %s, %s predicted: output tokens/s %+.1f%% before, %+.1f%% after", fit.Run.Label, other.Run.Label, 100*eb, 100*ea)
		if math.Abs(eb) > 0.10 {
			t.Errorf("%s: the shipped entry is %+.1f%% off", other.Run.Label, 100*eb)
		}
		if math.Abs(ea) > 0.15 {
			t.Errorf("%s predicted %+.1f%% after the calibration on %s", other.Run.Label, 100*ea, fit.Run.Label)
		}
	}
}

// TestCatalogFileLoads: the file loads with --catalog and is the entry the
// lookup then returns for the key, calibrated.
func TestCatalogFileLoads(t *testing.T) {
	res, err := Calibrate(syntheticCases(t, shippedFor(t, "h100-sxm", "vllm", "bf16")), Options{Files: []string{"a.json", "b.json"}, Date: "2026-01-31", NoHeldOut: true})
	if err != nil {
		t.Fatal(err)
	}
	data := CatalogFile(res)
	if err := CheckCatalogFile("calib.toml", data, res); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "calib.toml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cat.EfficiencyFor("h100-sxm", "vllm", "bf16")
	if err != nil || !m.Exact || m.Provenance() != "calibrated by kvplan calibrate on 2026-01-31 from a.json, b.json" {
		t.Errorf("lookup after loading: %v, %+v", err, m)
	}
	// Runs made with the shipped entry need no change: nothing moves.
	for _, p := range res.Params {
		if math.Abs(p.Change) > 1e-3 {
			t.Errorf("%s moved %+.2f%% fitting the shipped entry's own predictions", p.Name, 100*p.Change)
		}
	}
	// A broken file is caught before it is written.
	if err := CheckCatalogFile("calib.toml", []byte(strings.Replace(string(data), "calibrated_at", "calibrated_on", 1)), res); err == nil {
		t.Error("a file with an unknown key passed the check")
	}
}

// TestRefuseMixedSetups: one calibration fits one model on one GPU × engine
// × weight dtype.
func TestRefuseMixedSetups(t *testing.T) {
	cat := loadCat(t)
	a, err := Resolve(cat, read(t, "trtllm-bench/h100-8x_llama-3.1-70b-instruct_fp8_tp8_trt0.16_isl128-osl128_report-excerpt.txt"), Given{GPU: "h100-sxm"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Resolve(cat, read(t, "vllm/h200sxm-8x_qwen3-32b_tp8dp1_isl4096-osl128_c100.json"), Given{GPU: "h200", TP: 8})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Resolve(cat, read(t, "trtllm-bench/h100-8x_llama-3.1-70b-instruct_fp8_tp8_trt0.16_isl1024-osl1024_report-excerpt.txt"), Given{GPU: "h200"})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		cases []Case
		want  string
	}{
		{append(a, b...), "disagree on the model (llama-3.1-70b, qwen3-32b)"},
		{append(a, c...), "disagree on the GPU (h100-sxm, h200)"},
	} {
		if _, err := Calibrate(x.cases, Options{}); err == nil || !strings.Contains(err.Error(), x.want) {
			t.Errorf("error %v, want %q", err, x.want)
		}
	}
}

// TestFindNames: names as files write them.
func TestFindNames(t *testing.T) {
	cat := loadCat(t)
	for in, want := range map[string]string{"NVIDIA_L40S": "l40s", "H100-SXM": "h100-sxm", "nvidia h200": "h200"} {
		if g := findGPU(cat, in); g == nil || g.Name != want {
			t.Errorf("GPU %q: %v, want %s", in, g, want)
		}
	}
	if g := findGPU(cat, "TPU v5e"); g != nil {
		t.Errorf("TPU v5e read as %s", g.Name)
	}
	for in, want := range map[string]string{"/workspace/qwen-3-8b": "qwen3-8b", "/root/models/Qwen3-8B": "qwen3-8b", "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b"} {
		if m, err := findModel(cat, in); err != nil || m.Name != want {
			t.Errorf("model %q: %v, want %s", in, err, want)
		}
	}
}
