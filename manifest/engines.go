package manifest

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/planfile"
)

// The argument grammars of the engines' entry points. Each lists the flags
// that change what kvplan plans (with the pool field they fill), the flags
// it understands but that change nothing it plans, and the flags it knows
// but does not model (a note each). Sources: vLLM vllm/engine/arg_utils.py
// (EngineArgs.add_cli_args) and vllm/entrypoints/openai/cli_args.py; SGLang
// python/sglang/srt/server_args.py; Dynamo components/src/dynamo/{vllm,
// sglang,trtllm}/backend_args.py, common/configuration/groups/
// {runtime_args,router_args,kv_router_args}.py.

func concat(groups ...[]*flagSpec) []*flagSpec {
	var out []*flagSpec
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// vllmEngineFlags are vLLM's engine arguments, shared by vllm serve and
// Dynamo's vLLM worker.
func vllmEngineFlags() []*flagSpec {
	return concat(
		[]*flagSpec{
			flag(takesValue, setModel, "--model"),
			flag(takesValue, setTP, "--tensor-parallel-size", "-tp"),
			flag(takesValue, setPP, "--pipeline-parallel-size", "-pp"),
			flag(takesValue, setDP, "--data-parallel-size", "-dp"),
			{names: []string{"--enable-expert-parallel", "-ep"}, kind: isBool, negatable: true, apply: setEnableEP},
			flag(takesValue, setVLLMSpeculative, "--speculative-config"),
			flag(takesValue, setRedundantExperts, "--num-redundant-experts", "--eplb-config"),
			{names: []string{"--enable-eplb"}, kind: isBool, negatable: true, apply: setEPLB},
			{names: []string{"--enable-dbo"}, kind: isBool, negatable: true, apply: setTwoBatchOverlap},
			flag(takesValue, setUtil, "--gpu-memory-utilization"),
			flag(takesValue, setMaxModelLen, "--max-model-len"),
			{names: []string{"--enforce-eager"}, kind: isBool, negatable: true, apply: setEager},
			flag(takesValue, setBlockSize, "--block-size"),
			flag(takesValue, setMaxNumSeqs, "--max-num-seqs"),
			flag(takesValue, setMaxNumBatchedTokens, "--max-num-batched-tokens"),
			flag(takesValue, setKVDtype, "--kv-cache-dtype"),
			flag(takesValue, setQuantization, "--quantization", "-q"),
			flag(takesValue, setDtype, "--dtype"),
			{names: []string{"--enable-prefix-caching"}, kind: isBool, negatable: true, apply: setPrefixCaching},
			{names: []string{"--kv-transfer-config"}, kind: takesValue, apply: setKVTransfer, sub: subKVTransfer},
			{names: []string{"--kv-events-config"}, kind: takesValue, apply: setKVEvents, sub: subKVEvents},
			flag(takesValue, setOffloadingSize, "--kv-offloading-size"),
			flag(takesValue, engineFile, "--config"),
			{names: []string{"--disable-hybrid-kv-cache-manager"}, kind: isBool, negatable: true, apply: func(w *worker, v value) error {
				if v.on {
					w.note(v.at, "%s: %s keeps every layer's KV for the whole context; kvplan caps sliding-window layers at their window as the hybrid KV cache manager does, so its slots are an over-estimate here", w.name, v.flag)
				}
				return nil
			}},
		},
		known(takesValue, "--kv-offloading-backend", "--host", "--port", "--uvicorn-log-level", "--api-key",
			"--tool-call-parser", "--reasoning-parser", "--chat-template", "--disable-access-log-for-endpoints",
			"--download-dir", "--load-format", "--tokenizer", "--tokenizer-mode", "--seed", "--generation-config",
			"--max-log-len", "--revision", "--distributed-executor-backend", "--limit-mm-per-prompt",
			"--mm-processor-kwargs", "--compilation-config", "-O", "--stream-interval", "--scheduling-policy",
			"--override-generation-config", "--max-loras", "--max-lora-rank", "--root-path", "--hf-config-path",
			"--max-num-partial-prefills", "--long-prefill-token-threshold", "--logprobs-mode", "--worker-extension-cls",
			"--data-parallel-address", "--data-parallel-rpc-port", "--data-parallel-size-local", "--data-parallel-start-rank",
			"--data-parallel-supervisor-port", "--all2all-backend", "--moe-backend", "--dbo-decode-token-threshold",
			"--dbo-prefill-token-threshold",
			"--ssl-keyfile", "--ssl-certfile", "--response-role", "--chat-template-content-format", "--max-seq-len-to-capture"),
		known(takesList, "--served-model-name", "--lora-modules", "--allowed-origins", "--middleware", "--cuda-graph-sizes"),
		knownBool("--trust-remote-code", "--disable-log-requests", "--enable-log-requests", "--disable-log-stats",
			"--enable-auto-tool-choice", "--skip-tokenizer-init", "--disable-fastapi-docs", "--enable-chunked-prefill",
			"--enable-lora", "--async-scheduling", "--enable-prompt-tokens-details",
			"--disable-custom-all-reduce", "--headless", "--enable-server-load-tracking", "--enable-force-include-usage",
			"--disable-uvicorn-access-log", "--enable-sleep-mode", "--data-parallel-hybrid-lb", "--data-parallel-external-lb",
			"--data-parallel-multi-port-external-lb"),
		notModelled(takesValue, "it replaces gpu_memory_utilization in the engine; kvplan sizes the KV cache from the utilization", "--kv-cache-memory-bytes"),
		notModelled(takesValue, "weights offloaded to host memory are not counted against the memory limit", "--cpu-offload-gb"),
		notModelled(takesValue, "CPU swap space is not counted against the memory limit", "--swap-space"),
	)
}

// setOffloadingSize reads vLLM's --kv-offloading-size: GiB of host memory,
// summed over the tensor-parallel ranks (vllm/config/cache.py).
func setOffloadingSize(w *worker, v value) error {
	gib, err := parseGB(v.text)
	if err != nil {
		return err
	}
	if gib > 0 {
		w.p.CPUOffloadCache = fmt.Sprintf("%gGi", gib)
		w.set("cpu_offload_cache", v.at)
	}
	return nil
}

// vllmServe is `vllm serve MODEL ...` (and python -m vllm.entrypoints.openai.api_server).
func vllmServe() *engineArgs {
	return &engineArgs{name: "vllm serve", underscores: true, flags: vllmEngineFlags(),
		positional: takeModel}
}

// takeModel reads the first positional argument as the model (vllm serve
// MODEL, trtllm-serve MODEL); any other positional is not understood.
func takeModel(w *worker, wd word) bool {
	if w.model != "" {
		return false
	}
	w.model, w.modelAt = wd.text, wd.pos()
	return true
}

// dynamoRuntimeFlags are Dynamo's worker arguments common to every backend.
func dynamoRuntimeFlags() []*flagSpec {
	return concat(
		known(takesValue, "--namespace", "--endpoint", "--component", "--kv-state-endpoint", "--discovery-backend",
			"--request-plane", "--response-plane", "--event-plane", "--dyn-tool-call-parser", "--dyn-reasoning-parser",
			"--dyn-default-thinking-mode", "--custom-jinja-template", "--endpoint-types", "--dump-config-to",
			"--migration-limit", "--multimodal-embedding-cache-capacity-gb", "--health-check-payload",
			"--engine-request-limit", "--output-modalities", "--media-output-fs-url", "--engine-config-json"),
		knownBool("--enable-local-indexer", "--fpm-trace", "--exclude-tools-when-tool-choice-none", "--use-vllm-tokenizer"),
		[]*flagSpec{{names: []string{"--connector"}, kind: takesList, apply: func(w *worker, v value) error {
			for _, c := range v.list {
				w.connectors = append(w.connectors, strings.ToLower(c.text))
			}
			return nil
		}}},
	)
}

// dynamoVLLM is python -m dynamo.vllm: vLLM's engine arguments and Dynamo's.
func dynamoVLLM() *engineArgs {
	role := func(r string) func(w *worker, v value) error {
		return func(w *worker, v value) error {
			if v.on {
				w.setRole(r, v.at)
			}
			return nil
		}
	}
	return &engineArgs{name: "dynamo.vllm", underscores: true, flags: concat(vllmEngineFlags(), dynamoRuntimeFlags(),
		[]*flagSpec{
			{names: []string{"--is-prefill-worker"}, kind: isBool, negatable: true, apply: role(planfile.RolePrefill)},
			{names: []string{"--is-decode-worker"}, kind: isBool, negatable: true, apply: role(planfile.RoleDecode)},
			flag(takesValue, setDisaggMode, "--disaggregation-mode"),
		})}
}

// setDisaggMode reads --disaggregation-mode (SGLang, TensorRT-LLM, newer
// Dynamo vLLM): prefill, decode, or aggregated (null, agg, pd).
func setDisaggMode(w *worker, v value) error {
	switch strings.ToLower(strings.TrimSpace(v.text)) {
	case "prefill":
		w.setRole(planfile.RolePrefill, v.at)
	case "decode":
		w.setRole(planfile.RoleDecode, v.at)
	case "null", "agg", "aggregated", "pd", "none":
		w.setRole(planfile.RoleAggregated, v.at)
	case "encode":
		w.note(v.at, "%s: an encode worker (multimodal) is not modelled; planned as aggregated", w.name)
	default:
		return fmt.Errorf("want prefill, decode or null")
	}
	return nil
}

// sglangFlags are SGLang's server arguments.
func sglangFlags() []*flagSpec {
	return concat(
		[]*flagSpec{
			flag(takesValue, setModel, "--model-path", "--model"),
			flag(takesValue, setTP, "--tp-size", "--tp", "--tensor-parallel-size"),
			flag(takesValue, setDP, "--dp-size", "--dp", "--data-parallel-size"),
			flag(takesValue, setPP, "--pp-size", "--pp", "--pipeline-parallel-size"),
			flag(takesValue, setEP, "--ep-size", "--ep", "--expert-parallel-size"),
			{names: []string{"--enable-dp-attention"}, kind: isBool, apply: setDPAttention},
			flag(takesValue, setA2A, "--moe-a2a-backend"),
			flag(takesValue, setRedundantExperts, "--ep-num-redundant-experts"),
			{names: []string{"--enable-eplb"}, kind: isBool, apply: setEPLB},
			{names: []string{"--enable-two-batch-overlap"}, kind: isBool, apply: setTwoBatchOverlap},
			flag(takesValue, setSGLangSpecAlgorithm, "--speculative-algorithm"),
			flag(takesValue, setSGLangSpecSteps, "--speculative-num-steps"),
			flag(takesValue, setSGLangSpecDraftTokens, "--speculative-num-draft-tokens"),
			flag(takesValue, setSGLangSpecDraftModel, "--speculative-draft-model-path"),
			flag(takesValue, func(w *worker, v value) error {
				if err := setUtil(w, v); err != nil {
					return err
				}
				w.note(v.at, "%s: SGLang's %s is the fraction of GPU memory for weights and the KV pool; kvplan reads it as gpu_memory_utilization", w.name, v.flag)
				return nil
			}, "--mem-fraction-static"),
			flag(takesValue, setMaxModelLen, "--context-length"),
			flag(takesValue, setBlockSize, "--page-size"),
			flag(takesValue, setMaxNumSeqs, "--max-running-requests"),
			flag(takesValue, func(w *worker, v value) error {
				if strings.TrimSpace(v.text) == "-1" {
					return nil // chunked prefill off
				}
				return setMaxNumBatchedTokens(w, v)
			}, "--chunked-prefill-size"),
			{names: []string{"--disable-cuda-graph"}, kind: isBool, apply: setEager},
			flag(takesValue, setKVDtype, "--kv-cache-dtype"),
			flag(takesValue, setQuantization, "--quantization"),
			flag(takesValue, setDtype, "--dtype"),
			flag(takesValue, setDisaggMode, "--disaggregation-mode"),
			{names: []string{"--kv-events-config"}, kind: takesValue, apply: setKVEvents},
			{names: []string{"--disable-radix-cache"}, kind: isBool, apply: func(w *worker, v value) error {
				off := !v.on
				w.prefixCaching = &off
				return nil
			}},
		},
		known(takesValue, "--host", "--port", "--log-level", "--tokenizer-path", "--load-format", "--speculative-eagle-topk",
			"--attention-backend", "--cuda-graph-max-bs", "--schedule-policy", "--stream-interval", "--tool-call-parser",
			"--reasoning-parser", "--chat-template", "--disaggregation-transfer-backend", "--disaggregation-bootstrap-port",
			"--disaggregation-ib-device", "--max-prefill-tokens", "--revision", "--random-seed", "--api-key",
			"--nnodes", "--node-rank", "--dist-init-addr"),
		known(takesList, "--served-model-name"),
		knownBool("--trust-remote-code", "--skip-tokenizer-init", "--enable-metrics",
			"--enable-cache-report", "--disable-overlap-schedule", "--enable-torch-compile", "--enable-mixed-chunk"),
		notModelled(isBool, "host memory of the hierarchical cache is not counted against the memory limit", "--enable-hierarchical-cache"),
		notModelled(takesValue, "host memory of the hierarchical cache is not counted against the memory limit", "--hicache-size", "--hicache-ratio"),
		notModelled(takesValue, "it caps the KV pool in the engine; kvplan sizes the KV cache from the memory fraction", "--max-total-tokens"),
	)
}

// sglangLaunch is python -m sglang.launch_server.
func sglangLaunch() *engineArgs {
	return &engineArgs{name: "sglang.launch_server", flags: sglangFlags()}
}

// dynamoSGLang is python -m dynamo.sglang.
func dynamoSGLang() *engineArgs {
	return &engineArgs{name: "dynamo.sglang", flags: concat(sglangFlags(), dynamoRuntimeFlags())}
}

// dynamoTRTLLM is python -m dynamo.trtllm (Dynamo's trtllm/backend_args.py).
func dynamoTRTLLM() *engineArgs {
	return &engineArgs{name: "dynamo.trtllm", flags: concat(
		[]*flagSpec{
			flag(takesValue, setModel, "--model", "--model-path"),
			flag(takesValue, setTP, "--tensor-parallel-size"),
			flag(takesValue, setPP, "--pipeline-parallel-size"),
			flag(takesValue, setEP, "--expert-parallel-size"),
			{names: []string{"--enable-attention-dp"}, kind: isBool, negatable: true, apply: setDPAttention},
			flag(takesValue, setBlockSize, "--kv-block-size"),
			flag(takesValue, setMaxNumSeqs, "--max-batch-size"),
			flag(takesValue, setMaxNumBatchedTokens, "--max-num-tokens"),
			flag(takesValue, setMaxModelLen, "--max-seq-len"),
			flag(takesValue, func(w *worker, v value) error {
				if err := setUtil(w, v); err != nil {
					return err
				}
				w.note(v.at, "%s: TensorRT-LLM's %s is the fraction of the memory left free after the weights that the KV cache takes; kvplan reads it as gpu_memory_utilization", w.name, v.flag)
				return nil
			}, "--free-gpu-memory-fraction"),
			flag(takesValue, engineFile, "--extra-engine-args"),
			flag(takesValue, func(w *worker, v value) error {
				w.note(v.at, "%s: %s is not read (a Python dict of engine overrides): say its parallelism and memory settings in a plan file", w.name, v.flag)
				return nil
			}, "--override-engine-args"),
			{names: []string{"--publish-kv-events", "--publish-events-and-metrics"}, kind: isBool, negatable: true, apply: setPublishes},
			flag(takesValue, setDisaggMode, "--disaggregation-mode"),
		},
		known(takesValue, "--served-model-name", "--gpus-per-node", "--max-beam-width",
			"--load-format", "--model-loader-extra-config", "--modality", "--encode-endpoint", "--allowed-local-media-path",
			"--max-file-size-mb", "--guided-decoding-backend", "--disaggregation-strategy", "--next-endpoint"),
		knownBool("--enable-multimodal", "--conversation-affinity"),
		dynamoRuntimeFlags(),
	)}
}

// trtllmServe is trtllm-serve MODEL with its click options.
func trtllmServe() *engineArgs {
	return &engineArgs{name: "trtllm-serve", flags: concat(
		[]*flagSpec{
			flag(takesValue, setTP, "--tp_size", "--tp-size"),
			flag(takesValue, setPP, "--pp_size", "--pp-size"),
			flag(takesValue, setEP, "--ep_size", "--ep-size"),
			flag(takesValue, setMaxNumSeqs, "--max_batch_size", "--max-batch-size"),
			flag(takesValue, setMaxNumBatchedTokens, "--max_num_tokens", "--max-num-tokens"),
			flag(takesValue, setMaxModelLen, "--max_seq_len", "--max-seq-len"),
			flag(takesValue, setUtil, "--kv_cache_free_gpu_memory_fraction", "--kv-cache-free-gpu-memory-fraction"),
			flag(takesValue, engineFile, "--extra_llm_api_options", "--extra-llm-api-options", "--config"),
		},
		known(takesValue, "--host", "--port", "--backend", "--log_level", "--tokenizer", "--gpus_per_node", "--num_postprocess_workers"),
		knownBool("--trust_remote_code"),
	), positional: takeModel}
}

// dynamoFrontend is python -m dynamo.frontend: the router settings.
func dynamoFrontend() *engineArgs {
	return &engineArgs{name: "dynamo.frontend", flags: concat(
		[]*flagSpec{
			flag(takesValue, func(w *worker, v value) error {
				w.routerMode, w.routerModeAt = v.text, v.at
				return nil
			}, "--router-mode"),
			{names: []string{"--router-kv-events", "--kv-events"}, kind: isBool, negatable: true, apply: func(w *worker, v value) error {
				on := v.on
				w.routerEvents, w.routerEventsAt = &on, v.at
				return nil
			}},
		},
		known(takesValue, "--http-port", "--http-host", "--kv-cache-block-size", "--router-temperature", "--kv-overlap-score-weight",
			"--router-kv-overlap-score-credit", "--router-prefill-load-scale", "--router-ttl-secs", "--router-queue-threshold",
			"--router-policy-config", "--namespace", "--discovery-backend", "--request-plane", "--event-plane",
			"--router-event-threads", "--router-queue-policy", "--migration-limit", "--tls-cert-path", "--tls-key-path",
			"--model-name", "--model-path", "--metrics-prefix", "--busy-threshold"),
		knownBool("--router-reset-states", "--router-replica-sync", "--router-track-active-blocks",
			"--enforce-disagg", "--router-conditional-disagg"),
	)}
}
