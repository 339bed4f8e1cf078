package benchresult

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// td is a fixture under testdata/benchresults (attribution in its README).
func td(rel string) string { return filepath.Join("..", "testdata", "benchresults", rel) }

// v is the value the file writes, as a pointer.
func v(x float64) *float64 { return &x }

func eq(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b || math.Abs(*a-*b) <= 1e-9*math.Abs(*b)
}

func show(p *float64) any {
	if p == nil {
		return "not measured"
	}
	return *p
}

// want is what one run of a fixture holds, written out from the file's
// text (means of lengths: the file's totals over its completed count, by
// hand in the comment).
type want struct {
	format, layout string
	runs, run      int // runs in the file; the run checked
	line           int

	model, engine, version string
	tp, dp, replicas       int
	gpu                    string
	gpus                   int
	weight, kv             string

	kind                string
	rate                float64
	conc                int
	burst               float64
	prompts, done, fail int
	isl, osl            float64
	lens                int // per-request entries kept

	ttft, tpot, itl, e2e Dist
	rps, ops             *float64
}

func TestReadFixtures(t *testing.T) {
	cases := map[string]want{
		// vLLM, older layout, one object. 1600000 / 200 = 8000 in, 40000 / 200 = 200 out.
		"vllm/llmd-exp7_a100_llama-3.1-8b-instruct_vllm-2x1gpu_isl8000-osl200_rate1.8.json": {
			format: FormatVLLM, layout: "older layout (request_goodput:)", runs: 1,
			model: "meta-llama/Llama-3.1-8B-Instruct", kind: LoadRate, rate: 1.8, burst: 50, prompts: 200, done: 200, isl: 8000, osl: 200,
			ttft: Dist{Mean: v(955.2341923862696), P50: v(778.8700368255377), P95: v(1408.8739372789855), P99: v(1628.2638817280522)},
			tpot: Dist{Mean: v(41.54997978577082), P50: v(40.93603827012469), P95: v(68.67341753282584), P99: v(79.31878208004909)},
			itl:  Dist{Mean: v(41.549980710190376), P50: v(19.09935101866722), P95: v(51.45619371905922), P99: v(613.7779093720019)},
			rps:  v(1.728939669308656), ops: v(345.78793386173123),
		},
		// vLLM, newer layout: "inf" rate with max_concurrency 100 is a closed loop of 100. 409600/100 = 4096, 12800/100 = 128.
		"vllm/h200sxm-8x_qwen3-32b_tp8dp1_isl4096-osl128_c100.json": {
			format: FormatVLLM, layout: "newer layout (endpoint_type, failed)", runs: 1,
			model: "Qwen/Qwen3-32B", kind: LoadConcurrency, conc: 100, burst: 1, prompts: 100, done: 100, isl: 4096, osl: 128,
			ttft: Dist{Mean: v(2346.6874921135604), P50: v(2347.2953997552395), P99: v(4398.863920420408)},
			tpot: Dist{Mean: v(25.950856666689308), P50: v(25.999654876434896), P99: v(41.55569749759643)},
			itl:  Dist{Mean: v(25.961078362126386), P50: v(10.954538360238075), P99: v(172.54978518933058)},
			e2e:  Dist{Mean: v(5642.446288783103), P50: v(5649.264176376164), P99: v(5728.797505311668)},
			rps:  v(17.39698519595387), ops: v(2226.8141050820955),
		},
		// JSON lines, 9 runs; run 3 (line 3) is "inf" without a cap: every request at once.
		// --metadata gpu=4xNVIDIA_L40S, decode_replicas "4". 899100/900 = 999, 240165/900 = 266.85.
		"vllm/l40s-4x_llama-3.2-3b-instruct_4x1gpu_isl1000-osl500_rates10-30-inf.jsonl": {
			format: FormatVLLM, layout: "older layout (request_goodput:)", runs: 9, run: 2, line: 3,
			model: "meta-llama/Llama-3.2-3B-Instruct", replicas: 4, gpu: "NVIDIA_L40S", gpus: 4,
			kind: LoadBurst, burst: 1, prompts: 900, done: 900, isl: 999, osl: 266.85,
			ttft: Dist{Mean: v(4386.739448253334), P50: v(4066.1594384998807), P99: v(9951.535929819987)},
			tpot: Dist{Mean: v(61.81461881712581), P50: v(53.13592476507745), P99: v(118.56057960224177)},
			itl:  Dist{Mean: v(48.16794500382424), P50: v(37.264703000346344), P99: v(134.96996935997225)},
			rps:  v(31.183176225808488), ops: v(8321.230575856995),
		},
		// Per-request arrays, newer vLLM (start_times). 1024000/500 = 2048, 64000/500 = 128.
		"vllm/h100sxm-8x_qwen3-8b_tp8dp1_isl2048-osl128_c50_per-request_excerpt.json": {
			format: FormatVLLM, layout: "newer layout (endpoint_type, failed), per-request arrays", runs: 1,
			model: "/root/models/Qwen3-8B", kind: LoadConcurrency, conc: 50, burst: 1, prompts: 500, done: 500, isl: 2048, osl: 128, lens: 6,
			ttft: Dist{Mean: v(378.52323926985264), P50: v(370.90106902178377), P99: v(776.3525475584902)},
			tpot: Dist{Mean: v(7.928755441966549), P50: v(7.941188221049356), P99: v(10.268123236770823)},
			itl:  Dist{Mean: v(7.937884045087343), P50: v(5.474501987919211), P99: v(56.5360983647406)},
			e2e:  Dist{Mean: v(1385.4751803996041), P50: v(1375.1217999961227), P99: v(1743.4843041840936)},
			rps:  v(35.96467566241939), ops: v(4603.478484789682),
		},
		// Older vLLM (0.8.3) with per-request arrays, Poisson at 16 req/s. 42659/200 = 213.295, 42770/200 = 213.85.
		"vllm/azure-nd96asr-v4_llama-3.3-70b-instruct_tp8_sharegpt_qps16_per-request_excerpt.json": {
			format: FormatVLLM, layout: "older layout (request_goodput:), per-request arrays", runs: 1,
			model: "meta-llama/Llama-3.3-70B-Instruct", kind: LoadRate, rate: 16, burst: 1, prompts: 200, done: 200, isl: 213.295, osl: 213.85, lens: 6,
			ttft: Dist{Mean: v(59.57789878501217), P50: v(58.10000099995705), P99: v(120.3358004201981)},
			tpot: Dist{Mean: v(31.575131005299614), P50: v(31.675739874099968), P99: v(36.510955727119054)},
			itl:  Dist{Mean: v(31.254736291848793), P50: v(30.424775500023316), P99: v(40.34279973975571)},
			rps:  v(6.333249923861803), ops: v(1354.3654962178466),
		},
		// SGLang, the Dec-2024 18-key lines: median TTFT and ITL, mean/median E2E only. 152612/300, 160347/300.
		"sglang/h200-4x_llama-3.3-70b-instruct_tp4_online_rates1-16.jsonl": {
			format: FormatSGLang, layout: "older layout (no server_info)", runs: 7, run: 0, line: 1,
			engine: "sglang", kind: LoadRate, rate: 1, prompts: 300, done: 300, isl: 152612.0 / 300, osl: 160347.0 / 300,
			ttft: Dist{P50: v(85.74514742940664)}, itl: Dist{P50: v(13.638956006616354)},
			e2e: Dist{Mean: v(7840.616212638561), P50: v(7819.046192569658)},
			ops: v(537.4142851849319),
		},
		// SGLang with server_info and a bare Infinity rate under max_concurrency 100. 50561/100, 6108/100.
		"sglang/h100sxm-8x_qwen3-8b_tp4dp2_isl1024-osl128_c100_per-request_excerpt.jsonl": {
			format: FormatSGLang, layout: "newer layout (server_info), per-request arrays", runs: 1, run: 0, line: 0,
			model: "/workspace/qwen-3-8b", engine: "sglang", version: "0.5.9", tp: 4, dp: 2, weight: "bf16",
			kind: LoadConcurrency, conc: 100, prompts: 100, done: 100, isl: 505.61, osl: 61.08, lens: 6,
			ttft: Dist{Mean: v(481.160490734037), P50: v(472.50283951871097), P99: v(597.9405326279812)},
			tpot: Dist{Mean: v(9.920093950871504), P50: v(6.228351208847016), P99: v(82.01721508055923)},
			itl:  Dist{Mean: v(6.169235484473675), P50: v(3.981192014180124), P95: v(7.2598119033500526), P99: v(90.69032413885)},
			e2e:  Dist{Mean: v(851.8176180962473), P50: v(876.7918625380844), P90: v(1026.34997733403), P99: v(1093.9071688591505)},
			rps:  v(87.26872103143036), ops: v(5330.3734805997665),
		},
		// AIPerf, newer layout: inter_token_latency is TPOT, inter_chunk_latency ITL.
		"aiperf/dynamo-profiler-cmp_qwen3-32b_trtllm-disagg-1p-tp1-1d-tp2_conc4.json": {
			format: FormatAIPerfJSON, layout: "newer layout (top-level metrics)", runs: 1,
			model: "Qwen/Qwen3-32B", kind: LoadConcurrency, conc: 4, prompts: 100, done: 100, isl: 2048, osl: 256,
			ttft: Dist{Mean: v(2200.48862582), P50: v(2066.233917), P90: v(2239.1975369), P95: v(2986.37103395), P99: v(5096.927366010007)},
			tpot: Dist{Mean: v(12.81463214698039), P50: v(12.814221566666665), P90: v(12.89241934862745), P95: v(13.017766985294118), P99: v(13.533837788274509)},
			itl:  Dist{Mean: v(12.814632146980392), P50: v(12.362229), P90: v(20.5677), P95: v(27.5089226), P99: v(52.12650641999961)},
			e2e:  Dist{Mean: v(5468.2198233), P50: v(5333.403166499999), P90: v(5544.3971090000005), P95: v(6231.8805732499995), P99: v(8361.468881250006)},
			rps:  v(0.7179310547277954), ops: v(183.79035001031562),
		},
		// The same run's CSV: two decimals, no model, no load.
		"aiperf/dynamo-profiler-cmp_qwen3-32b_trtllm-disagg-1p-tp1-1d-tp2_conc4.csv": {
			format: FormatAIPerfCSV, layout: "CSV export", runs: 1, prompts: 100, done: 100, isl: 2048, osl: 256,
			ttft: Dist{Mean: v(2200.49), P50: v(2066.23), P90: v(2239.20), P95: v(2986.37), P99: v(5096.93)},
			tpot: Dist{Mean: v(12.81), P50: v(12.81), P90: v(12.89), P95: v(13.02), P99: v(13.53)},
			itl:  Dist{Mean: v(12.81), P50: v(12.36), P90: v(20.57), P95: v(27.51), P99: v(52.13)},
			e2e:  Dist{Mean: v(5468.22), P50: v(5333.40), P90: v(5544.40), P95: v(6231.88), P99: v(8361.47)},
			rps:  v(0.72), ops: v(183.79),
		},
		// AIPerf, older layout (records): 89 completed, 11 errored (cancelled).
		"aiperf/aiperf-example_gpt-oss-20b_conc100_cancel10.json": {
			format: FormatAIPerfJSON, layout: "older layout (records)", runs: 1,
			model: "openai/gpt-oss-20b", kind: LoadConcurrency, conc: 100, prompts: 100, done: 89, fail: 11, isl: 550, osl: 242.96629213483146,
			ttft: Dist{Mean: v(2343.219436988764), P50: v(2369.317693), P90: v(3796.9311679999996), P95: v(3825.2778412), P99: v(3833.3894000399996)},
			tpot: Dist{Mean: v(27.763065454471807), P50: v(27.615130366666666), P90: v(32.87232279340302), P95: v(33.34450986349594), P99: v(33.73224787406911)},
			itl:  Dist{Mean: v(27.755153106189347), P50: v(22.673047999999998), P90: v(24.875479600000002), P95: v(31.6586686), P99: v(140.53429476)},
			e2e:  Dist{Mean: v(9059.654633033708), P50: v(9097.345014999999), P90: v(9277.5984794), P95: v(9288.605606), P99: v(9297.609933759999)},
			rps:  v(9.551622221540914), ops: v(2320.7222350404572),
		},
		"aiperf/aiperf-example_gpt-oss-20b_conc100_cancel10.csv": {
			format: FormatAIPerfCSV, layout: "CSV export", runs: 1, prompts: 100, done: 89, fail: 11, isl: 550, osl: 242.97,
			ttft: Dist{Mean: v(2343.22), P50: v(2369.32), P90: v(3796.93), P95: v(3825.28), P99: v(3833.39)},
			tpot: Dist{Mean: v(27.76), P50: v(27.62), P90: v(32.87), P95: v(33.34), P99: v(33.73)},
			itl:  Dist{Mean: v(27.76), P50: v(22.67), P90: v(24.88), P95: v(31.66), P99: v(140.53)},
			e2e:  Dist{Mean: v(9059.65), P50: v(9097.35), P90: v(9277.60), P95: v(9288.61), P99: v(9297.61)},
			rps:  v(9.55), ops: v(2320.72),
		},
		// guidellm v0.3 era: request_latency in seconds (0.6444743664368339 s), no p50 in its percentiles (median instead).
		"guidellm/guidellm-test-asset_stripped_sweep_v0.3-era.json": {
			format: FormatGuideLLM, layout: "v0.3-era layout (args, run_stats)", runs: 1,
			model: "example_model", kind: LoadConcurrency, conc: 1, prompts: 47, done: 46, isl: 257.1086956521739, osl: 127.99999999999999,
			ttft: Dist{Mean: v(16.792535781860348), P50: v(16.38054847717285), P90: v(18.505334854125977), P95: v(19.00935173034668), P99: v(21.281957626342773)},
			tpot: Dist{Mean: v(4.90300272307966), P50: v(4.885653033852577), P90: v(4.934689030051231), P95: v(4.993332549929619), P99: v(5.217265337705612)},
			itl:  Dist{Mean: v(4.941609043733832), P50: v(4.9241227427805505), P90: v(4.973544849185493), P95: v(5.032650129062923), P99: v(5.258346167136365)},
			e2e:  Dist{Mean: v(0.6444743664368339 * 1000), P50: v(0.6424565315246582 * 1000), P90: v(0.6488735675811768 * 1000), P95: v(0.656728982925415 * 1000), P99: v(0.6891846656799316 * 1000)},
			rps:  v(1.5481806532737452), ops: v(198.13346751788123),
		},
		// The v1 layout (guidellm 0.5): args.model, config.strategy, metrics.request_totals.
		"guidellm/intel-xpu-4x_gpt-oss-20b_tp4_synchronous_aime_excerpt.json": {
			format: FormatGuideLLM, layout: "v1 layout (guidellm 0.5.0.dev0)", runs: 1,
			model: "openai/gpt-oss-20b", kind: LoadConcurrency, conc: 1, prompts: 25, done: 25, isl: 92.72, osl: 1024,
			ttft: Dist{Mean: v(48.843650817871094), P50: v(47.66058921813965), P90: v(52.314043045043945), P95: v(57.81126022338867), P99: v(60.7762336730957)},
			rps:  v(0.03333333333333333), ops: v(33.417378943280085),
		},
		// The v2 layout (guidellm 0.8): config.spec.backend.model, two constant-rate benchmarks.
		"guidellm/llmd-bench-fixture_mock-server_guidellm-0.8-dev_v2_excerpt.json": {
			format: FormatGuideLLM, layout: "v2 layout (guidellm 0.8.0.dev18)", runs: 2, run: 1,
			model: "e2e-mock-model", kind: LoadRate, rate: 4, prompts: 2, done: 2, isl: 65.5, osl: 8,
			ttft: Dist{Mean: v(9.78386402130127), P50: v(9.419918060302734), P90: v(10.147809982299805), P95: v(10.147809982299805), P99: v(10.147809982299805)},
			rps:  v(0.7940882013937378), ops: v(6.377131566888984),
		},
		// inference-perf lifecycle, in seconds: 0.050548625055568695 s TTFT.
		"inference-perf/kubecon25_h100-80g_llama-3.1-8b_vllm0.11_stage3_lifecycle.json": {
			format: FormatInferencePerf, layout: "lifecycle metrics", runs: 1,
			kind: LoadRate, rate: 92.19, prompts: 5531, done: 5531, isl: 204.10178991140842, osl: 62.3254384378955,
			ttft: Dist{Mean: v(50.548625055568695), P50: v(44.51845702715218), P90: v(64.36099205166101), P95: v(80.24103753268719), P99: v(181.82665726635605)},
			tpot: Dist{Mean: v(7.516017549608276), P50: v(7.41328114676181), P90: v(8.982176720994965), P95: v(9.37609843072272), P99: v(9.620544096444148)},
			itl:  Dist{Mean: v(7.516017549608276), P50: v(0.04857999738305807), P90: v(19.66982695739717), P95: v(23.093275481369347), P99: v(30.061706062406327)},
			e2e:  Dist{Mean: v(1021.2724370473967), P50: v(1004.2465949663892), P90: v(1233.6858640192077), P95: v(1280.4742284934036), P99: v(1380.553821043577)},
			rps:  v(91.35730480202015), ops: v(5693.884076290361),
		},
		// The summary over all 7 stages states no rate.
		"inference-perf/kubecon25_h100-80g_llama-3.1-8b_vllm0.11_summary_lifecycle.json": {
			format: FormatInferencePerf, layout: "lifecycle metrics", runs: 1,
			kind: LoadUnknown, prompts: 38717, done: 38717, isl: 204.10160911227626, osl: 62.367383836557586,
			ttft: Dist{Mean: v(2041.737392009856), P50: v(2886.7905189981684), P90: v(3281.9503690116107), P95: v(3303.848413261585), P99: v(3329.2115439707413)},
			rps:  v(63.46125084268033), ops: v(3957.912190053508),
		},
		// The server's Prometheus view: 28397.068262 / 138.460857 and 8857.710808 / 138.460857 tokens per request.
		"inference-perf/kubecon25_h100-80g_llama-3.1-8b_vllm0.11_stage3_prometheus.json": {
			format: FormatInferencePerfSrv, layout: "Prometheus metrics (the server's view)", runs: 1,
			done: 10938, isl: 28397.068262 / 138.460857, osl: 8857.710808 / 138.460857,
			ttft: Dist{Mean: v(38.419), P50: v(30.574), P90: v(54.618), P99: v(238.939)},
			tpot: Dist{Mean: v(15.417), P50: v(16.586), P90: v(24.411), P99: v(46.424)},
			e2e:  Dist{Mean: v(1006.611), P50: v(987.032), P90: v(1394.365), P99: v(1490.848)},
			rps:  v(138.460857), ops: v(8857.710808),
		},
		// trtllm-bench text: an offline run at the engine's max runtime batch size 2048.
		"trtllm-bench/h100-8x_llama-3.1-70b-instruct_fp8_tp8_trt0.16_isl128-osl128_report-excerpt.txt": {
			format: FormatTRTLLMBench, layout: "text report (trtllm-bench throughput)", runs: 1,
			model: "meta-llama/Llama-3.1-70B-Instruct", engine: "trtllm", version: "0.16.0", tp: 8, weight: "fp8", kv: "fp8",
			kind: LoadOffline, conc: 2048, prompts: 30000, done: 30000, isl: 128, osl: 128,
			rps: v(112.4203), ops: v(14389.7989),
		},
	}
	for rel, w := range cases {
		t.Run(rel, func(t *testing.T) {
			f, err := Read(td(rel))
			if err != nil {
				t.Fatal(err)
			}
			if f.Format != w.format || f.Layout != w.layout || len(f.Runs) != w.runs {
				t.Fatalf("format %q layout %q runs %d; want %q, %q, %d", f.Format, f.Layout, len(f.Runs), w.format, w.layout, w.runs)
			}
			r := f.Runs[w.run]
			s, wl, m := r.Setup, r.Workload, r.Measured
			if r.Index != w.run || r.Line != w.line {
				t.Errorf("run index %d line %d, want %d line %d", r.Index, r.Line, w.run, w.line)
			}
			gotSetup := []any{s.Model, s.Engine, s.EngineVersion, s.TP, s.DP, s.Replicas, s.GPU, s.GPUCount, s.WeightDtype, s.KVDtype}
			wantSetup := []any{w.model, w.engine, w.version, w.tp, w.dp, w.replicas, w.gpu, w.gpus, w.weight, w.kv}
			if !reflect.DeepEqual(gotSetup, wantSetup) {
				t.Errorf("setup %v, want %v", gotSetup, wantSetup)
			}
			gotLoad := []any{wl.Kind, wl.RatePerS, wl.Concurrency, wl.Burstiness, wl.Prompts, wl.Completed, wl.Failed, len(wl.InputLens)}
			wantLoad := []any{w.kind, w.rate, w.conc, w.burst, w.prompts, w.done, w.fail, w.lens}
			if !reflect.DeepEqual(gotLoad, wantLoad) {
				t.Errorf("workload %v, want %v", gotLoad, wantLoad)
			}
			if math.Abs(wl.InputTokensMean-w.isl) > 1e-9*w.isl || math.Abs(wl.OutputTokensMean-w.osl) > 1e-9*w.osl {
				t.Errorf("lengths %v / %v, want %v / %v", wl.InputTokensMean, wl.OutputTokensMean, w.isl, w.osl)
			}
			for _, d := range []struct {
				name      string
				got, want Dist
			}{{"ttft", m.TTFT, w.ttft}, {"tpot", m.TPOT, w.tpot}, {"itl", m.ITL, w.itl}, {"e2e", m.E2E, w.e2e}} {
				if d.want.Empty() {
					continue // not checked here
				}
				for i, p := range [][2]*float64{{d.got.Mean, d.want.Mean}, {d.got.P50, d.want.P50}, {d.got.P90, d.want.P90}, {d.got.P95, d.want.P95}, {d.got.P99, d.want.P99}} {
					if !eq(p[0], p[1]) {
						t.Errorf("%s %s: got %v, want %v", d.name, []string{"mean", "p50", "p90", "p95", "p99"}[i], show(p[0]), show(p[1]))
					}
				}
			}
			if !eq(m.RequestsPerS, w.rps) || !eq(m.OutputTokensPerS, w.ops) {
				t.Errorf("throughput %v req/s, %v tok/s; want %v, %v", show(m.RequestsPerS), show(m.OutputTokensPerS), show(w.rps), show(w.ops))
			}
		})
	}
}

// TestPerRequestLengths: the arrays are the file's, request by request.
func TestPerRequestLengths(t *testing.T) {
	cases := []struct {
		rel     string
		in, out []int
	}{
		{"vllm/azure-nd96asr-v4_llama-3.3-70b-instruct_tp8_sharegpt_qps16_per-request_excerpt.json", []int{13, 25, 27, 10, 329, 29}, []int{120, 770, 233, 194, 101, 741}},
		{"sglang/h100sxm-8x_qwen3-8b_tp4dp2_isl1024-osl128_c100_per-request_excerpt.jsonl", []int{38, 236, 909, 73, 768, 906}, []int{38, 58, 84, 39, 9, 33}},
	}
	for _, c := range cases {
		f, err := Read(td(c.rel))
		if err != nil {
			t.Fatal(err)
		}
		in, out := f.Runs[0].Lengths()
		if !reflect.DeepEqual(in, c.in) || !reflect.DeepEqual(out, c.out) {
			t.Errorf("%s: lengths %v / %v, want %v / %v", c.rel, in, out, c.in, c.out)
		}
	}
}

// TestSGLangServerInfo: what server_info says of the engine.
func TestSGLangServerInfo(t *testing.T) {
	f, err := Read(td("sglang/h100sxm-8x_qwen3-8b_tp4dp2_isl1024-osl128_c100_per-request_excerpt.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Runs[0].Setup
	// server_info: "max_total_num_tokens": 1916167, "chunked_prefill_size": 8192, "max_running_requests": null.
	if s.KVTokens != 1916167 || s.MaxBatchedTok != 8192 || s.MaxNumSeqs != 0 || s.KVDtype != "" {
		t.Errorf("server_info read as %+v", s)
	}
}

// TestYAMLIsTheJSON: guidellm's YAML report of a run reads as its JSON.
func TestYAMLIsTheJSON(t *testing.T) {
	j, err := Read(td("guidellm/guidellm-test-asset_stripped_sweep_v0.3-era.json"))
	if err != nil {
		t.Fatal(err)
	}
	y, err := Read(td("guidellm/guidellm-test-asset_stripped_sweep_v0.3-era.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(j.Runs, y.Runs) {
		t.Errorf("YAML runs differ from JSON runs:\n%+v\n%+v", y.Runs, j.Runs)
	}
}

// TestEveryFixtureReads: every file under testdata/benchresults reads.
func TestEveryFixtureReads(t *testing.T) {
	files, _ := filepath.Glob(td("*/*"))
	more, _ := filepath.Glob(td("*/*/*"))
	files = append(files, more...)
	if len(files) < 20 {
		t.Fatalf("only %d fixtures", len(files))
	}
	for _, p := range files {
		if st, err := os.Stat(p); err == nil && st.IsDir() || filepath.Base(filepath.Dir(p)) == "catalog" {
			continue // a folder, or the models the calibration tests need
		}
		if _, err := Read(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
