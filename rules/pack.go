package rules

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/expr-lang/expr/vm"
	"github.com/kvplan/kvplan/internal/safefile"
	"github.com/kvplan/kvplan/internal/tomlpos"
)

// Severity of a rule and of its findings.
type Severity string

// Severities, from least to most severe.
const (
	Info Severity = "info"
	Warn Severity = "warn"
	Deny Severity = "deny"
)

// Rank orders severities: info 1, warn 2, deny 3, anything else 0.
func (s Severity) Rank() int {
	switch s {
	case Info:
		return 1
	case Warn:
		return 2
	case Deny:
		return 3
	}
	return 0
}

// ParseSeverity accepts "deny", "warn" or "info".
func ParseSeverity(s string) (Severity, error) {
	switch v := Severity(s); v {
	case Info, Warn, Deny:
		return v, nil
	}
	return "", fmt.Errorf("severity %q is not accepted: want deny, warn or info", s)
}

// DefaultFile names the embedded default pack in messages and findings.
const DefaultFile = "default.toml"

//go:embed default.toml
var defaultTOML []byte

// Rule is one [[rule]] of a pack.
//
//	[[rule]]
//	id        = "host-oom-staged-kv"       # lower-case letters, digits, - _ . /
//	severity  = "deny"                     # deny | warn | info
//	per_pool  = true                       # evaluate once per pool, with `pool` bound
//	when      = "pool.host_required_bytes > pool.host_limit_bytes"
//	deny_when = "..."                      # optional: raise the finding to deny
//	message   = "needs ${bytes(pool.host_required_bytes)}"  # template
//	why       = "FACTS §4 ..."             # evidence
//	fix       = "raise pool ${pool.name}'s memory_limit"    # template
//	fields    = ["pool.memory_limit"]      # plan-file fields, for locations
type Rule struct {
	ID       string   `toml:"id"`
	Severity Severity `toml:"severity"`
	PerPool  bool     `toml:"per_pool"`
	When     string   `toml:"when"`
	DenyWhen string   `toml:"deny_when"`
	Message  string   `toml:"message"`
	Why      string   `toml:"why"`
	Fix      string   `toml:"fix"`
	Fields   []string `toml:"fields"`

	File string `toml:"-"` // pack file ("default.toml" for the embedded pack)
	Line int    `toml:"-"` // line of the [[rule]] header

	whenPos, denyWhenPos, messagePos, fixPos exprPos
	when, denyWhen                           *vm.Program
	message, fix                             template

	// embedded marks a rule of the default pack, whose message and fix are
	// compiled the first time it fires (deferred), not at every load: most
	// rules fire on no plan, and their templates were three quarters of a
	// load. TestDefaultPackTemplates compiles them all, so an error in one
	// cannot wait for a plan that fires it. Rules from --rules packs are
	// compiled whole at load, their errors reported at once.
	embedded bool
	deferred *deferredTemplates
}

// deferredTemplates compiles a rule's templates once, on first use.
type deferredTemplates struct {
	once sync.Once
	err  error
}

// Pack is one rule file.
type Pack struct {
	File       string
	UseDefault bool     // [extend] use_default; true when absent
	Disable    []string // [extend] disable: rule ids to turn off
	Rules      []*Rule
}

type packDoc struct {
	Extend struct {
		UseDefault *bool    `toml:"use_default"`
		Disable    []string `toml:"disable"`
	} `toml:"extend"`
	Rule []*Rule `toml:"rule"`
}

var idRe = lazyRegexp(`^[a-z0-9][a-z0-9_.-]*(/[a-z0-9][a-z0-9_.-]*)*$`)

// ParsePack decodes one rule file (strictly: unknown keys are errors with
// file:line) and checks each rule's id and severity. It does not compile.
func ParsePack(file string, data []byte) (*Pack, error) {
	var doc packDoc
	idx, err := tomlpos.DecodeStrict(file, data, &doc)
	if err != nil {
		return nil, err
	}
	p := &Pack{File: file, UseDefault: doc.Extend.UseDefault == nil || *doc.Extend.UseDefault, Disable: doc.Extend.Disable}
	lines := strings.Split(string(data), "\n")
	var errs []error
	seen := map[string]int{}
	for i, r := range doc.Rule {
		r.File, r.Line = file, idx.InArray("rule", i)
		at := func(key string) int { return idx.InArray("rule", i, key) }
		bad := func(key, format string, args ...any) {
			errs = append(errs, &CompileError{File: file, Line: at(key), RuleID: r.ID, Field: key, Msg: fmt.Sprintf(format, args...)})
		}
		switch {
		case r.ID == "":
			bad("id", "missing: give the rule an id such as \"my-team/host-limit\"")
		case strings.HasPrefix(r.ID, RuntimeErrorPrefix):
			bad("id", "%q is reserved: ids starting with %q name rules that failed", r.ID, RuntimeErrorPrefix)
		case !idRe().MatchString(r.ID):
			bad("id", "%q is not accepted: want lower-case letters, digits, '-', '_', '.', '/'", r.ID)
		case seen[r.ID] > 0:
			bad("id", "duplicate id %q: also at line %d", r.ID, seen[r.ID])
		}
		if r.ID != "" {
			seen[r.ID] = r.Line
		}
		if _, err := ParseSeverity(string(r.Severity)); err != nil {
			bad("severity", "%v", err)
		}
		if strings.TrimSpace(r.When) == "" {
			bad("when", "missing: give an expr boolean, e.g. \"router.mode == 'kv' && !router.kv_events\"")
		}
		if strings.TrimSpace(r.Message) == "" {
			bad("message", "missing: say what is wrong, with the figures, e.g. \"needs ${bytes(pool.host_required_bytes)}\"")
		}
		r.whenPos = valuePos(lines, at("when"))
		r.denyWhenPos = valuePos(lines, at("deny_when"))
		r.messagePos = valuePos(lines, at("message"))
		r.fixPos = valuePos(lines, at("fix"))
		p.Rules = append(p.Rules, r)
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return p, nil
}

// exprPos is where a string value starts in its file: the line of its first
// character, and the 1-based file column of that character (0 when unknown,
// as for multi-line strings).
type exprPos struct {
	line, col int
}

// valuePos locates a key's string value on its line. A multi-line string
// whose opening quotes end the line starts on the next line.
func valuePos(lines []string, line int) exprPos {
	if line <= 0 || line > len(lines) {
		return exprPos{}
	}
	raw := lines[line-1]
	eq := strings.Index(raw, "=")
	if eq < 0 {
		return exprPos{line: line}
	}
	rest := raw[eq+1:]
	trimmed := strings.TrimLeft(rest, " \t")
	start := eq + 1 + len(rest) - len(trimmed) // index of the opening quote
	for _, q := range []string{`"""`, `'''`} {
		if strings.HasPrefix(trimmed, q) {
			if strings.TrimSpace(trimmed[3:]) == "" {
				return exprPos{line: line + 1, col: 1}
			}
			return exprPos{line: line, col: start + 4}
		}
	}
	return exprPos{line: line, col: start + 2}
}

// DefaultPack returns the embedded default pack, fresh: default.toml as
// ParsePack reads it, compiled in by go generate (default_gen.go).
func DefaultPack() *Pack {
	p := defaultPackParsed()
	for _, r := range p.Rules {
		r.embedded = true
	}
	return p
}

// DefaultPackTOML returns the text of the embedded default pack.
func DefaultPackTOML() []byte { return append([]byte(nil), defaultTOML...) }

// LoadPacks reads rule packs from files and directories (every *.toml in a
// directory, in name order, not recursing). Files ending in .expect.toml are
// rule tests and are skipped.
func LoadPacks(paths ...string) ([]*Pack, error) {
	var packs []*Pack
	var errs []error
	for _, path := range paths {
		files, err := packFiles(path)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			data, err := safefile.ReadFile(f, safefile.RulePack)
			if err != nil {
				return nil, fmt.Errorf("read rule pack: %w", err)
			}
			p, err := ParsePack(f, data)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			packs = append(packs, p)
		}
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return packs, nil
}

func packFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("rule pack: %w", err)
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("rule pack: %w", err)
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".toml") || strings.HasSuffix(n, ".expect.toml") {
			continue
		}
		files = append(files, filepath.Join(path, n))
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("rule pack: %s holds no *.toml file", path)
	}
	return files, nil
}
