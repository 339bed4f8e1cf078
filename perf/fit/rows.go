// Package fit fits the engine model's efficiencies (package perf) on measured
// closed-loop serving runs and reports its accuracy, in sample and on whole
// models held out of the fit. It is a tool: `go test ./perf/fit -run
// TestAccuracy -v` prints the accuracy of the catalog's efficiencies, and
// `go test ./perf/fit -run TestFit -fit -v` refits them (see fit_test.go).
package fit

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// header is the column list of testdata/serving_agg.csv.
var header = []string{"id", "backend", "backend_version", "image", "model_path", "system", "precision",
	"gemm_quant_mode", "moe_quant_mode", "isl", "osl", "batch_size", "concurrency",
	"tp", "pp", "attention_dp", "moe_tp", "moe_ep", "ttft_ms", "tpot_ms", "source", "measured", "run"}

// The benchmark sources of the rows (the source column): the two families of
// runs silicon_sample.csv merges, each with its own harness and deployment
// scripts.
const (
	// SourceInferenceX: InferenceX benchmark database dumps (SemiAnalysis's
	// runs of vllm/vllm-openai, lmsysorg/sglang and NVIDIA's TensorRT-LLM
	// release images).
	SourceInferenceX = "inferencex"
	// SourceGapAnalysis: AIConfigurator's gap-analysis runs (NVIDIA's, the
	// files of aic-auto-gap-analysis; the 38 that name an image name a
	// Dynamo runtime). Its kimi-k2.5 and qwen3.5-397b gap-analysis files are
	// copies of InferenceX runs (rounded to 0.01 ms), so their rows are
	// SourceInferenceX.
	SourceGapAnalysis = "aiconfigurator-gap-analysis"
)

// Row is one measured closed-loop run.
type Row struct {
	ID, Engine, Version, Image, ModelPath, System string
	GemmQuant                                     string
	ISL, OSL, BatchSize, Concurrency              int
	TP, PP, AttentionDP, MoETP, MoEEP             int
	TTFTMS, TPOTMS                                float64
	Source                                        string // SourceInferenceX or SourceGapAnalysis
	// Measured is the day the run was measured (YYYY-MM-DD), where the
	// source says (InferenceX's database dumps do; its dated CSVs and the
	// gap-analysis files do not): the harness's settings changed over time.
	Measured string
	// Run is the InferenceX benchmark configuration and workflow run that
	// measured the row ("config_id/workflow_run_id"), where the dump says.
	Run  string
	Line int
}

// ReadRows reads serving_agg.csv.
func ReadRows(r io.Reader) ([]Row, error) {
	cr := csv.NewReader(r)
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != strings.Join(header, ",") {
		return nil, fmt.Errorf("serving csv: header is not %s", strings.Join(header, ","))
	}
	var rows []Row
	for i, rec := range recs[1:] {
		line := i + 2
		atoi := func(k int) int {
			if rec[k] == "" {
				return 0
			}
			v, err2 := strconv.Atoi(rec[k])
			if err2 != nil && err == nil {
				err = fmt.Errorf("serving csv line %d: %s %q: %v", line, header[k], rec[k], err2)
			}
			return v
		}
		atof := func(k int) float64 {
			v, err2 := strconv.ParseFloat(rec[k], 64)
			if err2 != nil && err == nil {
				err = fmt.Errorf("serving csv line %d: %s %q: %v", line, header[k], rec[k], err2)
			}
			return v
		}
		row := Row{ID: rec[0], Engine: rec[1], Version: rec[2], Image: rec[3], ModelPath: rec[4], System: rec[5],
			GemmQuant: rec[7], ISL: atoi(9), OSL: atoi(10), BatchSize: atoi(11), Concurrency: atoi(12),
			TP: atoi(13), PP: atoi(14), AttentionDP: atoi(15), MoETP: atoi(16), MoEEP: atoi(17),
			TTFTMS: atof(18), TPOTMS: atof(19), Source: rec[20], Measured: rec[21], Run: rec[22], Line: line}
		if row.Source != SourceInferenceX && row.Source != SourceGapAnalysis && err == nil {
			err = fmt.Errorf("serving csv line %d: source %q: want %s or %s", line, row.Source, SourceInferenceX, SourceGapAnalysis)
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// modelOf maps the measured model paths to catalog models and the weight
// dtype of the checkpoint when it is not the catalog entry's. DeepSeek-R1
// and Kimi-K2.5 run the decoders of DeepSeek-V3 and Kimi-K2.
var modelOf = map[string]string{
	"Qwen/Qwen3-32B":                   "qwen3-32b",
	"nvidia/Qwen3-32B-NVFP4":           "qwen3-32b",
	"meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b",
	"nvidia/Llama-3.1-8B-Instruct-FP8": "llama-3.1-8b",
	"Qwen/Qwen3-235B-A22B-FP8":         "qwen3-235b-a22b",
	"deepseek-ai/DeepSeek-R1":          "deepseek-v3",
	"deepseek-ai/DeepSeek-V3":          "deepseek-v3",
	"nvidia/DeepSeek-R1-NVFP4":         "deepseek-v3",
	"nvidia/DeepSeek-V3.1-NVFP4":       "deepseek-v3",
	"moonshotai/Kimi-K2.5":             "kimi-k2",
	"MiniMaxAI/MiniMax-M2.5":           "minimax-m2.5",
	"zhipuai/GLM-5":                    "glm-5",
	"Qwen/Qwen3.5-397B-A17B":           "qwen3.5-397b-a17b",
}

// gpuOf maps the data's system names to catalog GPUs.
var gpuOf = map[string]string{
	"h100_sxm": "h100-sxm", "h200_sxm": "h200", "b200_sxm": "b200", "b300_sxm": "b300", "gb200": "gb200", "gb300": "gb300",
}

// dtypeOf maps a GEMM quantization mode to a weight dtype.
func dtypeOf(q string) string {
	switch q {
	case "", "bf16":
		return "bf16"
	case "fp8", "fp8_block":
		return "fp8"
	case "nvfp4":
		return "nvfp4"
	case "int4_wo":
		return "int4"
	}
	return q
}
