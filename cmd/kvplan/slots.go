package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/planner"
)

// slotFlags choose a worker's KV slots: given, or from the memory model.
func slotFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "kv-slots", Usage: "KV slots (tokens) of one worker; or derive them with --model, --gpu and --gpu-memory-utilization"},
		&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "model, to derive slots from --gpu (kvplan models list)"},
		&cli.StringFlag{Name: "gpu", Aliases: []string{"g"}, Usage: "GPU of each worker, to derive slots through kvplan memory"},
		gpuUtilFlag(0, "the engine's memory fraction when deriving slots, in (0, 1] (default: the engine's for its version, as kvplan memory)"),
		enforceEagerFlag("no CUDA graphs when deriving slots"),
		maxModelLenFlag("longest request the engine admits when deriving slots (default: the model's)"),
		kvDtypeFlag("KV cache dtype when deriving slots (default: the model's)"),
		tensorParallelFlag(1, "tensor-parallel ranks when deriving slots"),
	}
}

// workerSlots returns the KV slots of one worker and how they were obtained.
func workerSlots(c *cli.Context, blockSize int) (int, string, error) {
	if c.IsSet("kv-slots") {
		given, err := intIn(c, "kv-slots", kvSlotsRange)
		if err != nil {
			return 0, "", err
		}
		if c.String("gpu") != "" {
			return 0, "", fmt.Errorf("give --kv-slots or --gpu, not both")
		}
		return given, "given (--kv-slots)", nil
	}
	if c.String("gpu") == "" || c.String("model") == "" {
		return 0, "", fmt.Errorf("give the KV slots of a worker: --kv-slots 14816, or --model M --gpu G [--gpu-memory-utilization U]")
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return 0, "", err
	}
	sc := planner.MemoryScenario{GPUUtil: c.Float64(flagGPUUtil), EnforceEager: c.Bool(flagEnforceEager), BlockSize: blockSize}
	if sc.Model, err = cat.Model(c.String("model")); err != nil {
		return 0, "", err
	}
	if sc.GPU, err = cat.GPU(c.String("gpu")); err != nil {
		return 0, "", err
	}
	if sc.Engine, err = cat.Engine(planner.DefaultEngine); err != nil {
		return 0, "", err
	}
	if c.IsSet(flagGPUUtil) && (sc.GPUUtil <= 0 || sc.GPUUtil > 1) {
		return 0, "", fmt.Errorf("--%s %g: must be in (0, 1], e.g. 0.9", flagGPUUtil, sc.GPUUtil)
	}
	if sc.MaxModelLen, err = positive(c, flagMaxModelLen, true); err != nil {
		return 0, "", err
	}
	if sc.KV, err = kvFlags(c, sc.Model); err != nil {
		return 0, "", err
	}
	mp, err := planner.PlanMemory(sc)
	if err != nil {
		return 0, "", err
	}
	if mp.KVSlotsTokens <= 0 {
		return 0, "", fmt.Errorf("%s on %s at utilization %g leaves no KV slots (kvplan memory shows why)", sc.Model.Name, sc.GPU.Name, mp.GPUUtil)
	}
	return int(mp.KVSlotsTokens), fmt.Sprintf("%s on %s at %g (kvplan memory)", mp.Model, mp.GPU, mp.GPUUtil), nil
}
