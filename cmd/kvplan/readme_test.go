package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"mvdan.cc/sh/v3/shell"

	"github.com/kvplan/kvplan/catalog"
)

// The README, the reference pages under docs/ and the examples' headers
// state what kvplan does; these tests hold them to it where a test can.

func readme(t *testing.T) string {
	t.Helper()
	return readDoc(t, "README.md")
}

// readDoc reads a file of the repository, by its path from the root.
func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docs is the README and every page under docs/, keyed by path.
func docs(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	out := map[string]string{"README.md": readme(t)}
	for _, f := range files {
		out["docs/"+filepath.Base(f)] = readDoc(t, "docs/"+filepath.Base(f))
	}
	return out
}

// TestReadmeCatalogSample checks every value of the catalog sample in
// docs/catalog.md (its first toml block) against the embedded entry of the
// same name. "..." stands for a long text and is not compared.
func TestReadmeCatalogSample(t *testing.T) {
	r := readDoc(t, "docs/catalog.md")
	i := strings.Index(r, "# The catalog")
	if i < 0 {
		t.Fatal("docs/catalog.md has no catalog section")
	}
	block := regexp.MustCompile("(?s)```toml\n(.*?)```").FindStringSubmatch(r[i:])
	if block == nil {
		t.Fatal("the catalog section has no toml block")
	}
	var sample map[string][]map[string]any
	if _, err := toml.Decode(block[1], &sample); err != nil {
		t.Fatalf("the README's catalog sample is not TOML: %v", err)
	}
	cat, err := catalog.LoadEmbeddedTOML()
	if err != nil {
		t.Fatal(err)
	}
	entry := func(kind, name string) (any, error) {
		switch kind {
		case "model":
			return cat.Model(name)
		case "link":
			return cat.Link(name)
		case "gpu":
			return cat.GPU(name)
		}
		return nil, fmt.Errorf("kind %s", kind)
	}
	compared := 0
	for kind, entries := range sample {
		for _, e := range entries {
			name, _ := e["name"].(string)
			got, err := entry(kind, name)
			if err != nil {
				t.Errorf("README sample %s %q: %v", kind, name, err)
				continue
			}
			for key, want := range e {
				if s, ok := want.(string); ok && s == "..." {
					continue
				}
				have, ok := tomlField(reflect.ValueOf(got).Elem(), key)
				if !ok {
					t.Errorf("README sample %s %q: %s is not a catalog field", kind, name, key)
					continue
				}
				if !sameValue(have, want) {
					t.Errorf("README sample %s %q: %s = %v, the catalog has %v", kind, name, key, want, have)
				}
				compared++
			}
		}
	}
	if compared < 30 {
		t.Errorf("compared only %d values of docs/catalog.md's catalog sample", compared)
	}
}

// tomlField returns the field of struct v whose toml tag is key.
func tomlField(v reflect.Value, key string) (any, bool) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if strings.Split(t.Field(i).Tag.Get("toml"), ",")[0] == key && t.Field(i).IsExported() {
			return v.Field(i).Interface(), true
		}
	}
	return nil, false
}

// sameValue compares a catalog value with a TOML-decoded one.
func sameValue(have, want any) bool {
	hv := reflect.ValueOf(have)
	switch w := want.(type) {
	case int64:
		switch hv.Kind() {
		case reflect.Int, reflect.Int64:
			return hv.Int() == w
		case reflect.Float64:
			return hv.Float() == float64(w)
		}
	case float64:
		return hv.Kind() == reflect.Float64 && hv.Float() == w
	case []any:
		if hv.Kind() != reflect.Slice || hv.Len() != len(w) {
			return false
		}
		for i := range w {
			if !sameValue(hv.Index(i).Interface(), w[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(have, want)
}

// headerLine is a finding line of an example's header:
// "#   deny host-oom-staged-kv, kv-in-flight-exceeds-slots  text".
var headerLine = regexp.MustCompile(`^#\s{2,}(deny|warn|info) ([a-z0-9][a-z0-9/._-]*(?:, [a-z0-9][a-z0-9/._-]*)*)(?:\s{2}|$)`)

// TestExampleHeaders runs kvplan check on every example and compares the
// findings with what its header says: the severity and rule ids it lists,
// the rule it is named after ("# tp-not-divisible: ..."), or that check
// passes it.
func TestExampleHeaders(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var header []string
			for _, l := range strings.Split(string(text), "\n") {
				if !strings.HasPrefix(l, "#") {
					break
				}
				header = append(header, l)
			}
			out, errOut, code := kvplan(t, "check", f, "-o", "json")
			if code != ExitOK && code != ExitFindings {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var res struct {
				Findings []struct {
					RuleID   string `json:"rule_id"`
					Severity string `json:"severity"`
				} `json:"findings"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, x := range res.Findings {
				got[x.Severity+" "+x.RuleID] = true
			}
			listed := map[string]bool{}
			for _, l := range header {
				if m := headerLine.FindStringSubmatch(l); m != nil {
					for _, id := range strings.Split(m[2], ", ") {
						listed[m[1]+" "+id] = true
					}
				}
			}
			switch {
			case len(listed) > 0:
				if !reflect.DeepEqual(got, listed) {
					t.Errorf("the header lists %v; kvplan check finds %v", keys(listed), keys(got))
				}
			case strings.Contains(strings.Join(header, "\n"), "`kvplan check` passes it") || strings.Contains(strings.Join(header, "\n"), "passes `kvplan check`"):
				for k := range got {
					if !strings.HasPrefix(k, "info ") {
						t.Errorf("the header says check passes it; it finds %s", k)
					}
				}
			default:
				named := strings.TrimSuffix(filepath.Base(f), ".toml")
				if !strings.HasPrefix(header[0], "# "+named+":") {
					t.Skipf("the header states no findings")
				}
				found := false
				for k := range got {
					found = found || strings.HasSuffix(k, " "+named)
				}
				if !found {
					t.Errorf("the example is named after %s, which does not fire; check finds %v", named, keys(got))
				}
			}
		})
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestReadmeCommands checks that every kvplan command the README and the
// pages under docs/ show exists, and that the README shows --version,
// completion and a pasted vllm serve line.
func TestReadmeCommands(t *testing.T) {
	for path, text := range docs(t) {
		t.Run(path, func(t *testing.T) { checkDocCommands(t, text) })
	}
	r := readme(t)
	for _, want := range []string{"kvplan --version", "kvplan completion bash", "-- vllm serve Qwen/Qwen3-8B", "--vllm-args"} {
		if !strings.Contains(r, want) {
			t.Errorf("the README does not show %q", want)
		}
	}
}

// checkDocCommands checks that every kvplan command a page shows exists.
func checkDocCommands(t *testing.T, r string) {
	app := newApp(nil, nil)
	// Commands are what a fenced block runs ("$ kvplan ..." or a line that
	// starts with kvplan and a command word) and inline `kvplan ...` code.
	var runs []string
	for _, m := range regexp.MustCompile("`(kvplan [^`]+)`").FindAllStringSubmatch(r, -1) {
		runs = append(runs, m[1])
	}
	for _, blk := range regexp.MustCompile("(?s)```[a-z]*\n(.*?)```").FindAllStringSubmatch(r, -1) {
		prompted := strings.Contains("\n"+blk[1], "\n$ ") // then the other lines are output
		for _, l := range strings.Split(blk[1], "\n") {
			if prompted && !strings.HasPrefix(l, "$ ") {
				continue
			}
			if l = strings.TrimPrefix(strings.TrimSpace(l), "$ "); strings.HasPrefix(l, "kvplan ") {
				runs = append(runs, l)
			}
		}
	}
	word := regexp.MustCompile(`^kvplan ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?(?:$|[ ;|)])`)
	for _, run := range runs {
		m := word.FindStringSubmatch(run)
		if m == nil {
			continue // kvplan --version, kvplan -o ...
		}
		c := findCommand(app.Commands, m[1])
		if c == nil {
			t.Errorf("the page runs %q: no command %s", run, m[1])
			continue
		}
		if len(c.Subcommands) > 0 && m[2] != "" && findCommand(c.Subcommands, m[2]) == nil {
			t.Errorf("the page runs %q: %s has no command %s", run, m[1], m[2])
		}
	}
}

// TestFuzzTargetsListed: every fuzz target of the repository is in .ci/fuzz
// (which CI runs) and named in docs/reliability.md's fuzzing paragraph.
func TestFuzzTargetsListed(t *testing.T) {
	script, err := os.ReadFile("../../.ci/fuzz")
	if err != nil {
		t.Fatal(err)
	}
	r := readDoc(t, "docs/reliability.md")
	decl := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	found := 0
	err = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(strings.TrimPrefix(path, "../../")))
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			found++
			if !strings.Contains(string(script), "  "+pkg+":"+m[1]+"\n") {
				t.Errorf(".ci/fuzz does not run %s:%s", pkg, m[1])
			}
			if !strings.Contains(r, m[1]) {
				t.Errorf("docs/reliability.md does not name %s (%s)", m[1], pkg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 16 {
		t.Errorf("found %d fuzz targets; the walk missed some", found)
	}
}

// TestReadmeQuestionTable runs every command of the README's question table
// ("## What kvplan answers") from the repository's root, as a user pastes
// it: each must parse and run to a verdict (exit 0 or 1), never a usage or
// input error.
func TestReadmeQuestionTable(t *testing.T) {
	r := readme(t)
	i := strings.Index(r, "## What kvplan answers")
	if i < 0 {
		t.Fatal("the README has no question table")
	}
	section := r[i:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	var cmds []string
	for _, l := range strings.Split(section, "\n") {
		cells := strings.Split(l, "|")
		if !strings.HasPrefix(l, "| ") || len(cells) < 4 {
			continue
		}
		for _, m := range regexp.MustCompile("`(kvplan [^`]+)`").FindAllStringSubmatch(cells[2], -1) {
			cmds = append(cmds, m[1])
		}
	}
	if len(cmds) < 15 {
		t.Fatalf("found %d commands in the question table; the parse missed some", len(cmds))
	}
	t.Chdir(filepath.Join("..", ".."))
	for _, c := range cmds {
		words, err := shell.Fields(c, nil)
		if err != nil {
			t.Errorf("%s: %v", c, err)
			continue
		}
		out, errOut, code := kvplan(t, words[1:]...)
		if code != ExitOK && code != ExitFindings {
			t.Errorf("%s: exit %d: %s", c, code, errOut)
		}
		if strings.TrimSpace(out) == "" {
			t.Errorf("%s: printed nothing", c)
		}
	}
}

// TestReadmeLength keeps the README a user's first page.
func TestReadmeLength(t *testing.T) {
	if n := strings.Count(readme(t), "\n"); n > 400 {
		t.Errorf("README.md has %d lines; reference material belongs in docs/ (at most 400)", n)
	}
}

// TestDocLinks checks that every relative link of the README and docs/
// names a file of the repository. Links into ../shared (beside a checkout,
// not in it) are not checked.
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for path, text := range docs(t) {
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			rel := filepath.Join(filepath.Dir(path), filepath.FromSlash(target))
			if strings.HasPrefix(filepath.ToSlash(rel), "../shared/") {
				continue
			}
			if _, err := os.Stat(filepath.Join("..", "..", rel)); err != nil {
				t.Errorf("%s links to %s, which is not in the repository", path, m[1])
			}
		}
	}
}

// TestReadmeOutputs runs every "$ kvplan ..." of the fenced blocks of the
// README and docs/
// from the repository's root and checks the output the block quotes: each
// quoted line is a line of what kvplan prints (stdout and stderr), a line
// ending in "..." a prefix of one; lines of "..." alone stand for what the
// README leaves out. The table under "## What you get" is checked the same
// way against the first command's -o markdown --top 2.
func TestReadmeOutputs(t *testing.T) {
	pages := docs(t)
	r := pages["README.md"]
	t.Chdir(filepath.Join("..", ".."))
	type quote struct {
		cmd   string
		lines []string
	}
	var quotes []quote
	var blocks []string
	for _, path := range slices.Sorted(maps.Keys(pages)) {
		blocks = append(blocks, fencedBlocks(pages[path])...)
	}
	for _, blk := range blocks {
		var q *quote
		for _, l := range strings.Split(blk, "\n") {
			switch {
			case strings.HasPrefix(l, "$ kvplan "):
				quotes = append(quotes, quote{cmd: strings.TrimPrefix(l, "$ ")})
				q = &quotes[len(quotes)-1]
			case q != nil && strings.TrimSpace(l) != "" && strings.TrimSpace(l) != "...":
				q.lines = append(q.lines, l)
			}
		}
	}
	first := regexp.MustCompile("(?m)^go run ./cmd/kvplan (plan .*)$").FindStringSubmatch(r)
	i := strings.Index(r, "## What you get")
	if first == nil || i < 0 {
		t.Fatal("the README has no first command or no \"What you get\" section")
	}
	table := quote{cmd: "kvplan " + first[1] + " -o markdown --top 2"}
	for _, l := range strings.Split(r[i:], "\n")[1:] {
		if strings.HasPrefix(l, "## ") {
			break
		}
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| figure ") {
			table.lines = append(table.lines, l)
		}
	}
	quotes = append(quotes, table)
	if len(quotes) < 6 {
		t.Fatalf("found %d quoted runs; the parse missed some", len(quotes))
	}
	for _, q := range quotes {
		words, err := shell.Fields(q.cmd, nil)
		if err != nil {
			t.Errorf("%s: %v", q.cmd, err)
			continue
		}
		out, errOut, _ := kvplan(t, words[1:]...)
		got := map[string]bool{}
		var all []string
		for _, l := range strings.Split(out+"\n"+errOut, "\n") {
			l = strings.TrimRight(l, " ")
			got[l] = true
			all = append(all, l)
		}
		for _, want := range q.lines {
			want = strings.TrimRight(want, " ")
			if prefix, cut := strings.CutSuffix(want, "..."); cut {
				found := false
				for _, l := range all {
					found = found || strings.HasPrefix(l, prefix)
				}
				if !found {
					t.Errorf("%s: the README quotes a line starting %q; kvplan prints no such line", q.cmd, prefix)
				}
				continue
			}
			if !got[want] {
				t.Errorf("%s: the README quotes %q; kvplan prints no such line", q.cmd, want)
			}
		}
	}
}

// fencedBlocks returns the bodies of r's fenced blocks without a language
// (output quotes), read fence by fence. A block marked ```text quotes output
// that depends on the build (kvplan --version) and is not checked.
func fencedBlocks(r string) []string {
	var out []string
	var body []string
	in, plain := false, false
	for _, l := range strings.Split(r, "\n") {
		if !strings.HasPrefix(l, "```") {
			if in {
				body = append(body, l)
			}
			continue
		}
		if in {
			if plain {
				out = append(out, strings.Join(body, "\n"))
			}
			in, body = false, nil
			continue
		}
		in, plain = true, l == "```"
	}
	return out
}
