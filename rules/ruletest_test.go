package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/planfile"
)

func baseBuilder(p *planfile.Plan) (*Env, error) {
	e := BaseEnv(p)
	return &e, nil
}

func TestShippedRuleTests(t *testing.T) {
	set, err := Load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"tests", "../plans"} {
		results, err := RunTests(filepath.Join("..", "testdata", "rules", dir), set, baseBuilder)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if !r.Passed() {
				t.Errorf("%s: %s (fired %v)", r.Name, strings.Join(r.Failures, "; "), ids(r.Findings))
			}
		}
		if len(results) < 4 {
			t.Errorf("%s: %d tests", dir, len(results))
		}
	}
}

func TestCustomPackTests(t *testing.T) {
	dir := filepath.Join("..", "testdata", "rules", "custom")
	set, err := Load(Options{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if set.Rule("cuda-minor-version-compat") != nil || set.Rule("team/one-worker-pool") == nil {
		t.Error("custom pack not layered")
	}
	results, err := RunTests(dir, set, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || !results[0].Passed() {
		t.Errorf("%+v", results)
	}
}

func TestRuleTestFailures(t *testing.T) {
	set, err := Load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) string { return writeFile(t, dir, name, text) }
	f := write("a.expect.toml", `
must_fire = ["ttft-slo"]
must_not_fire = ["kv-router-without-events"]
only = true
[env]
router = { mode = "kv", kv_events = false }
disagg.same_gpu = true
`)
	r, err := RunTest(f, set, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "ttft-slo did not fire|kv-router-without-events fired and must not|disagg-on-one-gpu fired and only must_fire may (only = true)"
	if got := strings.Join(r.Failures, "|"); got != want {
		t.Errorf("failures\n got %s\nwant %s", got, want)
	}

	cleanPlan, err := filepath.Abs(filepath.Join("..", "examples", "clean.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ text, want string }{
		"unknown-rule":  {`must_fire = ["ttft-sol"]`, `b.expect.toml:1: must_fire: no rule "ttft-sol" in the rule set; did you mean ttft-slo?`},
		"unknown-env":   {"must_fire = []\nonly = true\n[env]\nrouter.kv_event = true\n", `b.expect.toml:4: env.router.kv_event: unknown name; did you mean kv_events?`},
		"bad-type":      {"only = true\n[env]\nslo.ttft_ms = \"fast\"\n", `b.expect.toml:3: env.slo.ttft_ms: fast (string) does not fit a float`},
		"unknown-key":   {"must_fires = []\n", `b.expect.toml:1: must_fires: unknown key; accepted here: env, must_fire, must_not_fire, only, plan`},
		"plan-no-build": {"plan = '" + cleanPlan + "'\nonly = true\n", "the test needs plan"},
		// Tests that could pass vacuously are errors.
		"missing-plan":        {"plan = \"nowhere.toml\"\nmust_fire = [\"ttft-slo\"]\n", "nowhere.toml: no such file"},
		"no-plan-no-env":      {"must_not_fire = [\"ttft-slo\"]\n", `b.expect.toml: plan: no plan to test: b.toml does not exist`},
		"asserts-nothing":     {"[env]\nslo.ttft_ms = 5\n", "b.expect.toml: must_fire: the test asserts nothing"},
		"unknown-must-not":    {"must_fire = [\"ttft-slo\"]\n\nmust_not_fire = [\"itl-sol\"]\n[env]\n", `b.expect.toml:3: must_not_fire: no rule "itl-sol" in the rule set; did you mean itl-slo?`},
		"pool-on-global-rule": {"must_not_fire = [\"ttft-slo@decode\"]\n[env]\n", `must_not_fire: "ttft-slo@decode": rule ttft-slo is not per_pool`},
		"unknown-pool":        {"must_not_fire = [\"host-oom-staged-kv@prefil\"]\n[[env.pools]]\nname = \"prefill\"\n", `b.expect.toml:1: must_not_fire: "host-oom-staged-kv@prefil": the plan has no pool "prefil"; did you mean prefill?`},
	} {
		f := write("b.expect.toml", c.text)
		_, err := RunTest(f, set, nil)
		if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""), c.want) {
			t.Errorf("%s: got %v\nwant %s", name, err, c.want)
		}
	}
}

// writeFile writes text to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
