// Package benchresult reads the result files of LLM-serving benchmark
// tools: vLLM's `vllm bench serve --save-result` (JSON and JSON lines, old
// and new layouts, with or without per-request arrays), SGLang's
// bench_serving JSON lines (bare NaN and Infinity accepted), AIPerf and
// genai-perf JSON and CSV exports, guidellm reports (JSON and YAML, v0.3 to
// v2 layouts), inference-perf lifecycle and Prometheus reports, and
// trtllm-bench's text report. The format is told from the content, not
// the file name.
//
// Each file gives typed runs: what the run measured (TTFT, TPOT, ITL,
// end-to-end latency: mean and the percentiles the file has; request and
// output-token throughput), the workload it sent (lengths, their
// distribution when per-request arrays exist, rate or concurrency,
// burstiness, prompts) and what it says of the set-up (model, engine,
// version, tp/dp). A figure the file does not have, or has as NaN or
// Infinity, is nil ("not measured"), never a number. The package knows
// nothing of kvplan's engine model: package calibrate compares its runs
// with predictions.
package benchresult
