package manifest

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/internal/suggest"
	"github.com/kvplan/kvplan/planfile"
)

// Formats Emit writes. Each is read back by Read (the YAML formats) or by
// ReadCommandString, one engine line at a time (the scripts): the round
// trip is the emitters' test.
const (
	EmitDynamo = "dynamo" // a DynamoGraphDeployment (nvidia.com/v1alpha1) for the plan's engine
	EmitLLMD   = "llm-d"  // an llm-d DisaggregatedSet (disaggregated) or Deployment (aggregated) of vllm serve
	EmitKServe = "kserve" // a KServe LLMInferenceService (serving.kserve.io/v1alpha1)
	EmitVLLM   = "vllm"   // a shell script of vllm serve lines and vllm-router
	EmitSGLang = "sglang" // a shell script of sglang.launch_server lines and sglang_router
	EmitTRTLLM = "trtllm" // a shell script of trtllm-serve lines
)

// EmitFormats lists the formats in the order the help names them.
var EmitFormats = []string{EmitDynamo, EmitLLMD, EmitKServe, EmitVLLM, EmitSGLang, EmitTRTLLM}

// EmitOptions is what an emitted manifest needs beyond the plan.
type EmitOptions struct {
	// Model is what the workers load: the model's Hugging Face id
	// (meta-llama/Llama-3.1-70B-Instruct). The plan's model.name (a catalog
	// name) is used when it is empty.
	Model string
	// Name is the deployment's metadata.name; "" derives one from the model
	// and the mode.
	Name string
	// EngineVersion is the engine release the plan's figures are for
	// (0.19.0): it tags vLLM's and SGLang's own images, which the reader
	// reads back as runtime.engine_version.
	EngineVersion string
	// Header lines become the file's leading comment (what was planned, the
	// predicted figures), each prefixed "# ".
	Header []string
	// FileName is the name the output is written under, for the script's
	// usage line; "" = serve-<format>.sh.
	FileName string
	// NodeGPUs is the GPUs of one node, for placing a script's workers on
	// nodes; 0 = 8.
	NodeGPUs int
	// DefaultKVDtype and DefaultBlockSize are what the engine uses unless
	// told (the model's KV dtype, the engine's block size): a plan value
	// equal to them is written as no argument.
	DefaultKVDtype   string
	DefaultBlockSize int
	// GPUProducts maps a pool's GPU, by the catalog name the plan gives it,
	// to the nvidia.com/gpu.product label NVIDIA's GPU feature discovery
	// writes on nodes with that GPU: a Kubernetes pool whose GPU has one
	// selects nodes by it, and the reader reads the GPU back from it.
	GPUProducts map[string]string
}

// EmitError is a plan an emitter cannot write (an engine setting the
// format has no argument for): an input error, not an internal one.
type EmitError struct{ Msg string }

func (e *EmitError) Error() string { return e.Msg }

func emitErrorf(format string, args ...any) error {
	return &EmitError{Msg: fmt.Sprintf(format, args...)}
}

// ParseEmitFormat reads a format name in any case, with a did-you-mean.
func ParseEmitFormat(s string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, f := range EmitFormats {
		if t == f {
			return f, nil
		}
	}
	msg := fmt.Sprintf("unknown format %q: want one of %s", s, strings.Join(EmitFormats, ", "))
	if c := suggest.Closest(t, EmitFormats, 1); len(c) > 0 {
		msg += "; did you mean " + c[0] + "?"
	}
	return "", &EmitError{Msg: msg}
}

// Emit writes the plan in a deployment format. The plan is what kvplan
// plan's search found (pools with role, workers, tp and the engine limits,
// their memory limits, the router, the engine); the output is
// deterministic: the same plan and options give the same bytes.
func Emit(format string, p *planfile.Plan, o EmitOptions) ([]byte, error) {
	d, err := newDeployment(p, o)
	if err != nil {
		return nil, err
	}
	if err := d.spanNodes(format); err != nil {
		return nil, err
	}
	switch format {
	case EmitDynamo:
		return d.dynamo()
	case EmitLLMD:
		return d.llmd()
	case EmitKServe:
		return d.kserve()
	case EmitVLLM, EmitSGLang, EmitTRTLLM:
		if eng := engineOfFormat(format); eng != d.engine {
			return nil, emitErrorf("--emit %s writes %s command lines, but the plan runs %s: plan with --engine %s, or emit %s", format, eng, d.engine, eng, d.engine)
		}
		return d.script()
	}
	_, err = ParseEmitFormat(format)
	return nil, err
}

func engineOfFormat(format string) string {
	switch format {
	case EmitSGLang:
		return "sglang"
	case EmitTRTLLM:
		return "trtllm"
	}
	return "vllm"
}

// deployment is a plan as the emitters see it: its pools in the order
// they are written (prefill before decode), with the engine arguments
// each pool's workers start with.
type deployment struct {
	p      *planfile.Plan
	o      EmitOptions
	engine string
	model  string
	name   string
	pools  []*emitPool
	kv     bool // the router routes by KV cache (router.mode = "kv")
	events bool // ...and the workers that prefill publish KV events
	disagg bool
}

// emitPool is one pool to write.
type emitPool struct {
	name   string // the plan's pool name
	pl     *planfile.Pool
	tp     int
	gpus   int // GPUs of one worker: tp × dp × pp
	layout poolLayout
	nodes  int // pods one worker spans (Dynamo multinode.nodeCount); 1 = one node
}

func newDeployment(p *planfile.Plan, o EmitOptions) (*deployment, error) {
	if p == nil || len(p.Pools) == 0 {
		return nil, emitErrorf("no pools to write")
	}
	d := &deployment{p: p, o: o, engine: p.Runtime.Engine, model: o.Model}
	if d.engine == "" {
		d.engine = "vllm"
	}
	switch d.engine {
	case "vllm", "sglang", "trtllm":
	default:
		return nil, emitErrorf("engine %q: kvplan writes manifests for vllm, sglang and trtllm", d.engine)
	}
	if d.model == "" {
		d.model = p.Model.Name
	}
	if d.model == "" {
		return nil, emitErrorf("the plan names no model")
	}
	d.disagg = p.Disaggregated()
	for _, role := range []string{planfile.RoleAggregated, planfile.RolePrefill, planfile.RoleDecode} {
		for _, pl := range p.PoolsByRole(role) {
			if pl.SharesGPUWith != "" {
				return nil, emitErrorf("pool %s shares its GPUs with %s: kvplan writes one worker per GPU set, not co-located pools", pl.Name, pl.SharesGPUWith)
			}
			tp := p.PoolTP(pl)
			l := layoutOf(p, pl)
			d.pools = append(d.pools, &emitPool{name: pl.Name, pl: pl, tp: tp, gpus: l.gpus(), layout: l, nodes: 1})
		}
	}
	if len(d.pools) != len(p.Pools) {
		return nil, emitErrorf("the plan has pools of roles kvplan does not write")
	}
	if !d.disagg {
		for _, ep := range d.pools {
			if ep.pl.Role != planfile.RoleAggregated {
				return nil, emitErrorf("pool %s is a %s pool with no %s pool to pair with", ep.name, ep.pl.Role, otherRole(ep.pl.Role))
			}
		}
	}
	d.kv = p.Router.Mode == planfile.RouterKV
	d.events = d.kv && p.Router.KVEventsEnabled()
	d.name = o.Name
	if d.name == "" {
		mode := "agg"
		if d.disagg {
			mode = "disagg"
		}
		d.name = dnsName(p.Model.Name + "-" + mode)
	}
	return d, nil
}

func otherRole(role string) string {
	if role == planfile.RolePrefill {
		return planfile.RoleDecode
	}
	return planfile.RolePrefill
}

var notDNS = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9-]+`) }) // compiled on first use, not at start-up

// dnsName makes a Kubernetes object name (RFC 1123 label) of s:
// "llama-3.1-70b-agg" becomes "llama-3-1-70b-agg".
func dnsName(s string) string {
	n := notDNS().ReplaceAllString(strings.ToLower(s), "-")
	n = strings.Trim(n, "-")
	if len(n) > 63 {
		n = strings.TrimRight(n[:63], "-")
	}
	if n == "" {
		n = "kvplan"
	}
	return n
}

// header is the file's leading comment lines, without "# ".
func (d *deployment) header(format string) []string {
	out := append([]string{}, d.o.Header...)
	if len(out) > 0 {
		out = append(out, "")
	}
	for _, ep := range d.pools {
		out = append(out, fmt.Sprintf("%s: %s, %d worker(s) of %s on %s (%d GPU(s))", ep.name, ep.pl.Role, max(1, ep.pl.Workers), ep.layoutText(), ep.pl.GPU, max(1, ep.pl.Workers)*ep.gpus))
	}
	script := format == EmitVLLM || format == EmitSGLang || format == EmitTRTLLM
	if d.hasMemoryLimits() && !script {
		out = append(out, "Memory limits are kvplan's host model (kvplan memory): its engine's planning value for an idle worker's RSS plus",
			"a margin; replace them with your workers' measured RSS (model loading and tensor-parallel ranks can take more).")
	}
	if !script {
		out = append(out, d.placementHeader()...)
	}
	return out
}

// gpuProduct is the nvidia.com/gpu.product label of a pool's GPU; "" =
// none known.
func (d *deployment) gpuProduct(ep *emitPool) string { return d.o.GPUProducts[ep.pl.GPU] }

// nodeSelector selects the nodes of a pool's GPU, or is nil (left out)
// when kvplan knows no label for it.
func (d *deployment) nodeSelector(ep *emitPool) *yaml.Node {
	if v := d.gpuProduct(ep); v != "" {
		return ymap(gpuLabels[0], v)
	}
	return nil
}

// placementHeader says how the pods find their GPUs' nodes, once per GPU.
func (d *deployment) placementHeader() []string {
	var out []string
	seen := map[string]bool{}
	for _, ep := range d.pools {
		if seen[ep.pl.GPU] || ep.pl.GPU == "" {
			continue
		}
		seen[ep.pl.GPU] = true
		if v := d.gpuProduct(ep); v != "" {
			out = append(out, fmt.Sprintf("The %s pods select nodes labelled %s=%s (NVIDIA GPU feature discovery's label).", ep.pl.GPU, gpuLabels[0], v))
		} else {
			out = append(out, fmt.Sprintf("No node selector for %s: kvplan knows no %s value for it; add your nodes' label (kvplan check", ep.pl.GPU, gpuLabels[0]),
				"reads it), or give kvplan check --gpu.")
		}
	}
	return out
}

func (d *deployment) hasMemoryLimits() bool {
	for _, ep := range d.pools {
		if ep.pl.MemoryLimit != "" {
			return true
		}
	}
	return false
}
