package manifest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/kvplan/kvplan/planfile"
)

// Defaults of the entry points, where a manifest relies on them.
const (
	// dynamo.vllm and dynamo.trtllm load these models when none is named
	// (Dynamo components/src/dynamo/vllm/args.py DEFAULT_MODEL,
	// trtllm/backend_args.py DEFAULT_MODEL).
	dynamoVLLMDefaultModel   = "Qwen/Qwen3-0.6B"
	dynamoTRTLLMDefaultModel = "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
	// dynamoTRTLLMBlockSize is dynamo.trtllm's --kv-block-size default.
	dynamoTRTLLMBlockSize = 32
)

// finish interprets what the arguments and env of an engine worker say
// together: the KV connector, its buffer device and role, offload caches,
// KV event publishing, the model, and whether the parallelism matches the
// GPUs the worker gets.
func (r *reader) finish(w *worker) {
	r.kvConnector(w)
	r.offloadCache(w)
	if w.pendingLMCache > 0 {
		setLMCacheOffload(w, w.pendingLMCache, w.pendingLMCacheAt)
	}
	r.publishing(w)
	if v, ok := w.env["UCX_TLS"]; ok && !v.fromRef {
		for _, t := range strings.Split(v.value, ",") {
			if t = strings.TrimSpace(t); t != "" {
				w.ucxTLS = append(w.ucxTLS, t)
			}
		}
		w.ucxAt = v.at
	}
	if w.entry == "dynamo.trtllm" && w.blockSize == 0 {
		w.blockSize, w.blockAt = dynamoTRTLLMBlockSize, w.argsAt
		w.note(w.argsAt, "%s: no --kv-block-size: dynamo.trtllm's default is %d tokens", w.name, dynamoTRTLLMBlockSize)
	}
	if w.model == "" {
		switch w.entry {
		case "dynamo.vllm":
			w.modelDefault = dynamoVLLMDefaultModel
		case "dynamo.trtllm":
			w.modelDefault = dynamoTRTLLMDefaultModel
		}
	}
	r.gpuCount(w)
}

// connectorsIn lists the connectors of a kv-transfer-config, looking inside
// PdConnector and MultiConnector.
func connectorsIn(kvt map[string]any) []string {
	var out []string
	if c := jsonString(kvt, "kv_connector"); c != "" {
		out = append(out, c)
	}
	extra, _ := kvt["kv_connector_extra_config"].(map[string]any)
	list, _ := extra["connectors"].([]any)
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, connectorsIn(m)...)
		}
	}
	return out
}

func (w *worker) usesConnector(names ...string) bool {
	for _, c := range connectorsIn(w.kvTransfer) {
		if contains(names, c) {
			return true
		}
	}
	for _, c := range w.connectors {
		for _, n := range names {
			if strings.EqualFold(c, n) || (c == "kvbm" && n == "DynamoConnector") || (c == "nixl" && n == "NixlConnector") || (c == "lmcache" && n == "LMCacheConnectorV1") {
				return true
			}
		}
	}
	return false
}

// kvConnector reads vLLM's kv_role and kv_buffer_device.
func (r *reader) kvConnector(w *worker) {
	kvt := w.kvTransfer
	if kvt == nil {
		return
	}
	if !w.roleSet {
		switch jsonString(kvt, "kv_role") {
		case "kv_producer":
			w.setRole(planfile.RolePrefill, w.kvTransferAt)
		case "kv_consumer":
			w.setRole(planfile.RoleDecode, w.kvTransferAt)
		}
	}
	switch d := jsonString(kvt, "kv_buffer_device"); d {
	case "cpu":
		w.p.KVBufferDevice = planfile.BufferCPU
		w.set("kv_buffer_device", w.kvTransferAt)
	case "cuda", "gpu", "xpu":
		w.p.KVBufferDevice = planfile.BufferGPU
		w.set("kv_buffer_device", w.kvTransferAt)
	case "":
	default:
		w.badValue("--kv-transfer-config", w.kvTransferAt, fmt.Sprintf("kv_buffer_device %q: want cuda or cpu", d), "")
	}
}

var numberRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`) }) // compiled on first use, not at start-up

// parseGB reads a size in GB given as a bare number ("100", "0.5").
func parseGB(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if !numberRe().MatchString(s) {
		return 0, fmt.Errorf("want a number of GB such as 100")
	}
	return strconv.ParseFloat(s, 64)
}

// offloadCache counts the host memory of a CPU KV offload cache: KVBM's
// DYN_KVBM_CPU_CACHE_GB (GB of 10^9 bytes for the whole worker, Dynamo
// lib/llm block_manager: cache_size_in_gb × 1,000,000,000 ÷ bytes per block,
// blocks summed over all ranks) and LMCache's LMCACHE_MAX_LOCAL_CPU_SIZE
// (GiB per tensor-parallel rank: LMCache allocates max_local_cpu_size ×
// 1024³ in each rank's process).
func (r *reader) offloadCache(w *worker) {
	if v, ok := w.env["DYN_KVBM_CPU_CACHE_GB"]; ok && !v.fromRef {
		if !w.usesConnector("DynamoConnector") {
			w.note(v.at, "%s: DYN_KVBM_CPU_CACHE_GB is set but the worker uses no KVBM connector (DynamoConnector, --connector kvbm): not counted", w.name)
		} else if gb, err := parseGB(v.value); err != nil {
			w.badValue("DYN_KVBM_CPU_CACHE_GB", v.at, fmt.Sprintf("DYN_KVBM_CPU_CACHE_GB %q: %v", v.value, err), "")
		} else if gb > 0 {
			w.p.CPUOffloadCache = fmt.Sprintf("%gG", gb)
			w.set("cpu_offload_cache", v.at)
		}
	}
	if v, ok := w.env["LMCACHE_MAX_LOCAL_CPU_SIZE"]; ok && !v.fromRef && w.usesConnector("LMCacheConnectorV1", "LMCacheConnector") {
		if off, ok := w.env["LMCACHE_LOCAL_CPU"]; ok && strings.EqualFold(off.value, "false") {
			return
		}
		gib, err := parseGB(v.value)
		if err != nil {
			w.badValue("LMCACHE_MAX_LOCAL_CPU_SIZE", v.at, fmt.Sprintf("LMCACHE_MAX_LOCAL_CPU_SIZE %q: %v", v.value, err), "")
		} else if gib > 0 {
			setLMCacheOffload(w, gib, v.at)
		}
	}
}

// setLMCacheOffload counts LMCache's local CPU cache: gib per
// tensor-parallel rank.
func setLMCacheOffload(w *worker, gib float64, at planfile.Pos) {
	tp := max(1, w.tp)
	w.p.CPUOffloadCache = fmt.Sprintf("%gGi", gib*float64(tp))
	w.set("cpu_offload_cache", at)
	if tp > 1 {
		w.note(at, "%s: LMCache's local CPU cache of %g GiB is per tensor-parallel rank: %g GiB for the worker's %d ranks", w.name, gib, gib*float64(tp), tp)
	}
}

// publishing decides whether the worker publishes KV events to a router.
// vLLM publishes only with --kv-events-config and "enable_kv_cache_events":
// true (its KVEventsConfig defaults to false; Dynamo stopped creating one
// for prefix caching in 2026, ai-dynamo/dynamo#6404); SGLang with a zmq
// publisher; TensorRT-LLM under Dynamo with --publish-kv-events. Without
// prefix caching nothing is published.
func (r *reader) publishing(w *worker) {
	on := false
	switch w.engine {
	case "vllm":
		if w.kvEvents != nil {
			on, _ = w.kvEvents["enable_kv_cache_events"].(bool)
			if !on {
				w.note(w.publishesAt, "%s: --kv-events-config without \"enable_kv_cache_events\": true publishes nothing (vLLM's default is false)", w.name)
			}
		}
	case "sglang":
		if w.kvEvents != nil {
			on = jsonString(w.kvEvents, "publisher") == "zmq"
			if !on {
				w.note(w.publishesAt, "%s: --kv-events-config without \"publisher\": \"zmq\" publishes nothing (SGLang's default publisher is null)", w.name)
			}
		}
	case "trtllm":
		if w.publishes != nil {
			on = *w.publishes
		}
	}
	if w.prefixCaching != nil && !*w.prefixCaching && on {
		w.note(w.publishesAt, "%s: prefix caching is off, so there are no KV events to publish", w.name)
		on = false
	}
	w.publishes = &on
}

// gpuCount compares the GPUs a worker's parallelism needs with those its
// pods get.
func (r *reader) gpuCount(w *worker) {
	need, _ := w.layoutCounts()
	if w.gpusBad {
		return // the GPU count is not one: a finding says so already
	}
	if w.gpusPerPod < 0 {
		if r.fromCommandLine {
			return
		}
		w.note(w.at, "%s: the pod requests no GPU (no nvidia.com/gpu limit); planned with the %d its parallelism uses", w.name, need)
		return
	}
	pods := max(1, w.podsPerWorker)
	got := w.gpusPerPod * pods
	at := w.gpusAt
	desc := fmt.Sprintf("%d GPU(s) per pod", w.gpusPerPod)
	if pods > 1 {
		desc += fmt.Sprintf(" × %d pods", pods)
	}
	par := fmt.Sprintf("tensor parallel %d", max(1, w.tp))
	if w.pp > 1 {
		par += fmt.Sprintf(" × pipeline %d", w.pp)
	}
	if w.dp > 1 && need == max(1, w.tp)*max(1, w.pp)*w.dp {
		par += fmt.Sprintf(" × data parallel %d", w.dp)
	} else if w.dp > 1 {
		par += fmt.Sprintf(" (data parallel %d inside it: DP attention)", w.dp)
	}
	switch {
	case got < need:
		w.finding(Finding{ID: IDGPUCount, Severity: Deny, At: at, Field: "pools." + w.name + ".tp",
			Message: fmt.Sprintf("%s: %s needs %d GPUs per worker but a worker gets %s = %d; the engine fails at start", w.name, par, need, desc, got),
			Why:     "each tensor-, data- and pipeline-parallel rank runs on its own GPU, so an engine started with that many ranks needs that many visible GPUs (SGLang's and TensorRT-LLM's tp size already counts the ranks of DP attention)",
			Fix:     fmt.Sprintf("request %d GPUs per worker, or lower the parallelism to %d", need, got)})
	case got > need && len(w.extraEngineFiles) == 0:
		w.finding(Finding{ID: IDGPUCount, Severity: Warn, At: at, Field: "pools." + w.name + ".tp",
			Message: fmt.Sprintf("%s: a worker gets %s = %d but %s uses %d: %d GPU(s) per worker sit idle", w.name, desc, got, par, need, got-need),
			Why:     "the engine starts one rank per GPU of its parallelism; GPUs beyond tp × pp × dp are allocated and never used",
			Fix:     fmt.Sprintf("set the tensor-parallel size to %d, or request %d GPUs", got, need)})
	case got > need:
		w.note(at, "%s: a worker gets %d GPUs and its arguments set parallelism %d; the engine file may set more", w.name, got, need)
	}
}
