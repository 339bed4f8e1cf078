package rules

import (
	"fmt"
	"reflect"

	"github.com/expr-lang/expr/vm"
)

// The when and deny_when of the default pack's rules are compiled by go
// generate ./rules (precompiledProgram in default_gen.go, written by
// internal/packgen), not by every kvplan check: compiling the pack's 21
// expressions with expr was about a sixth of a check from start to exit.
// A precompiled program is used only when its source is the rule's text;
// TestPrecompiledDefaultPrograms checks each is what expr compiles from that
// text today, and packgen's test that default_gen.go is current.

// takePrecompiled sets r's when and deny_when from the programs compiled at
// go generate time and reports whether it could: both exist and were
// compiled from r's text.
func (r *Rule) takePrecompiled() bool {
	when, denyWhen := precompiledProgram(r.ID)
	if when == nil || when.Source().String() != r.When {
		return false
	}
	switch {
	case r.DenyWhen == "" && denyWhen == nil:
	case denyWhen != nil && denyWhen.Source().String() == r.DenyWhen:
	default:
		return false
	}
	r.when, r.denyWhen = when, denyWhen
	return true
}

// DefaultProgram is one expression of a default rule compiled from its
// text, with the parts of expr's program that go generate writes out.
type DefaultProgram struct {
	RuleID    string
	Field     string // "when" or "deny_when"
	Program   *vm.Program
	Variables int // the program's count of variable slots
}

// CompileDefaultPrograms compiles the when and deny_when of every rule of
// the default pack from their text, as a load of a user's pack does, for
// internal/packgen to write out. A program that calls functions is refused:
// the generated file can hold data only.
func CompileDefaultPrograms() ([]DefaultProgram, error) {
	var out []DefaultProgram
	for _, r := range DefaultPack().Rules {
		if err := r.compileText(); err != nil {
			return nil, err
		}
		for _, p := range []struct {
			field string
			prog  *vm.Program
		}{{"when", r.when}, {"deny_when", r.denyWhen}} {
			if p.prog == nil {
				continue
			}
			v := reflect.ValueOf(p.prog).Elem()
			if n := v.FieldByName("functions").Len(); n > 0 {
				return nil, fmt.Errorf("rule %s: %s calls %d function(s): it cannot be written out as data", r.ID, p.field, n)
			}
			out = append(out, DefaultProgram{RuleID: r.ID, Field: p.field, Program: p.prog,
				Variables: int(v.FieldByName("variables").Int())})
		}
	}
	return out, nil
}
