package fit

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planner"
)

// Saturated is one row of NVIDIA's TensorRT-LLM performance overview:
// output tokens/s of trtllm-bench at an unbounded request rate. None of
// these runs is in the fit.
type Saturated struct {
	Model, GPU, Precision  string
	TP, PP, GPUs, ISL, OSL int
	PerGPU                 float64 // measured output tokens/s per GPU
	Predicted              float64 // kvplan perf's, per GPU; 0 = not predicted
	Running                float64
	Skip                   string // why it is not predicted
}

var saturatedModels = map[string]string{
	"Llama 3.1 8B": "llama-3.1-8b", "Qwen3-30B-A3B": "qwen3-30b-a3b", "Qwen3-235B-A22B": "qwen3-235b-a22b",
	"Llama 4 Scout": "llama-4-scout-17b-16e", "Llama 4 Maverick": "llama-4-maverick-17b-128e",
}

var saturatedGPUs = map[string]string{"H100": "h100-sxm", "H200": "h200", "B200": "b200", "GB200": "gb200"}

// SaturatedClients is how many clients stand in for trtllm-bench's
// unbounded request rate: its default max_batch_size, 2048
// (tensorrt_llm/bench: the engine's batch limit when none is tuned), so
// every replica runs as many sequences as its KV cache holds.
const SaturatedClients = 2048

// SaturatedGraphBatch is the largest batch the runs captured in CUDA
// graphs: the perf overview's llm_options.yml (its "Running the Benchmark")
// lists cuda_graph_config batch_sizes 1 to 8192 with enable_padding, so every
// generation-only iteration ran graphed (trtllm-bench's own throughput
// heuristic captures up to its max batch size too: bench/tuning
// PytMaxThroughputScenario).
const SaturatedGraphBatch = 8192

// ReadSaturated reads trtllm_max_throughput.csv.
func ReadSaturated(r io.Reader) ([]Saturated, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	var out []Saturated
	for i, rec := range recs[1:] {
		if len(rec) != 10 {
			return nil, fmt.Errorf("trtllm_max_throughput.csv line %d: %d fields, want 10", i+2, len(rec))
		}
		n := func(k int) int { v, _ := strconv.Atoi(rec[k]); return v }
		per, err := strconv.ParseFloat(rec[9], 64)
		if err != nil {
			return nil, fmt.Errorf("trtllm_max_throughput.csv line %d: %v", i+2, err)
		}
		out = append(out, Saturated{Model: rec[0], GPU: rec[1], TP: n(2), PP: n(3), GPUs: n(4), Precision: rec[5],
			ISL: n(6), OSL: n(7), PerGPU: per})
	}
	return out, nil
}

// PredictSaturated runs kvplan perf (planner.PlanPerf, TensorRT-LLM, fp8 KV
// as trtllm-bench runs fp8 and fp4 checkpoints, CUDA graphs as the runs
// captured them) for every row it can. With attentionDP the MoE rows of
// tp > 1 run attention data-parallel over the tp ranks with the experts over
// as many (ep = tp): the perf overview's MoE command passes --ep and its
// llm_options.yml enable_attention_dp, but nests the flag inside
// cuda_graph_config (where the LLM API's strict config would refuse it) and
// its tables name only TP, so which the runs used is not certain.
func PredictSaturated(cat *catalog.Catalog, rows []Saturated, attentionDP bool) {
	for i := range rows {
		r := &rows[i]
		name, okM := saturatedModels[r.Model]
		gname, okG := saturatedGPUs[r.GPU]
		switch {
		case !okM:
			r.Skip = "model not in the catalog"
			continue
		case !okG:
			r.Skip = "gpu not in the catalog"
			continue
		case r.PP > 1:
			r.Skip = "pipeline parallel"
			continue
		}
		m, err := cat.Model(name)
		if err != nil {
			r.Skip = err.Error()
			continue
		}
		g, err := cat.GPU(gname)
		if err != nil {
			r.Skip = err.Error()
			continue
		}
		dtype := map[string]string{"FP8": "fp8", "FP4": "nvfp4"}[r.Precision]
		sc := planner.PerfScenario{Catalog: cat, Model: m, GPU: g, Engine: "trtllm", TP: r.TP,
			WeightDtype: dtype, KVDtype: "fp8", InputTokens: r.ISL, OutputTokens: r.OSL,
			Concurrency: SaturatedClients, MaxNumSeqs: SaturatedClients, CUDAGraphMaxBatch: SaturatedGraphBatch}
		if m.MoE != nil && r.TP > 1 && attentionDP {
			// Each data-parallel rank schedules its own batch.
			sc.TP, sc.Parallel = 1, models.Parallelism{TP: 1, DP: r.TP, EP: r.TP}
			sc.MaxNumSeqs = SaturatedClients / r.TP
		}
		p, err := planner.PlanPerf(sc)
		if err != nil {
			r.Skip = err.Error()
			continue
		}
		r.Predicted, r.Running = p.OutputTokensPerSPerGPU, p.RunningSequences
	}
}

// FormatSaturated writes the comparison, by model, by GPU family (the
// issue's target is per family) and overall: the median |error|, the
// median signed error (+: kvplan faster than measured) and the worst.
func FormatSaturated(w io.Writer, rows []Saturated) {
	type acc struct{ abs, signed []float64 }
	by := map[string]*acc{}
	add := func(k string, e float64) {
		if by[k] == nil {
			by[k] = &acc{}
		}
		by[k].abs, by[k].signed = append(by[k].abs, math.Abs(e)), append(by[k].signed, e)
	}
	var names []string
	for _, r := range rows {
		if r.Predicted > 0 {
			e := r.Predicted/r.PerGPU - 1
			if by[r.Model] == nil {
				names = append(names, r.Model)
			}
			add(r.Model, e)
			add(saturatedFamily[r.GPU], e)
			add("all", e)
		}
	}
	sort.Strings(names)
	fmt.Fprintln(w, "| model or GPU family | rows | output tokens/s per GPU: median error | median signed | worst |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, k := range append(names, "Hopper", "Blackwell", "all") {
		a := by[k]
		if a == nil {
			continue
		}
		med, worst, _ := stats(a.abs, 0)
		signed, _, _ := stats(a.signed, 0)
		fmt.Fprintf(w, "| %s | %d | %s | %+.1f%% | %s |\n", k, len(a.abs), pct(med), 100*signed, pct(worst))
	}
	fmt.Fprintln(w, "\n| model | GPU | tp | precision | isl | osl | measured | kvplan | running |")
	fmt.Fprintln(w, "|---|---|---:|---|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		if r.Predicted > 0 {
			fmt.Fprintf(w, "| %s | %s | %d | %s | %d | %d | %.0f | %.0f | %.0f |\n", r.Model, r.GPU, r.TP, r.Precision, r.ISL, r.OSL, r.PerGPU, r.Predicted, r.Running)
		}
	}
}

// saturatedFamily is the GPU family of the table's GPUs.
var saturatedFamily = map[string]string{"H100": "Hopper", "H200": "Hopper", "B200": "Blackwell", "GB200": "Blackwell"}
