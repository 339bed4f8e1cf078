package manifest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kvplan/kvplan/planfile"
)

// assemble turns the workers into the plan: one pool each, and the fields
// a plan holds once (model, engine, KV dtype, block size, UCX_TLS, router),
// which the pools must agree on.
func (r *reader) assemble() error {
	p := r.m.Plan
	// In a Dynamo graph with prefill workers, a vLLM worker without a role
	// flag decodes: the frontend hands prefill to the prefill workers.
	for _, g := range r.graphs {
		hasPrefill := false
		for _, w := range g {
			hasPrefill = hasPrefill || w.p.Role == planfile.RolePrefill
		}
		for _, w := range g {
			if !w.roleSet && hasPrefill && w.entry == "dynamo.vllm" {
				w.setRole(planfile.RoleDecode, w.at)
				w.note(w.at, "%s: no --is-prefill-worker in a graph with prefill workers: Dynamo sends it the decode of each request", w.name)
			}
		}
	}
	sort.SliceStable(r.workers, func(i, j int) bool { return r.workers[i].name < r.workers[j].name })
	for _, w := range r.workers {
		if !w.roleSet {
			w.p.Role = planfile.RoleAggregated
			lower := strings.ToLower(w.name)
			if strings.Contains(lower, "prefill") || strings.Contains(lower, "decode") {
				w.note(w.at, "%s: its name says prefill or decode, but no argument makes it one: read as an aggregated worker", w.name)
			}
		}
		gpus, per := w.layout()
		w.speculative()
		if l := layoutText(w.p.TP, w.p.DataParallelSize, w.p.ExpertParallelSize, w.p.PipelineParallelSize); strings.Contains(l, " ") {
			across := ""
			if pods := max(1, w.podsPerWorker); pods > 1 {
				across = fmt.Sprintf(" over %d pods (multinode)", pods)
			}
			w.note(w.at, "%s: one worker is %s: %d GPUs%s", w.name, l, gpus, across)
		}
		pool := w.p
		pool.Name = w.name
		pool.Workers = w.workers()
		if w.tp == 0 {
			pool.TP = 0 // no tensor-parallel flag: model.tp's default
		}
		p.Pools[w.name] = &pool
		pre := "pools." + w.name
		p.SetPos(pre, w.at)
		for k, at := range w.place {
			switch k {
			case "pp":
				k = "pipeline_parallel_size"
			case "dp":
				if per > 1 {
					continue // replicas: the workers count
				}
				k = "data_parallel_size"
			}
			p.SetPos(pre+"."+k, at)
		}
		if w.dpAttention && pool.DataParallelSize > 1 && w.tp > 0 {
			p.SetPos(pre+".data_parallel_size", w.dpAttentionAt)
		}
		if per > 1 {
			w.note(w.place["dp"], "%s: data parallel %d without DP attention: planned as %d workers of %d GPU(s) each", w.name, w.dp, pool.Workers, max(1, w.tp))
		}
		r.m.Findings = append(r.m.Findings, w.findings...)
		r.m.Notes = append(r.m.Notes, w.notes...)
		if len(w.args) > 0 {
			if r.m.Args == nil {
				r.m.Args = map[string][]Arg{}
			}
			r.m.Args[w.name] = w.args
		}
	}
	if err := r.agreeModel(); err != nil {
		return err
	}
	if err := r.agreeEngine(); err != nil {
		return err
	}
	r.agree("model.kv_dtype", func(w *worker) (string, planfile.Pos) { return w.kvDtype, w.kvDtypeAt }, &p.Model.KVDtype)
	r.agree("model.weight_dtype", func(w *worker) (string, planfile.Pos) { return w.weightDtype, w.weightDtypeAt }, &p.Model.WeightDtype)
	r.agree("runtime.engine_version", func(w *worker) (string, planfile.Pos) { return w.engineVersion, w.engineVersionAt }, &p.Runtime.EngineVersion)
	var block string
	r.agree("router.block_size", func(w *worker) (string, planfile.Pos) {
		if w.blockSize == 0 {
			return "", planfile.Pos{}
		}
		return fmt.Sprint(w.blockSize), w.blockAt
	}, &block)
	if block != "" {
		fmt.Sscan(block, &p.Router.BlockSize)
	}
	var tls string
	r.agree("transport.ucx_tls", func(w *worker) (string, planfile.Pos) { return strings.Join(w.ucxTLS, ","), w.ucxAt }, &tls)
	if tls != "" {
		p.Transport.UCXTLS = strings.Split(tls, ",")
	}
	r.routerPlan()
	r.m.Notes = sortedNotes(r.m.Notes)
	return nil
}

// agree sets a plan-wide field from the pools: the value of the first pool
// that states one (pools sorted by name), with a note for each pool that
// states another.
func (r *reader) agree(field string, get func(w *worker) (string, planfile.Pos), dst *string) {
	var first *worker
	for _, w := range r.workers {
		v, at := get(w)
		if v == "" {
			continue
		}
		if first == nil {
			first = w
			*dst = v
			r.m.Plan.SetPos(field, at)
			continue
		}
		if v != *dst {
			r.m.Notes = append(r.m.Notes, Note{At: at, Text: fmt.Sprintf("%s: pool %s has %s, pool %s %s; a plan has one %s, so kvplan plans %s", field, w.name, v, first.name, *dst, field, *dst)})
		}
	}
}

// normalModel is a model name as the catalog resolves it: without hf:// and
// a trailing slash.
func normalModel(m string) string {
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(m), "hf://"), "/")
}

// agreeModel sets model.name: every pool must serve the same model.
func (r *reader) agreeModel() error {
	p := r.m.Plan
	var first *worker
	for _, w := range r.workers {
		if w.model == "" {
			msg := fmt.Sprintf("%s: the worker names no model (%s)", w.name, w.entry)
			if w.modelDefault != "" {
				msg += fmt.Sprintf("; %s loads its default, %s", w.entry, w.modelDefault)
			}
			r.m.Findings = append(r.m.Findings, Finding{ID: IDNoModel, Severity: Deny, Pool: w.name, At: w.argsAt, Field: "model.name",
				Message: msg, Why: "a worker without a model argument serves the entry point's default model, or fails to start",
				Fix: "add --model (or the engine's model argument) to the worker's args"})
			continue
		}
		if first == nil {
			first = w
			p.Model.Name = normalModel(w.model)
			p.SetPos("model.name", w.modelAt)
			continue
		}
		if normalModel(w.model) != p.Model.Name {
			return fmt.Errorf("%s: pools serve different models: %s serves %s (%s), %s serves %s (%s); kvplan plans one model per deployment: review each model's pools apart",
				r.m.Path, first.name, first.model, first.modelAt, w.name, w.model, w.modelAt)
		}
	}
	return nil
}

// agreeEngine sets runtime.engine: every pool must run the same engine.
func (r *reader) agreeEngine() error {
	p := r.m.Plan
	for i, w := range r.workers {
		if i == 0 {
			p.Runtime.Engine = w.engine
			p.SetPos("runtime.engine", w.engineAt)
			continue
		}
		if w.engine != p.Runtime.Engine {
			return fmt.Errorf("%s: pools run different engines: %s runs %s (%s), %s runs %s (%s); a plan has one engine",
				r.m.Path, r.workers[0].name, p.Runtime.Engine, r.workers[0].engineAt, w.name, w.engine, w.engineAt)
		}
	}
	return nil
}

// routerPlan sets [router] from what the manifest says about the router
// and the workers' KV events.
func (r *reader) routerPlan() {
	r.requestPath()
	p, ri := r.m.Plan, r.router
	r.m.Notes = append(r.m.Notes, ri.notes...)
	if !ri.set {
		if len(ri.notes) == 0 && !r.fromCommandLine {
			r.m.Notes = append(r.m.Notes, Note{Text: "the manifest holds no router: planned as round-robin"})
		}
		p.Router.Mode = planfile.RouterRoundRobin
		return
	}
	p.SetPos("router.mode", ri.modeAt)
	switch m := strings.ToLower(strings.TrimSpace(ri.mode)); m {
	case "kv":
		p.Router.Mode = planfile.RouterKV
	case "round-robin", "round_robin", "roundrobin":
		p.Router.Mode = planfile.RouterRoundRobin
	case "random":
		p.Router.Mode = planfile.RouterRandom
	case "least-loaded", "power-of-two", "device-aware-weighted", "direct":
		p.Router.Mode = planfile.RouterRoundRobin
		r.m.Notes = append(r.m.Notes, Note{At: ri.modeAt, Text: fmt.Sprintf("router mode %s balances load without looking at cached prefixes: planned as round-robin (FACTS §5: a router blind to the cache hits like random routing)", m)})
	default:
		p.Router.Mode = planfile.RouterRoundRobin
		r.m.Findings = append(r.m.Findings, Finding{ID: IDBadValue, Severity: Deny, At: ri.modeAt, Field: "router.mode",
			Message: fmt.Sprintf("router mode %q is not one the Dynamo frontend accepts (kv, round-robin, random, least-loaded, power-of-two, direct)", ri.mode),
			Why:     "the frontend refuses an unknown router mode at start", Fix: "set DYN_ROUTER_MODE (or --router-mode) to kv or round-robin"})
	}
	if p.Router.Mode != planfile.RouterKV || !ri.dynamo {
		return
	}
	if ri.events != nil && !*ri.events {
		r.m.Notes = append(r.m.Notes, Note{At: ri.eventsAt, Text: "the KV router runs without KV events (approximate mode: it predicts each worker's cache from its own routing); planned as KV-aware routing"})
		return
	}
	// The router consumes KV events; the pools that prefill must publish them.
	var silent, loud *worker
	for _, w := range r.workers {
		if w.p.Role == planfile.RoleDecode {
			continue
		}
		if w.publishes != nil && *w.publishes {
			if loud == nil {
				loud = w
			}
		} else if silent == nil {
			silent = w
		}
	}
	switch {
	case silent != nil:
		off := false
		p.Router.KVEvents = &off
		at := silent.publishesAt
		if at.IsZero() {
			at = silent.argsAt
		}
		p.SetPos("router.kv_events", at)
		r.m.Notes = append(r.m.Notes, Note{At: at, Text: fmt.Sprintf("%s publishes no KV events: %s", silent.name, publishHint(silent))})
	case loud != nil:
		on := true
		p.Router.KVEvents = &on
		p.SetPos("router.kv_events", loud.publishesAt)
	}
}

// requestPath sets router.request_path from how the workers are started: a
// Dynamo worker (python -m dynamo.vllm|sglang|trtllm) gets token ids from
// the frontend, which served the HTTP and tokenized; a worker that runs the
// engine's own server (vllm serve, sglang.launch_server, trtllm-serve,
// behind KServe, llm-d's gateway or a Service) serves and tokenizes each
// request itself, at the engine model's fitted request cost.
func (r *reader) requestPath() {
	for _, w := range r.workers {
		if !strings.HasPrefix(w.entry, "dynamo.") {
			r.m.Plan.Router.RequestPath = planfile.RequestPathDirect
			r.m.Plan.SetPos("router.request_path", w.engineAt)
			if !r.fromCommandLine {
				r.m.Notes = append(r.m.Notes, Note{At: w.engineAt, Text: fmt.Sprintf("%s runs %s, the engine's own server: requests reach it directly, and TTFT takes the engine model's fitted request cost (router.request_path = \"direct\") in place of a frontend's 13 ms", w.name, w.entry)})
			}
			return
		}
	}
	r.m.Plan.Router.RequestPath = planfile.RequestPathFrontend
	if len(r.workers) > 0 {
		r.m.Plan.SetPos("router.request_path", r.workers[0].engineAt) // where the worker is started as dynamo.*
	}
}

// publishHint says how an engine's worker would publish KV events.
func publishHint(w *worker) string {
	switch w.engine {
	case "vllm":
		return `vLLM publishes only with --kv-events-config '{"enable_kv_cache_events":true,"publisher":"zmq","endpoint":"tcp://*:5557"}' (and prefix caching on)`
	case "sglang":
		return `SGLang publishes only with --kv-events-config '{"publisher":"zmq","endpoint":"tcp://*:5557"}'`
	case "trtllm":
		return "dynamo.trtllm publishes only with --publish-kv-events"
	}
	return "its engine publishes none"
}
