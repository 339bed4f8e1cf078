package manifest

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/planfile"
	"github.com/kvplan/kvplan/units"
)

// Finding IDs of the manifest reader. They are findings, not errors: the
// rest of the manifest is still reviewed.
const (
	IDNotUnderstood = "manifest/not-understood" // an argument kvplan does not know: listed, never guessed
	IDBadValue      = "manifest/bad-value"      // a value that does not parse; the engine would refuse it too
	IDNoModel       = "manifest/no-model"       // a worker that names no model
	IDGPUCount      = "manifest/gpu-count"      // parallelism that does not match the GPUs a worker gets
)

// Severities, as the rules name them.
const (
	Deny = "deny"
	Warn = "warn"
	Info = "info"
)

// Finding is a problem the manifest reader found, at its place.
type Finding struct {
	ID       string
	Severity string
	Pool     string
	At       planfile.Pos
	Field    string // the plan field concerned, when there is one
	Message  string
	Why      string
	Fix      string
}

// Note is something kvplan assumed or skipped while reading, at the place
// it concerns (zero when it concerns nothing written).
type Note struct {
	At   planfile.Pos
	Text string
}

// String renders a note as "file:line:col: text".
func (n Note) String() string {
	if n.At.IsZero() {
		return n.Text
	}
	return n.At.String() + ": " + n.Text
}

// envVar is one environment variable of a container, with the place of its
// value. fromRef is set for valueFrom (a secret, a field of the pod), whose
// value a manifest does not hold.
type envVar struct {
	value   string
	at      planfile.Pos
	fromRef bool
}

// worker is one pool of identical engine workers as a manifest describes it,
// before it becomes a planfile.Pool. Every value keeps the place it came
// from, keyed by the pool field it fills.
type worker struct {
	src  *source
	name string       // pool name
	at   planfile.Pos // the service, role or container
	what string       // "DynamoGraphDeployment service VllmDecodeWorker", for messages

	p     planfile.Pool
	place map[string]planfile.Pos // pool field ("tp", "memory_limit") → place

	engine, entry    string // "vllm", and how it is started: "dynamo.vllm", "vllm serve"
	engineAt         planfile.Pos
	engineVersion    string
	engineVersionAt  planfile.Pos
	model            string
	modelAt          planfile.Pos
	modelDefault     string // what the entry point loads when no model is named
	roleSet          bool   // an engine flag or the manifest's structure set the role
	replicas         int    // pods (or pod groups) of this pool; 0 = 1
	gpusPerPod       int    // nvidia.com/gpu (or Dynamo's gpu) limit of one pod; -1 = not stated
	gpusAt           planfile.Pos
	gpusBad          bool // a GPU count that is not one (a finding says so)
	podsPerWorker    int  // multinode / leader-worker groups: pods one engine spans; 0 = 1
	tp, pp, dp       int
	ep               int  // expert-parallel ranks the engine's flag names (SGLang --ep-size, TRT-LLM --expert-parallel-size); 0 = none
	enableEP         bool // vLLM --enable-expert-parallel: EP = tp × dp
	dpAttention      bool // SGLang --enable-dp-attention, TRT-LLM --enable-attention-dp
	dpAttentionAt    planfile.Pos
	a2a              string // SGLang --moe-a2a-backend
	a2aAt            planfile.Pos
	specTokens       int    // speculative tokens a step
	specModel        string // the draft model ("ngram" for prompt lookup); "" = the model's MTP layers
	specAlgorithm    string // SGLang --speculative-algorithm
	specAt           planfile.Pos
	blockSize        int
	blockAt          planfile.Pos
	kvDtype          string
	kvDtypeAt        planfile.Pos
	weightDtype      string
	weightDtypeAt    planfile.Pos
	publishes        *bool        // KV events published: nil = the entry point's default
	publishesAt      planfile.Pos // the flag that says so
	argsAt           planfile.Pos // where the engine's arguments are written
	ucxTLS           []string
	ucxAt            planfile.Pos
	kvTransfer       map[string]any // --kv-transfer-config
	kvTransferAt     planfile.Pos
	kvEvents         map[string]any // --kv-events-config
	prefixCaching    *bool
	connectors       []string // Dynamo's deprecated --connector list
	env              map[string]envVar
	extraEngineFiles []value // engine configuration files inside the image (--extra-engine-args)
	pendingLMCache   float64 // production-stack cpuOffloadingBufferSize, GiB per rank, counted once tp is known
	pendingLMCacheAt planfile.Pos

	// A Dynamo frontend's router, read with the frontend's grammar.
	routerMode     string
	routerModeAt   planfile.Pos
	routerEvents   *bool // the frontend consumes KV events: nil = its default (yes)
	routerEventsAt planfile.Pos

	notes    []Note
	findings []Finding
	args     []Arg // the arguments understood, canonical names (Manifest.Args)

	// Arguments not understood: the finding of each kind (flag name or
	// word), how often it was given, and how many came past
	// maxNotUnderstood kinds.
	unknownAt     map[string]int // kind → index in findings
	unknownTimes  map[string]int
	unknownMore   int
	unknownMoreAt planfile.Pos
}

// maxNotUnderstood is the most not-understood findings of one worker: one
// a kind of argument (a flag given 95,000 times is one finding that says
// so), and past this many kinds one finding counts the rest. 95,000
// distinct unknown flags printed 64 MB of findings.
const maxNotUnderstood = 20

func newWorker(src *source, name, what string, at planfile.Pos) *worker {
	return &worker{src: src, name: name, what: what, at: at, place: map[string]planfile.Pos{},
		gpusPerPod: -1, env: map[string]envVar{}}
}

// set records where a pool field came from.
func (w *worker) set(field string, at planfile.Pos) { w.place[field] = at }

func (w *worker) note(at planfile.Pos, format string, args ...any) {
	w.notes = append(w.notes, Note{At: at, Text: fmt.Sprintf(format, args...)})
}

func (w *worker) finding(f Finding) {
	f.Pool = w.name
	w.findings = append(w.findings, f)
}

// ReviewIgnoresIt ends the message of a not-understood finding: a review
// goes on without the argument. kvplan memory, which stops instead, says so
// in its place.
const ReviewIgnoresIt = "; the review ignores it"

// notUnderstood lists arguments kvplan does not know.
func (w *worker) notUnderstood(entry string, words []word) {
	w.notUnderstoodHint(entry, words, func() string { return "" })
}

// notUnderstoodHint is notUnderstood with a did-you-mean (" (did you mean
// -tp?)") after the argument.
// hint is asked only for an argument that gets a finding: it compares the
// name with every flag of the grammar.
func (w *worker) notUnderstoodHint(entry string, words []word, hint func() string) {
	if !w.newUnknown(words[0]) {
		return
	}
	texts := make([]string, len(words))
	for i, wd := range words {
		texts[i] = wd.text
	}
	arg := strings.Join(texts, " ")
	w.finding(Finding{ID: IDNotUnderstood, Severity: Info, At: words[0].pos(),
		Message: fmt.Sprintf("%s: %s argument %s is not understood by kvplan%s%s", w.name, entry, safetext.Quote(arg), hint(), ReviewIgnoresIt),
		Why:     "kvplan reads the engine arguments that change memory, parallelism, KV transfer and routing; it lists every other argument instead of guessing what it does",
		Fix:     "check that the argument is spelled as the engine expects; if it changes memory or parallelism, say so in a plan file next to the manifest",
	})
}

// opaqueWord reports a word whose value kvplan cannot know: the shell would
// get it by running a command (a command or process substitution), which
// kvplan never does, or would stop at it; flag names the flag it is the
// value of, if any.
func (w *worker) opaqueWord(entry string, wd word, flag string) {
	if !w.newUnknown(wd) {
		return
	}
	what := fmt.Sprintf("argument %s", safetext.Quote(wd.text))
	if flag != "" {
		what = fmt.Sprintf("argument %s %s", flag, safetext.Quote(wd.text))
	}
	w.finding(Finding{ID: IDNotUnderstood, Severity: Info, At: wd.pos(),
		Message: fmt.Sprintf("%s: %s %s is %s, so its value is unknown%s", w.name, entry, what, wd.opaque, ReviewIgnoresIt),
		Why:     "nothing in a manifest is ever run by kvplan: a value the shell would get from a command is unknown to the review",
		Fix:     "write the value itself in the command line, or say it in a plan file next to the manifest",
	})
}

// newUnknown counts an argument not understood and reports whether it
// gets a finding of its own: the first of its kind, within maxNotUnderstood.
func (w *worker) newUnknown(first word) bool {
	kind, _, _ := strings.Cut(first.text, "=")
	if w.unknownAt == nil {
		w.unknownAt, w.unknownTimes = map[string]int{}, map[string]int{}
	}
	w.unknownTimes[kind]++
	if _, seen := w.unknownAt[kind]; seen {
		return false
	}
	if len(w.unknownAt) >= maxNotUnderstood {
		if w.unknownMore == 0 {
			w.unknownMoreAt = first.pos()
		}
		w.unknownMore++
		delete(w.unknownTimes, kind) // past the cap only the count is kept
		return false
	}
	w.unknownAt[kind] = len(w.findings)
	return true
}

// closeNotUnderstood says how often an argument not understood was given,
// and counts those past maxNotUnderstood in one finding.
func (w *worker) closeNotUnderstood(entry string) {
	for kind, i := range w.unknownAt {
		if n := w.unknownTimes[kind]; n > 1 {
			f := &w.findings[i]
			f.Message = strings.TrimSuffix(f.Message, ReviewIgnoresIt) + fmt.Sprintf(" (given %s times)", units.Thousands(int64(n))) + ReviewIgnoresIt
		}
	}
	if w.unknownMore > 0 {
		w.finding(Finding{ID: IDNotUnderstood, Severity: Info, At: w.unknownMoreAt,
			Message: fmt.Sprintf("%s: … and %s more %s arguments that kvplan does not understand, from here on (the first %d kinds are listed)%s",
				w.name, units.Thousands(int64(w.unknownMore)), entry, maxNotUnderstood, ReviewIgnoresIt),
			Why: "kvplan lists at most one finding per kind of argument it does not understand, and at most 20 kinds a worker",
			Fix: "check that the arguments are spelled as the engine expects"})
	}
	w.unknownAt, w.unknownTimes, w.unknownMore = nil, nil, 0
}

// badValue reports a value that does not parse.
func (w *worker) badValue(flag string, at planfile.Pos, msg, fix string) {
	if fix == "" {
		fix = "correct the value; the engine refuses it at start"
	}
	w.finding(Finding{ID: IDBadValue, Severity: Deny, At: at, Message: w.name + ": " + msg,
		Why: "an engine argument that does not parse stops the engine at start; kvplan reviews the rest with the engine's default for it",
		Fix: fix})
}

// setRole sets the pool's role from an engine flag or the manifest's structure.
func (w *worker) setRole(role string, at planfile.Pos) {
	w.p.Role, w.roleSet = role, true
	w.set("role", at)
}

// workers is the pool's worker count: replicas (pods or pod groups) times
// the plan's workers in each (SGLang's --dp-size without DP attention
// starts that many replicas; every other layout is one worker).
func (w *worker) workers() int {
	_, per := w.layoutCounts()
	return max(1, w.replicas) * per
}

// layoutCounts is layout's answer without writing the pool.
func (w *worker) layoutCounts() (gpus, workers int) {
	c := *w
	c.notes, c.findings, c.place = nil, nil, map[string]planfile.Pos{}
	return c.layout()
}

// fork returns a fresh worker with w's identity and what the pod level set
// (replicas, pods per worker, role, GPU), to read one container into.
func (w *worker) fork() *worker {
	c := newWorker(w.src, w.name, w.what, w.at)
	c.replicas, c.podsPerWorker = w.replicas, w.podsPerWorker
	c.p.Role, c.roleSet, c.p.GPU = w.p.Role, w.roleSet, w.p.GPU
	c.tp, c.pp, c.dp = w.tp, w.pp, w.dp
	c.ep, c.enableEP, c.dpAttention, c.dpAttentionAt, c.a2a, c.a2aAt = w.ep, w.enableEP, w.dpAttention, w.dpAttentionAt, w.a2a, w.a2aAt
	for k, v := range w.place {
		c.place[k] = v
	}
	for k, v := range w.env {
		c.env[k] = v
	}
	c.notes = append(c.notes, w.notes...)
	c.findings = append(c.findings, w.findings...)
	return c
}
