package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/manifest"
)

// engineLine reads the engine command line given to kvplan memory, pasted
// after -- or as --vllm-args, with the manifests' argument grammars, and
// sets every memory flag the line states that the user did not give:
// flags before -- win. It returns the notes to print (what kvplan assumed
// or does not model), or nil when no line was given. An argument the
// engine would refuse, or one kvplan does not know, is an error: a
// memory figure computed without it would be wrong with confidence.
func engineLine(c *cli.Context) ([]string, error) {
	line := c.String("vllm-args")
	var m *manifest.Manifest
	var err error
	switch {
	case line != "" && c.NArg() > 0:
		return nil, fmt.Errorf("memory: give the vllm serve line after -- or with --vllm-args, not both")
	case line != "":
		m, err = manifest.ReadCommandString("--vllm-args", line)
	case c.NArg() > 0:
		if m, err = manifest.ReadCommandLine("command line", c.Args().Slice()); err != nil {
			return nil, fmt.Errorf("memory: unexpected argument %s: besides flags, kvplan memory takes one engine command line, pasted after -- (kvplan memory --gpu l4 -- vllm serve MODEL ...): %w",
				safetext.Quote(c.Args().First()), err)
		}
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	for _, f := range m.Findings {
		switch f.ID {
		case manifest.IDNotUnderstood:
			return nil, fmt.Errorf("memory: %s; kvplan memory stops rather than size memory without it "+
				"(spell it as the engine does, or give the setting as a kvplan memory flag before --; kvplan memory --help lists them)",
				strings.TrimSuffix(f.Message, manifest.ReviewIgnoresIt))
		case manifest.IDBadValue:
			return nil, fmt.Errorf("memory: %s (%s)", f.Message, f.Fix)
		}
	}
	set := func(flag, value string) error {
		if value == "" || c.IsSet(flag) {
			return nil
		}
		if err := c.Set(flag, value); err != nil {
			return fmt.Errorf("memory: the command line's %s %s: %w", flag, safetext.Quote(value), err)
		}
		return nil
	}
	p := m.Plan
	var pool = p.Pools[p.PoolNames()[0]]
	itoa := func(n int) string {
		if n <= 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	ftoa := func(f float64) string {
		if f <= 0 {
			return ""
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	for _, kv := range [][2]string{
		{"model", p.Model.Name},
		{"engine", p.Runtime.Engine},
		{"engine-version", p.Runtime.EngineVersion},
		{flagTP, itoa(pool.TP)},
		{flagGPUUtil, ftoa(pool.GPUMemoryUtilization)},
		{flagMaxModelLen, itoa(pool.MaxModelLen)},
		{flagMaxNumSeqs, itoa(pool.MaxNumSeqs)},
		{flagMaxNumBatchedTokens, itoa(pool.MaxNumBatchedTokens)},
		{flagKVDtype, p.Model.KVDtype},
		{"cpu-offload-cache", pool.CPUOffloadCache},
		{"block-size", itoa(p.Router.BlockSize)},
	} {
		if err := set(kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	if pool.EnforceEager {
		if err := set(flagEnforceEager, "true"); err != nil {
			return nil, err
		}
	}
	// What a plan has no key for: pipeline parallelism, the quantization
	// method and the dtype, as the engine's own arguments say them.
	ppApplied := false
	for _, a := range m.Args[pool.Name] {
		var flag, value string
		switch a.Flag {
		case "--pipeline-parallel-size", "--pp-size", "--pp_size": // vLLM and TensorRT-LLM's dynamo.trtllm, SGLang, trtllm-serve
			flag, value, ppApplied = flagPP, a.Value, true
		case "--quantization":
			flag, value = "quantization", quantizationName(a.Value)
		case "--dtype":
			flag, value = "dtype", dtypeName(a.Value)
		default:
			continue
		}
		if err := set(flag, value); err != nil {
			return nil, err
		}
	}
	var notes []string
	for _, n := range m.Notes {
		if ppApplied && strings.Contains(n.Text, "pipeline parallelism") {
			continue // kvplan memory models pipeline stages
		}
		notes = append(notes, n.Text)
	}
	return notes, nil
}

// quantizationName maps vLLM's --quantization methods to kvplan memory's.
func quantizationName(v string) string {
	switch t := strings.ToLower(strings.TrimSpace(v)); t {
	case "modelopt_fp4":
		return "nvfp4"
	case "fbgemm_fp8", "ptpc_fp8", "modelopt":
		return "fp8"
	case "awq_marlin":
		return "awq"
	case "gptq_marlin":
		return "gptq"
	case "none":
		return ""
	default:
		return t // kvplan memory refuses what it does not know, by name
	}
}

// dtypeName maps vLLM's --dtype to kvplan memory's.
func dtypeName(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "auto":
		return ""
	case "bfloat16", "bf16":
		return "bf16"
	case "float16", "half", "fp16":
		return "fp16"
	case "float32", "float", "fp32":
		return "fp32"
	}
	return v
}
