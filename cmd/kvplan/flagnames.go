package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/units"
)

// Flags named as the plan file's keys and, where vLLM has the same
// setting, as vLLM's own flag, so that a `vllm serve` line and a plan file
// read the same. kvplan's earlier names stay as aliases (and keep working in
// scripts). Every command that takes one of these settings uses the
// constructor here; usage is what the setting means to that command.
//
//	setting                 flag (aliases)                            plan key
//	tensor parallelism      --tensor-parallel-size (--tp, -tp)        model.tp, pools.<p>.tp
//	pipeline parallelism    --pipeline-parallel-size (--pp, -pp)      (vLLM only)
//	memory fraction         --gpu-memory-utilization (--gpu-util)     pools.<p>.gpu_memory_utilization
//	longest request         --max-model-len                           pools.<p>.max_model_len
//	no CUDA graphs          --enforce-eager                           pools.<p>.enforce_eager
//	sequences per batch     --max-num-seqs                            pools.<p>.max_num_seqs
//	tokens per pass         --max-num-batched-tokens                  pools.<p>.max_num_batched_tokens
//	KV dtype                --kv-cache-dtype (--kv-dtype)             model.kv_dtype
//	prompt tokens           --input-tokens (--tokens, --isl)          workload.input_tokens
//	generated tokens        --output-tokens (--osl)                   workload.output_tokens
//	KV buffer device        --kv-buffer-device (--kv-buffer)          pools.<p>.kv_buffer_device
//	host memory limit       --memory-limit (--limit)                  pools.<p>.memory_limit
//	CPU offload cache       --cpu-offload-cache                       pools.<p>.cpu_offload_cache
//	engine version          --engine-version                          runtime.engine_version

// Primary names of the flags above, for c.Int, c.String and messages.
const (
	flagTP                  = "tensor-parallel-size"
	flagPP                  = "pipeline-parallel-size"
	flagGPUUtil             = "gpu-memory-utilization"
	flagMaxModelLen         = "max-model-len"
	flagEnforceEager        = "enforce-eager"
	flagMaxNumSeqs          = "max-num-seqs"
	flagMaxNumBatchedTokens = "max-num-batched-tokens"
	flagKVDtype             = "kv-cache-dtype"
	flagInputTokens         = "input-tokens"
	flagOutputTokens        = "output-tokens"
	flagKVBuffer            = "kv-buffer-device"
	flagMemoryLimit         = "memory-limit"
	flagCUDAGraphMaxBatch   = "cuda-graph-max-batch"
)

// tensorParallelFlag is --tensor-parallel-size (--tp; vLLM also writes -tp).
func tensorParallelFlag(value int, usage string) *cli.IntFlag {
	return &cli.IntFlag{Name: flagTP, Aliases: []string{"tp"}, Value: value, Usage: usage}
}

// pipelineParallelFlag is --pipeline-parallel-size (--pp).
func pipelineParallelFlag(value int, usage string) *cli.IntFlag {
	return &cli.IntFlag{Name: flagPP, Aliases: []string{"pp"}, Value: value, Usage: usage}
}

// gpuUtilFlag is --gpu-memory-utilization (--gpu-util).
func gpuUtilFlag(value float64, usage string) *cli.Float64Flag {
	return &cli.Float64Flag{Name: flagGPUUtil, Aliases: []string{"gpu-util"}, Value: value, Usage: usage}
}

// maxModelLenFlag is --max-model-len.
func maxModelLenFlag(usage string) *cli.IntFlag {
	return &cli.IntFlag{Name: flagMaxModelLen, Usage: usage}
}

// enforceEagerFlag is --enforce-eager.
func enforceEagerFlag(usage string) *cli.BoolFlag {
	return &cli.BoolFlag{Name: flagEnforceEager, Usage: usage}
}

// maxNumSeqsFlag is --max-num-seqs.
func maxNumSeqsFlag(usage string) *cli.IntFlag {
	return &cli.IntFlag{Name: flagMaxNumSeqs, Usage: usage}
}

// maxNumBatchedTokensFlag is --max-num-batched-tokens.
func maxNumBatchedTokensFlag(usage string) *cli.IntFlag {
	return &cli.IntFlag{Name: flagMaxNumBatchedTokens, Usage: usage}
}

// kvDtypeFlag is --kv-cache-dtype (--kv-dtype); values are matched without
// regard to case (FP8 is fp8).
func kvDtypeFlag(usage string) *cli.StringFlag {
	return &cli.StringFlag{Name: flagKVDtype, Aliases: []string{"kv-dtype"}, Usage: usage}
}

// inputTokensFlag is --input-tokens, with the older spellings given.
func inputTokensFlag(value int, usage string, aliases ...string) *cli.IntFlag {
	return &cli.IntFlag{Name: flagInputTokens, Aliases: aliases, Value: value, Usage: usage}
}

// outputTokensFlag is --output-tokens, with the older spellings given.
func outputTokensFlag(value int, usage string, aliases ...string) *cli.IntFlag {
	return &cli.IntFlag{Name: flagOutputTokens, Aliases: aliases, Value: value, Usage: usage}
}

// kvDtypesFlag is --kv-cache-dtype (--kv-dtype) for a command that
// considers several dtypes (kvplan plan): repeatable or comma-separated.
func kvDtypesFlag(usage string) *cli.StringSliceFlag {
	return &cli.StringSliceFlag{Name: flagKVDtype, Aliases: []string{"kv-dtype"}, Usage: usage}
}

// kvBufferFlag is --kv-buffer-device (--kv-buffer): cpu or gpu.
func kvBufferFlag(usage string) *cli.StringFlag {
	return &cli.StringFlag{Name: flagKVBuffer, Aliases: []string{"kv-buffer"}, Value: "gpu", Usage: usage}
}

// memoryLimitFlag is --memory-limit (--limit), a Kubernetes quantity.
func memoryLimitFlag(usage string) *cli.StringFlag {
	return &cli.StringFlag{Name: flagMemoryLimit, Aliases: []string{"limit"}, Usage: usage}
}

// outputFlag is -o/--output with the formats a command writes: its help
// lists them, and a value outside them is refused (in any case: -o JSON is
// json) as the flags are read, before the command does any work. (kvplan
// plan used to run its whole search before refusing -o yml.)
func outputFlag(value string, formats []string) *cli.StringFlag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: value, Usage: "output format: " + orList(formats),
		Action: func(c *cli.Context, v string) error {
			if _, err := units.ParseEnum(v, formats); err != nil {
				return fmt.Errorf("%s: -o %s is not a format; use one of %s", strings.TrimPrefix(c.Command.HelpName, c.App.Name+" "), safetext.Quote(v), strings.Join(formats, ", "))
			}
			return nil
		}}
}

// orList writes "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
