package rules

import (
	"errors"
	"fmt"
	"github.com/kvplan/kvplan/internal/suggest"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/kvplan/kvplan/internal/safefile"
	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/internal/tomlpos"
	"github.com/kvplan/kvplan/planfile"
)

// Builder turns a plan into the Env its rules see. The command line passes
// the planner's; tests may pass one built on BaseEnv.
type Builder func(*planfile.Plan) (*Env, error)

// ExpectSuffix ends the name of a rule test's expectation file.
const ExpectSuffix = ".expect.toml"

// A rule test, in the style of `conftest verify`, is a file NAME.expect.toml:
//
//	plan = "../plans/disagg.toml"  # optional; default NAME.toml next to it, if present
//	must_fire = ["kv-router-without-events", "host-oom-staged-kv@prefill"]
//	must_not_fire = ["ttft-slo"]
//	only = false                   # true: no rule outside must_fire may fire
//
//	[env]                          # optional: figures set over the built Env
//	disagg.prefill_ms = 80         # (over a zero Env when there is no plan)
//	[[env.pools]]                  # merged into the pool of the same name, or added
//	name = "prefill"
//	host_required_bytes = 4_000_000_000
//
// An id@pool entry matches the finding of a per_pool rule for that pool.
// A rule-error/<id> finding fails the test unless must_fire lists it.
type expectDoc struct {
	Plan        string         `toml:"plan"`
	MustFire    []string       `toml:"must_fire"`
	MustNotFire []string       `toml:"must_not_fire"`
	Only        bool           `toml:"only"`
	Env         map[string]any `toml:"env"`
}

// TestResult is the outcome of one rule test.
type TestResult struct {
	Name     string    // path of the .expect.toml file
	Plan     string    // plan file used, or ""
	Findings []Finding // what fired
	Failures []string  // why the test failed; empty when it passed
}

// Passed reports whether the test met its expectations.
func (r TestResult) Passed() bool { return len(r.Failures) == 0 }

// RunTests runs every *.expect.toml under dir (recursively, in path order)
// against set. build may be nil when no test names a plan. The error is for
// tests that cannot run at all (unreadable or invalid files, a plan that
// does not load); failed expectations are in the results.
func RunTests(dir string, set *Set, build Builder) ([]TestResult, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ExpectSuffix) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rule tests: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("rule tests: no *%s file under %s", ExpectSuffix, dir)
	}
	sort.Strings(files)
	var results []TestResult
	var errs []error
	for _, f := range files {
		r, err := RunTest(f, set, build)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		results = append(results, r)
	}
	if len(errs) > 0 {
		return results, joinErrors(errs)
	}
	return results, nil
}

// RunTest runs one NAME.expect.toml file.
func RunTest(expectFile string, set *Set, build Builder) (TestResult, error) {
	res := TestResult{Name: expectFile}
	data, err := safefile.ReadFile(expectFile, safefile.RuleTest)
	if err != nil {
		return res, fmt.Errorf("rule test: %w", err)
	}
	doc, idx, err := decodeExpect(expectFile, data)
	if err != nil {
		return res, err
	}
	at := func(key, format string, args ...any) error {
		return &tomlpos.Error{File: expectFile, Line: idx.Line([]string{key}, 0), Field: key, Msg: fmt.Sprintf(format, args...)}
	}
	for _, list := range []struct {
		key string
		ids []string
	}{{"must_fire", doc.MustFire}, {"must_not_fire", doc.MustNotFire}} {
		for _, id := range list.ids {
			rid, pool, hasPool := strings.Cut(id, "@")
			r := set.Rule(strings.TrimPrefix(rid, RuntimeErrorPrefix))
			switch {
			case r == nil:
				rid = strings.TrimPrefix(rid, RuntimeErrorPrefix)
				return res, at(list.key, "no rule %q in the rule set%s", rid, suggest.DidYouMean(rid, set.sortedIDs()))
			case hasPool && !r.PerPool:
				return res, at(list.key, "%q: rule %s is not per_pool, so it never fires for a pool; write %q", id, r.ID, rid)
			case hasPool && pool == "":
				return res, at(list.key, "%q names no pool after @", id)
			}
		}
	}
	if len(doc.MustFire) == 0 && len(doc.MustNotFire) == 0 && !doc.Only {
		return res, at("must_fire", "the test asserts nothing: list rules in must_fire or must_not_fire, or set only = true (no rule outside must_fire may fire)")
	}
	plan := doc.Plan
	if plan != "" && !filepath.IsAbs(plan) {
		plan = filepath.Join(filepath.Dir(expectFile), plan)
	}
	if plan == "" {
		sib := strings.TrimSuffix(expectFile, ExpectSuffix) + ".toml"
		if _, err := os.Stat(sib); err == nil {
			plan = sib
		}
	}
	if plan == "" && doc.Env == nil {
		return res, at("plan", "no plan to test: %s does not exist and the test names no plan = \"...\"; give one, or an [env] table of figures (an empty [env] tests the zero environment)",
			strings.TrimSuffix(filepath.Base(expectFile), ExpectSuffix)+".toml")
	}
	env := &Env{}
	if plan != "" {
		res.Plan = plan
		if _, err := os.Stat(plan); err != nil {
			return res, at("plan", "the plan file %s: no such file (plan is relative to the .expect.toml)", plan)
		}
		if build == nil {
			return res, fmt.Errorf("%s: the test needs plan %s, and no Env builder was given", expectFile, plan)
		}
		p, err := planfile.Load(plan)
		if err != nil {
			return res, fmt.Errorf("%s: %w", expectFile, err)
		}
		if env, err = build(p); err != nil {
			return res, fmt.Errorf("%s: build env from %s: %w", expectFile, plan, err)
		}
	}
	if doc.Env != nil {
		e := *env
		e.Pools = append([]PoolEnv(nil), env.Pools...)
		if err := setEnv(reflect.ValueOf(&e).Elem(), doc.Env, []string{"env"}); err != nil {
			var pe *pathError
			if errors.As(err, &pe) {
				return res, &tomlpos.Error{File: expectFile, Line: idx.Line(pe.path, 0), Field: strings.Join(pe.path, "."), Msg: pe.msg}
			}
			return res, err
		}
		env = &e
	}
	for _, list := range []struct {
		key string
		ids []string
	}{{"must_fire", doc.MustFire}, {"must_not_fire", doc.MustNotFire}} {
		for _, id := range list.ids {
			if _, pool, ok := strings.Cut(id, "@"); ok && !hasPool(env, pool) {
				return res, at(list.key, "%q: the plan has no pool %q%s", id, pool, suggest.DidYouMean(pool, poolNames(env)))
			}
		}
	}
	res.Findings = set.Evaluate(env)
	res.Failures = check(doc, res.Findings)
	return res, nil
}

// decodeExpect decodes strictly, except under [env], whose keys setEnv checks
// against Env.
func decodeExpect(file string, data []byte) (expectDoc, *tomlpos.Index, error) {
	var doc expectDoc
	if err := tomlpos.Guard(file, data); err != nil {
		return doc, nil, err
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return doc, nil, &tomlpos.Error{File: file, Line: pe.Position.Line, Msg: "TOML syntax: " + safetext.ClipWords(pe.Message, safetext.MaxQuoted)}
		}
		return doc, nil, &tomlpos.Error{File: file, Msg: err.Error()}
	}
	idx := tomlpos.New(data)
	for _, k := range md.Undecoded() {
		if len(k) > 0 && k[0] == "env" {
			continue
		}
		return doc, nil, &tomlpos.Error{File: file, Line: idx.Line(k, 0), Field: k.String(),
			Msg: "unknown key; accepted here: env, must_fire, must_not_fire, only, plan"}
	}
	return doc, idx, nil
}

func hasPool(env *Env, name string) bool {
	for _, p := range env.Pools {
		if p.Name == name {
			return true
		}
	}
	return false
}

func poolNames(env *Env) []string {
	var out []string
	for _, p := range env.Pools {
		out = append(out, p.Name)
	}
	return out
}

func matches(want string, f Finding) bool {
	id, pool, hasPool := strings.Cut(want, "@")
	return f.RuleID == id && (!hasPool || f.Pool == pool)
}

func check(doc expectDoc, findings []Finding) []string {
	var fails []string
	fired := func(want string) bool {
		for _, f := range findings {
			if matches(want, f) {
				return true
			}
		}
		return false
	}
	for _, w := range doc.MustFire {
		if !fired(w) {
			fails = append(fails, fmt.Sprintf("%s did not fire", w))
		}
	}
	for _, w := range doc.MustNotFire {
		if fired(w) {
			fails = append(fails, fmt.Sprintf("%s fired and must not", w))
		}
	}
	for _, f := range findings {
		expected := false
		for _, w := range append(append([]string{}, doc.MustFire...), doc.MustNotFire...) {
			expected = expected || matches(w, f)
		}
		if expected {
			continue
		}
		if strings.HasPrefix(f.RuleID, RuntimeErrorPrefix) {
			fails = append(fails, fmt.Sprintf("%s: %s", f.RuleID, f.Message))
		} else if doc.Only {
			fails = append(fails, fmt.Sprintf("%s fired and only must_fire may (only = true)", findingName(f)))
		}
	}
	return fails
}

func findingName(f Finding) string {
	if f.Pool != "" {
		return f.RuleID + "@" + f.Pool
	}
	return f.RuleID
}

type pathError struct {
	path []string
	msg  string
}

func (e *pathError) Error() string { return strings.Join(e.path, ".") + ": " + e.msg }

// setEnv assigns TOML values to the fields of a struct by expr tag.
func setEnv(v reflect.Value, m map[string]any, path []string) error {
	t := v.Type()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := append(append([]string{}, path...), k)
		i := fieldIndex(t, k)
		if i < 0 {
			return &pathError{p, "unknown name" + suggest.DidYouMean(k, envTypes().fields[t.Name()])}
		}
		if err := setValue(v.Field(i), m[k], p); err != nil {
			return err
		}
	}
	return nil
}

func fieldIndex(t reflect.Type, tag string) int {
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Tag.Get("expr") == tag {
			return i
		}
	}
	return -1
}

func setValue(f reflect.Value, x any, p []string) error {
	bad := func() error {
		return &pathError{p, fmt.Sprintf("%v (%T) does not fit a %s", x, x, exprType(f.Type()))}
	}
	switch f.Kind() {
	case reflect.Int:
		n, ok := x.(int64)
		if !ok {
			return bad()
		}
		f.SetInt(n)
	case reflect.Float64:
		switch n := x.(type) {
		case int64:
			f.SetFloat(float64(n))
		case float64:
			f.SetFloat(n)
		default:
			return bad()
		}
	case reflect.Bool:
		b, ok := x.(bool)
		if !ok {
			return bad()
		}
		f.SetBool(b)
	case reflect.String:
		s, ok := x.(string)
		if !ok {
			return bad()
		}
		f.SetString(s)
	case reflect.Struct:
		sub, ok := x.(map[string]any)
		if !ok {
			return bad()
		}
		return setEnv(f, sub, p)
	case reflect.Slice:
		if f.Type().Elem().Kind() == reflect.String {
			xs, ok := x.([]any)
			if !ok {
				return bad()
			}
			out := make([]string, len(xs))
			for i, e := range xs {
				if out[i], ok = e.(string); !ok {
					return bad()
				}
			}
			f.Set(reflect.ValueOf(out))
			return nil
		}
		return setPools(f, x, p)
	default:
		return bad()
	}
	return nil
}

// setPools merges [[env.pools]] elements into the pools of the same name,
// appending the others.
func setPools(f reflect.Value, x any, p []string) error {
	var elems []map[string]any
	switch xs := x.(type) {
	case []map[string]any:
		elems = xs
	case []any:
		for _, e := range xs {
			m, ok := e.(map[string]any)
			if !ok {
				return &pathError{p, "want [[env.pools]] tables"}
			}
			elems = append(elems, m)
		}
	default:
		return &pathError{p, "want [[env.pools]] tables"}
	}
	pools := f.Interface().([]PoolEnv)
	for _, m := range elems {
		name, _ := m["name"].(string)
		at := -1
		for i := range pools {
			if name != "" && pools[i].Name == name {
				at = i
			}
		}
		if at < 0 {
			pools = append(pools, PoolEnv{})
			at = len(pools) - 1
		}
		if err := setEnv(reflect.ValueOf(&pools[at]).Elem(), m, p); err != nil {
			return err
		}
	}
	f.Set(reflect.ValueOf(pools))
	return nil
}
