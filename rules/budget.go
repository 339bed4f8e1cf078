package rules

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/vm"

	"github.com/kvplan/kvplan/units"
)

// Budget bounds what rules may cost. One evaluation is one rule for one
// pool (its when, deny_when, message and fix); one check is one Evaluate.
// expr's VM has no interrupt, so kvplan rewrites every rule when it is
// compiled: each iteration of a closure (all, any, none, one, filter, map,
// count, sum, find, groupBy, sortBy, reduce, ...) calls a step counter that
// also watches the clock, and every operation that builds a string (+,
// join, replace, split, string, upper, lower, trim) is charged its size
// before it runs. Ranges, arrays and maps are charged by expr's own memory
// budget. An evaluation over a budget stops with a *BudgetError, and the
// rule becomes a deny finding "rule-error/<id>" naming the budget.
//
// Steps and bytes are counted, so they stop a runaway rule at the same
// point on every machine; the clock is the backstop for work they do not
// count (one native call on a big value), set far above what any real rule
// needs (the default pack evaluates in microseconds).
type Budget struct {
	Steps    int64         // closure iterations per evaluation
	Bytes    int64         // bytes of strings and string lists built per evaluation
	Elements uint          // expr's memory budget per run: elements of ranges, arrays and maps
	Time     time.Duration // wall clock per evaluation
	Total    time.Duration // wall clock per check (every rule, every pool)

	// Pack loads (Load, Compile).
	Rules       int           // rules one load may compile
	CompileTime time.Duration // wall clock to compile them
}

// DefaultBudget is what Load and Compile use. Nested all() over 1..300
// stops after a million steps, in about 0.1 s; string doubling with let
// stops at 1 MiB instead of reaching 4 GB.
var DefaultBudget = Budget{
	Steps:       1_000_000,
	Bytes:       1 << 20,
	Elements:    MemoryBudget,
	Time:        time.Second,
	Total:       30 * time.Second,
	Rules:       2000,
	CompileTime: 10 * time.Second,
}

// BudgetError is an evaluation, a check or a pack load over a budget. Its
// message names the budget and its size.
type BudgetError struct {
	Budget string // "step", "memory", "time", "total time", "rule count", "compile time"
	Limit  string // the budget, formatted: "1,000,000 steps per evaluation"
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("over the %s budget (%s)", e.Budget, e.Limit)
}

func stepBudgetError(b Budget) *BudgetError {
	return &BudgetError{Budget: "step", Limit: units.Thousands(b.Steps) + " closure iterations per evaluation"}
}

func byteBudgetError(b Budget) *BudgetError {
	limit := units.Thousands(b.Bytes) + " bytes"
	if b.Bytes%(1<<20) == 0 {
		limit = units.Thousands(b.Bytes>>20) + " MiB"
	}
	return &BudgetError{Budget: "memory", Limit: limit + " of strings per evaluation"}
}

func elementBudgetError(b Budget) *BudgetError {
	return &BudgetError{Budget: "memory", Limit: units.Thousands(int64(b.Elements)) + " elements of ranges, arrays and maps per evaluation"}
}

func timeBudgetError(b Budget) *BudgetError {
	return &BudgetError{Budget: "time", Limit: b.Time.String() + " per evaluation"}
}

func totalBudgetError(b Budget) *BudgetError {
	return &BudgetError{Budget: "total time", Limit: b.Total.String() + " for all rules of one check"}
}

// meter is the running account of one evaluation. The clock is read
// lazily: the deadline is set at the first check, 64 steps or 16 charges
// in, so an evaluation that does little never reads it.
type meter struct {
	b        Budget
	steps    int64
	bytes    int64
	charges  int64
	deadline time.Time // zero until the first check
}

func (m *meter) reset() {
	m.steps, m.bytes, m.charges = 0, 0, 0
	m.deadline = time.Time{}
}

// late reports whether the evaluation is past its deadline, starting the
// clock on the first call.
func (m *meter) late() bool {
	now := time.Now()
	if m.deadline.IsZero() {
		m.deadline = now.Add(m.b.Time)
		return false
	}
	return now.After(m.deadline)
}

func (m *meter) step() error {
	m.steps++
	if m.steps > m.b.Steps {
		return stepBudgetError(m.b)
	}
	if m.steps&63 == 0 && m.late() {
		return timeBudgetError(m.b)
	}
	return nil
}

func (m *meter) charge(n int64) error {
	m.bytes += n
	if n < 0 || m.bytes > m.b.Bytes {
		return byteBudgetError(m.b)
	}
	m.charges++
	if m.charges&15 == 0 && m.late() {
		return timeBudgetError(m.b)
	}
	return nil
}

// meters maps the *Env an evaluation runs on to its meter: the rewritten
// rules pass $env to the budget functions, which find their account here.
// A program run on an Env that Evaluate did not register runs unmetered.
var meters sync.Map // *Env → *meter

func meterOf(env any) *meter {
	if m, ok := meters.Load(env); ok {
		return m.(*meter)
	}
	return nil
}

// Names of the functions the rewrite inserts. Rule authors never write
// them; the prefix keeps them out of the way of real names.
const (
	stepFn   = "__kvplan_step"
	chargeFn = "__kvplan_charge"
	varName  = "__kvplan_v"
)

// budgetOptions declares the inserted functions.
func budgetOptions() []expr.Option {
	return []expr.Option{
		expr.Function(stepFn, func(args ...any) (any, error) {
			if m := meterOf(args[0]); m != nil {
				if err := m.step(); err != nil {
					return nil, err
				}
			}
			return true, nil
		}, new(func(any) bool)),
		expr.Function(chargeFn, func(args ...any) (any, error) {
			m := meterOf(args[0])
			if m == nil {
				return true, nil
			}
			if err := m.charge(estimate(args[1].(string), args[2:], m.b.Bytes-m.bytes)); err != nil {
				return nil, err
			}
			return true, nil
		}, new(func(any, string, ...any) bool)),
	}
}

// compileBudgeted is expr.Compile with the budget rewrite between type
// checking and compiling. The rewrite cannot be an expr.Patch: with any
// patcher, expr v1.17 drops type errors inside function arguments
// (bytes(pool.no_such_field) compiles), so the tree is checked first as
// written, for the errors, then rewritten and checked again, for the types
// of the nodes the rewrite added.
//
// base is built once (exprConfig); each compile works on a copy of it.
// The copies share base's tables, which expr only reads, and its cache of
// type descriptions, which it fills as it checks: compiles take compileMu.
func compileBudgeted(src string, base *conf.Config) (*vm.Program, error) {
	compileMu.Lock()
	defer compileMu.Unlock()
	config := *base
	config.Check()
	tree, err := checker.ParseCheck(src, &config)
	if err != nil {
		return nil, err
	}
	ast.Walk(&tree.Node, &budgetPatcher{})
	if _, err := checker.Check(tree, &config); err != nil {
		return nil, fmt.Errorf("internal error: the budget rewrite of %q does not type-check: %w", src, err)
	}
	if config.Optimize {
		if err := optimizer.Optimize(&tree.Node, &config); err != nil {
			var fe *file.Error
			if errors.As(err, &fe) {
				return nil, fe.Bind(tree.Source)
			}
			return nil, err
		}
	}
	return compiler.Compile(tree, &config)
}

// compileMu serialises the compiles that share an exprConfig.
var compileMu sync.Mutex

// exprConfig builds the expr configuration that opts describe, as
// expr.Compile does for each call: the builtins table less the disabled
// ones, the functions, and the type description of the environment.
// Building it was a quarter of compiling a rule's expression.
func exprConfig(opts []expr.Option) *conf.Config {
	config := conf.CreateNew()
	for _, op := range opts {
		op(config)
	}
	for name := range config.Disabled {
		delete(config.Builtins, name)
	}
	return config
}

// budgetPatcher rewrites a rule's tree as Budget describes. Each compile
// gets its own (its counter names the variables it introduces).
type budgetPatcher struct{ n int }

// growing lists the builtins whose result may be larger than their
// arguments (join, replace) or is a new string (the others).
var growing = map[string]bool{
	"join": true, "replace": true, "split": true, "splitAfter": true, "string": true,
	"upper": true, "lower": true, "trim": true, "trimPrefix": true, "trimSuffix": true,
}

func (p *budgetPatcher) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.PredicateNode:
		body := n.Node
		n.Node = &ast.SequenceNode{Nodes: []ast.Node{p.step(body), body}}
		n.Node.SetLocation(body.Location())
	case *ast.BinaryNode:
		if n.Operator != "+" || numeric(n.Left) && numeric(n.Right) || literal(n.Left) && literal(n.Right) {
			return
		}
		p.precheck(node, "+", []*ast.Node{&n.Left, &n.Right})
	case *ast.BuiltinNode:
		if !growing[n.Name] {
			return
		}
		args := make([]*ast.Node, len(n.Arguments))
		for i := range n.Arguments {
			args[i] = &n.Arguments[i]
		}
		p.precheck(node, n.Name, args)
	}
}

// precheck rewrites node, an operation op over args, into
//
//	let v1 = arg1; let v2 = arg2; __kvplan_charge($env, op, v1, v2); node
//
// with node now reading v1, v2: every argument is evaluated once, the
// result's size is charged before the operation runs, and the types (and
// so the type errors) are those of the original expression.
func (p *budgetPatcher) precheck(node *ast.Node, op string, args []*ast.Node) {
	orig := *node
	loc := orig.Location()
	names := make([]string, len(args))
	values := make([]ast.Node, len(args))
	callArgs := []ast.Node{&ast.IdentifierNode{Value: "$env"}, &ast.StringNode{Value: op}}
	for i, a := range args {
		p.n++
		names[i] = varName + strconv.Itoa(p.n)
		values[i] = *a
		id := &ast.IdentifierNode{Value: names[i]}
		id.SetLocation((*a).Location())
		*a = id
		callArgs = append(callArgs, &ast.IdentifierNode{Value: names[i]})
	}
	call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: chargeFn}, Arguments: callArgs}
	var out ast.Node = &ast.SequenceNode{Nodes: []ast.Node{call, orig}}
	for i := len(names) - 1; i >= 0; i-- {
		out = &ast.VariableDeclaratorNode{Name: names[i], Value: values[i], Expr: out}
	}
	for _, n := range []ast.Node{out, call} {
		n.SetLocation(loc)
	}
	*node = out
}

// step builds __kvplan_step($env) at at's location.
func (p *budgetPatcher) step(at ast.Node) ast.Node {
	c := &ast.CallNode{Callee: &ast.IdentifierNode{Value: stepFn}, Arguments: []ast.Node{&ast.IdentifierNode{Value: "$env"}}}
	c.SetLocation(at.Location())
	return c
}

// numeric reports whether the checker typed n as a number (types of nodes
// the patcher already replaced are unknown, so they count as not numeric).
func numeric(n ast.Node) bool {
	t := n.Type()
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// literal reports whether n is a constant the source spells out (its size
// is bounded by the pack file's).
func literal(n ast.Node) bool {
	switch n.(type) {
	case *ast.StringNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NilNode:
		return true
	}
	return false
}

// estimate returns the bytes the operation op will build from args, or a
// little more than room when it will build more than that (so the charge
// fails before the operation allocates anything).
func estimate(op string, args []any, room int64) int64 {
	str := func(i int) string {
		if i < len(args) {
			if s, ok := args[i].(string); ok {
				return s
			}
		}
		return ""
	}
	switch op {
	case "+":
		return int64(len(str(0)) + len(str(1)))
	case "join":
		sep := ""
		if len(args) > 1 {
			sep = str(1)
		}
		items, _ := args[0].([]any)
		if len(items) == 0 {
			if ss, ok := args[0].([]string); ok {
				var n int64
				for _, s := range ss {
					if n += int64(len(s) + len(sep)); n > room {
						return room + 1
					}
				}
				return n
			}
		}
		var n int64
		for _, it := range items {
			s, _ := it.(string)
			if n += int64(len(s) + len(sep)); n > room {
				return room + 1
			}
		}
		return n
	case "replace":
		s, old, repl := str(0), str(1), str(2)
		count := int64(strings.Count(s, old)) // Count("", ...) counts runes + 1
		return int64(len(s)) + count*int64(max(0, len(repl)-len(old)))
	case "split", "splitAfter":
		s, sep := str(0), str(1)
		parts := int64(strings.Count(s, sep)) + 1
		if sep == "" {
			parts = int64(utf8.RuneCountInString(s))
		}
		return parts * 16 // one string header per part
	case "string":
		return sizeOf(args[0], room)
	default: // upper, lower, trim*: at most three bytes out per byte in
		return int64(len(str(0))) * 3
	}
}

// sizeOf estimates the printed size of v (what string(v) or a template
// builds), stopping once it is above room.
func sizeOf(v any, room int64) int64 {
	switch x := v.(type) {
	case string:
		return int64(len(x)) + 2
	case []any:
		n := int64(2)
		for _, it := range x {
			if n += sizeOf(it, room-n) + 1; n > room {
				return room + 1
			}
		}
		return n
	case map[string]any:
		n := int64(2)
		for k, it := range x {
			if n += int64(len(k)) + sizeOf(it, room-n) + 2; n > room {
				return room + 1
			}
		}
		return n
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		n := int64(2)
		for i := 0; i < rv.Len(); i++ {
			if n += sizeOf(rv.Index(i).Interface(), room-n) + 1; n > room {
				return room + 1
			}
		}
		return n
	case reflect.Struct:
		return int64(rv.NumField()) * 24
	}
	return 24 // a number, a bool, nil
}

// withDefaults fills the zero fields of b from DefaultBudget.
func (b Budget) withDefaults() Budget {
	d := DefaultBudget
	return Budget{
		Steps: positiveOr(b.Steps, d.Steps), Bytes: positiveOr(b.Bytes, d.Bytes), Elements: positiveOr(b.Elements, d.Elements),
		Time: positiveOr(b.Time, d.Time), Total: positiveOr(b.Total, d.Total),
		Rules: positiveOr(b.Rules, d.Rules), CompileTime: positiveOr(b.CompileTime, d.CompileTime),
	}
}

func positiveOr[T int | int64 | uint | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
