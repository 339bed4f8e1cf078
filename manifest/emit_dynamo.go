package manifest

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/planfile"
)

// dynamoBackend is how Dynamo runs one engine: its worker module, runtime
// image, service names and working directory, as Dynamo's own examples
// (examples/backends/<engine>/deploy/*.yaml) write them.
type dynamoBackend struct {
	module, image, prefix, workdir string
	flags                          entryFlags
}

func dynamoBackendOf(engine string) dynamoBackend {
	switch engine {
	case "sglang":
		return dynamoBackend{"dynamo.sglang", "sglang-runtime", "SGLang", "/workspace/examples/backends/sglang", dynamoSGLangFlags()}
	case "trtllm":
		return dynamoBackend{"dynamo.trtllm", "tensorrtllm-runtime", "TRTLLM", "/workspace/", flagsDynamoTRTLLM}
	}
	return dynamoBackend{"dynamo.vllm", "vllm-runtime", "Vllm", "/workspace/examples/backends/vllm", flagsDynamoVLLM}
}

// dynamoImageTag is the runtime image's tag: Dynamo's examples leave it
// as a variable, and so does kvplan (it cannot know which Dynamo release
// ships the engine version planned).
const dynamoImageTag = "${DYNAMO_VERSION}"

// serviceName is a worker service's name: VllmWorker, VllmPrefillWorker.
func (b dynamoBackend) serviceName(role string) string {
	switch role {
	case planfile.RolePrefill:
		return b.prefix + "PrefillWorker"
	case planfile.RoleDecode:
		return b.prefix + "DecodeWorker"
	}
	return b.prefix + "Worker"
}

// dynamo writes a DynamoGraphDeployment: the Frontend with the router mode,
// and one worker service per pool with its replicas, GPUs, memory limit and
// the engine arguments of the plan.
func (d *deployment) dynamo() ([]byte, error) {
	b := dynamoBackendOf(d.engine)
	image := "nvcr.io/nvidia/ai-dynamo/" + b.image + ":" + dynamoImageTag
	frontendEnv := []string{"DYN_ROUTER_MODE", "round-robin"}
	if d.kv {
		frontendEnv[1] = "kv"
		if !d.events {
			frontendEnv = append(frontendEnv, "DYN_ROUTER_USE_KV_EVENTS", "false")
		}
	}
	services := ymap("Frontend", ymap(
		"componentType", "frontend",
		"replicas", 1,
		"extraPodSpec", ymap("mainContainer", ymap("image", image)),
		"envs", yenv(frontendEnv...),
	))
	for _, ep := range d.pools {
		args, err := d.dynamoArgs(b, ep)
		if err != nil {
			return nil, err
		}
		sub := ""
		if ep.pl.Role != planfile.RoleAggregated {
			sub = ep.pl.Role
		}
		svc := ymap(
			"envFromSecret", "hf-token-secret",
			"componentType", "worker",
			"subComponentType", sub,
			"replicas", max(1, ep.pl.Workers),
			"multinode", ep.multinode(),
			"resources", ymap("limits", ymap("gpu", strconv.Itoa(ep.gpus/ep.nodes), "memory", ep.pl.MemoryLimit)),
			"envs", d.transportEnv(),
			"extraPodSpec", ymap("nodeSelector", d.nodeSelector(ep), "mainContainer", ymap(
				"image", image,
				"workingDir", b.workdir,
				"command", []string{"python3", "-m", b.module},
				"args", args,
			)),
		)
		services.Content = append(services.Content, ystr(b.serviceName(ep.pl.Role)), svc)
	}
	doc := ymap(
		"apiVersion", "nvidia.com/v1alpha1",
		"kind", "DynamoGraphDeployment",
		"metadata", ymap("name", d.name),
		"spec", ymap("backendFramework", d.engine, "services", services),
	)
	header := append(d.header(EmitDynamo),
		"Set the runtime image tag "+dynamoImageTag+" to the Dynamo release you run, and create the hf-token-secret",
		"Dynamo's examples read (kubectl create secret generic hf-token-secret --from-literal=HF_TOKEN=...).")
	return encodeYAML(header, doc)
}

// dynamoArgs is a Dynamo worker's arguments: the plan's engine settings,
// the disaggregation mode and KV transfer of a prefill or decode worker,
// and KV events on the workers a KV router places by cache.
func (d *deployment) dynamoArgs(b dynamoBackend, ep *emitPool) ([]string, error) {
	args, err := d.engineArgs(ep, b.flags, 0)
	if err != nil {
		return nil, err
	}
	role := ep.pl.Role
	if role != planfile.RoleAggregated {
		args = append(args, b.flags.disaggMode, role)
		switch d.engine {
		case "vllm":
			// Dynamo's vLLM examples use kv_both on both sides; the role
			// comes from --disaggregation-mode.
			args = append(args, "--kv-transfer-config", vllmTransfer(ep.pl, "kv_both"))
		case "sglang":
			args = append(args, "--disaggregation-transfer-backend", "nixl")
		case "trtllm":
			// TensorRT-LLM moves KV through its cache transceiver, which an
			// engine configuration turns on.
			args = append(args, "--override-engine-args", `{"cache_transceiver_config":{"backend":"DEFAULT"}}`)
		}
	}
	if d.events && prefills(ep.pl) {
		switch d.engine {
		case "vllm":
			args = append(args, "--kv-events-config", vllmKVEvents)
		case "sglang":
			args = append(args, "--kv-events-config", sglangKVEvents)
		case "trtllm":
			args = append(args, "--publish-events-and-metrics")
		}
	}
	return args, nil
}

// transportEnv is the workers' UCX_TLS when the plan restricts it.
func (d *deployment) transportEnv() []*yaml.Node {
	if len(d.p.Transport.UCXTLS) == 0 {
		return nil
	}
	return yenv("UCX_TLS", strings.Join(d.p.Transport.UCXTLS, ","))
}
