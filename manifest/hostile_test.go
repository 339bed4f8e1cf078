package manifest

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Tests of issue 28's failure classes in the manifest reader. Each input
// used to crash the reader, overflow its stack, take seconds and gigabytes,
// or drop the reason it refused a manifest; each now gives one short
// finding or error at its place, in bounded time and memory.

// shellPod is a Pod whose container runs `sh -c script`, with env given
// as name=value pairs. The script is a JSON string, which YAML reads as a
// double-quoted scalar, on line 7.
func shellPod(script string, env ...string) []byte {
	var q strings.Builder
	enc := json.NewEncoder(&q)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(script)
	var b strings.Builder
	b.WriteString("kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: c\n")
	fmt.Fprintf(&b, "      command: [\"sh\", \"-c\", %s]\n", strings.TrimSuffix(q.String(), "\n"))
	b.WriteString("      resources:\n        limits:\n          nvidia.com/gpu: 1\n")
	if len(env) > 0 {
		b.WriteString("      env:\n")
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(&b, "        - name: %s\n          value: %s\n", k, v)
		}
	}
	return []byte(b.String())
}

// col is the 1-based column of needle on line 7 (the command) of data, as
// cat -n shows it: the place a finding about it must name.
func col(t *testing.T, data []byte, needle string) string {
	t.Helper()
	line := strings.Split(string(data), "\n")[6]
	i := strings.Index(line, needle)
	if i < 0 {
		t.Fatalf("%q not on line 7 %q", needle, line)
	}
	return fmt.Sprintf("pod.yaml:7:%d", i+1)
}

// bounded runs f and fails if it takes more than limit or allocates more
// than maxAlloc bytes in all.
func bounded(t *testing.T, limit time.Duration, maxAlloc uint64, f func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	f()
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	t.Logf("took %v, allocated %d MB", took.Round(time.Millisecond), (after.TotalAlloc-before.TotalAlloc)>>20)
	if took > limit {
		t.Errorf("took %v, more than %v", took, limit)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > maxAlloc {
		t.Errorf("allocated %d MB, more than %d MB", a>>20, maxAlloc>>20)
	}
}

func TestShellSubstitutionsAreFindings(t *testing.T) {
	for _, c := range []struct {
		script, needle, want string
	}{
		{"vllm serve Qwen/Qwen3-0.6B <(x)", "<(x)", `vllm serve argument "<(x)" is a process substitution (<(...) or >(...)), which kvplan never runs`},
		{"vllm serve Qwen/Qwen3-0.6B >(x)", ">(x)", `vllm serve argument ">(x)" is a process substitution`},
		{"vllm serve Qwen/Qwen3-0.6B --max-model-len $(cat f)", "$(cat f)", `vllm serve argument --max-model-len "$(cat f)" is a command substitution ($(...) or ` + "`...`" + `)`},
		{"vllm serve Qwen/Qwen3-0.6B --max-model-len `cat f`", "`cat f`", `vllm serve argument --max-model-len "$(cat f)" is a command substitution`},
		{"vllm serve Qwen/Qwen3-0.6B --tensor-parallel-size=$(nproc)", "--tensor", `vllm serve argument "--tensor-parallel-size=$(nproc)" is a command substitution`},
		// FuzzShellWords' crasher: the parser takes this slice offset and the
		// expander panicked on it (-- of something other than a name).
		{"vllm serve Qwen/Qwen3-0.6B --max-model-len ${A: --s---m}", "${A", `vllm serve argument --max-model-len "${A:--s---m}" is an arithmetic expansion the shell would stop at, so its value is unknown`},
		// The second: a pattern whose translated regexp does not compile
		// (regexp.MustCompile in the expander's removePattern).
		{"vllm serve Qwen/Qwen3-0.6B --max-model-len ${A%[[-\\H]}", "${A", `vllm serve argument --max-model-len "${A%[[-\\H]}" is a word the shell expander kvplan uses cannot evaluate, so its value is unknown`},
		{"vllm serve Qwen/Qwen3-0.6B --max-model-len ${A?unset}", "${A", `vllm serve argument --max-model-len "${A?unset}" is a word the shell would stop at (A: unset), so its value is unknown`},
	} {
		data := shellPod(c.script)
		m, err := Read("pod.yaml", data)
		if err != nil {
			t.Errorf("%s: %v", c.script, err)
			continue
		}
		var got []Finding
		for _, f := range m.Findings {
			if f.ID != IDGPUCount {
				got = append(got, f)
			}
		}
		if len(got) != 1 || got[0].ID != IDNotUnderstood || !strings.Contains(got[0].Message, c.want) || got[0].At.String() != col(t, data, c.needle) {
			t.Errorf("%s: want one not-understood finding at %s with %q, got %+v", c.script, col(t, data, c.needle), c.want, got)
		}
		if m.Plan.Model.Name != "Qwen/Qwen3-0.6B" {
			t.Errorf("%s: model %q", c.script, m.Plan.Model.Name)
		}
	}
}

// TestShellBounds: every script that used to blow up is refused at its
// place, by the bound it passes, within 2 s and 64 MB of allocation.
func TestShellBounds(t *testing.T) {
	doubling := func(n int) string {
		return "A=x; " + strings.Repeat("A=$A$A; ", n) + "vllm serve Qwen/Qwen3-0.6B --served-model-name $A"
	}
	replace := "A=x; " + strings.Repeat("A=${A//x/xxxxxxxxxx}; ", 8) + "vllm serve Qwen/Qwen3-0.6B --served-model-name $A"
	x90 := strings.Repeat("x", 90)
	x30k := strings.Repeat("x", 30_000)
	for _, c := range []struct {
		name, script string
		env          []string
		needle, want string
		shift        int // the place is this many bytes after the needle
	}{
		// The 17th doubling would make 2^17 = 131,072 bytes.
		{"29 doublings", doubling(29), nil, "", "$A of the shell command could expand to 131,072 bytes, more than the 64 KiB kvplan expands a word", 0},
		{"40 doublings", doubling(40), nil, "", "could expand to 131,072 bytes", 0},
		// Each replacement multiplies by 10; the fifth: (10,000 + 1) × 10 + 10,000 = 110,010.
		{"8 replacements", replace, nil, "", "$A of the shell command could expand to 110,010 bytes", 0},
		// 30,000 × $A of 90 bytes, one word: 2,700,000 bytes.
		{"$A 30,000 times", "vllm serve Qwen/Qwen3-0.6B --served-model-name " + strings.Repeat("$A", 30_000), []string{"A=" + x90}, "$A$A", "a word of the shell command could expand to 2,700,000 bytes", 0},
		// 2^20 fields of 20 × 9 bytes, joined by spaces: 2^20 × 180 + 2^20 − 1.
		{"brace bomb", "vllm serve Qwen/Qwen3-0.6B --served-model-name " + strings.Repeat("{aaaaaaaaa,bbbbbbbbb}", 20) + " x", nil, "{aaa", "could expand to 189,792,255 bytes", 0},
		// 10^8 fields of at most 20 bytes: 2 × 10^9 + 10^8 − 1.
		{"brace sequence", "vllm serve Qwen/Qwen3-0.6B --served-model-name {1..100000000}", nil, "{1..", "could expand to 2,099,999,999 bytes", 0},
		{"200,000 parentheses", strings.Repeat("(", 200_000) + "vllm serve Qwen/Qwen3-0.6B" + strings.Repeat(")", 200_000), nil, "", "the shell command is 400,026 bytes, over the 64 KiB kvplan reads", 0},
		// The 65th parenthesis, at byte 64 of the script, is one too deep.
		{"100 parentheses", strings.Repeat("(", 100) + "vllm serve Qwen/Qwen3-0.6B" + strings.Repeat(")", 100), nil, "((", "the shell command nests brackets more than 64 deep", 64},
		{"unbalanced quote", "vllm serve Qwen/Qwen3-0.6B --max-model-len '4096", nil, "'4096", "the shell command does not parse: reached EOF without closing quote `'`", 0},
		{"unclosed substitution", "vllm serve Qwen/Qwen3-0.6B $(x", nil, "$(x", "the shell command does not parse: reached EOF without matching `$(` with `)`", 0},
		// A value of 30,000 bytes searched for a pattern of 30,000: (30,000 + 1)² bytes of work.
		{"pattern work", "vllm serve Qwen/Qwen3-0.6B --served-model-name ${A//$B/y}", []string{"A=" + x30k, "B=" + x30k}, "${A", "the shell command matches patterns over more than 67,108,864 bytes", 0},
	} {
		data := shellPod(c.script, c.env...)
		var err error
		bounded(t, 2*time.Second, 64<<20, func() { _, err = Read("pod.yaml", data) })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error with %q, got %v", c.name, c.want, err)
			continue
		}
		if c.needle != "" {
			at := col(t, data, c.needle)
			if c.shift > 0 {
				var line, column int
				fmt.Sscanf(at, "pod.yaml:%d:%d", &line, &column)
				at = fmt.Sprintf("pod.yaml:%d:%d", line, column+c.shift)
			}
			if !strings.HasPrefix(err.Error(), at+": ") {
				t.Errorf("%s: want the place %s, got %v", c.name, at, err)
			}
		}
		if strings.Count(err.Error(), "\n") > 0 || len(err.Error()) > 400 {
			t.Errorf("%s: not one short line: %d bytes", c.name, len(err.Error()))
		}
	}
}

// TestShellNestingWithoutBrackets: keywords, pipes and negations nest
// without brackets; within the 64 KiB script cap they parse (or are
// refused) in bounded time and memory.
func TestShellNestingWithoutBrackets(t *testing.T) {
	for _, c := range []struct{ name, script string }{
		{"if", strings.Repeat("if true; then ", 4000) + "vllm serve Qwen/Qwen3-0.6B" + strings.Repeat("; fi", 4000)},
		{"while", strings.Repeat("while true; do ", 3500) + "vllm serve Qwen/Qwen3-0.6B" + strings.Repeat("; done", 3500)},
		{"pipes", strings.Repeat("a | ", 15_000) + "vllm serve Qwen/Qwen3-0.6B"},
		{"and", strings.Repeat("a && ", 12_000) + "vllm serve Qwen/Qwen3-0.6B"},
		{"not", strings.Repeat("! ", 30_000) + "vllm serve Qwen/Qwen3-0.6B"},
		{"arithmetic", "vllm serve Qwen/Qwen3-0.6B --max-model-len $((" + strings.Repeat("1+", 30_000) + "1))"},
	} {
		data := shellPod(c.script)
		bounded(t, 2*time.Second, 256<<20, func() { _, _ = Read("pod.yaml", data) })
	}
}

func TestShellReadsNothingOfTheMachine(t *testing.T) {
	// ~root would be looked up in the machine's user database; $HOME and
	// $PATH would come from kvplan's environment.
	m, err := Read("pod.yaml", shellPod("vllm serve ~root/models/qwen --served-model-name $HOME$PATH"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Plan.Model.Name != "~root/models/qwen" {
		t.Errorf("model %q", m.Plan.Model.Name)
	}
	if got := m.Args["p"]; len(got) != 1 || got[0].Value != "" {
		t.Errorf("--served-model-name %+v, want empty", got)
	}
}

// TestKubernetesVarBound: Kubernetes' $(VAR) expansion of command and args
// is measured before it is done.
func TestKubernetesVarBound(t *testing.T) {
	big := strings.Repeat("x", 60_000)
	data := []byte("kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: c\n" +
		"      command: [vllm, serve, Qwen/Qwen3-0.6B, --served-model-name, \"" + strings.Repeat("$(A)", 100) + "\"]\n" +
		"      env:\n        - name: A\n          value: " + big + "\n")
	var m *Manifest
	var err error
	bounded(t, 2*time.Second, 64<<20, func() { m, err = Read("pod.yaml", data) })
	if err != nil {
		t.Fatal(err)
	}
	// 100 × 60,000 bytes.
	want := "the argument expands its $(VAR) references to 6,000,000 bytes, more than the 64 KiB kvplan expands a word"
	found := false
	for _, f := range m.Findings {
		found = found || f.ID == IDBadValue && strings.Contains(f.Message, want)
	}
	if !found {
		t.Errorf("want a finding %q, got %+v", want, m.Findings)
	}
}

// TestRefusedScriptBesideOtherPools: a refused script in one Pod is a
// finding when other documents hold pools, not a lost reason.
func TestRefusedScriptBesideOtherPools(t *testing.T) {
	data := append(shellPod("vllm serve Qwen/Qwen3-0.6B --max-model-len '4096"),
		[]byte("---\nkind: Pod\nmetadata:\n  name: q\nspec:\n  containers:\n    - command: [vllm, serve, Qwen/Qwen3-0.6B]\n")...)
	m, err := Read("pod.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range m.Findings {
		if f.ID == IDBadValue && strings.Contains(f.Message, "p: the shell command does not parse: reached EOF without closing quote") && f.At.String() == col(t, data, "'4096") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("want the parse error once, at %s: %+v", col(t, data, "'4096"), m.Findings)
	}
}

func TestCommandStringRefusals(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"vllm serve M --max-model-len '4096", "--vllm-args:1:30: worker: the shell command does not parse: reached EOF without closing quote `'`"},
		{"--max-model-len '4096", "--vllm-args:1:17: worker: the shell command does not parse: reached EOF without closing quote `'`"},
		{"vllm serve M " + strings.Repeat("(", 70), "--vllm-args:1:78: worker: the shell command nests brackets more than 64 deep, the most kvplan parses"},
	} {
		_, err := ReadCommandString("--vllm-args", c.line)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: got %v, want %s", c.line, err, c.want)
		}
	}
	m, err := ReadCommandString("--vllm-args", "vllm serve M <(x)")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Findings) != 1 || m.Findings[0].ID != IDNotUnderstood || m.Findings[0].At.String() != "--vllm-args:1:14" {
		t.Errorf("findings %+v", m.Findings)
	}
}

const onePod = "kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - command: [vllm, serve, Qwen/Qwen3-0.6B]\n"

// TestEmptyDocumentsAreSkipped: helm template ends documents with "---"
// and prints comment-only ones; they were "document 2 is not a mapping".
func TestEmptyDocumentsAreSkipped(t *testing.T) {
	for _, doc := range []string{
		onePod + "---\n",
		onePod + "---\n---\n",
		onePod + "---\n# Source: chart/templates/empty.yaml\n",
		"---\n# a comment\n---\n" + onePod,
		onePod + "--- null\n",
		onePod + "---\n~\n",
	} {
		m, err := Read("m.yaml", []byte(doc))
		if err != nil || len(m.Plan.Pools) != 1 {
			t.Errorf("%q: %v", doc, err)
		}
	}
	// A document that is a value, not a mapping, is still refused.
	if _, err := Read("m.yaml", []byte(onePod+"---\n3\n")); err == nil || err.Error() != "m.yaml:8:1: document 2 is not a mapping: want a Kubernetes object or Helm values" {
		t.Errorf("a scalar document: %v", err)
	}
}

// TestYAMLEncodingErrorsArePlaced: the parser's errors about bytes carry
// no line; the first bad byte gives line and column.
func TestYAMLEncodingErrorsArePlaced(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		// Line 7, after "  note: " (8 columns): column 9.
		{onePod + "  note: \xff\xfe\n", "m.yaml:7:9: not valid YAML: invalid leading UTF-8 octet (byte 0xff is not UTF-8)"},
		// "  note: a" is 9 columns: the NUL is column 10.
		{onePod + "  note: a\x00b\n", "m.yaml:7:10: not valid YAML: control characters are not allowed (control character U+0000)"},
		// Columns count characters: "  é: é" is 6, the escape is column 7.
		{onePod + "  é: é\x1b\n", "m.yaml:7:7: not valid YAML: control characters are not allowed (control character U+001B)"},
	} {
		_, err := Read("m.yaml", []byte(c.data))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: got %v, want %s", c.data, err, c.want)
		}
	}
}

// TestSameNamesRenameLinearly: 4,000 Deployments of one name took 24.9 s
// (renaming was cubic); 10,000 now read in 0.6 s on an idle machine, named
// d, d-2, ... d-10000, around a name the manifest itself uses. The bound is
// 10 s: with CI's packages running beside it a 0.3 s input here took 8×
// longer, and a cubic renaming takes minutes.
func TestSameNamesRenameLinearly(t *testing.T) {
	var b strings.Builder
	b.WriteString("kind: Pod\nmetadata:\n  name: d-3\nspec:\n  containers:\n    - command: [vllm, serve, Qwen/Qwen3-0.6B]\n")
	for range 10_000 {
		b.WriteString("---\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n        - command: [vllm, serve, Qwen/Qwen3-0.6B]\n")
	}
	var m *Manifest
	var err error
	bounded(t, 10*time.Second, 1<<30, func() { m, err = Read("m.yaml", []byte(b.String())) })
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Plan.Pools) != 10_001 {
		t.Fatalf("%d pools", len(m.Plan.Pools))
	}
	for _, n := range []string{"d", "d-2", "d-3", "d-4", "d-10000", "d-10001"} {
		if m.Plan.Pools[n] == nil {
			t.Errorf("no pool %s", n)
		}
	}
	if m.Plan.Pools["d-10002"] != nil {
		t.Error("a pool too many")
	}
}

// TestNotUnderstoodIsCapped: one finding a kind of argument, and at most
// maxNotUnderstood (20) kinds a worker, then one that counts the rest.
func TestNotUnderstoodIsCapped(t *testing.T) {
	args := make([]string, 0, 95_000)
	for i := range 95_000 {
		args = append(args, fmt.Sprintf("\"--zz%d\"", i))
	}
	data := "kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - command: [vllm, serve, Qwen/Qwen3-0.6B]\n      args: [" + strings.Join(args, ", ") + "]\n"
	var m *Manifest
	var err error
	bounded(t, 2*time.Second, 512<<20, func() { m, err = Read("m.yaml", []byte(data)) })
	if err != nil {
		t.Fatal(err)
	}
	var nu []Finding
	for _, f := range m.Findings {
		if f.ID == IDNotUnderstood {
			nu = append(nu, f)
		}
	}
	if len(nu) != 21 || !strings.Contains(nu[0].Message, `"--zz0"`) || !strings.Contains(nu[19].Message, `"--zz19"`) ||
		nu[20].Message != "p: … and 94,980 more vllm serve arguments that kvplan does not understand, from here on (the first 20 kinds are listed); the review ignores it" {
		t.Errorf("%d findings; last %+v", len(nu), nu[len(nu)-1])
	}
	// --zz20 is the 21st argument: line 7, after the 20 listed.
	if want := "m.yaml:7:" + fmt.Sprint(strings.Index(strings.Split(data, "\n")[6], `"--zz20"`)+2); nu[20].At.String() != want {
		t.Errorf("the count is at %s, want %s", nu[20].At, want)
	}
	m, err = Read("m.yaml", []byte("kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - command: [vllm, serve, Qwen/Qwen3-0.6B]\n      args: ["+strings.Repeat("--zz, 1, ", 999)+"--zz=2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	nu = nil
	for _, f := range m.Findings {
		if f.ID == IDNotUnderstood {
			nu = append(nu, f)
		}
	}
	if len(nu) != 1 || nu[0].Message != `p: vllm serve argument "--zz 1" is not understood by kvplan (given 1,000 times); the review ignores it` {
		t.Errorf("%+v", nu)
	}
}

// TestCountsAreChecked: replicas -3, .nan or 1e300 became one worker with
// no finding; a negative or 1e20 GPU limit was "no nvidia.com/gpu limit".
func TestCountsAreChecked(t *testing.T) {
	dep := func(replicas, gpu string) string {
		return "kind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: " + replicas + "\n  template:\n    spec:\n      containers:\n" +
			"        - command: [vllm, serve, Qwen/Qwen3-0.6B]\n          resources:\n            limits:\n              nvidia.com/gpu: " + gpu + "\n"
	}
	for _, c := range []struct{ replicas, gpu, at, want string }{
		{"-3", "1", "m.yaml:5:13", `d: replicas is not a whole number from 0 to 100,000: "-3"`},
		{".nan", "1", "m.yaml:5:13", `d: replicas is not a whole number from 0 to 100,000: ".nan"`},
		{"1e300", "1", "m.yaml:5:13", `d: replicas is not a whole number from 0 to 100,000: "1e300"`},
		{"2.5", "1", "m.yaml:5:13", `d: replicas is not a whole number from 0 to 100,000: "2.5"`},
		{"100001", "1", "m.yaml:5:13", `d: replicas is not a whole number from 0 to 100,000: "100001"`},
		{"1", "-1", "m.yaml:12:31", `d: limits.nvidia.com/gpu is not a whole number from 0 to 1,024: "-1"`},
		{"1", "1e20", "m.yaml:12:31", `d: limits.nvidia.com/gpu is not a whole number from 0 to 1,024: "1e20"`},
	} {
		m, err := Read("m.yaml", []byte(dep(c.replicas, c.gpu)))
		if err != nil {
			t.Fatal(err)
		}
		var bad []Finding
		for _, f := range m.Findings {
			if f.ID == IDBadValue || f.ID == IDGPUCount {
				bad = append(bad, f)
			}
		}
		if len(bad) != 1 || bad[0].Message != c.want || bad[0].At.String() != c.at || bad[0].Severity != Deny {
			t.Errorf("replicas %s gpu %s: %+v", c.replicas, c.gpu, bad)
		}
		for _, n := range m.Notes {
			if strings.Contains(n.Text, "no nvidia.com/gpu limit") {
				t.Errorf("gpu %s: note %q", c.gpu, n.Text)
			}
		}
	}
}
