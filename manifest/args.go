package manifest

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/internal/suggest"
	"github.com/kvplan/kvplan/planfile"
)

// word is one argument of a command line, with the place it was written:
// an element of a container's args or command, a word of a shell string, or
// a word of an environment variable that holds arguments.
type word struct {
	text string
	at   func(off int) planfile.Pos // place of byte off of text
	node *yaml.Node                 // the YAML scalar it is, when it is one whole
	// opaque says why the word's value is unknown: the shell would get it
	// from a command or process substitution, which kvplan never runs, or
	// would stop at it. The text is the word as written.
	opaque string
}

func (w word) pos() planfile.Pos { return w.at(0) }

// fixedWord is a word whose every byte sits at one place.
func fixedWord(text string, at planfile.Pos) word {
	return word{text: text, at: func(int) planfile.Pos { return at }}
}

// argKind says how a flag takes its value, as argparse does.
type argKind uint8

const (
	takesValue argKind = iota // --flag value or --flag=value
	isBool                    // --flag (and --no-flag when negatable)
	takesList                 // nargs="*": the words up to the next flag
	optValue                  // nargs="?": --flag, or --flag value
)

// value is what a flag was given.
type value struct {
	flag string // the flag as written, e.g. "--tensor-parallel-size"
	text string // the value ("" for a bool flag)
	on   bool   // a bool flag's value: false for --no-flag
	list []word // a list flag's values
	at   planfile.Pos
}

// flagSpec is one argument an engine accepts. apply is nil for arguments
// kvplan understands but that change nothing it plans (--served-model-name,
// --port); sub handles dotted JSON keys (--kv-transfer-config.kv_role cpu).
type flagSpec struct {
	names     []string
	kind      argKind
	negatable bool // argparse.BooleanOptionalAction: --no-<name> too
	apply     func(w *worker, v value) error
	sub       func(w *worker, key string, v value) error
}

// engineArgs is the argument grammar of one engine entry point.
type engineArgs struct {
	name string // "vllm serve", "dynamo.vllm", ...
	// underscores: vLLM's FlexibleArgumentParser reads --max_model_len as
	// --max-model-len (the name only, not the value).
	underscores bool
	flags       []*flagSpec
	// positional takes a word that is no flag's value (vllm serve MODEL);
	// it returns false when the word is not understood.
	positional func(w *worker, wd word) bool
	index      map[string]*flagSpec
}

func (e *engineArgs) lookup(name string) (*flagSpec, bool) {
	if e.index == nil {
		e.index = map[string]*flagSpec{}
		for _, f := range e.flags {
			for _, n := range f.names {
				e.index[n] = f
			}
		}
	}
	if e.underscores && strings.HasPrefix(name, "--") {
		name = "--" + strings.ReplaceAll(name[2:], "_", "-")
	}
	f, ok := e.index[name]
	return f, ok
}

// didYouMean offers the closest of the grammar's flag names to an unknown
// one (" (did you mean -tp?)"), or "".
func (e *engineArgs) didYouMean(name string) string {
	var names []string
	for _, f := range e.flags {
		names = append(names, f.names...)
	}
	if c := suggest.Closest(name, names, 1); len(c) > 0 {
		return " (did you mean " + c[0] + "?)"
	}
	return ""
}

// parse reads words as the engine's argument parser would and applies each
// flag to w. Flags kvplan does not know are reported as not understood, with
// the word after them when it is not a flag (it may be their value); a value
// that does not parse is a finding at the value. Nothing is guessed.
func (e *engineArgs) parse(w *worker, words []word) {
	defer w.closeNotUnderstood(e.name)
	positionalOnly := false
	for i := 0; i < len(words); i++ {
		wd := words[i]
		t := wd.text
		if wd.opaque != "" {
			w.opaqueWord(e.name, wd, "")
			continue
		}
		if positionalOnly || !strings.HasPrefix(t, "-") || t == "-" || isNumber(t) {
			if e.positional == nil || !e.positional(w, wd) {
				w.notUnderstood(e.name, []word{wd})
			}
			continue
		}
		if t == "--" {
			positionalOnly = true
			continue
		}
		name, inline, hasInline := strings.Cut(t, "=")
		valueAt := func() planfile.Pos { return wd.at(len(name) + 1) }
		spec, ok := e.lookup(name)
		on := true
		if !ok && strings.HasPrefix(name, "--no-") {
			if s, found := e.lookup("--" + strings.TrimPrefix(name, "--no-")); found && s.negatable {
				spec, ok, on = s, true, false
			}
		}
		subKey := ""
		if !ok {
			if base, sub, dotted := strings.Cut(name, "."); dotted {
				if s, found := e.lookup(base); found && s.sub != nil {
					spec, ok, subKey = s, true, sub
				}
			}
		}
		if !ok {
			group := []word{wd}
			if !hasInline && i+1 < len(words) && !strings.HasPrefix(words[i+1].text, "-") {
				group = append(group, words[i+1])
				i++
			}
			w.notUnderstoodHint(e.name, group, func() string { return e.didYouMean(name) })
			continue
		}
		v := value{flag: name, on: on, at: wd.pos()}
		switch {
		case subKey != "" || spec.kind == takesValue || (spec.kind == optValue && (hasInline || (i+1 < len(words) && !strings.HasPrefix(words[i+1].text, "-")))):
			switch {
			case hasInline:
				v.text, v.at = inline, valueAt()
			case i+1 < len(words):
				i++
				if words[i].opaque != "" {
					w.opaqueWord(e.name, words[i], name)
					continue
				}
				v.text, v.at = words[i].text, words[i].pos()
			default:
				w.badValue(name, wd.pos(), fmt.Sprintf("%s needs a value and the command line ends", name), "give it a value or remove it")
				continue
			}
		case spec.kind == takesList:
			if hasInline {
				v.list = []word{{text: inline, at: func(off int) planfile.Pos { return wd.at(len(name) + 1 + off) }}}
			}
			for i+1 < len(words) && !strings.HasPrefix(words[i+1].text, "-") {
				i++
				if words[i].opaque != "" {
					w.opaqueWord(e.name, words[i], name)
					continue
				}
				v.list = append(v.list, words[i])
			}
		case spec.kind == isBool && hasInline:
			b, okb := parseBool(inline)
			if !okb {
				w.badValue(name, valueAt(), fmt.Sprintf("%s takes no value (got %s)", name, safetext.Quote(inline)), "write "+name+" alone, or --no-"+strings.TrimPrefix(name, "--"))
				continue
			}
			v.on = b && on
		}
		var err error
		switch {
		case subKey != "":
			err = spec.sub(w, subKey, v)
		case spec.apply != nil:
			err = spec.apply(w, v)
		}
		if err != nil {
			w.badValue(name, v.at, fmt.Sprintf("%s %s: %v", name, quoteIfNeeded(v.text), err), "")
			continue
		}
		w.args = append(w.args, understood(spec, subKey, v))
	}
}

// understood is an argument as Manifest.Args lists it.
func understood(spec *flagSpec, subKey string, v value) Arg {
	a := Arg{Flag: spec.names[0], Value: v.text, At: v.at}
	if subKey != "" {
		a.Flag += "." + subKey
	}
	switch spec.kind {
	case isBool:
		a.Value = fmt.Sprint(v.on)
	case takesList:
		texts := make([]string, len(v.list))
		for i, wd := range v.list {
			texts[i] = wd.text
		}
		a.Value = strings.Join(texts, " ")
	}
	return a
}

// isNumber reports whether a word that starts with "-" is a negative number
// (argparse takes those as values, not flags).
func isNumber(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	for _, r := range s[1:] {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return true
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "1", "yes", "on":
		return true, true
	case "false", "0", "no", "off":
		return false, true
	}
	return false, false
}

func quoteIfNeeded(s string) string {
	if s == "" || len(s) > safetext.MaxQuoted || strings.ContainsAny(s, " \t\"'") {
		return safetext.Quote(s)
	}
	return s
}

// jsonObject parses a JSON object value such as --kv-transfer-config's.
func jsonObject(s string) (map[string]any, error) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return m, nil
}

// jsonString returns m[k] when it is a string.
func jsonString(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}
