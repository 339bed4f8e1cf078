package rules

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/expr-lang/expr/vm"

	"github.com/kvplan/kvplan/planfile"
)

// Finding is one rule that fired, for one pool when the rule is per_pool.
type Finding struct {
	RuleID   string   `json:"rule_id"`
	Severity Severity `json:"severity"`
	Pool     string   `json:"pool,omitempty"` // the pool of a per_pool rule
	Message  string   `json:"message"`
	Why      string   `json:"why,omitempty"`
	Fix      string   `json:"fix,omitempty"`
	// Fields are the dotted plan-file fields involved, most relevant first,
	// with "pool." and "pools.*." expanded to the pool names.
	Fields []string `json:"fields,omitempty"`
	// File, Line and Col are where the first of Fields was written: a plan
	// file's line, or the argument or field of a manifest (with its
	// column). Zero until Locate sets them, or when no field is written.
	File  string `json:"file,omitempty"`
	Line  int    `json:"line,omitempty"`
	Col   int    `json:"col,omitempty"`
	Field string `json:"field,omitempty"` // the field File:Line:Col points at
}

// Pos returns where the finding points.
func (f Finding) Pos() planfile.Pos { return planfile.Pos{File: f.File, Line: f.Line, Col: f.Col} }

var vmPool = sync.Pool{New: func() any { return &vm.VM{MemoryBudget: MemoryBudget} }}

// Evaluate runs every rule of the set over env and returns the findings,
// most severe first and in rule order within a severity. A rule that fails at
// run time (an index out of range, an integer division by zero, a budget
// exceeded: see Budget) gives a deny finding "rule-error/<id>" and the other
// rules still run. Once the check's total time budget is spent, each rule
// not yet run gives one such finding instead. env is not modified.
func (s *Set) Evaluate(env *Env) []Finding {
	b := s.Budget.withDefaults()
	m := vmPool.Get().(*vm.VM)
	defer vmPool.Put(m)
	m.MemoryBudget = b.Elements
	e := *env // per_pool rules bind e.Pool
	mt := &meter{b: b}
	meters.Store(&e, mt)
	defer meters.Delete(&e)
	// The total deadline is checked every 16 evaluations, and after any
	// evaluation that did real work (64 steps or more).
	deadline := time.Now().Add(b.Total)
	evals := 0
	late := func() bool {
		evals++
		return (evals&15 == 0 || mt.steps >= 64 || mt.charges >= 16) && time.Now().After(deadline)
	}
	var out []Finding
	for _, r := range s.Rules {
		if late() {
			out = append(out, r.budgetFinding(totalBudgetError(b), "", &e))
			continue
		}
		if !r.PerPool {
			e.Pool = PoolEnv{}
			mt.reset()
			out = r.eval(m, &e, out)
			continue
		}
		for i := range env.Pools {
			if i > 0 && late() {
				out = append(out, r.budgetFinding(totalBudgetError(b), "", &e))
				break
			}
			e.Pool = env.Pools[i]
			mt.reset()
			out = r.eval(m, &e, out)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity.Rank() > out[j].Severity.Rank() })
	return out
}

func (r *Rule) eval(m *vm.VM, env *Env, out []Finding) []Finding {
	v, err := m.Run(r.when, env)
	if err != nil {
		return append(out, r.runtimeError("when", env, err))
	}
	if fired, _ := v.(bool); !fired {
		return out
	}
	f := Finding{RuleID: r.ID, Severity: r.Severity, Why: r.Why, Fields: r.expandFields(env)}
	if r.PerPool {
		f.Pool = env.Pool.Name
	}
	if r.denyWhen != nil {
		v, err := m.Run(r.denyWhen, env)
		if err != nil {
			return append(out, r.runtimeError("deny_when", env, err))
		}
		if deny, _ := v.(bool); deny {
			f.Severity = Deny
		}
	}
	if err := r.templates(); err != nil {
		return append(out, r.runtimeError("message", env, err))
	}
	if f.Message, err = r.message.render(m, env); err != nil {
		return append(out, r.runtimeError("message", env, err))
	}
	if f.Fix, err = r.fix.render(m, env); err != nil {
		return append(out, r.runtimeError("fix", env, err))
	}
	return append(out, f)
}

func (r *Rule) runtimeError(field string, env *Env, err error) Finding {
	var be *BudgetError
	if errors.As(err, &be) {
		return r.budgetFinding(be, field, env)
	}
	if strings.Contains(err.Error(), "memory budget exceeded") { // expr's own
		if mt := meterOf(env); mt != nil {
			return r.budgetFinding(elementBudgetError(mt.b), field, env)
		}
	}
	where := ""
	if r.PerPool {
		where = fmt.Sprintf(" for pool %q", env.Pool.Name)
	}
	msg := strings.SplitN(err.Error(), "\n", 2)[0]
	f := Finding{
		RuleID:   RuntimeErrorPrefix + r.ID,
		Severity: Deny,
		Message:  fmt.Sprintf("rule %s failed%s: %s: %s", r.ID, where, field, msg),
		Why:      "a rule that cannot be evaluated cannot vouch for the plan, so kvplan fails the check rather than pass it silently",
		Fix:      fmt.Sprintf("correct the rule's %s (%s:%d), or turn it off with --disable %s", field, r.File, r.Line, r.ID),
	}
	if r.PerPool {
		f.Pool = env.Pool.Name
	}
	return f
}

// budgetFinding is the rule-error finding of a rule over a budget: it names
// the budget. field is "" when the rule did not run at all.
func (r *Rule) budgetFinding(be *BudgetError, field string, env *Env) Finding {
	where := ""
	if r.PerPool && field != "" {
		where = fmt.Sprintf(" for pool %q", env.Pool.Name)
	}
	f := Finding{
		RuleID:   RuntimeErrorPrefix + r.ID,
		Severity: Deny,
		Why:      "a rule that cannot be evaluated cannot vouch for the plan, so kvplan fails the check rather than pass it silently",
	}
	if field == "" {
		f.Message = fmt.Sprintf("rule %s was not evaluated: %v", r.ID, be)
		f.Fix = fmt.Sprintf("the rules before it used up the check; make them cheaper, or turn some off with --disable (%s:%d)", r.File, r.Line)
	} else {
		f.Message = fmt.Sprintf("rule %s stopped%s: %s: %v", r.ID, where, field, be)
		f.Fix = fmt.Sprintf("the rule does more work than any check needs: simplify its %s (%s:%d), or turn it off with --disable %s", field, r.File, r.Line, r.ID)
	}
	if r.PerPool && field != "" {
		f.Pool = env.Pool.Name
	}
	return f
}

// expandFields rewrites "pool.x" to "pools.<pool>.x" and "pools.*.x" to one
// field per pool.
func (r *Rule) expandFields(env *Env) []string {
	if len(r.Fields) == 0 {
		return nil
	}
	out := make([]string, 0, len(r.Fields))
	for _, f := range r.Fields {
		switch {
		case strings.HasPrefix(f, "pool."):
			out = append(out, "pools."+env.Pool.Name+"."+strings.TrimPrefix(f, "pool."))
		case strings.HasPrefix(f, "pools.*."):
			for _, p := range env.Pools {
				out = append(out, "pools."+p.Name+"."+strings.TrimPrefix(f, "pools.*."))
			}
		default:
			out = append(out, f)
		}
	}
	return out
}

// Locate sets each finding's place (File, Line, Col) and Field to the
// first of its Fields that pos (usually (*planfile.Plan).Pos) finds,
// falling back to the place of its pool. Findings with no place keep the
// zero place; a finding already located (one a manifest reader made) keeps
// its own.
func Locate(findings []Finding, pos func(field string) planfile.Pos) {
	LocateWritten(findings, nil, pos)
}

// LocateWritten is Locate that prefers the first of a finding's Fields the
// plan writes itself (written, usually (*planfile.Plan).Has): the finding of
// a pool's tp points at "pools.decode.tp" when the pool sets it, else at
// "model.tp" when the model does, before any field whose place falls back to
// its enclosing table.
func LocateWritten(findings []Finding, written func(field string) bool, pos func(field string) planfile.Pos) {
	set := func(f *Finding, at planfile.Pos, field string) {
		f.File, f.Line, f.Col, f.Field = at.File, at.Line, at.Col, field
	}
	for i := range findings {
		f := &findings[i]
		if f.Line > 0 {
			continue
		}
		if written != nil {
			for _, fld := range f.Fields {
				if at := pos(fld); at.Line > 0 && written(fld) {
					set(f, at, fld)
					break
				}
			}
			if f.Line > 0 {
				continue
			}
		}
		for _, fld := range f.Fields {
			if at := pos(fld); at.Line > 0 {
				set(f, at, fld)
				break
			}
		}
		if f.Line == 0 && f.Pool != "" {
			if at := pos("pools." + f.Pool); at.Line > 0 {
				set(f, at, "pools."+f.Pool)
			}
		}
	}
}

// Failing reports whether a finding fails a check run with --fail-on failOn:
// its severity is at least failOn's.
func Failing(f Finding, failOn Severity) bool { return f.Severity.Rank() >= failOn.Rank() }
