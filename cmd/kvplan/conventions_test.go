package main

import (
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
)

func TestVersion(t *testing.T) {
	for _, flag := range []string{"--version", "-V"} {
		out, errOut, code := kvplan(t, flag)
		if code != 0 {
			t.Fatalf("%s: exit %d, stderr %s", flag, code, errOut)
		}
		if !strings.HasPrefix(out, "kvplan ") || !strings.Contains(out, runtime.Version()) || !strings.Contains(out, "build tags:") {
			t.Errorf("%s printed %q: want the version, the Go version and the build tags", flag, out)
		}
	}
}

func TestBuildInfoString(t *testing.T) {
	cases := []struct {
		b    buildInfo
		want string
	}{
		{buildInfo{Version: "v0.4.0", Commit: "1a2b3c4d5e6f", Time: "2026-11-30T10:00:00Z"}, "kvplan v0.4.0 (commit 1a2b3c4d5e6f, 2026-11-30T10:00:00Z)"},
		{buildInfo{Version: "devel", Commit: "1a2b3c4d5e6f", Modified: true}, "kvplan devel (commit 1a2b3c4d5e6f with local changes)"},
		{buildInfo{Version: "devel"}, "kvplan devel"},
	}
	for _, c := range cases {
		if got := c.b.String(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestCompletion(t *testing.T) {
	cases := []struct {
		shell string
		want  []string
	}{
		{"bash", []string{"complete -o bashdefault -o default -F _kvplan_complete kvplan", completionFlag}},
		{"zsh", []string{"#compdef kvplan", completionFlag}},
		{"fish", []string{"complete -c kvplan", "engines", "gpu-memory-utilization"}},
		{"BASH", []string{"_kvplan_complete"}},
	}
	for _, c := range cases {
		out, errOut, code := kvplan(t, "completion", c.shell)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.shell, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s completion lacks %q", c.shell, w)
			}
		}
	}
	_, errOut, code := kvplan(t, "completion", "bsh")
	if code != ExitUsage || !strings.Contains(errOut, "did you mean bash?") {
		t.Errorf("completion bsh: exit %d, stderr %q; want 2 with a did-you-mean", code, errOut)
	}
}

// TestCompletionCandidates asks for candidates as the shell scripts do.
// urfave/cli reads the words from os.Args, so the test sets them.
func TestCompletionCandidates(t *testing.T) {
	saved := os.Args
	defer func() { os.Args = saved }()
	os.Args = []string{"kvplan", completionFlag}
	out, _, code := kvplan(t, completionFlag)
	if code != 0 || !strings.Contains(out, "engines\n") || !strings.Contains(out, "memory\n") {
		t.Errorf("top-level candidates (exit %d): %q", code, out)
	}
	os.Args = []string{"kvplan", "rules", completionFlag}
	out, _, _ = kvplan(t, "rules", completionFlag)
	for _, want := range []string{"list", "show", "env", "test"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("rules candidates lack %s: %q", want, out)
		}
	}
}

// TestGroupHelp checks that every command with subcommands lists them
// with examples.
func TestGroupHelp(t *testing.T) {
	for _, c := range newApp(nil, nil).Commands {
		if len(c.Subcommands) == 0 {
			continue
		}
		out, errOut, code := kvplan(t, c.Name, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d: %s", c.Name, code, errOut)
		}
		for _, s := range c.Subcommands {
			if !regexp.MustCompile(`(?m)^   ` + s.Name + `\b`).MatchString(out) {
				t.Errorf("%s --help does not list %s:\n%s", c.Name, s.Name, out)
			}
		}
		if !strings.Contains(out, "EXAMPLES:\n   kvplan "+c.Name+" ") {
			t.Errorf("%s --help has no examples:\n%s", c.Name, out)
		}
		// A group with no subcommand named shows the same help.
		bare, _, code := kvplan(t, c.Name)
		if code != 0 || bare != out {
			t.Errorf("kvplan %s (exit %d) differs from its --help", c.Name, code)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"kv", "--modle", "qwen3-8b"}, "kv: unknown flag --modle; did you mean --model?"},
		{[]string{"memory", "--gpu-utl", "0.9"}, "did you mean --gpu-util?"},
		{[]string{"disagg", "--link=1gbe", "--input-token", "10"}, "did you mean --input-tokens?"},
		{[]string{"rules", "list", "--rule", "x"}, "rules list: unknown flag --rule; did you mean --rules?"},
		{[]string{"--versoin"}, "unknown flag --versoin; did you mean --version?"},
		{[]string{"modles", "list"}, `unknown command "modles"; did you mean models?`},
		{[]string{"engines", "lst"}, `engines: unknown command "lst"; did you mean engines list?`},
	}
	for _, c := range cases {
		_, errOut, code := kvplan(t, c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with %q", c.args, code, errOut, c.want)
		}
	}
}

// TestFlagAliases checks that vLLM's and the plan file's names and
// kvplan's older names give the same output.
func TestFlagAliases(t *testing.T) {
	cases := []struct{ old, new []string }{
		{[]string{"kv", "--model", "qwen3-8b", "--tokens", "8000", "--kv-dtype", "FP8", "--tp", "2"},
			[]string{"kv", "--model", "qwen3-8b", "--input-tokens", "8k", "--kv-cache-dtype", "fp8", "--tensor-parallel-size", "2"}},
		{[]string{"memory", "--model", "qwen3-0.6b", "--gpu", "rtx4060-laptop", "--gpu-util", "0.38", "--limit", "3584Mi", "--kv-buffer", "cpu", "--concurrency", "4", "--pp", "1"},
			[]string{"memory", "--model", "qwen3-0.6b", "--gpu", "rtx4060-laptop", "--gpu-memory-utilization", "0.38", "--memory-limit", "3.5Gi", "--kv-buffer-device", "CPU", "--concurrency", "4", "--pipeline-parallel-size", "1"}},
		{[]string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--isl", "3000", "--osl", "64"},
			[]string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--input-tokens", "3000", "--output-tokens", "64"}},
		{[]string{"route", "--workers", "2", "--model", "qwen3-0.6b", "--gpu", "l4", "--gpu-util", "0.5", "--tp", "1"},
			[]string{"route", "--workers", "2", "--model", "qwen3-0.6b", "--gpu", "l4", "--gpu-memory-utilization", "0.5", "--tensor-parallel-size", "1"}},
	}
	for _, c := range cases {
		a, ea, ca := kvplan(t, c.old...)
		b, eb, cb := kvplan(t, c.new...)
		if ca != cb || a != b || a == "" {
			t.Errorf("%v (exit %d, %s) and %v (exit %d, %s) differ:\n%s\n---\n%s", c.old, ca, ea, c.new, cb, eb, a, b)
		}
	}
}

// TestPastedVLLMLine checks that a pasted vllm serve line gives what the
// same settings give as flags, and that kvplan's flags win over the line.
func TestPastedVLLMLine(t *testing.T) {
	flags := []string{"memory", "--gpu", "l4", "--model", "qwen3-8b", "--tensor-parallel-size", "2", "--max-model-len", "16384",
		"--kv-cache-dtype", "fp8", "--gpu-memory-utilization", "0.85", "--enforce-eager", "--max-num-seqs", "128", "-o", "json"}
	want, errOut, code := kvplan(t, flags...)
	if code != 0 {
		t.Fatalf("flags: exit %d: %s", code, errOut)
	}
	line := "vllm serve Qwen/Qwen3-8B -tp 2 --max_model_len 16384 --kv-cache-dtype fp8_e4m3 --gpu-memory-utilization=0.85 --enforce-eager --max-num-seqs 128 --host 0.0.0.0"
	pasted, errOut, code := kvplan(t, append([]string{"memory", "--gpu", "l4", "-o", "json", "--"}, strings.Fields(line)...)...)
	if code != 0 || pasted != want {
		t.Errorf("pasted after -- (exit %d, %s) differs from the flags", code, errOut)
	}
	asString, errOut, code := kvplan(t, "memory", "--gpu", "l4", "-o", "json", "--vllm-args", line)
	if code != 0 || asString != want {
		t.Errorf("--vllm-args (exit %d, %s) differs from the flags", code, errOut)
	}
	// A flag before -- wins over the line.
	wins, _, _ := kvplan(t, "memory", "--gpu", "l4", "-o", "json", "--max-model-len", "16384", "--", "vllm", "serve", "Qwen/Qwen3-8B", "-tp", "2",
		"--max-model-len", "4096", "--kv-cache-dtype", "fp8", "--gpu-memory-utilization", "0.85", "--enforce-eager", "--max-num-seqs", "128")
	if wins != want {
		t.Errorf("--max-model-len before -- did not win over the line's")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"memory", "--gpu", "l4", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--tp", "2"}, `"--tp 2" is not understood by kvplan (did you mean -tp?)`},
		{[]string{"memory", "--gpu", "l4", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "lots"}, "--max-model-len lots"},
		{[]string{"memory", "--gpu", "l4", "--vllm-args", "--model m", "--", "vllm", "serve", "m"}, "not both"},
		{[]string{"memory", "--gpu", "l4", "--", "nginx"}, `unexpected argument "nginx"`},
	} {
		_, errOut, code := kvplan(t, c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 with %q", c.args, code, errOut, c.want)
		}
	}
}

func TestEngines(t *testing.T) {
	out, errOut, code := kvplan(t, "engines", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"vllm", "sglang", "trtllm", ">= 0.10.0, < 0.21.0", "--gpu-memory-utilization 0.92"} {
		if !strings.Contains(out, want) {
			t.Errorf("engines list lacks %q:\n%s", want, out)
		}
	}
	out, errOut, code = kvplan(t, "engines", "show", "vllm", "--engine-version", "0.19.0")
	if code != 0 || !strings.Contains(out, "vllm 0.19.0 (profile >= 0.10.0, < 0.21.0)") {
		t.Errorf("engines show vllm --engine-version 0.19.0 (exit %d, %s):\n%s", code, errOut, out)
	}
	_, errOut, code = kvplan(t, "engines", "show", "vlm")
	if code != ExitUsage || !strings.Contains(errOut, "did you mean vllm") {
		t.Errorf("engines show vlm: exit %d, %q", code, errOut)
	}
	// Every constant of every family has a display.
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range cat.Engines {
		for _, k := range catalog.EngineConstants(e.FamilyOf()) {
			if v := engineConstant(e, k); strings.HasPrefix(v, "(not shown") {
				t.Errorf("engines show does not display %s's %s", e.Name, k)
			}
		}
	}
}

// helpTexts returns the help of the app and of every command and
// subcommand, by path.
func helpTexts(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := append(append([]string{}, path...), c.Name)
			h, errOut, code := kvplan(t, append(p, "--help")...)
			if code != 0 {
				t.Fatalf("%v --help: exit %d: %s", p, code, errOut)
			}
			out[strings.Join(p, " ")] = h
			walk(p, c.Subcommands)
		}
	}
	h, _, _ := kvplan(t, "--help")
	out[""] = h
	walk(nil, newApp(nil, nil).Commands)
	return out
}

// TestHelpDefaultsOnce checks that no flag's help line states a default
// twice.
func TestHelpDefaultsOnce(t *testing.T) {
	for path, h := range helpTexts(t) {
		for _, line := range strings.Split(h, "\n") {
			if strings.Count(line, "(default") > 1 && strings.HasPrefix(strings.TrimSpace(line), "-") {
				t.Errorf("kvplan %s --help: a default twice: %s", path, strings.TrimSpace(line))
			}
			if strings.Contains(line, "(default: false)") {
				t.Errorf("kvplan %s --help: %s", path, strings.TrimSpace(line))
			}
		}
	}
}

// TestHelpNamesRealCommands checks that every "kvplan X [Y]" in any help
// text names a command that exists (the help once sent users to
// `kvplan engines list` before it existed).
func TestHelpNamesRealCommands(t *testing.T) {
	app := newApp(nil, nil)
	// A command reference: kvplan, a word, then a flag, a second word, the
	// end of the line or punctuation (prose such as "kvplan reads" goes on
	// with a word that is not a command).
	ref := regexp.MustCompile("(?m)(?:^|[\\s(`|])kvplan ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?(?: -|$|[);,:|\\]]| [A-Z<\\[])")
	for path, h := range helpTexts(t) {
		for _, m := range ref.FindAllStringSubmatch(h, -1) {
			c := findCommand(app.Commands, m[1])
			if c == nil {
				t.Errorf("kvplan %s --help mentions %q: no command %s", path, m[0], m[1])
				continue
			}
			if len(c.Subcommands) > 0 && m[2] != "" && findCommand(c.Subcommands, m[2]) == nil && m[2] != "command" {
				t.Errorf("kvplan %s --help mentions %q: %s has no command %s", path, m[0], m[1], m[2])
			}
		}
	}
}

// TestCommonFlagsClaim checks the app help's claim about which commands
// take -o, --catalog and --explain.
func TestCommonFlagsClaim(t *testing.T) {
	app := newApp(nil, nil)
	has := func(path []string, flag string) bool {
		cmds := app.Commands
		var c *cli.Command
		for _, p := range path {
			if c = findCommand(cmds, p); c == nil {
				t.Fatalf("no command %v", path)
			}
			cmds = c.Subcommands
		}
		for _, f := range c.Flags {
			for _, n := range f.Names() {
				if n == flag {
					return true
				}
			}
		}
		return false
	}
	outputCatalog := [][]string{{"kv"}, {"disagg"}, {"memory"}, {"perf"}, {"route"}, {"simulate"}, {"plan"}, {"check"}}
	for _, g := range []string{"models", "links", "gpus", "engines"} {
		outputCatalog = append(outputCatalog, []string{g, "list"}, []string{g, "show"})
	}
	for _, p := range outputCatalog {
		for _, f := range []string{"output", "catalog"} {
			if !has(p, f) {
				t.Errorf("kvplan %v lacks --%s, which the help promises", p, f)
			}
		}
	}
	for _, p := range [][]string{{"kv"}, {"disagg"}, {"memory"}, {"perf"}, {"route"}, {"plan"}, {"check"}} {
		if !has(p, "explain") {
			t.Errorf("kvplan %v lacks --explain, which the help promises", p)
		}
	}
}
