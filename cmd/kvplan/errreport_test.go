package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestCIFormatsCarryInputErrors: an input error under a CI format writes a
// valid report of that format to stdout and exits 2 (issue 23, item 2), so
// `kvplan check plan.toml -o junit > report.xml` never uploads an empty file.
func TestCIFormatsCarryInputErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	// model.tp = 0 on line 3: the error names the file, line 3 and the key.
	if err := os.WriteFile(bad, []byte("[model]\nname = \"llama-3.1-70b\"\ntp = 0\n[workload]\ninput_tokens = 5\n[pools.w]\nrole = \"aggregated\"\ngpu = \"h100-sxm\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	schema, err := jsonschema.NewCompiler().Compile("../../testdata/rules/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []struct {
		name string
		args []string
		line int // 0: no line
	}{
		{"missing file", []string{"check", filepath.Join(dir, "nosuch.toml")}, 0},
		{"bad key", []string{"check", bad}, 3},
		{"bad flag", []string{"check", bad, "--fail-on", "sometimes"}, 0},
		{"plan, unknown GPU", []string{"plan", "--model", "llama-3.1-8b", "--isl", "10", "--osl", "10", "--rate", "1", "--ttft-p95", "1s", "--itl-p95", "1s", "--gpu", "h100-sxn"}, 0},
	} {
		for _, format := range []string{"json", "junit", "sarif", "github", "markdown", "JUnit"} {
			out, errs, code := kvplan(t, append(append([]string{}, in.args...), "-o", format)...)
			if code != ExitUsage {
				t.Fatalf("%s -o %s: exit %d, want 2 (%s)", in.name, format, code, errs)
			}
			if errs == "" {
				t.Errorf("%s -o %s: nothing on stderr", in.name, format)
			}
			switch strings.ToLower(format) {
			case "json":
				var v struct {
					Error    string `json:"error"`
					ExitCode int    `json:"exit_code"`
					Errors   []struct {
						File  string `json:"file"`
						Line  int    `json:"line"`
						Field string `json:"field"`
					} `json:"errors"`
				}
				if err := json.Unmarshal([]byte(out), &v); err != nil || v.Error == "" || v.ExitCode != 2 || len(v.Errors) == 0 {
					t.Errorf("%s -o json: %v\n%s", in.name, err, out)
				} else if in.line > 0 && (v.Errors[0].Line != in.line || v.Errors[0].Field != "model.tp" || v.Errors[0].File != bad) {
					t.Errorf("%s -o json: at %+v, want %s:%d model.tp", in.name, v.Errors[0], bad, in.line)
				}
			case "junit":
				var v struct {
					Errors int `xml:"errors,attr"`
					Suites []struct {
						Cases []struct {
							Error *struct {
								Message string `xml:"message,attr"`
							} `xml:"error"`
						} `xml:"testcase"`
					} `xml:"testsuite"`
				}
				if err := xml.Unmarshal([]byte(out), &v); err != nil || v.Errors != 1 || len(v.Suites) != 1 || v.Suites[0].Cases[0].Error == nil {
					t.Errorf("%s -o junit: %v\n%s", in.name, err, out)
				}
			case "sarif":
				doc, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
				if err != nil {
					t.Fatalf("%s -o sarif: %v\n%s", in.name, err, out)
				}
				if err := schema.Validate(doc); err != nil {
					t.Errorf("%s -o sarif: invalid SARIF: %v", in.name, err)
				}
				if !strings.Contains(out, `"toolExecutionNotifications"`) || !strings.Contains(out, `"executionSuccessful": false`) {
					t.Errorf("%s -o sarif: no failed invocation:\n%s", in.name, out)
				}
			case "github":
				if !strings.HasPrefix(out, "::error ") || (in.line > 0 && !strings.Contains(out, "line=3")) {
					t.Errorf("%s -o github:\n%s", in.name, out)
				}
			case "markdown":
				if !strings.Contains(out, "input error (exit 2)") {
					t.Errorf("%s -o markdown:\n%s", in.name, out)
				}
			}
		}
		// The table format keeps stdout empty: the error is on stderr.
		if out, _, _ := kvplan(t, in.args...); out != "" {
			t.Errorf("%s: table wrote %q to stdout", in.name, out)
		}
	}
}

func TestRequestedFormat(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"kvplan", "check", "p.toml", "-o", "SARIF"}, "sarif"},
		{[]string{"kvplan", "check", "--output=json", "p.toml"}, "json"},
		{[]string{"kvplan", "memory", "--gpu", "l4", "--", "vllm", "serve", "-o", "json"}, ""},
		{[]string{"kvplan", "check", "p.toml"}, ""},
	} {
		if got := requestedFormat(tc.args); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestErrorReportGolden fixes each CI format's error report: a plan file
// with two mistakes, each at its line and key.
func TestErrorReportGolden(t *testing.T) {
	for _, format := range []string{"json", "junit", "sarif", "github", "markdown"} {
		out, _, code := kvplan(t, "check", "../../testdata/plans/invalid/two-mistakes.toml", "-o", format)
		if code != ExitUsage {
			t.Fatalf("-o %s: exit %d, want 2", format, code)
		}
		golden(t, "check-error."+format, out)
	}
}
