package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/planfile"
)

// productionStack reads vLLM production-stack Helm values: one pool per
// servingEngineSpec.modelSpec[] entry and the router's routingLogic. The
// chart (helm/templates/deployment-vllm-multi.yaml) turns each entry into
// `vllm serve <modelURL>` with flags from vllmConfig and lmcacheConfig; kvplan
// builds the same arguments, each at the value it comes from, and parses
// them with vLLM's grammar.
func (r *reader) productionStack(root *yaml.Node) {
	for _, ms := range items(path(root, "servingEngineSpec", "modelSpec")) {
		name := str(key(ms, "name"))
		w := newWorker(r.src, name, "production-stack modelSpec "+name, r.src.pos(ms))
		if n := key(ms, "replicaCount"); n != nil {
			w.replicas, _ = w.count(r.src, n, "replicaCount", 0, maxReplicas)
			w.set("workers", r.src.pos(n))
		}
		if n := key(ms, "requestGPU"); n != nil {
			r.gpuLimit(w, n, "requestGPU")
		}
		if n := key(ms, "limitMemory"); n != nil {
			w.p.MemoryLimit = str(n)
			w.set("memory_limit", r.src.pos(n))
		} else if n := key(ms, "requestMemory"); n != nil {
			w.note(r.src.pos(n), "%s: requestMemory %s is a request, not a limit (the chart sets limits.memory only from limitMemory): no container limit", name, str(n))
		}
		r.readEnv(w, key(ms, "env"))
		r.readGPUTerms(w, key(ms, "nodeSelectorTerms"))
		words := r.chartArgs(w, ms)
		r.chartLMCache(w, key(ms, "lmcacheConfig"))
		if v := engineImageVersion(str(key(ms, "repository")) + ":" + str(key(ms, "tag"))); v != "" {
			w.engineVersion, w.engineVersionAt = v, r.src.pos(key(ms, "tag"))
		}
		w.argsAt = r.src.pos(key(ms, "vllmConfig"))
		if w.argsAt.IsZero() {
			w.argsAt = w.at
		}
		if r.engineWorker(w, words, vllmServe(), "") {
			r.addWorker(w)
		}
	}
	rs := key(root, "routerSpec")
	logic := key(rs, "routingLogic")
	at := r.src.pos(logic)
	mode := str(logic)
	r.router = routerInfo{set: true, modeAt: at}
	switch mode {
	case "kvaware":
		r.router.mode = planfile.RouterKV
	case "prefixaware":
		r.router.mode = planfile.RouterKV
		r.router.notes = append(r.router.notes, Note{At: at, Text: "routingLogic prefixaware routes by the prefixes the router itself sent (no KV events): planned as KV-aware routing"})
	case "roundrobin", "":
		r.router.mode = planfile.RouterRoundRobin
		if logic == nil {
			r.router.modeAt = r.src.pos(keyNode(root, "routerSpec"))
			r.router.notes = append(r.router.notes, Note{At: r.router.modeAt, Text: "routerSpec.routingLogic is not set: the chart's default is roundrobin"})
		}
	case "session":
		r.router.mode = planfile.RouterRoundRobin
		r.router.notes = append(r.router.notes, Note{At: at, Text: "routingLogic session keeps each session on one engine; sessions are not modelled, so kvplan plans round-robin"})
	case "disaggregated_prefill":
		r.router.mode = planfile.RouterRoundRobin
		r.router.notes = append(r.router.notes, Note{At: at, Text: "routingLogic disaggregated_prefill sends each request to a prefill engine, then to a decode engine, round-robin within each"})
	default:
		r.router.mode = planfile.RouterRoundRobin
		r.router.notes = append(r.router.notes, Note{At: at, Text: fmt.Sprintf("routingLogic %q is not one kvplan knows: planned as round-robin", mode)})
	}
}

// chartArgs builds the vllm serve arguments the chart renders for a
// modelSpec entry, each word at the value it comes from.
func (r *reader) chartArgs(w *worker, ms *yaml.Node) []word {
	var out []word
	add := func(flag string, n *yaml.Node) {
		out = append(out, fixedWord(flag, r.src.pos(n)))
		if n.Kind == yaml.ScalarNode {
			out = append(out, r.scalarWord(w, n))
		}
	}
	if n := key(ms, "modelURL"); n != nil {
		out = append(out, r.scalarWord(w, n))
	}
	vc := key(ms, "vllmConfig")
	for _, f := range []struct{ key, flag string }{
		{"maxModelLen", "--max-model-len"}, {"dtype", "--dtype"}, {"tensorParallelSize", "--tensor-parallel-size"},
		{"maxNumSeqs", "--max-num-seqs"}, {"gpuMemoryUtilization", "--gpu-memory-utilization"},
	} {
		if n := key(vc, f.key); n != nil {
			add(f.flag, n)
		}
	}
	// The chart always writes one of --enable-prefix-caching / --no-enable-prefix-caching.
	if n := key(vc, "enablePrefixCaching"); n != nil {
		if b, _ := boolValue(n); b {
			out = append(out, fixedWord("--enable-prefix-caching", r.src.pos(n)))
		} else {
			out = append(out, fixedWord("--no-enable-prefix-caching", r.src.pos(n)))
		}
	} else if vc != nil {
		out = append(out, fixedWord("--no-enable-prefix-caching", r.src.pos(keyNode(ms, "vllmConfig"))))
		w.note(r.src.pos(keyNode(ms, "vllmConfig")), "%s: vllmConfig.enablePrefixCaching is not set: the chart passes --no-enable-prefix-caching", w.name)
	}
	for _, n := range items(key(vc, "extraArgs")) {
		out = append(out, r.scalarWord(w, n))
	}
	return out
}

// chartLMCache reads lmcacheConfig as the chart renders it: the
// LMCacheConnectorV1 kv-transfer-config with kvRole, and for enablePD the
// NIXL buffer device and UCX_TLS=cuda_ipc,cuda_copy,tcp; the local CPU cache
// is cpuOffloadingBufferSize GiB per tensor-parallel rank when above 0.
func (r *reader) chartLMCache(w *worker, lc *yaml.Node) {
	if lc == nil {
		return
	}
	if on, _ := boolValue(key(lc, "enabled")); !on {
		return
	}
	at := r.src.pos(keyNode(lc, "enabled"))
	role := "kv_both"
	if n := key(lc, "kvRole"); n != nil {
		role, at = str(n), r.src.pos(n)
	}
	w.kvTransfer = map[string]any{"kv_connector": "LMCacheConnectorV1", "kv_role": role}
	w.kvTransferAt = at
	pd, _ := boolValue(key(lc, "enablePD"))
	if pd {
		pdAt := r.src.pos(key(lc, "enablePD"))
		w.env["UCX_TLS"] = envVar{value: "cuda_ipc,cuda_copy,tcp", at: pdAt}
		w.note(pdAt, "%s: with enablePD the chart sets UCX_TLS=cuda_ipc,cuda_copy,tcp", w.name)
		if n := key(lc, "nixlBufferDevice"); n != nil {
			switch str(n) {
			case "cuda", "gpu":
				w.p.KVBufferDevice = planfile.BufferGPU
			case "cpu":
				w.p.KVBufferDevice = planfile.BufferCPU
			}
			w.set("kv_buffer_device", r.src.pos(n))
		}
	}
	if n := key(lc, "cpuOffloadingBufferSize"); n != nil {
		gib, err := strconv.ParseFloat(strings.TrimSpace(str(n)), 64)
		switch {
		case err != nil:
			w.badValue("cpuOffloadingBufferSize", r.src.pos(n), fmt.Sprintf("cpuOffloadingBufferSize %q: want a number of GiB", str(n)), "")
		case gib > 0:
			w.pendingLMCache, w.pendingLMCacheAt = gib, r.src.pos(n)
		}
	}
}
