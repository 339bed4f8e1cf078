package rules

import (
	"strings"
	"testing"
	"time"
)

// fuzzBudget is tight, so that hostile inputs stop quickly.
var fuzzBudget = Budget{Steps: 20_000, Bytes: 64 << 10, Elements: 20_000, Time: 200 * time.Millisecond, Total: time.Second}

// FuzzParsePack: any rule pack compiles or fails with an error, and a
// compiled one evaluates without a panic.
func FuzzParsePack(f *testing.F) {
	f.Add(DefaultPackTOML())
	f.Add([]byte("[[rule]]\nid = \"x\"\nseverity = \"warn\"\nwhen = \"pool.workers > 1\"\nper_pool = true\nmessage = \"${pool.name}\"\nwhy = \"w\"\nfix = \"f\"\n"))
	env := &Env{Pools: []PoolEnv{{Name: "p", Workers: 2}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePack("fuzz.toml", data)
		if err != nil {
			return
		}
		set, err := CompileWithBudget([]*Pack{p}, fuzzBudget)
		if err != nil {
			return
		}
		_ = set.Evaluate(env)
	})
}

// FuzzRuleExpr: any expression, as a rule's when and inside its message,
// either fails to compile with a *CompileError or evaluates, over generated
// environments and under budgets, without a panic, within its time budget,
// to the rule's own finding or a rule-error one, the same on every run.
func FuzzRuleExpr(f *testing.F) {
	for _, s := range []string{
		"pool.workers > 1",
		"any(pools, .stages_kv_in_host) && router.mode == 'kv'",
		"let r = 1..300; all(r, {all(r, {all(r, {# > 0})})})",
		"len(reduce(1..90000, #acc + 'xxxxxxxx', '')) > 0",
		"let a = 'xxxxxxxx'; let b = a + a; let c = b + b; len(c + c) > 0",
		"len(join(map(1..1000, string(#)), ',')) > 0",
		"sum(map(pools, .workers)) / len(pools) > 0",
		"pools[7].workers == 0",
		"kv.bytes_per_token * workload.input_tokens > gib(4)",
		"upper(replace(model.name, '-', '--')) != ''",
		"filter(split(join(transport.ucx_tls, ','), ','), # == 'tcp') != []",
		"sortBy(pools, .name)[0].name != ''",
		"groupBy(pools, .role) != nil",
		"count(1..100000, # % 2 == 0) > 0",
	} {
		f.Add(s, uint8(0))
	}
	envs := genEnvs(8)
	f.Fuzz(func(t *testing.T, src string, which uint8) {
		if strings.Contains(src, "'''") || len(src) > 4096 {
			return
		}
		pack := "[[rule]]\nid = \"f\"\nseverity = \"warn\"\nper_pool = true\nwhen = '''" + src + "'''\nmessage = '''v ${" + strings.ReplaceAll(src, "}", "") + "}'''\n"
		p, err := ParsePack("fuzz.toml", []byte(pack))
		if err != nil {
			return
		}
		set, err := CompileWithBudget([]*Pack{p}, fuzzBudget)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%q: %v", src, err)
			}
			return
		}
		env := &envs[int(which)%len(envs)]
		start := time.Now()
		got := set.Evaluate(env)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%q took %v", src, d)
		}
		for _, fd := range got {
			if fd.RuleID != "f" && fd.RuleID != "rule-error/f" {
				t.Fatalf("%q: finding %q", src, fd.RuleID)
			}
			if len(fd.Message) > int(fuzzBudget.Bytes)+200 {
				t.Fatalf("%q: message of %d bytes escaped the budget", src, len(fd.Message))
			}
		}
		again := set.Evaluate(env)
		if len(again) != len(got) {
			t.Fatalf("%q: %d findings, then %d", src, len(got), len(again))
		}
		for i := range got {
			if got[i].Message != again[i].Message && !strings.Contains(got[i].Message, "time budget") && !strings.Contains(again[i].Message, "time budget") {
				t.Fatalf("%q: %q, then %q", src, got[i].Message, again[i].Message)
			}
		}
	})
}
