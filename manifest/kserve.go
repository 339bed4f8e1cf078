package manifest

import (
	"strings"

	"go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/syntax"

	"github.com/kvplan/kvplan/planfile"
)

// llmInferenceService reads a KServe LLMInferenceService: the top level is
// the decode pool (aggregated when there is no spec.prefill), spec.prefill
// the prefill pool. KServe starts vLLM itself, with
// `eval "exec vllm serve /mnt/models ... --tensor-parallel-size <spec.parallelism.tensor> ${VLLM_ADDITIONAL_ARGS} $@"`,
// so the engine arguments are spec.parallelism, VLLM_ADDITIONAL_ARGS (read
// as that eval reads it) and the container's args.
func (r *reader) llmInferenceService(root *yaml.Node, name string) {
	spec := key(root, "spec")
	model := key(spec, "model")
	uri := key(model, "uri")
	if uri == nil {
		uri = key(model, "name")
	}
	prefill := key(spec, "prefill")
	roles := []struct {
		name, role string
		node       *yaml.Node
	}{{"decode", planfile.RoleDecode, spec}, {"prefill", planfile.RolePrefill, prefill}}
	if prefill == nil {
		roles = roles[:1]
		roles[0].name, roles[0].role = "main", planfile.RoleAggregated
	}
	for _, ro := range roles {
		at := r.src.pos(ro.node)
		if ro.node == spec {
			at = r.src.pos(keyNode(root, "spec"))
		} else {
			at = r.src.pos(keyNode(spec, "prefill"))
		}
		w := newWorker(r.src, ro.name, "LLMInferenceService "+name+" "+ro.name, at)
		w.setRole(ro.role, at)
		if n := key(ro.node, "replicas"); n != nil {
			w.replicas, _ = w.count(r.src, n, "replicas", 0, maxReplicas)
			w.set("workers", r.src.pos(n))
		}
		tmpl := key(ro.node, "template")
		r.readPodPlacement(w, tmpl)
		main := mainContainer(tmpl)
		argv := r.readContainer(w, main)
		var words []word
		if uri != nil {
			words = append(words, r.scalarWordText(strings.TrimPrefix(str(uri), "hf://"), uri))
		}
		par := key(ro.node, "parallelism")
		if par == nil && ro.role == planfile.RolePrefill {
			par = key(spec, "parallelism") // the prefill pool inherits the top level's
		}
		for _, p := range []struct{ key, flag string }{{"tensor", "--tensor-parallel-size"}, {"pipeline", "--pipeline-parallel-size"}, {"data", "--data-parallel-size"}} {
			if n := key(par, p.key); n != nil {
				words = append(words, fixedWord(p.flag, r.src.pos(n)), r.scalarWord(w, n))
			}
		}
		// spec.parallelism.expert (KServe's ParallelismSpec.Expert, "enables
		// expert parallelism"): vLLM's --enable-expert-parallel.
		if n := key(par, "expert"); n != nil && strings.EqualFold(str(n), "true") {
			words = append(words, fixedWord("--enable-expert-parallel", r.src.pos(n)))
		}
		if v, ok := w.env["VLLM_ADDITIONAL_ARGS"]; ok && !v.fromRef {
			words = append(words, r.envWords(w, "VLLM_ADDITIONAL_ARGS", envNode(main, "VLLM_ADDITIONAL_ARGS"))...)
		}
		words = append(words, argv...)
		if r.engineWorker(w, words, vllmServe(), "") {
			r.addWorker(w)
		}
	}
	if sched := path(spec, "router", "scheduler"); sched != nil {
		r.router = routerInfo{set: true, mode: planfile.RouterKV, modeAt: r.src.pos(keyNode(key(spec, "router"), "scheduler"))}
		r.router.notes = append(r.router.notes, Note{At: r.router.modeAt, Text: "spec.router.scheduler runs llm-d's endpoint picker, whose default prefix-cache scorer routes by the prefixes it sent to each pod: planned as KV-aware routing"})
	} else {
		r.router.notes = append(r.router.notes, Note{At: r.src.pos(keyNode(root, "spec")), Text: "no spec.router.scheduler: requests are spread over the pods (planned as round-robin)"})
	}
}

// scalarWordText is a word with text of kvplan's choosing at a scalar's place.
func (r *reader) scalarWordText(text string, n *yaml.Node) word {
	src := r.src
	return word{text: text, at: func(off int) planfile.Pos { return src.at(n, off) }}
}

// envNode returns the value node of a container's env variable.
func envNode(c *yaml.Node, name string) *yaml.Node {
	var out *yaml.Node
	for _, e := range items(key(c, "env")) {
		if str(key(e, "name")) == name {
			out = key(e, "value")
		}
	}
	return out
}

// envWords splits an env variable that holds engine arguments as a shell's
// eval does (quotes group, $VARS expand), keeping each word's place, with
// the shell reader's bounds (shell.go).
func (r *reader) envWords(w *worker, name string, n *yaml.Node) []word {
	if n == nil {
		return nil
	}
	s := r.newShell(w, name, func(off int) planfile.Pos { return r.src.at(n, off) })
	f := s.parse(n.Value)
	if f == nil {
		return nil
	}
	var out []word
	syntax.Walk(f, func(node syntax.Node) bool {
		ce, ok := node.(*syntax.CallExpr)
		if !ok || s.refused {
			return !s.refused
		}
		for _, wd := range ce.Args {
			ws, ok := s.words(wd)
			if !ok {
				return false
			}
			out = append(out, ws...)
		}
		return false
	})
	if s.refused {
		return nil
	}
	return out
}
