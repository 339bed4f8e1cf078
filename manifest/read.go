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
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/internal/safetext"
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
	// names holds the pool names taken and next the suffix to try next for
	// a name used again ("worker-2"), so renaming stays linear.
	names map[string]bool
	next  map[string]int
	// scriptErrors are the shell scripts refused (shell.go); reported those
	// whose worker's findings reach the manifest already.
	scriptErrors []scriptError
	reported     map[*worker]bool
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
			return nil, yamlError(file, data, err)
		}
		root := resolve(&doc)
		if root == nil || root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			// An empty document: comments only, "---" at the end or twice in
			// a row, as helm template prints them, or an explicit null.
			continue
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
	if len(r.workers) == 0 && len(r.scriptErrors) > 0 {
		return nil, r.scriptErrorsErr()
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
	// A script refused in a container that started no pool: its finding
	// would be lost with the worker.
	for _, se := range r.scriptErrors {
		if !r.reported[se.w] {
			r.m.Findings = append(r.m.Findings, se.f)
		}
	}
	return r.m, nil
}

// scriptErrorsErr is the error of a manifest whose engines all sit in
// refused shell scripts: the first refusal, at its place.
func (r *reader) scriptErrorsErr() error {
	f := r.scriptErrors[0].f
	more := ""
	if n := len(r.scriptErrors) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more script(s) refused)", n)
	}
	return fmt.Errorf("%s: %s%s; no serving worker is left to review", f.At, f.Message, more)
}

// yamlError turns a YAML parser error ("yaml: line 3: ...") into file:line.
// The parser's errors about the bytes themselves (not UTF-8, a NUL) carry
// no line: the first such byte of data gives line and column.
func yamlError(file string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var line int
	if _, scanErr := fmt.Sscanf(msg, "line %d:", &line); scanErr == nil {
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
		return fmt.Errorf("%s:%d: not valid YAML: %s", file, line, safetext.Clip(msg, 200))
	}
	if line, col, what, ok := badYAMLByte(data); ok {
		return fmt.Errorf("%s:%d:%d: not valid YAML: %s (%s)", file, line, col, safetext.Clip(msg, 200), what)
	}
	return fmt.Errorf("%s: not valid YAML: %s", file, safetext.Clip(msg, 200))
}

// badYAMLByte finds the first character YAML does not allow in a UTF-8
// stream (YAML 1.2 §5.1: tab, line ends and printable characters only):
// its line and column (in characters) and what it is.
func badYAMLByte(data []byte) (line, col int, what string, ok bool) {
	line, col = 1, 1
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a byte order mark
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			return line, col, fmt.Sprintf("byte 0x%02x is not UTF-8", data[i]), true
		case r == '\n':
			line, col = line+1, 0
		case r == '\t' || r == '\r' || r == 0x85:
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0xfffe || r == 0xffff:
			return line, col, fmt.Sprintf("control character U+%04X", r), true
		}
		i += n
		col++
	}
	return 0, 0, "", false
}

// addWorker registers a pool, renaming it when another document used the name.
func (r *reader) addWorker(w *worker) {
	if r.names == nil {
		r.names, r.next = map[string]bool{}, map[string]int{}
	}
	base := w.name
	for n := max(2, r.next[base]); r.names[w.name]; n++ {
		w.name = fmt.Sprintf("%s-%d", base, n)
		r.next[base] = n + 1
	}
	r.names[w.name] = true
	r.workers = append(r.workers, w)
	r.report(w)
}

// report marks w's findings as reaching the manifest (assemble copies a
// pool's; a Dynamo frontend copies its own).
func (r *reader) report(w *worker) {
	if r.reported == nil {
		r.reported = map[*worker]bool{}
	}
	r.reported[w] = true
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
