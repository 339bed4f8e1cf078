package manifest

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/planfile"
)

// ReadCommandLine reads one engine command line, already split into words
// (`vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2`, as a shell gives
// it after `kvplan memory --`), with the same argument grammars as a
// manifest's containers: a manifest of one pool, named "worker". A line
// that starts with a flag is read as `vllm serve` arguments. Places are
// "name:1:col", col counting the words joined by single spaces.
func ReadCommandLine(name string, argv []string) (*Manifest, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("%s: no command line: want vllm serve MODEL [ARGS...]", name)
	}
	r := newCommandReader(name, strings.Join(argv, " "))
	words := make([]word, len(argv))
	col := 1
	for i, a := range argv {
		words[i] = fixedWord(a, planfile.Pos{File: name, Line: 1, Col: col})
		col += len(a) + 1
	}
	return r.commandLine(words)
}

// ReadCommandString reads one engine command line written as a shell
// would take it (`--vllm-args "vllm serve M --max-model-len 4096"`):
// quoting, variables and `VAR=x cmd` assignments are read as in a
// container's `sh -c` script. A line that starts with a flag is read as
// `vllm serve` arguments.
func ReadCommandString(name, line string) (*Manifest, error) {
	if strings.TrimSpace(line) == "" {
		return nil, fmt.Errorf("%s: empty command line: want vllm serve MODEL [ARGS...]", name)
	}
	r := newCommandReader(name, line)
	node := &yaml.Node{Kind: yaml.ScalarNode, Value: line, Line: 1, Column: 1}
	w := newWorker(r.src, "worker", "command line", planfile.Pos{File: name, Line: 1, Col: 1})
	words := r.shellWords(w, line, node)
	if words == nil {
		// No engine entry point: the arguments of vllm serve, or a line the
		// shell parser refused (then w holds the finding).
		if len(r.scriptErrors) > 0 {
			f := r.scriptErrors[0].f
			return nil, fmt.Errorf("%s: %s", f.At, f.Message)
		}
		return r.vllmArgs(w, line, node)
	}
	return r.commandLine(words)
}

func newCommandReader(name, line string) *reader {
	return &reader{src: &source{file: name, lines: []string{line}}, fromCommandLine: true,
		m: &Manifest{Path: name, Plan: &planfile.Plan{Path: name, Pools: map[string]*planfile.Pool{}}, Kinds: []string{"command line"}}}
}

// vllmArgs reads a line of bare arguments as `vllm serve` arguments.
func (r *reader) vllmArgs(w *worker, line string, node *yaml.Node) (*Manifest, error) {
	full := "vllm serve " + line
	words := r.shellWords(w, full, &yaml.Node{Kind: yaml.ScalarNode, Value: full, Line: node.Line, Column: node.Column})
	if words == nil && len(r.scriptErrors) > 0 {
		f := r.scriptErrors[0].f
		f.At.Col = max(1, f.At.Col-len("vllm serve ")) // the place in what the user wrote
		return nil, fmt.Errorf("%s: %s", f.At, f.Message)
	}
	if words == nil {
		return nil, fmt.Errorf("%s: %s is not an engine command line kvplan knows (vllm serve, python -m vllm.entrypoints.openai.api_server, python -m sglang.launch_server, trtllm-serve, python -m dynamo.vllm|sglang|trtllm)", r.src.file, safetext.Quote(line))
	}
	// The words' places count "vllm serve " that the user did not write.
	shift := len("vllm serve ")
	for i := range words {
		at := words[i].at
		words[i].at = func(off int) planfile.Pos {
			p := at(off)
			p.Col = max(1, p.Col-shift)
			return p
		}
	}
	return r.commandLine(words)
}

// commandLine reads words as one worker's command line.
func (r *reader) commandLine(words []word) (*Manifest, error) {
	w := newWorker(r.src, "worker", "command line", planfile.Pos{File: r.src.file, Line: 1, Col: 1})
	w.argsAt = w.at
	if strings.HasPrefix(words[0].text, "-") {
		w.note(w.at, "the line starts with a flag: read as vllm serve arguments")
		words = append([]word{fixedWord("vllm", w.at), fixedWord("serve", w.at)}, words...)
	}
	if !r.engineWorker(w, words, nil, "") {
		return nil, fmt.Errorf("%s: %s does not start an engine kvplan knows (vllm serve, python -m vllm.entrypoints.openai.api_server, python -m sglang.launch_server, trtllm-serve, python -m dynamo.vllm|sglang|trtllm)", r.src.file, safetext.Quote(words[0].text))
	}
	r.addWorker(w)
	if err := r.assemble(); err != nil {
		return nil, err
	}
	return r.m, nil
}
