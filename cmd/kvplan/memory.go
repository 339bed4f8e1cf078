package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/report"
	"github.com/kvplan/kvplan/units"
)

func memoryCommand() *cli.Command {
	return &cli.Command{
		Name:  "memory",
		Usage: "GPU KV slots of a worker (its engine's accounting, by version) and its host-memory headroom",
		UsageText: `kvplan memory --model qwen3-0.6b --gpu rtx4060-laptop --gpu-memory-utilization 0.38 --enforce-eager --max-model-len 4096
   kvplan memory --model qwen3-0.6b --gpu rtx4060-laptop --gpu-memory-utilization 0.38 --memory-limit 3584Mi --kv-buffer-device cpu --concurrency 4 --input-tokens 2371
   kvplan memory --gpu l4 -- vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 --max-model-len 16384 --kv-cache-dtype fp8
   kvplan memory --gpu h100-sxm --vllm-args "--model meta-llama/Llama-3.1-70B -tp 4 --gpu-memory-utilization 0.92"
   kvplan memory --model llama-3.1-70b --gpu h100-sxm --tensor-parallel-size 4 --engine-version 0.19.0
   kvplan memory --model llama-3.1-8b --gpu h100-sxm --pipeline-parallel-size 2 --quantization int4 --explain
   kvplan memory --model qwen3-32b --gpu h200 --engine sglang
   kvplan memory --model llama-3.1-70b --gpu b200 --engine trtllm --tp 2`,
		Description: `Computes with the total CUDA reports (a few hundred MiB under nvidia-smi's).
vLLM: kv = total × util − weights − peak activation − non-torch − CUDA graphs
(charged from v0.21; 0 with --enforce-eager). SGLang: kv = mem_fraction_static ×
free memory at start − weights. TRT-LLM: kv = free_gpu_memory_fraction × (total
− weights − peak activation − non-torch). With --pp every stage holds its
layers and the smallest KV cache wins. blocks = floor(kv / (block_size × KV
bytes per token)); slots = blocks × block_size.
Host side: required = baseline RSS + in-flight requests × KV per request ×
retention + CPU offload cache + margin; staging applies only with
--kv-buffer-device cpu.
Each engine version range's constants live in the catalog with sources
(kvplan engines list; catalog/data/engines.toml); the default version is the
newest the catalog knows, and the output names it.

A vllm serve line can be pasted after -- (or given as one string with
--vllm-args): its model, parallelism, memory fraction, max model len, eager
mode, batch limits, KV dtype, block size, quantization, dtype and offload
cache are read with the engine's own argument grammar (the one kvplan check
uses on manifests). kvplan's flags before -- win; an argument vLLM would not
take, or one kvplan does not know, is an error.`,
		Flags: withCommon(append(append(modelFlags(),
			&cli.StringFlag{Name: "gpu", Aliases: []string{"g"}, Usage: "GPU of the worker (required; kvplan gpus list)"},
			&cli.StringFlag{Name: "engine", Value: "vllm", Usage: "serving engine whose memory accounting to use: vllm, sglang or trtllm"},
			&cli.StringFlag{Name: "engine-version", Usage: "the engine's version, e.g. 0.19.0 (default: the newest the catalog knows)"},
			gpuUtilFlag(0, "the engine's memory fraction: vLLM --gpu-memory-utilization, SGLang --mem-fraction-static, TRT-LLM free_gpu_memory_fraction, in (0, 1] (default: the engine's)"),
			enforceEagerFlag("no CUDA graphs (frees their memory)"),
			pipelineParallelFlag(1, "pipeline-parallel stages: layers split across them, each with its weights and KV"),
			maxModelLenFlag("longest request the engine admits, tokens (default: the model's max context)"),
			&cli.IntFlag{Name: "block-size", Usage: "tokens per KV block (default: the engine's, 16 for vLLM)"},
			maxNumBatchedTokensFlag("tokens per forward pass (default: the engine's default for this GPU)"),
			maxNumSeqsFlag("sequences per batch (default: the engine's default for this GPU)"),
			&cli.StringFlag{Name: "dtype", Usage: "weight and activation dtype: fp32, fp16 or bf16 (default: the model's)"},
			&cli.StringFlag{Name: "quantization", Usage: "a quantized checkpoint's layout: fp8, int8, int4, gptq, awq, nvfp4 or mxfp4 (linear layers at its width, embeddings at 16 bits)"},
			&cli.IntFlag{Name: "quant-group-size", Usage: "int4/gptq/awq scale group, weights (default 128)"},
			&cli.StringFlag{Name: "cpu-offload-cache", Usage: "host memory of a CPU KV offload cache in the worker (KVBM DYN_KVBM_CPU_CACHE_GB, LMCache cpuOffloadingBufferSize), e.g. 20Gi"},
			memoryLimitFlag("the worker's host memory limit, a Kubernetes quantity: 3584Mi, 10Gi, 4G, 1.5Gi"),
			kvBufferFlag("where a transfer's KV waits: cpu stages every in-flight request's KV in host memory (needed for TCP transfers), gpu sends it from GPU memory"),
			&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Usage: "requests in flight whose KV is staged (default: 1)"},
			inputTokensFlag(0, "tokens of one request's KV (default: max model len)"),
			&cli.StringFlag{Name: "vllm-args", Usage: "a vllm serve command line (or its arguments) as one string; or paste it after --"},
			&cli.StringFlag{Name: "baseline-rss", Usage: "the worker's measured idle RSS, e.g. 2.5GiB (default: the engine's)"},
		), memoryLayoutFlags()...)...),
		ArgsUsage: "[-- vllm serve MODEL [ARGS...]]",
		Action:    runMemory,
	}
}

func runMemory(c *cli.Context) error {
	notes, err := engineLine(c)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(c.App.ErrWriter, "note: %s\n", oneLine(n))
	}
	sc, err := memoryScenario(c)
	if err != nil {
		return err
	}
	p, err := planner.PlanMemory(*sc)
	if err != nil {
		return err
	}
	if err := emit(c, memoryDoc(c, p), p.Derivation); err != nil {
		return err
	}
	if n := p.DenyFindings(); n > 0 {
		return findingsError{n} // exit 1, as check does on a deny
	}
	return nil
}

func memoryScenario(c *cli.Context) (*planner.MemoryScenario, error) {
	if err := required(c, "model", "gpu"); err != nil {
		return nil, err
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return nil, err
	}
	sc := &planner.MemoryScenario{GPUUtil: c.Float64(flagGPUUtil), EnforceEager: c.Bool(flagEnforceEager),
		Dtype: strings.ToLower(c.String("dtype")), Quantization: strings.ToLower(c.String("quantization"))}
	if sc.Model, err = cat.Model(c.String("model")); err != nil {
		return nil, err
	}
	if sc.GPU, err = cat.GPU(c.String("gpu")); err != nil {
		return nil, err
	}
	if sc.Engine, sc.EngineVersion, err = cat.EngineVersion(c.String("engine"), c.String("engine-version")); err != nil {
		return nil, err
	}
	sc.VersionDefaulted = c.String("engine-version") == ""
	if sc.KV, err = kvFlags(c, sc.Model); err != nil {
		return nil, err
	}
	if c.IsSet(flagGPUUtil) && (sc.GPUUtil <= 0 || sc.GPUUtil > 1) {
		return nil, fmt.Errorf("--%s %g: must be in (0, 1], e.g. 0.9", flagGPUUtil, sc.GPUUtil)
	}
	ints := []struct {
		flag string
		dst  *int
	}{
		{flagMaxModelLen, &sc.MaxModelLen}, {"block-size", &sc.BlockSize}, {flagMaxNumBatchedTokens, &sc.MaxNumBatchedTokens},
		{flagMaxNumSeqs, &sc.MaxNumSeqs}, {"concurrency", &sc.Concurrency}, {flagInputTokens, &sc.InputTokens},
		{"quant-group-size", &sc.QuantGroupSize},
	}
	for _, f := range ints {
		if *f.dst, err = positive(c, f.flag, true); err != nil {
			return nil, err
		}
	}
	if err := withinContext(c, sc.Model, "--"+flagInputTokens, sc.InputTokens); err != nil {
		return nil, err
	}
	if sc.PP, err = positive(c, flagPP, false); err != nil {
		return nil, err
	}
	if s := c.String("cpu-offload-cache"); s != "" {
		if sc.CPUOffloadCacheBytes, err = units.ParseMemory(s); err != nil {
			return nil, fmt.Errorf("--cpu-offload-cache: %w", err)
		}
	}
	if s := c.String(flagMemoryLimit); s != "" {
		if sc.LimitBytes, err = units.ParseMemory(s); err != nil {
			return nil, fmt.Errorf("--%s: %w", flagMemoryLimit, err)
		}
		if sc.LimitBytes == 0 {
			return nil, fmt.Errorf("--%s %s: must be > 0 (leave it out for no limit)", flagMemoryLimit, s)
		}
	}
	if s := c.String("baseline-rss"); s != "" {
		if sc.BaselineRSSBytes, err = units.ParseMemory(s); err != nil {
			return nil, fmt.Errorf("--baseline-rss: %w", err)
		}
	}
	if sc.KVBuffer, err = units.ParseEnum(c.String(flagKVBuffer), []string{planner.KVBufferCPU, planner.KVBufferGPU}); err != nil {
		return nil, fmt.Errorf("--%s: %w", flagKVBuffer, err)
	}
	lay, redundant, _, _, err := layoutFromFlags(c, cat, sc.Model, sc.GPU, max(1, sc.KV.TP), false)
	if err != nil {
		return nil, err
	}
	sc.Parallel, sc.RedundantExperts = models.Parallelism{DP: lay.DP, EP: lay.EP}, redundant
	return sc, nil
}

func memoryDoc(c *cli.Context, p *planner.MemoryPlan) *report.Doc {
	parallel := fmt.Sprintf("tp %d", p.TP)
	if p.DP > 1 || p.EP > 1 {
		parallel += fmt.Sprintf(", dp %d, ep %d (%g experts per rank, MoE tp %d; routed experts %s)", max(1, p.DP), max(1, p.EP), p.ExpertsPerRank, p.MoETP, units.Bytes(p.RoutedWeightsBytes))
	}
	if p.PP > 1 {
		parallel += fmt.Sprintf(", pp %d (the limiting stage)", p.PP)
	}
	gpuRows := [][]string{
		{"engine", engineText(p), "constants of " + p.EngineVersions + pick(p.EngineVersionDefault, "; the newest version the catalog knows (--engine-version)", "")},
		{"GPU memory", units.Bytes(p.GPUMemoryBytes), p.GPU + " (nvidia-smi)"},
		{"CUDA-visible total", units.Bytes(p.GPUCUDAMemoryBytes), "what the engine computes with"},
		{"requested", units.Bytes(p.RequestedBytes), requestedNote(p)},
		{"weights (per rank)", units.Bytes(p.WeightsBytes), fmt.Sprintf("%s, %s", p.WeightDtype, parallel)},
		{"peak activation", units.Bytes(p.ActivationBytes), activationNote(p)},
		{"non-torch overhead", units.Bytes(p.NonTorchBytes), ""},
		{"CUDA graphs", units.Bytes(p.CUDAGraphBytes), graphNote(p)},
		{"KV cache", units.Bytes(p.KVCacheBytes), fmt.Sprintf("%d B/token, %s", p.KVBytesPerToken, p.KVDtype)},
		{"KV blocks", fmt.Sprint(p.KVBlocks), fmt.Sprintf("%d tokens each", p.BlockSize)},
		{"KV slots", fmt.Sprintf("%d tokens", p.KVSlotsTokens), "full-attention tokens" + pick(p.DP > 1, fmt.Sprintf(", per dp rank; the worker holds %d × = %d", p.DP, p.WorkerKVSlotsTokens), "")},
		{"engine's KV cache size", fmt.Sprintf("%d tokens", p.EngineKVTokens), "as " + p.Engine + " logs it"},
		{"max model len", fmt.Sprintf("%d: %s", p.MaxModelLen, fitsWord(p.MaxModelLenFits)), fmt.Sprintf("largest that fits: %d", p.LargestFittingMaxModelLen)},
		{"requests of max len at once", fmt.Sprint(p.MaxConcurrentAtMaxLen), ""},
	}
	hostRows := [][]string{
		{"KV buffer device", p.KVBuffer, ""},
		{"baseline RSS", units.Bytes(p.HostBaselineRSSBytes), "engine process at idle"},
		{"staged KV", units.Bytes(p.HostStagedBytes), stagedNote(p)},
		{"CPU offload cache", units.Bytes(p.HostOffloadBytes), "the pool's cpu_offload_cache / --cpu-offload-cache"},
		{"margin", units.Bytes(p.HostMarginBytes), ""},
		{"required", units.Bytes(p.HostRequiredBytes), ""},
	}
	if p.HostLimitBytes > 0 {
		hostRows = append(hostRows,
			[]string{"limit", units.Bytes(p.HostLimitBytes), fitsWord(p.HostFits)},
			[]string{"headroom", units.Bytes(p.HostHeadroomBytes), ""},
		)
	}
	safe, safeNote := fmt.Sprint(p.MaxSafeConcurrency), "for this limit"
	if p.MaxSafeConcurrency < 0 {
		safe, safeNote = "unbounded", "no --limit given, or nothing staged"
	}
	hostRows = append(hostRows,
		[]string{"largest safe concurrency", safe, safeNote},
		[]string{"smallest safe limit", units.Bytes(p.MinSafeLimitBytes), fmt.Sprintf("for concurrency %d", p.Concurrency)},
	)
	if p.DecodeStagedBytes > 0 {
		hostRows = append(hostRows, []string{"decode side: KV staged before transfers land", units.Bytes(p.DecodeStagedBytes), ""})
	}
	doc := &report.Doc{
		Title: fmt.Sprintf("Memory of a %s worker on %s (%s)", p.Model, p.GPU, engineText(p)),
		Sections: []report.Section{
			{Title: "GPU (per rank)", Header: []string{"figure", "value", "note"}, Rows: gpuRows},
			{Title: "Host", Header: []string{"figure", "value", "note"}, Rows: hostRows},
		},
		JSON: jsonWithExplain(c, p, &p.Derivation),
	}
	for _, f := range p.Findings {
		doc.Notes = append(doc.Notes, "Finding: "+f)
	}
	for _, a := range p.Assumptions {
		doc.Notes = append(doc.Notes, "Assumes "+a)
	}
	doc.Notes = append(doc.Notes, "Not modelled: "+strings.Join(p.NotModelled, "; ")+".")
	return doc
}

func fitsWord(ok bool) string {
	if ok {
		return "fits"
	}
	return "does NOT fit"
}

func stagedNote(p *planner.MemoryPlan) string {
	if p.KVBuffer != planner.KVBufferCPU {
		return "none: the KV buffer is on the GPU (--kv-buffer cpu stages it in host memory)"
	}
	return fmt.Sprintf("%d in flight × %s × retention %g", p.Concurrency, units.Bytes(p.RequestKVBytes), p.HostRetention)
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

func engineText(p *planner.MemoryPlan) string {
	if p.EngineVersion == "" {
		return p.Engine + " (" + p.EngineVersions + ")"
	}
	return p.Engine + " " + p.EngineVersion
}

func requestedNote(p *planner.MemoryPlan) string {
	switch p.EngineFamily {
	case "sglang":
		return fmt.Sprintf("free at start × mem_fraction_static %g", p.GPUUtil)
	case "trtllm":
		return fmt.Sprintf("CUDA total; KV gets free_gpu_memory_fraction %g of what is left", p.GPUUtil)
	}
	return fmt.Sprintf("CUDA total × %g", p.GPUUtil)
}

func activationNote(p *planner.MemoryPlan) string {
	switch p.EngineFamily {
	case "sglang":
		return "not charged: within (1 − mem_fraction_static)"
	case "trtllm":
		return fmt.Sprintf("profiling forward of %d tokens", p.MaxNumBatchedTokens)
	}
	return fmt.Sprintf("profile run of %d batched tokens, sampler of %d sequences", p.MaxNumBatchedTokens, p.MaxNumSeqs)
}

func graphNote(p *planner.MemoryPlan) string {
	switch {
	case p.EnforceEager:
		return "--enforce-eager"
	case p.EngineFamily != "vllm":
		return "not charged by " + p.Engine
	case p.CUDAGraphBytes == 0:
		return fmt.Sprintf("estimate %s, not charged by this version", units.Bytes(p.CUDAGraphEstimateBytes))
	}
	return "the engine's estimate, charged"
}
