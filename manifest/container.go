package manifest

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/planfile"
	"github.com/kvplan/kvplan/units"
)

// GPU labels that name a node's GPU model, in the order they are trusted:
// NVIDIA GPU feature discovery, GKE, Karpenter on AWS.
var gpuLabels = []string{"nvidia.com/gpu.product", "cloud.google.com/gke-accelerator", "karpenter.k8s.aws/instance-gpu-name"}

// readEnv adds a container's (or a Dynamo service's) env list to w.env.
// Later entries win, as in Kubernetes.
func (r *reader) readEnv(w *worker, env *yaml.Node) {
	for _, e := range items(env) {
		name := str(key(e, "name"))
		if name == "" {
			continue
		}
		if v := key(e, "value"); v != nil {
			w.env[name] = envVar{value: str(v), at: r.src.pos(v)}
		} else if vf := key(e, "valueFrom"); vf != nil {
			w.env[name] = envVar{at: r.src.pos(vf), fromRef: true}
		}
	}
}

// readResources reads a container's GPU count and memory limit.
func (r *reader) readResources(w *worker, res *yaml.Node) {
	limits := key(res, "limits")
	for _, k := range []string{"nvidia.com/gpu", "amd.com/gpu", "gpu"} {
		if n := key(limits, k); n != nil {
			r.gpuLimit(w, n, "limits."+k)
		}
	}
	if w.gpusPerPod < 0 && !w.gpusBad {
		for _, k := range []string{"nvidia.com/gpu", "amd.com/gpu", "gpu"} {
			if n := key(key(res, "requests"), k); n != nil {
				r.gpuLimit(w, n, "requests."+k)
			}
		}
	}
	if n := key(limits, "memory"); n != nil {
		w.p.MemoryLimit = str(n)
		w.set("memory_limit", r.src.pos(n))
	} else if n := key(key(res, "requests"), "memory"); n != nil {
		w.note(r.src.pos(n), "%s: memory is requested (%s) but not limited: no container limit, so nothing is OOM-killed at a limit", w.name, str(n))
	}
}

// gpuLimit reads a GPU count of a pod (a limit or request): a bad one is a
// finding, and the pod's GPUs are then unknown rather than "none".
func (r *reader) gpuLimit(w *worker, n *yaml.Node, field string) {
	if g, ok := w.count(r.src, n, field, 0, maxGPUsPerPod); ok {
		w.gpusPerPod, w.gpusAt = g, r.src.pos(n)
	} else {
		w.gpusBad = true
	}
}

// readPodPlacement reads the GPU model a pod spec's node selector or
// required node affinity names.
func (r *reader) readPodPlacement(w *worker, pod *yaml.Node) {
	sel := key(pod, "nodeSelector")
	for _, l := range gpuLabels {
		if n := key(sel, l); n != nil && str(n) != "" {
			w.p.GPU = str(n)
			w.set("gpu", r.src.pos(n))
			return
		}
	}
	r.readGPUTerms(w, path(pod, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"))
}

// readGPUTerms reads the GPU model of required node selector terms
// (matchExpressions on a GPU label with operator In).
func (r *reader) readGPUTerms(w *worker, terms *yaml.Node) {
	for _, t := range items(terms) {
		for _, e := range items(key(t, "matchExpressions")) {
			k := str(key(e, "key"))
			if !contains(gpuLabels, k) || str(key(e, "operator")) != "In" {
				continue
			}
			vals := items(key(e, "values"))
			if len(vals) == 0 {
				continue
			}
			w.p.GPU = str(vals[0])
			w.set("gpu", r.src.pos(vals[0]))
			if len(vals) > 1 {
				w.note(r.src.pos(vals[0]), "%s: the node affinity allows %d GPU models; kvplan plans the first, %s", w.name, len(vals), str(vals[0]))
			}
			return
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// readContainer reads a container's env, resources and command line, and
// returns its argv with places. Kubernetes expands $(VAR) in command and
// args from the container's env; a `sh -c SCRIPT` command is parsed as the
// shell would, with the env the script sees.
func (r *reader) readContainer(w *worker, c *yaml.Node) []word {
	r.readEnv(w, key(c, "env"))
	if n := key(c, "envFrom"); n != nil {
		w.note(r.src.pos(n), "%s: envFrom (a ConfigMap or Secret) is not read: variables set there are unknown to the review", w.name)
	}
	r.readResources(w, key(c, "resources"))
	if img := key(c, "image"); img != nil {
		if v := engineImageVersion(str(img)); v != "" {
			w.engineVersion, w.engineVersionAt = v, r.src.pos(img)
		}
	}
	var argv []word
	for _, k := range []string{"command", "args"} {
		n := key(c, k)
		if n == nil {
			continue
		}
		if w.argsAt.IsZero() || k == "args" {
			w.argsAt = r.src.pos(n)
		}
		for _, it := range items(n) {
			argv = append(argv, r.scalarWord(w, it))
		}
	}
	if script, node, ok := shellScript(argv); ok {
		return r.shellWords(w, script, node)
	}
	return argv
}

var k8sVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`) }) // compiled on first use, not at start-up

// scalarWord is one element of command or args, after Kubernetes' $(VAR)
// expansion (a reference to an unknown variable stays as written).
// The expansion is measured before it is done: a word that would expand
// past maxWordBytes (64 KiB) stays as written, with a finding.
func (r *reader) scalarWord(w *worker, n *yaml.Node) word {
	src, node := r.src, n
	value := func(m string) (string, bool) {
		v, ok := w.env[m[2:len(m)-1]]
		return v.value, ok && !v.fromRef
	}
	text := n.Value
	if strings.Contains(text, "$(") {
		size := len(text)
		for _, m := range k8sVar().FindAllString(text, -1) {
			if v, ok := value(m); ok {
				size += len(v) - len(m)
			}
		}
		if size > maxWordBytes {
			w.badValue("command", r.src.pos(n), fmt.Sprintf("the argument expands its $(VAR) references to %s bytes, more than the %s kvplan expands a word; read as written",
				units.Thousands(int64(size)), units.Bytes(maxWordBytes)), "write the value out, or shorten it")
		} else {
			text = k8sVar().ReplaceAllStringFunc(text, func(m string) string {
				if v, ok := value(m); ok {
					return v
				}
				return m
			})
		}
	}
	return word{text: text, at: func(off int) planfile.Pos { return src.at(node, off) }, node: node}
}

// shellScript finds `sh -c SCRIPT` (also bash, with -c among other single
// letter options such as -ec).
func shellScript(argv []word) (string, *yaml.Node, bool) {
	if len(argv) < 2 {
		return "", nil, false
	}
	switch filepath.Base(argv[0].text) {
	case "sh", "bash", "ash", "dash", "zsh":
	default:
		return "", nil, false
	}
	for i := 1; i+1 < len(argv); i++ {
		a := argv[i].text
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") {
			return "", nil, false
		}
		if strings.Contains(a, "c") {
			return argv[i+1].text, argv[i+1].node, argv[i+1].node != nil
		}
	}
	return "", nil, false
}

// identify finds the engine entry point an argv starts, and returns its
// grammar and the words after the entry point.
func identify(argv []word) (*engineArgs, []word, bool) {
	for len(argv) > 0 && (argv[0].text == "exec" || argv[0].text == "env" || strings.Contains(argv[0].text, "=")) {
		argv = argv[1:]
	}
	if len(argv) == 0 {
		return nil, nil, false
	}
	base := filepath.Base(argv[0].text)
	switch {
	case base == "vllm" && len(argv) > 1 && argv[1].text == "serve":
		return vllmServe(), argv[2:], true
	case base == "trtllm-serve":
		rest := argv[1:]
		if len(rest) > 0 && rest[0].text == "serve" {
			rest = rest[1:]
		}
		return trtllmServe(), rest, true
	case base == "python" || strings.HasPrefix(base, "python3") || base == "python2":
		for i := 1; i < len(argv); i++ {
			if argv[i].text == "-m" && i+1 < len(argv) {
				g := byModule(argv[i+1].text)
				return g, argv[i+2:], g != nil
			}
			if !strings.HasPrefix(argv[i].text, "-") {
				return nil, nil, false // python script.py: not an entry point kvplan knows
			}
		}
	}
	return nil, nil, false
}

// byModule maps a Python module run with -m to its grammar.
func byModule(m string) *engineArgs {
	switch m {
	case "dynamo.vllm":
		return dynamoVLLM()
	case "dynamo.sglang":
		return dynamoSGLang()
	case "dynamo.trtllm":
		return dynamoTRTLLM()
	case "dynamo.frontend":
		return dynamoFrontend()
	case "vllm.entrypoints.openai.api_server":
		return vllmServe()
	case "sglang.launch_server":
		return sglangLaunch()
	}
	return nil
}

// engineOf names the engine of a grammar.
func engineOf(g *engineArgs) string {
	switch g.name {
	case "vllm serve", "dynamo.vllm":
		return "vllm"
	case "sglang.launch_server", "dynamo.sglang":
		return "sglang"
	case "dynamo.trtllm", "trtllm-serve":
		return "trtllm"
	}
	return ""
}

// engineImageVersion reads the engine version from an engine project's own
// image tag (vllm/vllm-openai:v0.19.0, lmsysorg/sglang:v0.5.2-cu126); other
// images (Dynamo's runtimes, lmcache's builds) are tagged with their own
// versions and say nothing about the engine's.
func engineImageVersion(image string) string {
	repo, tag, ok := strings.Cut(image, ":")
	if !ok {
		return ""
	}
	switch strings.TrimPrefix(repo, "docker.io/") {
	case "vllm/vllm-openai", "lmsysorg/sglang":
	default:
		return ""
	}
	m := versionTag().FindStringSubmatch(tag)
	if m == nil {
		return ""
	}
	return m[1]
}

var versionTag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v?([0-9]+\.[0-9]+(\.[0-9]+)?)`) }) // compiled on first use, not at start-up
