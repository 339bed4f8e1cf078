package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/planfile"
)

// vllmImage is vLLM's own image at the planned version, which the reader
// reads back as runtime.engine_version.
func (d *deployment) vllmImage() string {
	if d.o.EngineVersion == "" {
		return "vllm/vllm-openai:latest"
	}
	return "vllm/vllm-openai:v" + strings.TrimPrefix(d.o.EngineVersion, "v")
}

// vllmServeArgs is one `vllm serve` worker's arguments after "vllm serve":
// the plan's settings and, disaggregated, the NIXL connector with the
// pool's kv_role (as llm-d's and KServe's examples write it).
func (d *deployment) vllmServeArgs(ep *emitPool, port int) ([]string, error) {
	args, err := d.engineArgs(ep, flagsVLLMServe, port)
	if err != nil {
		return nil, err
	}
	if ep.pl.Role != planfile.RoleAggregated {
		args = append(args, "--kv-transfer-config", vllmTransfer(ep.pl, kvRole(ep.pl.Role)))
	}
	return args, nil
}

// needsVLLM refuses a Kubernetes format that runs vLLM for a plan of
// another engine.
func (d *deployment) needsVLLM(format string) error {
	if d.engine != "vllm" {
		return emitErrorf("--emit %s runs vllm serve, but the plan runs %s: plan with --engine vllm, or emit dynamo", format, d.engine)
	}
	return nil
}

// llmdLabels are the labels llm-d's guides put on model-server pods.
func (d *deployment) llmdLabels(role string) *yaml.Node {
	return ymap("app", d.name, "llm-d.ai/inference-serving", "true", "llm-d.ai/model", dnsName(d.p.Model.Name), "llm-d.ai/role", role)
}

// llmdContainer is a model-server container as llm-d's guides write it.
func (d *deployment) llmdContainer(ep *emitPool, port int, headless bool) (*yaml.Node, error) {
	args, err := d.vllmServeArgs(ep, port)
	if err != nil {
		return nil, err
	}
	env := []*yaml.Node{
		ymap("name", "HF_TOKEN", "valueFrom", ymap("secretKeyRef", ymap("name", "llm-d-hf-token", "key", "HF_TOKEN"))),
	}
	ports := []*yaml.Node{ymap("name", "modelserver", "containerPort", port, "protocol", "TCP")}
	if ep.pl.Role != planfile.RoleAggregated {
		env = append(env, ymap("name", "VLLM_NIXL_SIDE_CHANNEL_HOST", "valueFrom", ymap("fieldRef", ymap("fieldPath", "status.podIP"))))
		ports = append(ports, ymap("name", "nixl", "containerPort", 5600, "protocol", "TCP"))
	}
	env = append(env, d.transportEnv()...)
	command, cargs := []string{"vllm", "serve"}, args
	if ep.nodes > 1 {
		command, cargs = []string{"/bin/bash", "-c"}, []string{multiNodeScript(ep, args, headless)}
	}
	return ymap(
		"name", "modelserver",
		"image", d.vllmImage(),
		"command", command,
		"args", cargs,
		"env", env,
		"ports", ports,
		"resources", ymap("limits", ymap("memory", ep.pl.MemoryLimit, "nvidia.com/gpu", strconv.Itoa(ep.gpus/ep.nodes))),
		"volumeMounts", []*yaml.Node{ymap("mountPath", "/dev/shm", "name", "shm")},
	), nil
}

// dpRPCPort is the port vLLM's data-parallel ranks coordinate on
// (--data-parallel-rpc-port; vLLM's multi-node example uses 13345).
const dpRPCPort = 13345

// multiNodeScript is the shell script of one pod of a worker whose
// data-parallel ranks span ep.nodes pods of a LeaderWorkerSet group, vLLM's
// multi-node data parallelism (docs: data_parallel_deployment): every pod
// starts its share of the ranks, --data-parallel-size-local of them from
// rank LWS_WORKER_INDEX × that, all pointed at the leader pod's address;
// the leader (index 0) serves the API, the other pods run --headless.
// LeaderWorkerSet sets LWS_WORKER_INDEX, LWS_LEADER_ADDRESS and
// LWS_GROUP_SIZE in every pod of the group.
func multiNodeScript(ep *emitPool, args []string, headless bool) string {
	local := ep.layout.dp / ep.nodes
	var b strings.Builder
	fmt.Fprintf(&b, "# %d data-parallel ranks over the %d pods of this LeaderWorkerSet group, %d a pod: LWS sets\n", ep.layout.dp, ep.nodes, local)
	b.WriteString("# LWS_WORKER_INDEX (0 on the leader) and LWS_LEADER_ADDRESS in each pod.\n")
	fmt.Fprintf(&b, "START_RANK=$(( ${LWS_WORKER_INDEX:-0} * %d ))\n", local)
	b.WriteString("exec vllm serve " + shellJoin(args))
	fmt.Fprintf(&b, " --data-parallel-size-local %d --data-parallel-start-rank \"$START_RANK\" --data-parallel-address \"$LWS_LEADER_ADDRESS\" --data-parallel-rpc-port %d", local, dpRPCPort)
	if headless {
		b.WriteString(" --headless")
	}
	return b.String()
}

// llmdGroup is a leader/worker group of a pool: one pod on one node, or for
// a worker over several nodes a leader pod that serves (with the labels the
// endpoint picker selects, and the decode's routing sidecar) and headless
// worker pods that only run their ranks.
func (d *deployment) llmdGroup(ep *emitPool, port int, inits []*yaml.Node) (*yaml.Node, error) {
	c, err := d.llmdContainer(ep, port, false)
	if err != nil {
		return nil, err
	}
	role := ep.pl.Role
	if role == planfile.RoleAggregated {
		role = "both" // as the aggregated Deployment's pods are labelled
	}
	leader := ymap(
		"metadata", ymap("labels", d.llmdLabels(role)),
		"spec", ymap("nodeSelector", d.nodeSelector(ep), "initContainers", inits, "containers", []*yaml.Node{c}, "volumes", shmVolume()),
	)
	if ep.nodes <= 1 {
		return ymap("size", 1, "workerTemplate", leader), nil
	}
	wc, err := d.llmdContainer(ep, port, true)
	if err != nil {
		return nil, err
	}
	worker := ymap(
		"metadata", ymap("labels", ymap("app", d.name, "llm-d.ai/model", dnsName(d.p.Model.Name), "llm-d.ai/role", role)),
		"spec", ymap("nodeSelector", d.nodeSelector(ep), "containers", []*yaml.Node{wc}, "volumes", shmVolume()),
	)
	return ymap("size", ep.nodes, "leaderTemplate", leader, "workerTemplate", worker), nil
}

// shmVolume backs /dev/shm, which tensor-parallel ranks share (NCCL).
func shmVolume() []*yaml.Node {
	return []*yaml.Node{ymap("name", "shm", "emptyDir", ymap("medium", "Memory"))}
}

// llmd writes llm-d's model servers: a DisaggregatedSet of prefill and
// decode roles (llm-d's pd-disaggregation guide), or a Deployment of
// aggregated workers. The inference scheduler (EPP) that routes to them is
// deployed apart, as in llm-d's guides.
func (d *deployment) llmd() ([]byte, error) {
	if err := d.needsVLLM(EmitLLMD); err != nil {
		return nil, err
	}
	header := append(d.header(EmitLLMD),
		"llm-d's inference scheduler (EPP) routes to these pods and is deployed apart (see llm-d's guides); create the",
		"llm-d-hf-token secret the pods read HF_TOKEN from.")
	if !d.disagg {
		ep := d.pools[0]
		if ep.nodes > 1 {
			// A worker over several nodes is a LeaderWorkerSet group.
			group, err := d.llmdGroup(ep, 8000, nil)
			if err != nil {
				return nil, err
			}
			header = append(header, "The workers span nodes: install the LeaderWorkerSet controller (llm-d's guides, wide-ep-lws).")
			doc := ymap(
				"apiVersion", "leaderworkerset.x-k8s.io/v1",
				"kind", "LeaderWorkerSet",
				"metadata", ymap("name", d.name, "labels", ymap("llm-d.ai/inference-serving", "true", "llm-d.ai/model", dnsName(d.p.Model.Name))),
				"spec", ymap("replicas", max(1, ep.pl.Workers), "leaderWorkerTemplate", group),
			)
			return encodeYAML(header, doc)
		}
		c, err := d.llmdContainer(ep, 8000, false)
		if err != nil {
			return nil, err
		}
		doc := ymap(
			"apiVersion", "apps/v1",
			"kind", "Deployment",
			"metadata", ymap("name", d.name, "labels", ymap("llm-d.ai/inference-serving", "true", "llm-d.ai/model", dnsName(d.p.Model.Name))),
			"spec", ymap(
				"replicas", max(1, ep.pl.Workers),
				"selector", ymap("matchLabels", ymap("app", d.name)),
				"template", ymap(
					"metadata", ymap("labels", d.llmdLabels("both")),
					"spec", ymap("nodeSelector", d.nodeSelector(ep), "containers", []*yaml.Node{c}, "volumes", shmVolume()),
				),
			),
		)
		return encodeYAML(header, doc)
	}
	var roles []*yaml.Node
	spanNoted := false
	for _, ep := range d.pools {
		port := 8000
		var inits []*yaml.Node
		if ep.pl.Role == planfile.RoleDecode {
			// llm-d's decode pods take requests through the routing sidecar
			// on 8000, which asks a prefill pod first; vLLM listens on 8200.
			port = 8200
			inits = []*yaml.Node{ymap(
				"name", "routing-proxy",
				"image", "REPLACE_ROUTING_SIDECAR_IMAGE",
				"args", []string{"--port=8000", "--kv-connector=nixlv2", "--secure-proxy=false"},
				"ports", []*yaml.Node{ymap("name", "sidecar", "containerPort", 8000, "protocol", "TCP")},
				"restartPolicy", "Always",
			)}
			header = append(header, "Set the routing sidecar's image (REPLACE_ROUTING_SIDECAR_IMAGE, as in llm-d's guide) on the decode pods.")
		}
		group, err := d.llmdGroup(ep, port, inits)
		if err != nil {
			return nil, err
		}
		if ep.nodes > 1 && !spanNoted {
			header, spanNoted = append(header, "Workers span nodes as LeaderWorkerSet groups, a leader pod serving and headless pods running the other ranks."), true
		}
		roles = append(roles, ymap("name", ep.pl.Role, "spec", ymap(
			"replicas", max(1, ep.pl.Workers),
			"leaderWorkerTemplate", group,
		)))
	}
	doc := ymap(
		"apiVersion", "disaggregatedset.x-k8s.io/v1",
		"kind", "DisaggregatedSet",
		"metadata", ymap("name", d.name, "labels", ymap("llm-d.ai/inference-serving", "true", "llm-d.ai/model", dnsName(d.p.Model.Name))),
		"spec", ymap("slices", 1, "roles", roles),
	)
	return encodeYAML(header, doc)
}

// kserve writes a KServe LLMInferenceService: the top level is the decode
// pool (or the aggregated one), spec.prefill the prefill pool; KServe
// starts `vllm serve` with spec.parallelism and VLLM_ADDITIONAL_ARGS, the
// way the reader reads it back. A KV router is spec.router.scheduler
// (llm-d's endpoint picker).
func (d *deployment) kserve() ([]byte, error) {
	if err := d.needsVLLM(EmitKServe); err != nil {
		return nil, err
	}
	role := func(ep *emitPool) (*yaml.Node, error) {
		args, err := d.vllmServeArgs(ep, 0)
		if err != nil {
			return nil, err
		}
		// KServe writes the model and --tensor-parallel-size itself (from
		// spec.model and spec.parallelism): the rest goes in VLLM_ADDITIONAL_ARGS.
		rest := dropArgs(args[1:], "--tensor-parallel-size")
		env := []*yaml.Node{}
		if len(rest) > 0 {
			env = append(env, ymap("name", "VLLM_ADDITIONAL_ARGS", "value", shellJoin(rest)))
		}
		if ep.pl.Role != planfile.RoleAggregated {
			env = append(env, ymap("name", "VLLM_NIXL_SIDE_CHANNEL_HOST", "valueFrom", ymap("fieldRef", ymap("fieldPath", "status.podIP"))))
		}
		env = append(env, d.transportEnv()...)
		container := ymap("name", "main", "env", env,
			"resources", ymap("limits", ymap("memory", ep.pl.MemoryLimit, "nvidia.com/gpu", strconv.Itoa(ep.gpus))))
		return ymap(
			"replicas", max(1, ep.pl.Workers),
			"parallelism", ymap("tensor", ep.tp),
			"template", ymap("nodeSelector", d.nodeSelector(ep), "containers", []*yaml.Node{container}),
		), nil
	}
	var top, prefill *yaml.Node
	for _, ep := range d.pools {
		n, err := role(ep)
		if err != nil {
			return nil, err
		}
		if ep.pl.Role == planfile.RolePrefill {
			prefill = n
		} else {
			top = n
		}
	}
	spec := ymap("model", ymap("uri", "hf://"+d.model, "name", d.model))
	spec.Content = append(spec.Content, top.Content...)
	if prefill != nil {
		spec.Content = append(spec.Content, ystr("prefill"), prefill)
	}
	router := ymap("route", yempty(), "gateway", yempty())
	if d.kv {
		router.Content = append(router.Content, ystr("scheduler"), yempty())
	}
	spec.Content = append(spec.Content, ystr("router"), router)
	doc := ymap(
		"apiVersion", "serving.kserve.io/v1alpha1",
		"kind", "LLMInferenceService",
		"metadata", ymap("name", d.name),
		"spec", spec,
	)
	header := append(d.header(EmitKServe), "KServe's LLMInferenceServiceConfig supplies the vLLM image; give it the version planned ("+d.vllmImage()+").")
	return encodeYAML(header, doc)
}

// dropArgs removes flags and their values from an argument list.
func dropArgs(args []string, flags ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if contains(flags, args[i]) {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// shellJoin joins words as a shell reads them back (KServe evals
// VLLM_ADDITIONAL_ARGS): a word with anything but safe characters is
// single-quoted.
func shellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return strings.Join(out, " ")
}

func shellQuote(w string) string {
	safe := w != ""
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
