package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/internal/goldenfile"
	"github.com/kvplan/kvplan/planfile"
	"github.com/kvplan/kvplan/rules"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The -update flag rewrites golden files. Other test files of this package
// may declare it too: package-level variables initialise before init
// functions, so this defines it only when no one else has.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

const examplePlan = "examples/disagg-1gbe-no-events.toml"

// exampleResult is the check of the annotated example with hand-set
// figures standing in for the planner's.
func exampleResult(t *testing.T, failOn rules.Severity) *CheckResult {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", examplePlan))
	if err != nil {
		t.Fatal(err)
	}
	p, err := planfile.Parse(examplePlan, data) // named as the report names it
	if err != nil {
		t.Fatal(err)
	}
	set, err := rules.Load(rules.Options{})
	if err != nil {
		t.Fatal(err)
	}
	env := rules.BaseEnv(p)
	env.KV = rules.KVEnv{BytesPerToken: 114688, BytesPerRequest: 286605312, BytesTransfer: 271925248}
	env.Link.ThroughputBytesPerS, env.Link.LatencyMS = 104e6, 0.2
	env.Disagg.ConcurrentTransfers = 16
	env.Disagg.TransferMS, env.Disagg.TransferMSShared, env.Disagg.PrefillMS = 2614.9, 41837.2, 80
	env.Disagg.TTFTAggMS, env.Disagg.TTFTDisaggMS = 1300, 41930
	env.Predicted.TTFTMS = 41930
	for i := range env.Pools {
		env.Pools[i].ConcurrencyPerWorker = 16
		env.Pools[i].HostRequiredBytes = 5_086_000_000
	}
	findings := set.Evaluate(&env)
	rules.Locate(findings, p.Pos)
	figures := []CheckFigure{
		{Name: "kv_bytes_per_token", Value: 114688, Unit: "B"},
		{Name: "kv_bytes_per_request", Value: 286605312, Unit: "B"},
		{Name: "link_throughput", Value: 104e6, Unit: "B/s"},
		{Name: "transfer_ms_shared", Value: 41837.2, Unit: "ms"},
		{Name: "prefill_ms", Value: 80, Unit: "ms"},
		{Name: "kv_slots_per_worker", Value: 14816, Unit: "tokens"},
		{Name: "hit_rate", Value: 0.42, Unit: "ratio"},
		{Name: "workers", Value: 2, Unit: ""},
	}
	return NewCheckResult(examplePlan, set, findings, figures, failOn)
}

func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("..", "testdata", "rules", "golden", name), got, updateGolden(), "go test ./report -update", false)
}

func TestCheckFormatsGolden(t *testing.T) {
	ext := map[string]string{"table": "txt", "json": "json", "markdown": "md", "junit": "xml", "sarif": "sarif", "github": "txt"}
	for _, format := range CheckFormats() {
		t.Run(format, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteCheck(&b, format, exampleResult(t, rules.Warn)); err != nil {
				t.Fatal(err)
			}
			goldenFile(t, "check-"+format+"."+ext[format], b.Bytes())
		})
	}
	t.Run("clean", func(t *testing.T) {
		set, _ := rules.Load(rules.Options{})
		r := NewCheckResult("examples/clean.toml", set, nil, nil, rules.Deny)
		var b bytes.Buffer
		for _, f := range []string{"table", "markdown", "github"} {
			if err := WriteCheck(&b, f, r); err != nil {
				t.Fatal(err)
			}
		}
		goldenFile(t, "check-clean.txt", b.Bytes())
	})
	if err := WriteCheck(&bytes.Buffer{}, "yaml", exampleResult(t, rules.Deny)); err == nil ||
		err.Error() != `output format "yaml" is not one of table, json, markdown, junit, sarif, github` {
		t.Errorf("got %v", err)
	}
}

func TestVerdict(t *testing.T) {
	r := exampleResult(t, rules.Deny)
	if r.Verdict != VerdictFail || r.Counts.Deny != 4 || r.Counts.Info != 1 {
		t.Errorf("verdict %s counts %+v", r.Verdict, r.Counts)
	}
	info := []rules.Finding{{RuleID: "x", Severity: rules.Info}, {RuleID: "y", Severity: rules.Warn}}
	if v := NewCheckResult("p", nil, info, nil, rules.Deny).Verdict; v != VerdictPass {
		t.Errorf("warn with fail-on deny: %s", v)
	}
	if v := NewCheckResult("p", nil, info, nil, rules.Warn).Verdict; v != VerdictFail {
		t.Errorf("warn with fail-on warn: %s", v)
	}
}

// TestGitHubAnnotations checks the annotations of the example against
// expectations written by hand: the plan's lines of the fields involved.
func TestGitHubAnnotations(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCheckGitHub(&b, exampleResult(t, rules.Deny)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"::error file=examples/disagg-1gbe-no-events.toml,line=52,title=kv-router-without-events::router.mode is kv",
		"::error file=examples/disagg-1gbe-no-events.toml,line=36,title=host-oom-staged-kv (prefill)::pool prefill stages KV",
		"::error file=examples/disagg-1gbe-no-events.toml,line=48,title=disagg-transfer-exceeds-prefill::",
		"::error file=examples/disagg-1gbe-no-events.toml,line=64,title=ttft-slo::",
		"::notice file=examples/disagg-1gbe-no-events.toml,line=60,title=cuda-minor-version-compat::",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
	if got := ghData("a%b\nc"); got != "a%25b%0Ac" {
		t.Errorf("ghData %q", got)
	}
	if got := ghProperty("a:b,c"); got != "a%3Ab%2Cc" {
		t.Errorf("ghProperty %q", got)
	}
}

// TestSARIFSchema validates the SARIF output against the SARIF 2.1.0 JSON
// schema (OASIS errata01), kept in testdata.
func TestSARIFSchema(t *testing.T) {
	schema := sarifSchema(t)
	results := map[string]*CheckResult{
		"example":    exampleResult(t, rules.Warn),
		"clean":      NewCheckResult("clean.toml", nil, nil, nil, rules.Deny),
		"rule error": NewCheckResult("p.toml", nil, []rules.Finding{{RuleID: "rule-error/x", Severity: rules.Deny, Message: "rule x failed"}}, nil, rules.Deny),
	}
	for name, r := range results {
		var b bytes.Buffer
		if err := WriteCheckSARIF(&b, r); err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(&b)
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(doc); err != nil {
			t.Errorf("%s: SARIF does not validate: %v", name, err)
		}
	}
	// and a broken log is caught, so the validation above means something
	bad := map[string]any{"version": "2.1.0", "runs": []any{map[string]any{"tool": map[string]any{}}}}
	raw, _ := json.Marshal(bad)
	doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if schema.Validate(doc) == nil {
		t.Error("schema accepted a run without tool.driver")
	}
}

// TestSARIFURI: a plan path becomes a URI reference that parses back to
// the same file with no host, leading slashes included ("//a/x.toml" is the
// file /a/x.toml, not path /x.toml on host a).
func TestSARIFURI(t *testing.T) {
	for _, c := range []struct{ path, uri, back string }{
		{"my plans/x#1.toml", "my%20plans/x%231.toml", "my plans/x#1.toml"},
		{"/abs/x.toml", "/abs/x.toml", "/abs/x.toml"},
		{"//a/x.toml", "/a/x.toml", "/a/x.toml"},
		{"///a/x.toml", "/a/x.toml", "/a/x.toml"},
		{"a:b.toml", "./a:b.toml", "./a:b.toml"},
		{"//\x90\x06 k/", "/%90%06%20k/", "/\x90\x06 k/"},
	} {
		uri := sarifURI(c.path)
		u, err := url.Parse(uri)
		if uri != c.uri || err != nil || u.Host != "" || u.Path != c.back {
			t.Errorf("%q: URI %q (parsed: %v, host %q, path %q), want %q", c.path, uri, err, u.Host, u.Path, c.uri)
		}
	}
}

func TestFormatFigure(t *testing.T) {
	for _, c := range []struct {
		f    CheckFigure
		want string
	}{
		{CheckFigure{Name: "a", Value: 3584 << 20, Unit: "B"}, "3.5 GiB"},
		{CheckFigure{Name: "a", Value: 104e6, Unit: "B/s"}, "104 MB/s"},
		{CheckFigure{Name: "a", Value: 3308.33, Unit: "ms"}, "3308.3 ms"},
		{CheckFigure{Name: "a", Value: 14816, Unit: "tokens"}, "14,816 tokens"},
		{CheckFigure{Name: "a", Value: 0.352, Unit: "ratio"}, "35.2%"},
		{CheckFigure{Name: "a", Value: 2, Unit: "workers"}, "2 workers"},
		{CheckFigure{Name: "a", Value: 91.19999999999999, Unit: "$/h"}, "$91.20/h"},
		{CheckFigure{Name: "a", Value: 0.4, Unit: "$/Mtok"}, "$0.40/Mtok"},
	} {
		if got := FormatFigure(c.f); got != c.want {
			t.Errorf("%v: %q, want %q", c.f, got, c.want)
		}
	}
}

// TestMoneyInJSON checks that money reaches JSON in cents, not as the
// float noise of a sum of prices (8 × $11.40 is 91.19999999999999).
func TestMoneyInJSON(t *testing.T) {
	price, a, b := 11.4, 0.1, 0.2 // variables: Go's constant arithmetic is exact
	r := NewCheckResult("plan.toml", nil, nil, []CheckFigure{{Name: "usd_per_hour", Value: 8 * price, Unit: "$/h"}, {Name: "ttft", Value: a + b, Unit: "ms"}}, "")
	var out bytes.Buffer
	if err := WriteCheckJSON(&out, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"value": 91.2,`) || strings.Contains(out.String(), "91.1999") {
		t.Errorf("money not in cents:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "0.30000000000000004") {
		t.Errorf("a figure that is not money was rounded:\n%s", out.String())
	}
}
