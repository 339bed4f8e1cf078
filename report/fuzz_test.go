package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FuzzRenderers: for any plan path, rule id, pool, message, fix and field,
// every check format renders; JUnit is well-formed XML, SARIF validates
// against the SARIF 2.1.0 schema, JSON parses and keeps the values, GitHub
// output has exactly one line per finding plus the summary, and no control
// character reaches the markdown or GitHub output. (The table, 100 times
// slower to render, has FuzzTable.)
func FuzzRenderers(f *testing.F) {
	f.Add("plans/a\n::error::x.toml", "r`|[x](y)", "p\x1b[31m", "needs \x1b[2J <b>|", "fix\n::warning::w", "pools.p.x", int16(3))
	f.Add("", "", "", "", "", "", int16(0))
	f.Add("a b/c#d%.toml", "id", "\xff", "\u202e", "%0A", "f", int16(-1))
	schema := sarifSchema(f)
	f.Fuzz(func(t *testing.T, path, id, pool, msg, fix, field string, line int16) {
		r := hostileResult(path, id, pool, msg, fix, field, int(max(line, 0)))
		out := map[string]string{}
		for _, format := range CheckFormats() {
			if format == "table" {
				continue
			}
			var b bytes.Buffer
			if err := WriteCheck(&b, format, r); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			out[format] = b.String()
		}
		lines := strings.Split(strings.TrimSuffix(out["github"], "\n"), "\n")
		if len(lines) != len(r.Findings)+1 || !strings.HasPrefix(lines[len(lines)-1], "kvplan check ") {
			t.Fatalf("github: %d lines for %d findings:\n%q", len(lines), len(r.Findings), out["github"])
		}
		for i, l := range lines[:len(lines)-1] {
			if !strings.HasPrefix(l, "::error ") && !strings.HasPrefix(l, "::warning ") || strings.Count(l, "::") < 2 {
				t.Fatalf("github line %d: %q", i, l)
			}
		}
		for _, format := range []string{"markdown", "github"} {
			checkPrintable(t, format, out[format])
		}
		dec := xml.NewDecoder(strings.NewReader(out["junit"]))
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("junit: %v\n%q", err, out["junit"])
			}
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(out["sarif"]))
		if err != nil {
			t.Fatalf("sarif: %v", err)
		}
		if err := schema.Validate(doc); err != nil {
			t.Fatalf("sarif does not validate: %v", err)
		}
		var back CheckResult
		if err := json.Unmarshal([]byte(out["json"]), &back); err != nil {
			t.Fatalf("json: %v", err)
		}
		if utf8.ValidString(path) && back.PlanFile != path {
			t.Fatalf("json plan_file %q, want %q", back.PlanFile, path)
		}
	})
}

// FuzzTable: no control character reaches the terminal table.
func FuzzTable(f *testing.F) {
	f.Add("plans/a\n::error::x.toml", "r", "p\x1b[31m", "needs \x1b[2J\r", "fix\u009b", "pools.p.x", int16(3))
	f.Fuzz(func(t *testing.T, path, id, pool, msg, fix, field string, line int16) {
		var b bytes.Buffer
		if err := WriteCheckTable(&b, hostileResult(path, id, pool, msg, fix, field, int(max(line, 0)))); err != nil {
			t.Fatal(err)
		}
		checkPrintable(t, "table", b.String())
	})
}

func checkPrintable(t *testing.T, format, out string) {
	t.Helper()
	for _, c := range out {
		if c != '\n' && c != '\t' && (c < 0x20 || c == 0x7f || c >= 0x80 && c <= 0x9f || c >= 0x202a && c <= 0x202e || c >= 0x2066 && c <= 0x2069) {
			t.Fatalf("%s: control character %U in %q", format, c, out)
		}
	}
	if !utf8.ValidString(out) {
		t.Fatalf("%s: invalid UTF-8 in %q", format, out)
	}
}

func sarifSchema(tb testing.TB) *jsonschema.Schema {
	f, err := os.Open(filepath.Join("..", "testdata", "rules", "sarif-schema-2.1.0.json"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	schemaDoc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		tb.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	if err := c.AddResource(url, schemaDoc); err != nil {
		tb.Fatal(err)
	}
	schema, err := c.Compile(url)
	if err != nil {
		tb.Fatal(err)
	}
	return schema
}
