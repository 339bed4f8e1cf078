package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
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
		// A run builds no command for it (onlyCommand); the app with every
		// command prints the same.
		var full bytes.Buffer
		if err := newApp(&full, io.Discard).Run([]string{"kvplan", flag}); err != nil || full.String() != out {
			t.Errorf("%s: the app with every command printed %q (%v), a run %q", flag, full.String(), err, out)
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
	// memory stops on an argument it does not know: it says so, not that
	// "the review ignores it" as a manifest review does.
	_, errOut, _ = kvplan(t, "memory", "--gpu", "l4", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--tp", "2")
	if !strings.Contains(errOut, "kvplan memory stops rather than size memory without it") || strings.Contains(errOut, "review") {
		t.Errorf("memory's refusal of --tp 2 reads %q", errOut)
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

// conventionRuns is one working run of every command, as a user types it.
// TestConventionsCoverEveryCommand fails for a command that has none, so
// a new command cannot skip the convention tests that follow, which run
// every command of the app.
var conventionRuns = map[string][]string{
	"kv":     {"--model", "qwen3-0.6b", "--input-tokens", "1500"},
	"disagg": {"--model", "qwen3-0.6b", "--link", "1gbe"},
	"memory": {"--model", "qwen3-0.6b", "--gpu", "l4"},
	"perf":   {"--model", "qwen3-0.6b", "--gpu", "l4", "--isl", "512", "--osl", "64", "--concurrency", "4"},
	"calibrate": {"../../testdata/benchresults/trtllm-bench/h100-8x_llama-3.1-70b-instruct_fp8_tp8_trt0.16_isl128-osl128_report-excerpt.txt",
		"--gpu", "h100-sxm", "--out", filepath.Join(os.TempDir(), "kvplan-conventions-calib.toml"), "--force", "--calibrated-at", "2026-01-31"},
	"check":         {"../../examples/clean.toml"},
	"diff":          {"../../examples/clean.toml", "../../examples/clean.toml"},
	"manifest show": {"../../testdata/manifests/dynamo/vllm_agg_router.yaml", "--gpu", "h100-sxm"},
	"rules list":    {},
	"rules show":    {"kv-router-without-events"},
	"rules env":     {},
	"rules test":    {"../../testdata/rules/tests"},
	"route":         {"--kv-slots", "14816"},
	"simulate":      {"--synthetic", "4x256x2", "--kv-slots", "14816"},
	"plan":          {"--model", "qwen3-0.6b", "--isl", "512", "--osl", "64", "--rate", "1", "--ttft-p95", "1s", "--itl-p95", "100ms", "--gpu", "l4", "--verify", "0"},
	"models list":   {},
	"models show":   {"qwen3-0.6b"},
	"models import": {"../../testdata/models/Qwen--Qwen3-0.6B.json", "--print"},
	"links list":    {},
	"links show":    {"1gbe"},
	"gpus list":     {},
	"gpus show":     {"l4"},
	"engines list":  {},
	"engines show":  {"vllm"},
	"completion":    {"bash"},
}

// leafCommands returns every command that runs (groups excluded), by path.
func leafCommands() map[string]*cli.Command {
	out := map[string]*cli.Command{}
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := strings.TrimSpace(path + " " + c.Name)
			if len(c.Subcommands) > 0 {
				walk(p, c.Subcommands)
			} else {
				out[p] = c
			}
		}
	}
	walk("", newApp(nil, nil).Commands)
	return out
}

func TestConventionsCoverEveryCommand(t *testing.T) {
	for path := range leafCommands() {
		args, ok := conventionRuns[path]
		if !ok {
			t.Errorf("kvplan %s has no entry in conventionRuns: add one working run so the convention tests cover it", path)
			continue
		}
		_, errOut, code := kvplan(t, append(strings.Fields(path), args...)...)
		if code != ExitOK && code != ExitFindings {
			t.Errorf("kvplan %s %s: exit %d: %s", path, strings.Join(args, " "), code, errOut)
		}
	}
	for path := range conventionRuns {
		if _, ok := leafCommands()[path]; !ok {
			t.Errorf("conventionRuns names %q, which is not a command", path)
		}
	}
}

// TestEveryCommandHelp: every command's help has examples (its usage
// lines, each a kvplan command) and the exit codes.
func TestEveryCommandHelp(t *testing.T) {
	for path := range leafCommands() {
		h, errOut, code := kvplan(t, append(strings.Fields(path), "--help")...)
		if code != ExitOK {
			t.Fatalf("%s --help: exit %d: %s", path, code, errOut)
		}
		_, usage, _ := strings.Cut(h, "USAGE:\n")
		usage, _, _ = strings.Cut(usage, "\n\n")
		if !strings.Contains(usage+"\n", "kvplan "+path+" ") && !strings.Contains(usage+"\n", "kvplan "+path+"\n") {
			t.Errorf("kvplan %s --help: no example under USAGE:\n%s", path, h)
		}
		if !strings.Contains(h, exitCodesHelp) {
			t.Errorf("kvplan %s --help lacks the exit codes", path)
		}
	}
}

// sharedFlags are the flags of flagnames.go, built by their constructors:
// a command's flag that has any of their names must be the shared flag
// (its primary name first, its aliases kept).
func sharedFlags() []cli.Flag {
	return []cli.Flag{tensorParallelFlag(1, ""), pipelineParallelFlag(1, ""), gpuUtilFlag(0.9, ""), maxModelLenFlag(""),
		enforceEagerFlag(""), maxNumSeqsFlag(""), maxNumBatchedTokensFlag(""), kvDtypeFlag(""), inputTokensFlag(0, "", "tokens", "isl"),
		outputTokensFlag(0, "", "osl"), kvBufferFlag(""), memoryLimitFlag("")}
}

// TestFlagNamesFollowConventions: a setting that has a shared flag
// (vLLM's name, the plan key's) is spelled the same in every command, with
// kvplan's older names as aliases; a command may not offer only an alias.
func TestFlagNamesFollowConventions(t *testing.T) {
	for path, c := range leafCommands() {
		for _, f := range c.Flags {
			for _, s := range sharedFlags() {
				shared := s.Names()
				if !slices.ContainsFunc(f.Names(), func(n string) bool { return slices.Contains(shared, n) }) {
					continue
				}
				if f.Names()[0] != shared[0] {
					t.Errorf("kvplan %s: --%s is a spelling of --%s; name the flag --%s (flagnames.go), with --%s as an alias", path, f.Names()[0], shared[0], shared[0], f.Names()[0])
					continue
				}
				if shared[0] == flagInputTokens || shared[0] == flagOutputTokens {
					continue // each command keeps its own older spellings
				}
				for _, a := range shared[1:] {
					if !slices.Contains(f.Names(), a) {
						t.Errorf("kvplan %s: --%s lacks its alias --%s (use the constructor in flagnames.go)", path, shared[0], a)
					}
				}
			}
		}
	}
}

// TestOutputFormatsStated: every -o lists its formats, refuses another
// before the command runs (with no other argument given), and the formats
// it names in the error are those its help lists.
func TestOutputFormatsStated(t *testing.T) {
	for path, c := range leafCommands() {
		var o *cli.StringFlag
		for _, f := range c.Flags {
			if sf, ok := f.(*cli.StringFlag); ok && sf.Name == "output" {
				o = sf
			}
		}
		if o == nil {
			continue
		}
		if o.Action == nil || !slices.Contains(o.Aliases, "o") {
			t.Errorf("kvplan %s: -o is not built by outputFlag (flagnames.go)", path)
			continue
		}
		_, errOut, code := kvplan(t, append(strings.Fields(path), "-o", "bogus")...)
		_, list, ok := strings.Cut(strings.TrimSpace(errOut), "is not a format; use one of ")
		if code != ExitUsage || !ok {
			t.Errorf("kvplan %s -o bogus: exit %d, %q; want exit 2 listing the formats", path, code, errOut)
			continue
		}
		for _, format := range strings.Split(list, ", ") {
			if !strings.Contains(o.Usage, format) {
				t.Errorf("kvplan %s: -o accepts %s, which its help (%q) does not state", path, format, o.Usage)
			}
		}
	}
}

// TestNumberGrammarInEveryCommand: every integer and real flag of every
// command reads the one number grammar (1.5k, 2M, 1e6) and refuses what it
// does not read with the grammar's message, not urfave's "parse error".
func TestNumberGrammarInEveryCommand(t *testing.T) {
	for path, c := range leafCommands() {
		for _, f := range c.Flags {
			want := ""
			switch f.(type) {
			case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
				want = "want a count such as 8000, 1.5k, 2M or 1e6"
			case *cli.Float64Flag:
				want = "want a number such as 0.9, 1.5k or 1e6"
			default:
				continue
			}
			name := f.Names()[0]
			_, errOut, code := kvplan(t, append(strings.Fields(path), "--"+name, "1.5x")...)
			if code != ExitUsage || !strings.Contains(errOut, want) {
				t.Errorf("kvplan %s --%s 1.5x: exit %d, %q; want the number grammar's error", path, name, code, errOut)
			}
		}
	}
}

// TestDidYouMeanInEveryCommand: a flag of every command, mistyped, gets a
// did-you-mean naming it.
func TestDidYouMeanInEveryCommand(t *testing.T) {
	for path, c := range leafCommands() {
		longest := ""
		for _, f := range c.Flags {
			if n := f.Names()[0]; len(n) > len(longest) {
				longest = n
			}
		}
		if len(longest) < 5 {
			continue // completion: no flags of its own
		}
		typo := longest[:len(longest)-1]
		_, errOut, code := kvplan(t, append(strings.Fields(path), "--"+typo, "1")...)
		if want := "unknown flag --" + typo + "; did you mean --" + longest + "?"; code != ExitUsage || !strings.Contains(errOut, want) {
			t.Errorf("kvplan %s --%s: exit %d, %q; want %q", path, typo, code, errOut, want)
		}
	}
}

// TestCompletionCoversEveryCommand: the fish script (which writes every
// command and flag out) names every command and each of its flags.
func TestCompletionCoversEveryCommand(t *testing.T) {
	fish, _, code := kvplan(t, "completion", "fish")
	if code != ExitOK {
		t.Fatal("completion fish failed")
	}
	for path, c := range leafCommands() {
		name := c.Name
		for _, f := range c.Flags {
			want := "__fish_seen_subcommand_from " + name + "' -f -l " + f.Names()[0]
			if !strings.Contains(fish, want) {
				t.Errorf("fish completion of kvplan %s lacks --%s", path, f.Names()[0])
			}
		}
	}
}

// TestEnumsInAnyCase: -o and every name-like value is matched without
// regard to case, in every command that takes it: the upper-case run
// prints what the lower-case run prints.
func TestEnumsInAnyCase(t *testing.T) {
	type run struct{ lower, upper []string }
	var runs []run
	for path, c := range leafCommands() {
		args, ok := conventionRuns[path]
		if !ok {
			continue // TestConventionsCoverEveryCommand reports it
		}
		for _, f := range c.Flags {
			if o, ok := f.(*cli.StringFlag); ok && o.Name == "output" {
				format := o.Value // rules test writes table or junit
				if strings.Contains(o.Usage, "json") {
					format = "json"
				}
				base := append(strings.Fields(path), args...)
				runs = append(runs, run{append(slices.Clone(base), "-o", format), append(slices.Clone(base), "-o", strings.ToUpper(format))})
			}
		}
	}
	perf := []string{"perf", "--model", "qwen3-0.6b", "--gpu", "l4", "--isl", "512", "--osl", "64"}
	sim := []string{"simulate", "--synthetic", "4x256x2", "--kv-slots", "14816"}
	plan := conventionRuns["plan"]
	runs = append(runs,
		run{append(slices.Clone(perf), "--engine", "sglang", "--weight-dtype", "fp8", "--kv-cache-dtype", "fp8"),
			append(slices.Clone(perf), "--engine", "SGLang", "--weight-dtype", "FP8", "--kv-cache-dtype", "FP8")},
		run{append(slices.Clone(perf), "--sweep", "concurrency=1,2"), append(slices.Clone(perf), "--sweep", "Concurrency=1,2")},
		run{append(slices.Clone(sim), "--policy", "kv-aware,random"), append(slices.Clone(sim), "--policy", "KV-Aware,RANDOM")},
		run{[]string{"simulate", "--synthetic", "4x256x2", "--model", "qwen3-0.6b", "--gpu", "l4", "--engine", "vllm", "--weight-dtype", "fp8"},
			[]string{"simulate", "--synthetic", "4x256x2", "--model", "Qwen/Qwen3-0.6B", "--gpu", "L4", "--engine", "VLLM", "--weight-dtype", "FP8"}},
		run{append(append([]string{"plan"}, plan...), "--pricing", "spot", "--kv-cache-dtype", "fp8", "--weight-dtype", "fp8"),
			append(append([]string{"plan"}, plan...), "--pricing", "SPOT", "--kv-cache-dtype", "FP8", "--weight-dtype", "FP8")},
		run{[]string{"route", "--model", "qwen3-0.6b", "--gpu", "l4", "--kv-cache-dtype", "fp8"}, []string{"route", "--model", "qwen3-0.6b", "--gpu", "L4", "--kv-cache-dtype", "FP8"}},
		run{[]string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe", "--rate", "2", "--engine", "sglang"}, []string{"disagg", "--model", "qwen3-0.6b", "--link", "1GbE", "--rate", "2", "--engine", "SGLANG"}},
	)
	for _, r := range runs {
		lo, errLo, codeLo := kvplan(t, r.lower...)
		up, errUp, codeUp := kvplan(t, r.upper...)
		if codeLo > ExitFindings || lo == "" || codeLo != codeUp || lo != up {
			t.Errorf("%v (exit %d, %s) and %v (exit %d, %s) differ", r.lower, codeLo, errLo, r.upper, codeUp, errUp)
		}
	}
}
