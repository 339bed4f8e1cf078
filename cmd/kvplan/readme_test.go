package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/kvplan/kvplan/catalog"
)

// The README and the examples' headers state what kvplan does; these tests
// hold them to it where a test can.

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeCatalogSample checks every value of the README's catalog sample
// (the toml block of "## The catalog") against the embedded entry of the
// same name. "..." stands for a long text and is not compared.
func TestReadmeCatalogSample(t *testing.T) {
	r := readme(t)
	i := strings.Index(r, "## The catalog")
	if i < 0 {
		t.Fatal("README has no catalog section")
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
		t.Errorf("compared only %d values of the README's catalog sample", compared)
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

// TestReadmeCommands checks that every kvplan command the README shows
// exists, and that the README shows --version, completion and a pasted
// vllm serve line.
func TestReadmeCommands(t *testing.T) {
	r := readme(t)
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
			t.Errorf("the README runs %q: no command %s", run, m[1])
			continue
		}
		if len(c.Subcommands) > 0 && m[2] != "" && findCommand(c.Subcommands, m[2]) == nil {
			t.Errorf("the README runs %q: %s has no command %s", run, m[1], m[2])
		}
	}
	for _, want := range []string{"kvplan --version", "kvplan completion bash", "-- vllm serve Qwen/Qwen3-8B", "--vllm-args"} {
		if !strings.Contains(r, want) {
			t.Errorf("the README does not show %q", want)
		}
	}
}

// TestFuzzTargetsListed: every fuzz target of the repository is in .ci/fuzz
// (which CI runs) and named in the README's fuzzing paragraph or in
// docs/reliability.md, where the reference on limits and fuzzing moves.
func TestFuzzTargetsListed(t *testing.T) {
	script, err := os.ReadFile("../../.ci/fuzz")
	if err != nil {
		t.Fatal(err)
	}
	r := readme(t)
	if docs, err := os.ReadFile("../../docs/reliability.md"); err == nil {
		r += string(docs)
	}
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
				t.Errorf("neither the README nor docs/reliability.md names %s (%s)", m[1], pkg)
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
