package rules

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/internal/goldenfile"
	"github.com/kvplan/kvplan/planfile"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("..", "testdata", "rules", "golden", name), got, *update, "go test ./rules -update", false)
}

// compileErrorText renders a load error as the CLI would: one line per
// error, then expr's snippet indented.
func compileErrorText(err error) string {
	var b strings.Builder
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		b.WriteString(err.Error() + "\n")
		var ce *CompileError
		if errors.As(err, &ce) && ce.Snippet != "" {
			for _, l := range strings.Split(ce.Snippet, "\n") {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	walk(err)
	return b.String()
}

// TestCompileErrors golden-tests what a broken rule file reports: file,
// line, column, rule id, and a suggestion where one helps.
func TestCompileErrors(t *testing.T) {
	dir := filepath.Join("..", "testdata", "rules", "broken")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".toml")
		t.Run(name, func(t *testing.T) {
			// Paths are relative to the repository root in the golden files.
			_, err := Load(Options{Paths: []string{filepath.Join(dir, e.Name())}, NoDefault: true})
			if err == nil {
				t.Fatal("loaded a broken pack")
			}
			text := strings.ReplaceAll(compileErrorText(err), "../", "")
			golden(t, "compile-"+name+".txt", []byte(text))
		})
	}
}

func TestCompileErrorPositions(t *testing.T) {
	cases := []struct {
		file               string
		line, col, exprCol int
		id, msg            string
	}{
		// when = "router.mode == 'kv' && !router.kv_event": the value's first
		// character is at column 9; kv_event starts 31 characters in.
		{"unknown-variable.toml", 5, 40, 32, "team/kv-events", "router has no field kv_event; did you mean kv_events?"},
		{"type-mismatch.toml", 5, 31, 23, "team/limit", "mismatched types int and string"},
		// multi-line string: the expression's second line is file line 6.
		{"syntax-error.toml", 6, 34, 34, "team/slo", "unexpected token EOF"},
	}
	for _, c := range cases {
		_, err := Load(Options{Paths: []string{filepath.Join("..", "testdata", "rules", "broken", c.file)}, NoDefault: true})
		var ce *CompileError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: %v is not a CompileError", c.file, err)
		}
		if ce.Line != c.line || ce.Col != c.col || ce.ExprCol != c.exprCol || ce.RuleID != c.id || ce.Field != "when" || !strings.Contains(ce.Msg, c.msg) {
			t.Errorf("%s: got %d:%d (expr col %d) %s %s %q\nwant %d:%d (expr col %d) %s when %q", c.file,
				ce.Line, ce.Col, ce.ExprCol, ce.RuleID, ce.Field, ce.Msg, c.line, c.col, c.exprCol, c.id, c.msg)
		}
	}
}

func compileOne(t *testing.T, pack string) (*Set, error) {
	t.Helper()
	p, err := ParsePack("test.toml", []byte(pack))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return Compile([]*Pack{p})
}

// TestHostileRules: an expression over MaxNodes, names that would reach the
// environment, files or the clock, and a budget-busting evaluation.
func TestHostileRules(t *testing.T) {
	huge := strings.Repeat("workload.concurrency + ", 2*MaxNodes) + "1 > 0"
	for _, c := range []struct{ name, when, want string }{
		{"huge expression", huge, "compilation failed: expression exceeds maximum allowed nodes"},
		{"env", `env("HOME") != ""`, "unknown name env"},
		{"readFile", `readFile("/etc/passwd") != ""`, "unknown name readFile"},
		{"now", `now().Unix() > 0`, "unknown name now"},
		{"date", `date("2024-01-01") != nil`, "unknown name date"},
		{"repeat", `len(repeat("x", 1000000)) > 0`, "unknown name repeat"},
		{"toJSON", `toJSON(pools) != ""`, "unknown name toJSON"},
		{"method call on env", `workload.String() != ""`, "workload has no method String"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := compileOne(t, "[[rule]]\nid = \"h\"\nseverity = \"deny\"\nmessage = \"x\"\nwhen = '''"+c.when+"'''\n")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestRuntimeErrors: a rule failing at run time is a deny finding of its
// own, and the other rules still run.
func TestRuntimeErrors(t *testing.T) {
	set, err := compileOne(t, `
[[rule]]
id = "index"
severity = "info"
when = "pools[5].workers > 0"
message = "x"

[[rule]]
id = "budget"
severity = "info"
when = "len(map(1..200000, # * 2)) > 0"
message = "x"

[[rule]]
id = "int-div"
severity = "info"
per_pool = true
when = "pool.workers % pool.kv_slots_tokens == 0"
message = "x"

[[rule]]
id = "in-message"
severity = "warn"
when = "true"
message = "pool ${pools[9].name}"

[[rule]]
id = "fine"
severity = "warn"
when = "workload.concurrency > 1"
message = "concurrency ${workload.concurrency}"
`)
	if err != nil {
		t.Fatal(err)
	}
	e := Env{Workload: WorkloadEnv{Concurrency: 4}, Pools: []PoolEnv{{Name: "p", Workers: 1}}}
	got := map[string]Finding{}
	for _, f := range set.Evaluate(&e) {
		got[f.RuleID] = f
	}
	for id, want := range map[string]string{
		"rule-error/index":      "rule index failed: when: index out of range",
		"rule-error/budget":     "rule budget stopped: when: over the memory budget (100,000 elements of ranges, arrays and maps per evaluation)",
		"rule-error/int-div":    `rule int-div failed for pool "p": when: runtime error: integer divide by zero`,
		"rule-error/in-message": "rule in-message failed: message: index out of range",
		"fine":                  "concurrency 4",
	} {
		f, ok := got[id]
		if !ok {
			t.Errorf("no finding %s; got %v", id, got)
			continue
		}
		if !strings.HasPrefix(f.Message, want) {
			t.Errorf("%s: message %q, want prefix %q", id, f.Message, want)
		}
		if strings.HasPrefix(id, RuntimeErrorPrefix) && f.Severity != Deny {
			t.Errorf("%s: severity %s, want deny", id, f.Severity)
		}
	}
}

func TestLayering(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeFile(t, dir, name, text) }
	replace := write("replace.toml", `
[extend]
disable = ["itl-slo"]

[[rule]]
id = "ttft-slo"
severity = "warn"
when = "slo.ttft_ms > 0 && predicted.ttft_ms > slo.ttft_ms * 1.1"
message = "ttft ${dur(predicted.ttft_ms)} is 10% over the SLO"

[[rule]]
id = "team/min-workers"
severity = "info"
per_pool = true
when = "pool.workers < 2"
message = "pool ${pool.name} has one worker"
fields = ["pool.workers"]
`)
	alone := write("alone.toml", `
[extend]
use_default = false

[[rule]]
id = "team/only"
severity = "info"
when = "true"
message = "x"
`)
	def := len(DefaultPack().Rules)

	s, err := Load(Options{Paths: []string{replace}, Disable: []string{"ucx-ipc-only"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rules) != def-2+1 {
		t.Errorf("%d rules, want %d", len(s.Rules), def-1)
	}
	if s.Rule("itl-slo") != nil || s.Rule("ucx-ipc-only") != nil {
		t.Error("disabled rules still present")
	}
	if r := s.Rule("ttft-slo"); r == nil || r.Severity != Warn || r.File != replace {
		t.Errorf("ttft-slo not replaced: %+v", r)
	}
	if s.Rules[len(s.Rules)-1].ID != "team/min-workers" {
		t.Errorf("new rule not appended last: %s", s.Rules[len(s.Rules)-1].ID)
	}
	e := cleanEnv()
	e.Predicted.TTFTMS = 520 // 4% over: the default would deny, the replacement does not fire
	poolNamed(&e, "decode").Workers = 1
	fs := s.Evaluate(&e)
	if len(fs) != 1 || fs[0].RuleID != "team/min-workers" || fs[0].Pool != "decode" || fs[0].Fields[0] != "pools.decode.workers" {
		t.Errorf("findings %v", fs)
	}

	s, err = Load(Options{Paths: []string{dir}}) // a directory: both files, in name order
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rules) != 3 {
		t.Errorf("use_default = false: %d rules, want the 3 user rules", len(s.Rules))
	}
	_ = alone

	s, err = Load(Options{NoDefault: true, Paths: []string{replace}})
	if err == nil || !strings.HasSuffix(err.Error(), `[extend] disable: no rule "itl-slo"`) {
		t.Errorf("disabling an absent rule: got %v, s=%v", err, s)
	}
	_, err = Load(Options{Disable: []string{"ttft-sol"}})
	if err == nil || err.Error() != `--disable ttft-sol: no rule "ttft-sol"; did you mean ttft-slo?` {
		t.Errorf("got %v", err)
	}

	// Two user packs defining one id: an error naming both places, whichever
	// order they load in (a user rule may replace a default one only).
	other := t.TempDir()
	dup := writeFile(t, other, "dup.toml", "\n[[rule]]\nid = \"team/min-workers\"\nseverity = \"warn\"\nwhen = \"true\"\nmessage = \"x\"\n")
	_, err = Load(Options{Paths: []string{replace, dup}})
	want := fmt.Sprintf(`%s:2: id: duplicate rule id "team/min-workers": also defined at %s:11`, dup, replace)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("duplicate ids across packs: got %v\nwant %s", err, want)
	}
}

func TestTemplate(t *testing.T) {
	s, err := compileOne(t, `
[[rule]]
id = "t"
severity = "info"
per_pool = true
when = "true"
message = "$${literal} ${pool.name}: ${bytes(pool.host_limit_bytes)} ${rate(link.throughput_bytes_per_s)} ${dur(disagg.transfer_ms)} ${percent(predicted.hit_rate)} ${num(pool.kv_slots_tokens)} ${transport.ucx_tls} ${pool.enforce_eager} ${ {'a': 1}.a } ${disagg.prefill_ms} ${mib(1)} ${pct(20)}"
fix = "set pools.${pool.name}.memory_limit"
fields = ["pool.memory_limit", "link.name"]
`)
	if err != nil {
		t.Fatal(err)
	}
	e := Env{
		Link:      LinkEnv{ThroughputBytesPerS: 104e6},
		Disagg:    DisaggEnv{TransferMS: 3308.333, PrefillMS: 80.126},
		Predicted: PredictedEnv{HitRate: 0.3521},
		Transport: NewTransport([]string{"tcp", "self"}),
		Pools:     []PoolEnv{{Name: "prefill", HostLimitBytes: 3584 << 20, KVSlotsTokens: 14816, EnforceEager: true}},
	}
	fs := s.Evaluate(&e)
	if len(fs) != 1 {
		t.Fatalf("findings %v", fs)
	}
	want := "${literal} prefill: 3.5 GiB 104 MB/s 3308.3 ms 35.2% 14,816 tcp,self true 1 80.13 1048576 0.2"
	if fs[0].Message != want {
		t.Errorf("message\n got %q\nwant %q", fs[0].Message, want)
	}
	if fs[0].Fix != "set pools.prefill.memory_limit" || strings.Join(fs[0].Fields, " ") != "pools.prefill.memory_limit link.name" {
		t.Errorf("fix %q fields %v", fs[0].Fix, fs[0].Fields)
	}
	Locate(fs, func(f string) planfile.Pos {
		return map[string]planfile.Pos{"link.name": {File: "plan.toml", Line: 30}}[f]
	})
	if fs[0].Line != 30 || fs[0].File != "plan.toml" || fs[0].Field != "link.name" {
		t.Errorf("place %s field %s", fs[0].Pos(), fs[0].Field)
	}
}

func TestEnvVarsDocumented(t *testing.T) {
	vars := EnvVars()
	seen := map[string]bool{}
	for _, v := range vars {
		if v.Desc == "" {
			t.Errorf("%s has no desc tag", v.Name)
		}
		if seen[v.Name] {
			t.Errorf("%s twice", v.Name)
		}
		seen[v.Name] = true
	}
	for _, name := range []string{"kv.bytes_per_token", "kv.bytes_per_request", "disagg.transfer_ms_shared", "disagg.prefill_ms",
		"disagg.ttft_agg_ms", "disagg.ttft_disagg_ms", "disagg.disaggregated", "disagg.same_gpu", "link.throughput_bytes_per_s",
		"pool.host_required_bytes", "pool.host_limit_bytes", "pool.kv_buffer_device", "pool.kv_slots_tokens",
		"pool.max_model_len_fits", "routing.working_set_tokens", "pool.workers", "router.mode", "router.kv_events",
		"transport.ucx_tls", "runtime.cuda_build", "runtime.driver_max_cuda", "slo.ttft_ms", "slo.itl_ms", "predicted.ttft_ms", "pools"} {
		if !seen[name] {
			t.Errorf("env lacks %s", name)
		}
	}
	var b strings.Builder
	if err := WriteEnvDoc(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "env.txt", []byte(b.String()))
}

func TestDriverTable(t *testing.T) {
	for _, c := range []struct{ driver, want string }{
		{"570.133", "12.8"}, {"570", "12.8"}, {"575.51.03", "12.9"}, {"580.65.06", "13.0"}, {"590.1", "13.0"},
		{"535.54", "12.2"}, {"470.1", ""}, {"", ""}, {"abc", ""},
	} {
		if got := DriverMaxCUDA(c.driver); got != c.want {
			t.Errorf("DriverMaxCUDA(%q) = %q, want %q", c.driver, got, c.want)
		}
	}
	r := NewRuntime("vllm", "13.0", "570.133")
	if r.CUDABuildMajor != 13 || r.CUDABuildNum != 1300 || r.DriverMaxCUDAMajor != 12 || r.DriverMaxCUDANum != 1208 {
		t.Errorf("%+v", r)
	}
}

func TestTransport(t *testing.T) {
	for _, c := range []struct {
		tls                    []string
		tcpOnly, ipcOnly, rdma bool
	}{
		{nil, false, false, true},
		{[]string{"tcp"}, true, false, false},
		{[]string{"tcp", "self", "cuda_copy"}, true, false, false},
		{[]string{"tcp", "cuda_ipc"}, false, false, false},
		{[]string{"cuda_ipc"}, false, true, false},
		{[]string{"cuda_ipc", "cuda_copy"}, false, true, false},
		{[]string{"rc", "tcp"}, false, false, true},
		{[]string{"^cuda_ipc", "tcp"}, true, false, false},
	} {
		got := NewTransport(c.tls)
		if got.TCPOnly != c.tcpOnly || got.CUDAIPCOnly != c.ipcOnly || got.HasRDMA != c.rdma {
			t.Errorf("%v: %+v", c.tls, got)
		}
	}
}
