package rules

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

func oneRule(t *testing.T, when, message string) *Set {
	t.Helper()
	pack := "[[rule]]\nid = \"r\"\nseverity = \"warn\"\nwhen = '''" + when + "'''\nmessage = '''" + message + "'''\n"
	set, err := compileOne(t, pack)
	if err != nil {
		t.Fatalf("compile %s: %v", when, err)
	}
	return set
}

// evalBounded evaluates set over env and fails the test if it takes more
// than limit or allocates more than maxAlloc bytes.
func evalBounded(t *testing.T, set *Set, env *Env, limit time.Duration, maxAlloc uint64) []Finding {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan []Finding, 1)
	start := time.Now()
	go func() { done <- set.Evaluate(env) }()
	select {
	case f := <-done:
		runtime.ReadMemStats(&after)
		if d := time.Since(start); d > limit {
			t.Errorf("evaluation took %v, want under %v", d, limit)
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > maxAlloc {
			t.Errorf("evaluation allocated %d MB, want under %d MB", a>>20, maxAlloc>>20)
		}
		return f
	case <-time.After(limit + 20*time.Second):
		t.Fatalf("evaluation still running after %v", limit+20*time.Second)
		return nil
	}
}

// TestBudgetsStopHostileRules reproduces the rules of issue 13: nested all()
// over 1..300 never finished (10 GB after two minutes), a reduce with string
// concatenation took over 10 s, string doubling with let reached 4 GB and
// exited 0. Each now stops at a budget, as a deny finding naming it.
func TestBudgetsStopHostileRules(t *testing.T) {
	doubling := "let a = 'xxxxxxxxxxxxxxxx'"
	for i, v := range strings.Split("bcdefghijklmnopqrstuvwxyz", "") {
		prev := string("abcdefghijklmnopqrstuvwxyz"[i])
		doubling += "; let " + v + "2 = " + prev + map[bool]string{true: "", false: "2"}[i == 0] + " + " + prev + map[bool]string{true: "", false: "2"}[i == 0]
	}
	doubling += "; len(z2) > 0" // 16 B × 2^25 = 512 MiB if nothing stops it
	cases := []struct {
		name, when, message, want string
	}{
		{"nested all over 1..300", "let r = 1..300; all(r, {all(r, {all(r, {all(r, {# > 0})})})})", "x",
			"rule r stopped: when: over the step budget (1,000,000 closure iterations per evaluation)"},
		{"reduce with string concatenation", "let r = 1..90000; len(reduce(r, #acc + 'xxxxxxxxxxxxxxxxxxxxxxxxxxxx', '')) > 0", "x",
			"rule r stopped: when: over the memory budget (1 MiB of strings per evaluation)"},
		{"string doubling with let", doubling, "x",
			"rule r stopped: when: over the memory budget (1 MiB of strings per evaluation)"},
		{"join of one big string many times", "let big = reduce(1..13, #acc + #acc, 'xxxxxxxxxxxxxxxx'); len(join(map(1..40000, big), ',')) > 0", "x",
			"over the memory budget (1 MiB of strings per evaluation)"},
		{"replace that multiplies", "let big = reduce(1..14, #acc + #acc, 'xx'); len(replace(big, 'x', big)) > 0", "x",
			"over the memory budget (1 MiB of strings per evaluation)"},
		{"big list in a message", "true", "${map(1..40000, 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')}",
			"rule r stopped: message: over the memory budget (1 MiB of strings per evaluation)"},
		{"sort of a huge range", "len(sort(1..5000000)) > 0", "x",
			"over the memory budget (100,000 elements of ranges, arrays and maps per evaluation)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set := oneRule(t, c.when, c.message)
			got := evalBounded(t, set, &Env{}, 5*time.Second, 256<<20)
			// Under the race detector the time budget may stop a rule
			// before its counted budget does; that is a stop too, but not
			// one that repeats at the same point.
			byTime := raceEnabled && len(got) == 1 && strings.Contains(got[0].Message, "over the time budget (1s per evaluation)")
			if len(got) != 1 || got[0].RuleID != "rule-error/r" || got[0].Severity != Deny || got[0].Message != c.want && !strings.Contains(got[0].Message, c.want) && !byTime {
				t.Fatalf("findings %+v\nwant one rule-error/r deny: %s", got, c.want)
			}
			if byTime {
				return
			}
			// Counted budgets stop at the same point every time.
			again := set.Evaluate(&Env{})
			if len(again) != 1 || again[0].Message != got[0].Message {
				t.Errorf("second run differs: %+v", again)
			}
		})
	}
}

// TestTimeBudget: work the counters do not see (here, a tiny step budget
// set aside) is stopped by the clock.
func TestTimeBudget(t *testing.T) {
	set := oneRule(t, "let r = 1..1000; all(r, {all(r, {all(r, {# > 0})})})", "x")
	set.Budget = Budget{Steps: 1 << 62, Time: 20 * time.Millisecond}
	got := evalBounded(t, set, &Env{}, 3*time.Second, 64<<20)
	if len(got) != 1 || got[0].Message != "rule r stopped: when: over the time budget (20ms per evaluation)" {
		t.Fatalf("findings %+v", got)
	}
}

// TestTotalBudget: once a check's total time is spent, the rules not yet run
// say so instead of running.
func TestTotalBudget(t *testing.T) {
	p, err := ParsePack("t.toml", []byte(`
[[rule]]
id = "slow"
severity = "warn"
when = "let r = 1..1000; all(r, {all(r, {# > 0})})"
message = "x"

[[rule]]
id = "after"
severity = "warn"
per_pool = true
when = "true"
message = "y"
`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := CompileWithBudget([]*Pack{p}, Budget{Total: 10 * time.Millisecond, Steps: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	got := set.Evaluate(&Env{Pools: []PoolEnv{{Name: "a"}, {Name: "b"}}})
	ids := map[string]string{}
	for _, f := range got {
		ids[f.RuleID] = f.Message
	}
	if !strings.HasPrefix(ids["rule-error/after"], "rule after was not evaluated: over the total time budget (10ms for all rules of one check)") {
		t.Errorf("findings %v", ids)
	}
}

// TestPackLoadBudget: a load compiles a bounded number of rules in bounded
// time, and says which budget stopped it.
func TestPackLoadBudget(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 3; i++ {
		b.WriteString("[[rule]]\nid = \"r" + string(rune('a'+i)) + "\"\nseverity = \"info\"\nwhen = \"true\"\nmessage = \"m\"\n")
	}
	p, err := ParsePack("many.toml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = CompileWithBudget([]*Pack{p}, Budget{Rules: 2})
	var be *BudgetError
	if !errors.As(err, &be) || err.Error() != "rule packs hold 3 rules: over the rule count budget (2 rules per load); split them, or turn some off" {
		t.Errorf("rule count: %v", err)
	}
	_, err = CompileWithBudget([]*Pack{p}, Budget{CompileTime: time.Nanosecond})
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "over the compile time budget (1ns per load)") {
		t.Errorf("compile time: %v", err)
	}
	if _, err := CompileWithBudget([]*Pack{p}, Budget{}); err != nil {
		t.Errorf("default budget: %v", err)
	}
}

// TestBudgetKeepsTypesAndResults: the rewrite changes neither results nor
// compile errors (the columns point into the expression as written).
func TestBudgetKeepsTypesAndResults(t *testing.T) {
	env := &Env{Workload: WorkloadEnv{Concurrency: 4, InputTokens: 100}, Pools: []PoolEnv{{Name: "p", Workers: 3}, {Name: "q", Workers: 5}}}
	for _, c := range []struct{ when, message, want string }{
		{"sum(pools, .workers) == 8", "${join(map(pools, .name + '=' + string(.workers)), ', ')}", "p=3, q=5"},
		{"all(pools, .workers > 2) && workload.concurrency + 1 == 5", "${upper('ok') + lower('X')}", "OKx"},
		{"reduce(1..4, #acc + #, 0) == 10", "${replace('a-b', '-', '+')} ${split('a,b', ',')}", "a+b a,b"},
		{"let t = 'ab' + 'cd'; t + t == 'abcdabcd'", "${trim('  t  ')}", "t"},
	} {
		set := oneRule(t, c.when, c.message)
		got := set.Evaluate(env)
		if len(got) != 1 || got[0].Message != c.want {
			t.Errorf("%s: %+v, want message %q", c.when, got, c.want)
		}
	}
	for _, c := range []struct{ when, want string }{
		{"bytes(pool.host_required) != ''", "pool has no field host_required"},
		{"'a' + 1 > 0", "invalid operation: + (mismatched types string and int)"},
		{"all(pools, .no_field > 1)", "has no field no_field"},
	} {
		_, err := compileOne(t, "[[rule]]\nid = \"h\"\nseverity = \"deny\"\nmessage = \"x\"\nwhen = \""+c.when+"\"\n")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.when, err, c.want)
		}
	}
}
