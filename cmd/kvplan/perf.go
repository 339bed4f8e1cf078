package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/perf"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/units"
)

func perfCommand() *cli.Command {
	return &cli.Command{
		Name:  "perf",
		Usage: "TTFT, TPOT and throughput of a closed-loop benchmark on one replica (the engine model)",
		UsageText: `kvplan perf --model llama-3.1-8b --gpu h100-sxm --tp 1 --isl 1024 --osl 1024 --concurrency 64
   kvplan perf --model qwen3-32b --gpu h100-sxm --tp 2 --engine trtllm --weight-dtype fp8 --isl 2048 --osl 256 --concurrency 32 --explain
   kvplan perf --model llama-3.1-8b --gpu h100-sxm --isl 1024 --osl 1024 --sweep concurrency=1,2,4,8,16,32,64,128
   kvplan perf --against results.json --gpu h100-sxm --tp 8
   kvplan perf --against bench.jsonl --catalog calib.toml -o json`,
		Description: `C clients each send their next request when the last one finished (fixed
input and output lengths, no prefix reuse). kvplan replays that benchmark
iteration by iteration: each iteration's time comes from the engine model
(per operator class, the slower of compute and memory traffic at fitted
efficiencies, plus all-reduces and fixed costs), the KV slots and engine
limits from the memory model; when C requests do not fit the KV slots the
others wait, and TTFT includes the wait. --explain prints the step-time terms.
The efficiencies are fitted per GPU × engine × weight dtype on measured runs
(catalog/data/efficiencies.toml); an unseen combination falls back to a
less specific entry, and the output says so.

--against FILE predicts the benchmark a result file describes (vLLM bench
serve, SGLang bench_serving, AIPerf/genai-perf, guidellm, inference-perf,
trtllm-bench; told by content) and prints predicted against measured for
every figure the file has. Each run's lengths, load and set-up come from
the file; what it does not state comes from flags (--model, --gpu, --tp,
--data-parallel-size, --workers, --engine, --concurrency, --request-rate,
...), and a flag that contradicts the file is an error naming both. A
closed loop is kvplan perf's replay; a request rate, or every request at
once, is the timed simulator (kvplan simulate's engine) over every request
of the run. kvplan calibrate fits the efficiencies to such files.`,
		Flags: withCommon(append(append(modelFlags(),
			&cli.StringFlag{Name: "gpu", Aliases: []string{"g"}, Usage: "GPU of each rank (required; kvplan gpus list)"},
			&cli.StringFlag{Name: "engine", Value: "vllm", Usage: "serving engine: vllm, sglang or trtllm"},
			&cli.StringFlag{Name: "engine-version", Usage: "engine version, recorded in the output"},
			&cli.StringFlag{Name: "weight-dtype", Usage: "matmul weights: bf16, fp8, fp4, mxfp4, nvfp4, int4 (default: the model's)"},
			inputTokensFlag(0, "input tokens per request (required)", "isl"),
			outputTokensFlag(0, "output tokens per request (required)", "osl"),
			&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Value: 1, Usage: "clients in the closed loop"},
			&cli.StringFlag{Name: "sweep", Usage: "one row per value: concurrency=1,2,4,8 (counts as 1k, 1e3)"},
			&cli.StringFlag{Name: "plot", Usage: "with --sweep: write the curve (output tokens/s per GPU against per user) as an SVG; --force replaces a file"},
			&cli.BoolFlag{Name: "force", Usage: "with --plot: replace an existing file"},
			maxNumSeqsFlag("sequences running at once (default: the engine's for this GPU)"),
			maxNumBatchedTokensFlag("tokens per iteration (default: the engine's for this GPU)"),
			gpuUtilFlag(0, "the engine's memory fraction, in (0, 1] (default: the engine's)"),
			enforceEagerFlag("no CUDA graphs"),
			&cli.IntFlag{Name: flagCUDAGraphMaxBatch, Usage: "largest iteration run under a CUDA graph, tokens (a decode-only iteration: its sequences), as TensorRT-LLM's cuda_graph_config.max_batch_size, SGLang's --cuda-graph-max-bs, vLLM's max_cudagraph_capture_size set it (default: 512 for every engine)"},
			&cli.StringFlag{Name: "against", Usage: "a benchmark result file: predict each of its runs and print predicted against measured"},
		), append(append(benchFlags(), layoutPerfFlags()...), requestPathFlags(perf.PathDirect)...)...)...),
		Action: runPerf,
	}
}

func runPerf(c *cli.Context) error {
	if c.String("against") != "" {
		for _, f := range []string{flagEP, flagPP, flagSpecTok, flagAccept, flagRedundant, flagEPLB, flagTBO, "link"} {
			if c.IsSet(f) {
				return fmt.Errorf("perf: --%s describes a layout kvplan perf models, not a benchmark result file: with --against the file's runs are replayed as tensor parallelism (and --data-parallel-size replicas); leave --%s out", f, f)
			}
		}
		return runPerfAgainst(c)
	}
	for _, f := range []string{"workers", "request-rate", "num-prompts"} {
		if c.IsSet(f) {
			return fmt.Errorf("perf: --%s describes a benchmark result file: give --against FILE too (without it perf predicts one replica's closed loop)", f)
		}
	}
	sc, err := perfScenario(c)
	if err != nil {
		return err
	}
	plotPath, err := outputPath(c, "plot")
	if err != nil {
		return err
	}
	if plotPath != "" && c.String("sweep") == "" {
		return fmt.Errorf("perf: --plot draws a curve: give --sweep concurrency=1,2,4,... too")
	}
	if s := c.String("sweep"); s != "" {
		values, err := sweepValues(s)
		if err != nil {
			return err
		}
		var plans []*planner.PerfPlan
		for _, v := range values {
			sc.Concurrency = v
			p, err := planner.PlanPerf(*sc)
			if err != nil {
				return err
			}
			plans = append(plans, p)
		}
		if plotPath != "" {
			if err := writeSweepPlot(c, plotPath, perfSweepPlot(plans)); err != nil {
				return err
			}
		}
		return emit(c, perfSweepDoc(c, plans), nil)
	}
	p, err := planner.PlanPerf(*sc)
	if err != nil {
		return err
	}
	return emit(c, perfDoc(c, p), p.Derivation)
}

func perfScenario(c *cli.Context) (*planner.PerfScenario, error) {
	if err := required(c, "model", "gpu"); err != nil {
		return nil, err
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return nil, err
	}
	sc := &planner.PerfScenario{Catalog: cat, EngineVersion: c.String("engine-version"), GPUUtil: c.Float64(flagGPUUtil),
		EnforceEager: c.Bool(flagEnforceEager)}
	if sc.Path, err = requestPath(c); err != nil {
		return nil, err
	}
	if sc.Model, err = cat.Model(c.String("model")); err != nil {
		return nil, err
	}
	if sc.GPU, err = cat.GPU(c.String("gpu")); err != nil {
		return nil, err
	}
	if sc.Engine, err = parseEnumFlag("--engine", c.String("engine"), planner.PerfEngines()); err != nil { // vLLM is vllm
		return nil, err
	}
	if sc.KVDtype, err = kvDtype(c); err != nil {
		return nil, err
	}
	if sc.TP, err = tpFlag(c, sc.Model); err != nil {
		return nil, err
	}
	if w := c.String("weight-dtype"); w != "" {
		if sc.WeightDtype, err = weightDtype(w); err != nil {
			return nil, err
		}
	}
	if c.IsSet(flagGPUUtil) && (sc.GPUUtil <= 0 || sc.GPUUtil > 1) {
		return nil, fmt.Errorf("--%s %g: must be in (0, 1], e.g. 0.9", flagGPUUtil, sc.GPUUtil)
	}
	if !c.IsSet(flagInputTokens) || !c.IsSet(flagOutputTokens) { // given as 0: the range, below
		return nil, fmt.Errorf("perf: --isl and --osl (--input-tokens, --output-tokens) are required (see kvplan perf --help)")
	}
	ints := []struct {
		flag   string
		dst    *int
		zeroOK bool
	}{
		{flagInputTokens, &sc.InputTokens, false}, {flagOutputTokens, &sc.OutputTokens, false},
		{flagMaxNumSeqs, &sc.MaxNumSeqs, true}, {flagMaxNumBatchedTokens, &sc.MaxNumBatchedTokens, true},
		{flagCUDAGraphMaxBatch, &sc.CUDAGraphMaxBatch, true},
	}
	for _, f := range ints {
		if *f.dst, err = positive(c, f.flag, f.zeroOK); err != nil {
			return nil, err
		}
	}
	if sc.EnforceEager && sc.CUDAGraphMaxBatch > 0 {
		return nil, fmt.Errorf("perf: --%s sizes the CUDA graphs that --%s turns off: give one of them", flagCUDAGraphMaxBatch, flagEnforceEager)
	}
	if err := withinContext(c, sc.Model, "--isl + --osl", sc.InputTokens+sc.OutputTokens); err != nil {
		return nil, err
	}
	if sc.Concurrency, err = intIn(c, "concurrency", concurrencyRange); err != nil { // the closed loop simulates each client
		return nil, err
	}
	if sc.Parallel, sc.RedundantExperts, sc.EPLB, sc.Link, err = layoutFromFlags(c, cat, sc.Model, sc.GPU, sc.TP, true); err != nil {
		return nil, err
	}
	if sc.TwoBatchOverlap = c.Bool(flagTBO); sc.TwoBatchOverlap && (sc.Parallel.Norm().DP <= 1 || sc.Model.MoE == nil) {
		return nil, fmt.Errorf("perf: --%s overlaps the all-to-all that attention data parallelism needs on a mixture-of-experts model (with dp 1 there is none): give --data-parallel-size (and --expert-parallel-size) too", flagTBO)
	}
	return sc, nil
}

// sweepValues parses --sweep concurrency=1,2,4.
func sweepValues(s string) ([]int, error) {
	// The reason first, and at most 80 bytes of the value (a sweep of
	// 15,000 values was echoed whole).
	name, list, ok := strings.Cut(s, "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(name), "concurrency") {
		return nil, fmt.Errorf("--sweep: want concurrency=1,2,4,... (concurrency is the one axis swept), not %s", safetext.Quote(s))
	}
	fields := strings.Split(list, ",")
	if len(fields) > 64 {
		return nil, fmt.Errorf("--sweep: at most 64 values, not %s: %s", units.Thousands(int64(len(fields))), safetext.Quote(s))
	}
	var out []int
	for _, f := range fields {
		v, err := units.ParseCount(strings.TrimSpace(f)) // 1k is 1000
		if err != nil || v < 1 || v > 100_000 {
			return nil, fmt.Errorf("--sweep: each concurrency must be from 1 to 100,000, not %s", safetext.Quote(f))
		}
		out = append(out, int(v))
	}
	return out, nil
}

func msText(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " ms" }

func perfDoc(c *cli.Context, p *planner.PerfPlan) *report.Doc {
	rows := [][]string{
		{"TTFT (mean)", msText(p.TTFTMS), fmt.Sprintf("%s overhead + %s waiting + %s prefill", msText(p.RequestOverheadMS), msText(p.WaitingMS), msText(p.PrefillMS))},
		{"TPOT (mean)", msText(p.TPOTMS), "per output token after the first"},
		{"ITL p50", msText(p.ITLMSP50), ""},
		{"requests/s", fmt.Sprintf("%.3f", p.RequestsPerS), "per replica"},
		{"output tokens/s", fmt.Sprintf("%.1f", p.OutputTokensPerS), fmt.Sprintf("%.1f per GPU (%d GPUs)", p.OutputTokensPerSPerGPU, p.GPUs)},
		{"running sequences", fmt.Sprintf("%.1f", p.RunningSequences), fmt.Sprintf("at most %d", p.MaxRunning)},
		{"KV-limited", fmt.Sprint(p.KVLimited), fmt.Sprintf("%d KV slots (%s), max_num_seqs %d", p.KVSlotsTokens, p.KVDtype, p.MaxNumSeqs)},
		{"decode iteration", msText(p.DecodeStepMS), ""},
		{"prefill iteration", msText(p.PrefillStepMS), fmt.Sprintf("%.1f%% of iterations; budget %d tokens", 100*p.PrefillStepShare, p.MaxNumBatchedTokens)},
	}
	doc := &report.Doc{
		Title: fmt.Sprintf("%s on %d × %s (%s, %s weights): %d clients, %d in / %d out tokens",
			p.Model, p.GPUs, p.GPU, p.Engine, p.WeightDtype, p.Concurrency, p.InputTokens, p.OutputTokens),
		Sections: []report.Section{{Header: []string{"figure", "value", "note"}, Rows: rows}},
	}
	if c.Bool("explain") {
		doc.Sections = append(doc.Sections, stepTermsSection(p))
	} else {
		p.StepTerms = nil
	}
	doc.JSON = jsonWithExplain(c, p, &p.Derivation)
	e := p.Efficiency
	doc.Notes = append(doc.Notes, fmt.Sprintf("Efficiencies %s: gemm %.2f, memory %.2f, attention %.2f (%s).", e.Key(), e.GEMM, e.Memory, e.Attention, e.Source))
	if e.Calibrated() {
		doc.Notes = append(doc.Notes, "The figures rest on a calibration: "+e.Provenance()+".")
	}
	if p.EfficiencyFallback != "" {
		doc.Notes = append(doc.Notes, "Fallback: "+p.EfficiencyFallback+".")
	}
	for _, a := range p.Assumptions {
		doc.Notes = append(doc.Notes, "Assumes "+a+".")
	}
	doc.Notes = append(doc.Notes, "Not modelled: "+strings.Join(p.NotModelled, "; ")+".")
	return doc
}

func stepTermsSection(p *planner.PerfPlan) report.Section {
	t := p.StepTerms
	row := func(name string, a, b float64) []string { return []string{name, msText(a), msText(b)} }
	rows := [][]string{
		row("fixed (step + layers)", t.Prefill.FixedMS, t.Decode.FixedMS),
		row("dense GEMMs", t.Prefill.DenseMS, t.Decode.DenseMS),
		row("routed experts", t.Prefill.ExpertsMS, t.Decode.ExpertsMS),
		row("lm head", t.Prefill.LMHeadMS, t.Decode.LMHeadMS),
		row("prefill attention", t.Prefill.AttentionMS, t.Decode.AttentionMS),
		row("KV reads", t.Prefill.KVReadMS, t.Decode.KVReadMS),
		row("all-reduces", t.Prefill.AllReduceMS, t.Decode.AllReduceMS),
	}
	if t.Prefill.ActivationMS > 0 || t.Decode.ActivationMS > 0 {
		rows = append(rows, row("activations", t.Prefill.ActivationMS, t.Decode.ActivationMS))
	}
	if p.Parallel != nil {
		rows = append(rows, parallelTermRows(p)...)
	}
	rows = append(rows,
		row("total", t.Prefill.TotalMS, t.Decode.TotalMS),
		[]string{"tokens / sequences", fmt.Sprintf("%d / %d", t.Prefill.Tokens, t.Prefill.Sequences), fmt.Sprintf("%d / %d", t.Decode.Tokens, t.Decode.Sequences)})
	return report.Section{
		Title:  "Step-time terms (mean iterations)",
		Header: []string{"term", "prefill iteration", "decode iteration"},
		Rows:   rows,
	}
}

// parallelTermRows are the layout's rows of the step-time table: the
// all-to-all and the expert imbalance with their formulas, the pipeline,
// MTP.
func parallelTermRows(p *planner.PerfPlan) [][]string {
	t, pd := p.StepTerms, p.Parallel
	row := func(name string, a, b float64) []string { return []string{name, msText(a), msText(b)} }
	var rows [][]string
	if pd.AllToAllBytes > 0 {
		name := "all-to-all (dispatch + combine)"
		if p.EP <= 1 {
			name = "all-gather + reduce-scatter (dp, ep 1)"
		}
		normal := pd.AllToAllBytes
		if pd.AllToAllNormal > 0 {
			normal = pd.AllToAllNormal // normal kernels: a copy per other rank hit
		}
		rows = append(rows, row(name, t.Prefill.AllToAllMS, t.Decode.AllToAllMS),
			[]string{"  = 2 × layers × (latency + tokens/tp × bytes/token × imbalance / 2 / bandwidth)",
				fmt.Sprintf("%.0f µs, %.0f B/token, %.1f GB/s", pd.Efficiency.AllToAllNormalUS, normal, pd.AllToAllNormalGBs),
				fmt.Sprintf("%.0f µs, %.0f B/token, %.1f GB/s per GPU%s", pd.Efficiency.AllToAllUS, pd.AllToAllBytes, pd.AllToAllGBs, pick(pd.OverDomain, " (over "+pd.Link+")", ""))})
	}
	if p.EP > 1 {
		rows = append(rows, []string{"expert imbalance (hottest rank / mean)", fmt.Sprintf("%.3f", t.Prefill.Imbalance), fmt.Sprintf("%.3f", t.Decode.Imbalance)},
			[]string{"  = (1 + skew) × (1 + √(2 ln ep) × σ/μ)", fmt.Sprintf("skew %.2f%s", pd.Skew, pick(pd.EPLB, " (EPLB)", "")), fmt.Sprintf("ep %d%s", p.EP, pick(pd.TwoBatchOverlap, "; two-batch overlap: the all-to-all beyond the compute", ""))})
	}
	if p.PP > 1 {
		rows = append(rows, row("pipeline bubble + sends", t.Prefill.PipelineMS, t.Decode.PipelineMS),
			[]string{"micro-batches", fmt.Sprint(t.Prefill.MicroBatches), fmt.Sprint(t.Decode.MicroBatches)})
	}
	if p.SpeculativeTokens > 0 {
		rows = append(rows, row("MTP draft", t.Prefill.DraftMS, t.Decode.DraftMS),
			row("whole step (verify N + 1 tokens)", t.Prefill.IterationMS, t.Decode.IterationMS),
			[]string{"tokens per step (acceptance)", fmt.Sprintf("%.3g", t.Prefill.TokensPerStep), fmt.Sprintf("%.3g", t.Decode.TokensPerStep)})
	}
	return rows
}

// perfSweep is the JSON of a sweep.
type perfSweep struct {
	Sweep  string              `json:"sweep"`
	Points []*planner.PerfPlan `json:"points"`
}

func perfSweepDoc(c *cli.Context, plans []*planner.PerfPlan) *report.Doc {
	var rows [][]string
	for _, p := range plans {
		rows = append(rows, []string{fmt.Sprint(p.Concurrency), fmt.Sprintf("%.1f", p.TTFTMS), fmt.Sprintf("%.2f", p.TPOTMS),
			fmt.Sprintf("%.2f", p.ITLMSP50), fmt.Sprintf("%.3f", p.RequestsPerS), fmt.Sprintf("%.1f", p.OutputTokensPerS),
			fmt.Sprintf("%.1f", p.OutputTokensPerSPerGPU), fmt.Sprintf("%.1f", p.RunningSequences), fmt.Sprint(p.KVLimited),
			fmt.Sprintf("%.1f", p.WaitingMS)})
		if !c.Bool("explain") {
			p.StepTerms, p.Derivation = nil, nil
		}
	}
	p := plans[0]
	doc := &report.Doc{
		Title: fmt.Sprintf("%s on %d × %s (%s, %s weights), %d in / %d out tokens, by concurrency",
			p.Model, p.GPUs, p.GPU, p.Engine, p.WeightDtype, p.InputTokens, p.OutputTokens),
		Sections: []report.Section{{Header: []string{"concurrency", "ttft_ms", "tpot_ms", "itl_ms_p50", "requests/s",
			"output tokens/s", "per GPU", "running", "kv_limited", "waiting_ms"}, Rows: rows}},
		JSON: perfSweep{Sweep: "concurrency", Points: plans},
	}
	if p.EfficiencyFallback != "" {
		doc.Notes = append(doc.Notes, "Fallback: "+p.EfficiencyFallback+".")
	}
	doc.Notes = append(doc.Notes, fmt.Sprintf("Efficiencies %s (%s).", p.Efficiency.Key(), p.Efficiency.Source))
	return doc
}
