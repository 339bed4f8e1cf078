package rules

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/internal/suggest"
	"github.com/kvplan/kvplan/units"
)

// Sandbox bounds. Every rule expression is parsed with at most MaxNodes AST
// nodes and every evaluation runs in a VM whose memory budget is MemoryBudget
// (expr's unit: roughly one per element a range, map or filter allocates);
// Budget (budget.go) bounds steps, string bytes and time as well.
const (
	MaxNodes     = 1000
	MemoryBudget = 100_000
)

// disabledBuiltins are expr builtins rules may not call: the clock (now,
// date, timezone, duration), encoders that can blow up a message
// (toJSON, fromJSON, toBase64, fromBase64) and repeat. expr has no builtin
// that reads files, the environment or the network, and rules cannot
// define functions.
var disabledBuiltins = []string{"now", "date", "timezone", "duration", "toJSON", "fromJSON", "toBase64", "fromBase64", "repeat"}

// RuntimeErrorPrefix starts the rule id of a finding reporting a rule that
// failed while being evaluated: "rule-error/<id>".
const RuntimeErrorPrefix = "rule-error/"

// CompileError is a rule that cannot be loaded: a bad id or severity, or an
// expression that does not parse or type-check against Env.
// It prints as "file:line:col: field: message [rule-id]".
type CompileError struct {
	File    string
	Line    int    // file line of the problem
	Col     int    // file column of the problem; 0 when unknown
	ExprCol int    // 1-based column inside the expression (when, deny_when, or a ${} placeholder); 0 when not an expression error
	RuleID  string // "" when the id itself is missing
	Field   string // when, deny_when, message, fix, id, severity, fields
	Msg     string
	Snippet string // expr's caret snippet, for a second line of output
}

func (e *CompileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	if e.RuleID != "" {
		fmt.Fprintf(&b, " [%s]", e.RuleID)
	}
	return b.String()
}

func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// Set is a compiled, layered list of rules, ready to evaluate. It is safe
// for concurrent use.
type Set struct {
	Rules []*Rule
	// Budget bounds each evaluation and each Evaluate; zero fields mean
	// DefaultBudget's. Set it before evaluating, not during.
	Budget Budget
	byID   map[string]*Rule
}

// Rule returns the rule with the given id, or nil.
func (s *Set) Rule(id string) *Rule { return s.byID[id] }

// Options choose the packs of a Set.
type Options struct {
	Paths     []string // user rule files or directories, in order of precedence (later wins)
	NoDefault bool     // leave out the embedded default pack (--no-default-rules)
	Disable   []string // rule ids to turn off (--disable)
	Budget    Budget   // zero fields mean DefaultBudget's
}

// Load reads the user packs named in opts, layers them over the embedded
// default pack and compiles the result.
func Load(opts Options) (*Set, error) {
	packs, err := LoadPacks(opts.Paths...)
	if err != nil {
		return nil, err
	}
	if !opts.NoDefault {
		packs = append([]*Pack{DefaultPack()}, packs...)
	}
	return CompileWithBudget(packs, opts.Budget, opts.Disable...)
}

// Compile layers packs in order and compiles every rule against Env.
//
// Layering: a rule whose id is already present replaces it in place; a new
// id is appended. When any pack after the first says
// [extend] use_default = false, the rules of the default pack (File ==
// DefaultFile) that no later pack replaced are dropped. Ids named in a pack's
// [extend] disable or in disable are removed; an id that names no rule of
// any pack is an error with a suggestion.
func Compile(packs []*Pack, disable ...string) (*Set, error) {
	return CompileWithBudget(packs, Budget{}, disable...)
}

// CompileWithBudget is Compile under budget: a load compiles at most
// budget.Rules rules, within budget.CompileTime, and the Set evaluates under
// budget. Zero fields mean DefaultBudget's.
func CompileWithBudget(packs []*Pack, budget Budget, disable ...string) (*Set, error) {
	b := budget.withDefaults()
	useDefault := true
	for _, p := range packs {
		if p.File != DefaultFile && !p.UseDefault {
			useDefault = false
		}
	}
	var order []string
	byID := map[string]*Rule{}
	var errs []error
	userRule := map[string]*Rule{} // a user rule may replace a default one, not another user rule
	for _, p := range packs {
		if p.File == DefaultFile {
			continue
		}
		for _, r := range p.Rules {
			if first, ok := userRule[r.ID]; ok && first.File != r.File {
				errs = append(errs, &CompileError{File: r.File, Line: r.Line, RuleID: r.ID, Field: "id",
					Msg: fmt.Sprintf("duplicate rule id %q: also defined at %s:%d; rename one (a user rule may replace a default rule, not another user rule)", r.ID, first.File, first.Line)})
				continue
			}
			userRule[r.ID] = r
		}
	}
	for _, p := range packs {
		if p.File == DefaultFile && !useDefault {
			continue
		}
		for _, r := range p.Rules {
			if _, ok := byID[r.ID]; !ok {
				order = append(order, r.ID)
			}
			byID[r.ID] = r
		}
	}
	known := map[string]bool{}
	for _, p := range packs {
		for _, r := range p.Rules {
			known[r.ID] = true
		}
	}
	off := map[string]bool{}
	for _, p := range packs {
		for _, id := range p.Disable {
			off[id] = true
			if !known[id] {
				errs = append(errs, fmt.Errorf("%s: [extend] disable: no rule %q%s", p.File, id, suggest.DidYouMean(id, order)))
			}
		}
	}
	for _, id := range disable {
		off[id] = true
		if !known[id] {
			errs = append(errs, fmt.Errorf("--disable %s: no rule %q%s", id, id, suggest.DidYouMean(id, order)))
		}
	}
	n := 0
	for _, id := range order {
		if !off[id] {
			n++
		}
	}
	if n > b.Rules {
		return nil, fmt.Errorf("rule packs hold %d rules: %w; split them, or turn some off", n,
			&BudgetError{Budget: "rule count", Limit: units.Thousands(int64(b.Rules)) + " rules per load"})
	}
	s := &Set{Budget: budget, byID: map[string]*Rule{}}
	start := time.Now()
	for _, id := range order {
		if off[id] {
			continue
		}
		r := byID[id]
		if time.Since(start) > b.CompileTime {
			return nil, fmt.Errorf("compiling rule %s (%s:%d): %w", r.ID, r.File, r.Line,
				&BudgetError{Budget: "compile time", Limit: b.CompileTime.String() + " per load"})
		}
		if err := r.compile(); err != nil {
			errs = append(errs, err)
			continue
		}
		s.Rules = append(s.Rules, r)
		s.byID[id] = r
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return s, nil
}

func baseOptions() []expr.Option {
	opts := []expr.Option{expr.Env(Env{}), expr.MaxNodes(MaxNodes)}
	for _, b := range disabledBuiltins {
		opts = append(opts, expr.DisableBuiltin(b))
	}
	opts = append(opts, budgetOptions()...)
	return append(opts, helperOptions()...)
}

// boolConfig (when, deny_when) and anyConfig (template placeholders) are
// built on first use (a rule pack load), not at start-up: commands that
// evaluate no rule do not pay for them.
var (
	boolConfig = sync.OnceValue(func() *conf.Config { return exprConfig(append(baseOptions(), expr.AsBool())) })
	anyConfig  = sync.OnceValue(func() *conf.Config { return exprConfig(baseOptions()) })
)

func (r *Rule) compile() error {
	if r.embedded && r.takePrecompiled() {
		r.deferred = &deferredTemplates{}
		return nil
	}
	return r.compileText()
}

// compileText compiles the rule from its text: its expressions, its
// templates (deferred for a default rule) and the check of its fields.
func (r *Rule) compileText() error {
	var errs []error
	var err error
	if r.when, err = r.compileExpr("when", r.When, r.whenPos, boolConfig()); err != nil {
		errs = append(errs, err)
	}
	if strings.TrimSpace(r.DenyWhen) != "" {
		if r.denyWhen, err = r.compileExpr("deny_when", r.DenyWhen, r.denyWhenPos, boolConfig()); err != nil {
			errs = append(errs, err)
		}
	}
	if r.embedded {
		r.deferred = &deferredTemplates{}
	} else if err := r.compileTemplates(); err != nil {
		errs = append(errs, err)
	}
	for _, f := range r.Fields {
		if !fieldRe().MatchString(f) {
			errs = append(errs, &CompileError{File: r.File, Line: r.Line, RuleID: r.ID, Field: "fields",
				Msg: fmt.Sprintf("%q is not a dotted plan-file field such as \"pools.prefill.memory_limit\", \"pools.*.role\" or, in a per_pool rule, \"pool.memory_limit\"", f)})
		} else if strings.HasPrefix(f, "pool.") && !r.PerPool {
			errs = append(errs, &CompileError{File: r.File, Line: r.Line, RuleID: r.ID, Field: "fields",
				Msg: fmt.Sprintf("%q names pool, which only a per_pool rule has: set per_pool = true or write \"pools.*.%s\"", f, strings.TrimPrefix(f, "pool."))})
		}
	}
	if len(errs) > 0 {
		return joinErrors(errs)
	}
	return nil
}

var fieldRe = lazyRegexp(`^[a-z_][a-z0-9_-]*(\.([a-z0-9_-]+|\*))*$`)

// lazyRegexp compiles a pattern on first use, not at start-up.
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

// compileExpr compiles src; base locates src in its file (offset adds to the
// expression's own line 1, column 1, for placeholders inside templates).
func (r *Rule) compileExpr(field, src string, pos exprPos, config *conf.Config) (*vm.Program, error) {
	prog, err := compileBudgeted(src, config)
	if err == nil {
		return prog, nil
	}
	ce := &CompileError{File: r.File, Line: pos.line, RuleID: r.ID, Field: field, Msg: err.Error()}
	if ce.Line == 0 {
		ce.Line = r.Line
	}
	var fe *file.Error
	if errors.As(err, &fe) {
		// expr quotes what it refuses (a regexp of 1,000 parentheses was
		// echoed whole): every long run is cut to 80 bytes.
		ce.Msg = safetext.ClipWords(humanize(fe.Message, src), safetext.MaxQuoted)
		ce.Snippet = strings.TrimPrefix(fe.Snippet, "\n")
		ce.ExprCol = fe.Column + 1
		if pos.line > 0 {
			ce.Line = pos.line + fe.Line - 1
			if fe.Line == 1 && pos.col > 0 {
				ce.Col = pos.col + fe.Column
			} else if fe.Line > 1 || pos.col == 1 {
				ce.Col = fe.Column + 1
			}
		}
	} else if strings.HasPrefix(err.Error(), "expected bool") {
		ce.Msg = strings.Replace(err.Error(), "expected bool", "want a boolean expression", 1)
		ce.Col = pos.col
		ce.ExprCol = 1
	}
	return nil, ce
}

var (
	noFieldRe     = lazyRegexp(`type rules\.(\w+) has no field (\w+)`)
	unknownNameRe = lazyRegexp(`^unknown name (\w+)`)
	goTypeRe      = lazyRegexp(`rules\.(\w+)`)
)

// humanize rewrites expr's messages in the words of the rule language:
// "type rules.RouterEnv has no field kv_event" becomes
// "router has no field kv_event; did you mean kv_events?".
func humanize(msg, _ string) string {
	if m := noFieldRe().FindStringSubmatch(msg); m != nil {
		if names, ok := envTypes().fields[m[1]]; ok {
			return fmt.Sprintf("%s has no field %s%s", envTypes().names[m[1]], m[2], suggest.DidYouMean(m[2], names))
		}
	}
	if m := unknownNameRe().FindStringSubmatch(msg); m != nil {
		names := append([]string{}, envTypes().top...)
		for _, h := range helpers {
			names = append(names, h.Name)
		}
		return msg + suggest.DidYouMean(m[1], names)
	}
	return goTypeRe().ReplaceAllStringFunc(msg, func(s string) string {
		if n, ok := envTypes().names[strings.TrimPrefix(s, "rules.")]; ok {
			return n
		}
		return s
	})
}

// envTypeInfo describes Env for messages: names maps a Go type of Env to
// the expr path that reaches it ("RouterEnv" → "router"), fields lists
// each type's expr field names, top the names at the top level.
type envTypeInfo struct {
	names  map[string]string
	fields map[string][]string
	top    []string
}

// envTypes walks Env on first use (an error message), not at start-up.
var envTypes = sync.OnceValue(func() envTypeInfo {
	names, fields := map[string]string{}, map[string][]string{}
	var top []string
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		if _, ok := names[t.Name()]; !ok {
			names[t.Name()] = path
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("expr")
			fields[t.Name()] = append(fields[t.Name()], tag)
			ft := f.Type
			if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				walk(ft, strings.TrimPrefix(path+"."+tag, "."))
			}
		}
	}
	walk(reflect.TypeOf(Env{}), "")
	names["Env"] = "the rule environment"
	top = fields["Env"]
	names["PoolEnv"] = "pool"
	return envTypeInfo{names: names, fields: fields, top: top}
})

// sortedIDs lists the ids of a set's rules, sorted.
func (s *Set) sortedIDs() []string {
	ids := make([]string, 0, len(s.Rules))
	for _, r := range s.Rules {
		ids = append(ids, r.ID)
	}
	sort.Strings(ids)
	return ids
}
