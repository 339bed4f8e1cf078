// Package manifest reads Kubernetes manifests of LLM-serving deployments and
// turns them into the plan kvplan reviews, the same *planfile.Plan a plan
// file gives: a DynamoGraphDeployment (vLLM, SGLang and TensorRT-LLM
// workers), an llm-d DisaggregatedSet or LeaderWorkerSet, a KServe
// LLMInferenceService, vLLM production-stack Helm values, and a plain
// Deployment, StatefulSet or Pod whose container runs `vllm serve`.
//
// Engine arguments are parsed as the engines parse them (--flag value,
// --flag=value, JSON values, vLLM's --kv_transfer_config spelling), from a
// container's args, command or `sh -c` script. Every value keeps the
// file:line:col it came from (Plan.Pos), so findings point into the YAML.
// An argument kvplan does not know is listed as not understood, never
// guessed; a value that does not parse is a finding, and the rest is still
// reviewed. What a manifest lacks (GPU model, link, workload, SLO) comes
// from Complete.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/planfile"
)

// Manifest is what a manifest says about one deployment.
type Manifest struct {
	Path string
	// Plan holds what the manifest states: pools (role, workers, tp, engine
	// limits, memory limit, KV buffer device, offload cache, GPU when a node
	// selector names it), model, router, transport and runtime engine. It is
	// not validated and has no workload: Complete adds what is missing.
	Plan *planfile.Plan
	// Notes are what the reader assumed or skipped, at their places.
	Notes []Note
	// Findings are problems in the manifest itself: arguments not
	// understood, values that do not parse, workers with no model,
	// parallelism that does not match the GPUs.
	Findings []Finding
	// Kinds lists the documents read, "DynamoGraphDeployment vllm-agg-router".
	Kinds []string
	// Args lists, per pool, the engine arguments kvplan understood, in the
	// order written, each under the engine's own (first) name for it:
	// "-tp 2" is {Flag: "--tensor-parallel-size", Value: "2"}. A command
	// that takes engine settings of its own (kvplan memory's pasted vllm
	// serve line) reads them here, including those a plan has no key for.
	Args map[string][]Arg
}

// Arg is one engine argument as understood: its canonical flag name, its
// value as written ("true" or "false" for a switch), and its place.
type Arg struct {
	Flag  string
	Value string
	At    planfile.Pos
}

// reader holds the state of reading one manifest file.
type reader struct {
	src     *source
	m       *Manifest
	workers []*worker
	router  routerInfo
	// graphs groups workers of one DynamoGraphDeployment, whose vLLM workers
	// decode when the graph has prefill workers.
	graphs [][]*worker
	// fromCommandLine is set when reading one pasted command line: there is no
	// pod to hold GPUs and no router to note.
	fromCommandLine bool
}

// routerInfo is what a manifest says about the router in front of the pools.
type routerInfo struct {
	set      bool
	mode     string
	modeAt   planfile.Pos
	events   *bool // the router consumes KV events (Dynamo's --router-kv-events)
	eventsAt planfile.Pos
	dynamo   bool // a Dynamo frontend: KV events come from the workers' flags
	notes    []Note
}

// Read parses a manifest (one or more YAML documents) and returns what it
// says about the deployment. Errors that leave nothing to review (not YAML,
// no serving workers, workers serving different models or engines) carry
// file and line; problems in single values become Findings.
func Read(file string, data []byte) (*Manifest, error) {
	r := &reader{src: &source{file: file, lines: strings.Split(string(data), "\n")},
		m: &Manifest{Path: file, Plan: &planfile.Plan{Path: file, Pools: map[string]*planfile.Pool{}}}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var skipped []string
	for i := 0; ; i++ {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, yamlError(file, err)
		}
		root := resolve(&doc)
		if root == nil {
			continue // an empty document (comments only, or "---" at the end)
		}
		if root.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d:%d: document %d is not a mapping: want a Kubernetes object or Helm values", file, root.Line, root.Column, i+1)
		}
		kind, name := str(key(root, "kind")), str(path(root, "metadata", "name"))
		label := strings.TrimSpace(kind + " " + name)
		switch {
		case kind == "DynamoGraphDeployment":
			r.dynamo(root, name)
		case kind == "DisaggregatedSet":
			r.disaggregatedSet(root, name)
		case kind == "LeaderWorkerSet":
			r.leaderWorkerSet(root, name)
		case kind == "LLMInferenceService":
			r.llmInferenceService(root, name)
		case kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet" || kind == "ReplicaSet" || kind == "Job":
			r.workload(root, kind, name, path(root, "spec", "template"), key(key(root, "spec"), "replicas"))
		case kind == "Pod":
			r.workload(root, kind, name, root, nil)
		case kind == "" && key(root, "servingEngineSpec") != nil:
			label = "vLLM production-stack values"
			r.productionStack(root)
		default:
			if kind == "" {
				kind = "a document without kind"
			}
			skipped = append(skipped, label)
			r.m.Notes = append(r.m.Notes, Note{At: r.src.pos(root), Text: fmt.Sprintf("skipped %s: not a serving deployment kvplan reads", strings.TrimSpace(kind+" "+name))})
			continue
		}
		r.m.Kinds = append(r.m.Kinds, label)
	}
	if len(r.workers) == 0 {
		what := "no documents"
		if len(r.m.Kinds)+len(skipped) > 0 {
			what = "documents: " + strings.Join(append(append([]string{}, r.m.Kinds...), skipped...), ", ")
		}
		return nil, fmt.Errorf("%s: no serving workers found (%s): kvplan reads DynamoGraphDeployment, DisaggregatedSet, LeaderWorkerSet, LLMInferenceService, vLLM production-stack values, and Deployments, StatefulSets or Pods whose container runs vllm serve, python -m dynamo.vllm|sglang|trtllm or sglang.launch_server", file, what)
	}
	if err := r.assemble(); err != nil {
		return nil, err
	}
	return r.m, nil
}

// yamlError turns a YAML parser error ("yaml: line 3: ...") into file:line.
func yamlError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var line int
	if _, scanErr := fmt.Sscanf(msg, "line %d:", &line); scanErr == nil {
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
		return fmt.Errorf("%s:%d: not valid YAML: %s", file, line, msg)
	}
	return fmt.Errorf("%s: not valid YAML: %s", file, msg)
}

// addWorker registers a pool, renaming it when another document used the name.
func (r *reader) addWorker(w *worker) {
	base := w.name
	for n := 2; r.poolNamed(w.name); n++ {
		w.name = fmt.Sprintf("%s-%d", base, n)
	}
	r.workers = append(r.workers, w)
}

func (r *reader) poolNamed(name string) bool {
	for _, w := range r.workers {
		if w.name == name {
			return true
		}
	}
	return false
}

// engineWorker reads an engine's command line into w: it finds the entry
// point (or uses implied, the engine a format runs without saying so) and
// parses the arguments. It reports whether w runs an engine.
func (r *reader) engineWorker(w *worker, argv []word, implied *engineArgs, impliedWhy string) bool {
	g, rest, ok := identify(argv)
	if !ok || g == nil {
		if implied == nil {
			return false
		}
		g, rest = implied, argv
		if impliedWhy != "" {
			w.note(w.argsAt, "%s: %s", w.name, impliedWhy)
		}
	}
	if g.name == "dynamo.frontend" {
		return false
	}
	w.engine, w.entry = engineOf(g), g.name
	if len(argv) > 0 {
		w.engineAt = argv[0].pos()
	} else {
		w.engineAt = w.argsAt
	}
	g.parse(w, rest)
	r.finish(w)
	return true
}

// sortedNotes orders notes by place, then text.
func sortedNotes(ns []Note) []Note {
	sort.SliceStable(ns, func(i, j int) bool {
		a, b := ns[i].At, ns[j].At
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return ns
}
