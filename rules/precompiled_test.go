//go:build !kvplan_rules_toml

package rules

import (
	"reflect"
	"testing"

	"github.com/expr-lang/expr/vm"
)

// TestPrecompiledDefaultPrograms checks every program of default_gen.go
// against what expr compiles from the rule's text today: the same source,
// locations, variable slots, constants, bytecode and arguments, and no
// functions. The VM reads nothing else of a program (the AST and debug
// names serve printing only), so a program that passes runs as the
// compiled one does.
func TestPrecompiledDefaultPrograms(t *testing.T) {
	fresh, err := CompileDefaultPrograms()
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh) < len(DefaultPack().Rules) {
		t.Fatalf("%d programs for %d rules", len(fresh), len(DefaultPack().Rules))
	}
	for _, f := range fresh {
		when, denyWhen := precompiledProgram(f.RuleID)
		got := when
		if f.Field == "deny_when" {
			got = denyWhen
		}
		if got == nil {
			t.Errorf("%s %s: no precompiled program: run `go generate ./rules`", f.RuleID, f.Field)
			continue
		}
		want := f.Program
		for _, c := range []struct {
			part      string
			got, want any
		}{
			{"source", got.Source().String(), want.Source().String()},
			{"locations", got.Locations(), want.Locations()},
			{"variables", programField(got, "variables").Int(), int64(f.Variables)},
			{"functions", programField(got, "functions").Len(), programField(want, "functions").Len()},
			{"constants", got.Constants, want.Constants},
			{"bytecode", got.Bytecode, want.Bytecode},
			{"arguments", got.Arguments, want.Arguments},
		} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%s %s: precompiled %s %v, expr compiles %v: run `go generate ./rules`", f.RuleID, f.Field, c.part, c.got, c.want)
			}
		}
	}
	if w, d := precompiledProgram("no-such-rule"); w != nil || d != nil {
		t.Error("a program for an id the default pack does not have")
	}
}

func programField(p *vm.Program, name string) reflect.Value {
	return reflect.ValueOf(p).Elem().FieldByName(name)
}

// TestLoadUsesPrecompiled checks that a load takes the default rules'
// programs from default_gen.go (they carry no AST; a compile from text
// does), that a user rule is compiled from its text, and that a default
// rule whose text is not the precompiled program's falls back to a compile.
func TestLoadUsesPrecompiled(t *testing.T) {
	set, err := Load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range set.Rules {
		if r.when.Node() != nil || (r.denyWhen != nil && r.denyWhen.Node() != nil) {
			t.Errorf("%s: compiled at load, not taken from default_gen.go", r.ID)
		}
	}
	user, err := compileOne(t, "[[rule]]\nid = \"u\"\nseverity = \"info\"\nwhen = \"workload.concurrency > 1\"\nmessage = \"x\"\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range user.Rules {
		if r.embedded {
			continue
		}
		if r.when.Node() == nil {
			t.Errorf("user rule %s: not compiled from its text", r.ID)
		}
	}
	p := DefaultPack()
	r := p.Rules[0]
	r.When = "!(" + r.When + ")"
	set, err = CompileWithBudget([]*Pack{p}, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	got := set.byID[r.ID]
	if got.when.Node() == nil || got.when.Source().String() != r.When {
		t.Fatalf("%s with edited text: ran program %q, want a compile of %q", r.ID, got.when.Source().String(), r.When)
	}
}
