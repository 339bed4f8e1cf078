package manifest

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/planfile"
)

// llmdRoleLabel is the pod label llm-d puts on prefill and decode pods.
const llmdRoleLabel = "llm-d.ai/role"

// podWorker reads a pod template (metadata and spec) into a pool: the role
// label, the GPU its node selection names, and the first container that
// starts an engine (sidecars such as llm-d's routing proxy are skipped).
func (r *reader) podWorker(w *worker, tmpl *yaml.Node, podSpec *yaml.Node) bool {
	if n := key(path(tmpl, "metadata", "labels"), llmdRoleLabel); n != nil && !w.roleSet {
		switch str(n) {
		case "prefill":
			w.setRole(planfile.RolePrefill, r.src.pos(n))
		case "decode":
			w.setRole(planfile.RoleDecode, r.src.pos(n))
		case "both", "aggregated":
			w.setRole(planfile.RoleAggregated, r.src.pos(n))
		}
	}
	r.readPodPlacement(w, podSpec)
	for _, c := range items(key(podSpec, "containers")) {
		cw := w.fork()
		argv := r.readContainer(cw, c)
		if r.engineWorker(cw, argv, nil, "") {
			r.addWorker(cw)
			return true
		}
	}
	r.m.Notes = append(r.m.Notes, Note{At: w.at, Text: fmt.Sprintf("skipped %s: no container starts an engine kvplan knows", w.what)})
	return false
}

// workload reads a Deployment, StatefulSet, Pod (or another pod owner): one
// pool named after it.
func (r *reader) workload(root *yaml.Node, kind, name string, tmpl, replicas *yaml.Node) {
	w := newWorker(r.src, name, kind+" "+name, r.src.pos(key(root, "metadata")))
	if replicas != nil {
		w.replicas, _ = w.count(r.src, replicas, "replicas", 0, maxReplicas)
		w.set("workers", r.src.pos(replicas))
	}
	podSpec := key(tmpl, "spec")
	if kind == "Pod" {
		podSpec = key(root, "spec")
	}
	r.podWorker(w, tmpl, podSpec)
}

// leaderWorkerSet reads a LeaderWorkerSet: replicas groups of size pods
// each, one engine per group.
func (r *reader) leaderWorkerSet(root *yaml.Node, name string) {
	spec := key(root, "spec")
	w := newWorker(r.src, name, "LeaderWorkerSet "+name, r.src.pos(key(root, "metadata")))
	if n := key(spec, "replicas"); n != nil {
		w.replicas, _ = w.count(r.src, n, "replicas", 0, maxReplicas)
		w.set("workers", r.src.pos(n))
	}
	r.leaderWorkerTemplate(w, key(spec, "leaderWorkerTemplate"))
}

// leaderWorkerTemplate reads a leader/worker group: size pods per engine;
// the leader's template when there is one, else the workers'.
//
// LeaderWorkerSet sets three variables in every container of a group
// (lws api/leaderworkerset/v1 LwsLeaderAddress, LwsGroupSize,
// LwsWorkerIndex), which multi-node scripts use, as llm-d's wide-EP guide
// does (--data-parallel-size $((LWS_GROUP_SIZE * DP_SIZE_LOCAL))): the
// reader reads the leader's pod, so LWS_WORKER_INDEX is 0, LWS_GROUP_SIZE
// the size, and LWS_LEADER_ADDRESS a placeholder host name.
func (r *reader) leaderWorkerTemplate(w *worker, lwt *yaml.Node) {
	size, sizeAt := 1, r.src.pos(lwt)
	if n := key(lwt, "size"); n != nil {
		w.podsPerWorker, _ = w.count(r.src, n, "leaderWorkerTemplate.size", 1, maxPodsPerUnit)
		size, sizeAt = max(1, w.podsPerWorker), r.src.pos(n)
	}
	w.env["LWS_GROUP_SIZE"] = envVar{value: strconv.Itoa(size), at: sizeAt}
	w.env["LWS_WORKER_INDEX"] = envVar{value: "0", at: sizeAt}
	w.env["LWS_LEADER_ADDRESS"] = envVar{value: "lws-leader", at: sizeAt}
	tmpl := key(lwt, "leaderTemplate")
	if tmpl == nil {
		tmpl = key(lwt, "workerTemplate")
	}
	r.podWorker(w, tmpl, key(tmpl, "spec"))
}

// disaggregatedSet reads llm-d's DisaggregatedSet: spec.slices copies of
// the roles, each role a leader/worker group template with replicas.
func (r *reader) disaggregatedSet(root *yaml.Node, name string) {
	spec := key(root, "spec")
	slicesNode := key(spec, "slices")
	for _, role := range items(key(spec, "roles")) {
		rname := str(key(role, "name"))
		w := newWorker(r.src, rname, "DisaggregatedSet "+name+" role "+rname, r.src.pos(role))
		slices := 1
		if slicesNode != nil {
			if n, ok := w.count(r.src, slicesNode, "slices", 1, maxReplicas); ok {
				slices = n
			}
		}
		switch rname {
		case "prefill":
			w.setRole(planfile.RolePrefill, r.src.pos(key(role, "name")))
		case "decode":
			w.setRole(planfile.RoleDecode, r.src.pos(key(role, "name")))
		}
		rs := key(role, "spec")
		replicas := 1
		if n := key(rs, "replicas"); n != nil {
			replicas, _ = w.count(r.src, n, "replicas", 0, maxReplicas)
			w.set("workers", r.src.pos(n))
		}
		w.replicas = max(1, replicas) * slices
		if slices > 1 {
			w.note(r.src.pos(slicesNode), "%s: %d slices × %d replicas = %d workers", rname, slices, replicas, w.replicas)
		}
		r.leaderWorkerTemplate(w, key(rs, "leaderWorkerTemplate"))
	}
	r.router.notes = append(r.router.notes, Note{At: r.src.pos(root), Text: "the DisaggregatedSet holds no router: llm-d's endpoint picker (EPP) is deployed apart, so kvplan plans round-robin routing; give the EPP's scorers in a plan file ([router])"})
}
