package manifest

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/planfile"
)

// dynamo reads a DynamoGraphDeployment (nvidia.com/v1alpha1 spec.services,
// and the newer spec.components list): its Frontend's router and one pool
// per worker service.
func (r *reader) dynamo(root *yaml.Node, name string) {
	spec := key(root, "spec")
	var graph []*worker
	for _, kv := range pairs(key(spec, "services")) {
		svcName, svc := kv[0].Value, kv[1]
		ctype := strings.ToLower(str(key(svc, "componentType")))
		w := newWorker(r.src, svcName, "DynamoGraphDeployment "+name+" service "+svcName, r.src.pos(kv[0]))
		pod := key(svc, "extraPodSpec")
		main := key(pod, "mainContainer")
		r.readEnv(w, key(svc, "envs"))
		if ctype == "frontend" {
			r.dynamoFrontend(w, main)
			continue
		}
		if ctype == "planner" {
			r.m.Notes = append(r.m.Notes, Note{At: w.at, Text: fmt.Sprintf("service %s is Dynamo's planner: it changes replicas at run time; the review uses the replicas written", svcName)})
			continue
		}
		if ctype != "" && ctype != "worker" && ctype != "main" {
			r.m.Notes = append(r.m.Notes, Note{At: w.at, Text: fmt.Sprintf("skipped service %s (componentType %s): not a worker", svcName, ctype)})
			continue
		}
		r.readResources(w, key(svc, "resources"))
		if n := key(svc, "replicas"); n != nil {
			w.replicas, _ = w.count(r.src, n, "replicas", 0, maxReplicas)
			w.set("workers", r.src.pos(n))
		}
		if n := key(key(svc, "multinode"), "nodeCount"); n != nil {
			w.podsPerWorker, _ = w.count(r.src, n, "multinode.nodeCount", 1, maxPodsPerUnit)
		}
		r.readPodPlacement(w, pod)
		switch str(key(svc, "subComponentType")) {
		case "prefill":
			w.setRole(planfile.RolePrefill, r.src.pos(key(svc, "subComponentType")))
		case "decode":
			w.setRole(planfile.RoleDecode, r.src.pos(key(svc, "subComponentType")))
		}
		if r.dynamoWorker(w, main) {
			graph = append(graph, w)
		}
	}
	for _, c := range items(key(spec, "components")) {
		cname := str(key(c, "name"))
		ctype := strings.ToLower(str(key(c, "type")))
		w := newWorker(r.src, cname, "DynamoGraphDeployment "+name+" component "+cname, r.src.pos(c))
		podSpec := path(c, "podTemplate", "spec")
		main := mainContainer(podSpec)
		r.readEnv(w, key(c, "envs"))
		switch ctype {
		case "frontend":
			r.dynamoFrontend(w, main)
			continue
		case "worker", "prefill", "decode", "":
		default:
			r.m.Notes = append(r.m.Notes, Note{At: w.at, Text: fmt.Sprintf("skipped component %s (type %s): not a worker", cname, ctype)})
			continue
		}
		if ctype == "prefill" || ctype == "decode" {
			w.setRole(ctype, r.src.pos(key(c, "type")))
		}
		if n := key(c, "replicas"); n != nil {
			w.replicas, _ = w.count(r.src, n, "replicas", 0, maxReplicas)
			w.set("workers", r.src.pos(n))
		}
		r.readPodPlacement(w, podSpec)
		if r.dynamoWorker(w, main) {
			graph = append(graph, w)
		}
	}
	r.graphs = append(r.graphs, graph)
}

// mainContainer is the container named main, or the first.
func mainContainer(podSpec *yaml.Node) *yaml.Node {
	cs := items(key(podSpec, "containers"))
	for _, c := range cs {
		if str(key(c, "name")) == "main" {
			return c
		}
	}
	if len(cs) > 0 {
		return cs[0]
	}
	return nil
}

// dynamoWorker reads a worker service's main container. A container with no
// command is started by the image's entry point: the backend follows from
// the runtime image (vllm-runtime, sglang-runtime, tensorrtllm-runtime).
func (r *reader) dynamoWorker(w *worker, main *yaml.Node) bool {
	argv := r.readContainer(w, main)
	if v, ok := w.env["DYN_VLLM_IS_PREFILL_WORKER"]; ok && strings.EqualFold(v.value, "true") {
		w.setRole(planfile.RolePrefill, v.at)
	}
	if v, ok := w.env["DYN_VLLM_IS_DECODE_WORKER"]; ok && strings.EqualFold(v.value, "true") {
		w.setRole(planfile.RoleDecode, v.at)
	}
	var implied *engineArgs
	why := ""
	image := str(key(main, "image"))
	if key(main, "command") == nil {
		switch {
		case strings.Contains(image, "vllm-runtime"):
			implied, why = dynamoVLLM(), "no command: the vllm-runtime image runs python -m dynamo.vllm"
		case strings.Contains(image, "sglang-runtime"):
			implied, why = dynamoSGLang(), "no command: the sglang-runtime image runs python -m dynamo.sglang"
		case strings.Contains(image, "tensorrtllm-runtime"):
			implied, why = dynamoTRTLLM(), "no command: the tensorrtllm-runtime image runs python -m dynamo.trtllm"
		}
	}
	if !r.engineWorker(w, argv, implied, why) {
		r.m.Notes = append(r.m.Notes, Note{At: w.at, Text: fmt.Sprintf("skipped %s: its container starts no engine kvplan knows", w.what)})
		return false
	}
	r.addWorker(w)
	return true
}

// dynamoFrontend reads the router of a Dynamo frontend: DYN_ROUTER_MODE and
// DYN_ROUTER_USE_KV_EVENTS in its env, or --router-mode and
// --no-router-kv-events in its args (which win, as argparse defaults come
// from the env).
func (r *reader) dynamoFrontend(w *worker, main *yaml.Node) {
	argv := r.readContainer(w, main)
	ri := &r.router
	ri.set, ri.dynamo = true, true
	ri.mode, ri.modeAt = "round-robin", w.at
	defaulted := true
	if v, ok := w.env["DYN_ROUTER_MODE"]; ok && !v.fromRef {
		ri.mode, ri.modeAt, defaulted = v.value, v.at, false
	}
	if v, ok := w.env["DYN_ROUTER_USE_KV_EVENTS"]; ok && !v.fromRef {
		if b, okb := parseBool(v.value); okb {
			ri.events, ri.eventsAt = &b, v.at
		}
	}
	g, rest, ok := identify(argv)
	if ok && g.name == "dynamo.frontend" {
		g.parse(w, rest)
	} else if len(argv) > 0 && !ok {
		dynamoFrontend().parse(w, argv) // args only: the frontend image's entry point
	}
	if w.routerMode != "" {
		ri.mode, ri.modeAt, defaulted = w.routerMode, w.routerModeAt, false
	}
	if w.routerEvents != nil {
		ri.events, ri.eventsAt = w.routerEvents, w.routerEventsAt
	}
	if defaulted {
		ri.notes = append(ri.notes, Note{At: w.at, Text: "the frontend sets no router mode (DYN_ROUTER_MODE, --router-mode): Dynamo's default is round-robin"})
	}
	r.m.Findings = append(r.m.Findings, w.findings...)
	r.m.Notes = append(r.m.Notes, w.notes...)
	r.report(w)
}
