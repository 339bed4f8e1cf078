package main

import (
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestCheckSeveralInputs: several inputs are one report per format (SARIF
// one run, as code scanning wants one upload; JUnit one suite per input;
// JSON a results list), and the exit code is the worst: clean.toml passes,
// tp-not-divisible.toml fails with one deny at line 29 (its header says so).
func TestCheckSeveralInputs(t *testing.T) {
	clean, bad := "../../examples/clean.toml", "../../examples/tp-not-divisible.toml"
	schema, err := jsonschema.NewCompiler().Compile("../../testdata/rules/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}

	out, errs, code := kvplan(t, "check", clean, bad, "-o", "sarif")
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1: %s", code, errs)
	}
	var doc any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Errorf("SARIF of two inputs is not valid SARIF 2.1.0: %v", err)
	}
	var sarif struct {
		Runs []struct {
			Artifacts []struct {
				Location struct {
					URI string `json:"uri"`
				} `json:"location"`
			} `json:"artifacts"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
			Tool struct {
				Driver struct {
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &sarif); err != nil {
		t.Fatal(err)
	}
	if len(sarif.Runs) != 1 {
		t.Fatalf("%d SARIF runs, want 1", len(sarif.Runs))
	}
	run := sarif.Runs[0]
	if len(run.Artifacts) != 2 || run.Artifacts[0].Location.URI != clean || run.Artifacts[1].Location.URI != bad {
		t.Errorf("artifacts %+v, want the two inputs in order", run.Artifacts)
	}
	ids := map[string]int{}
	for _, r := range run.Tool.Driver.Rules {
		ids[r.ID]++
	}
	for id, n := range ids {
		if n != 1 {
			t.Errorf("rule %s listed %d times", id, n)
		}
	}
	if len(run.Results) != 1 || run.Results[0].RuleID != "tp-not-divisible" ||
		run.Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI != bad || run.Results[0].Locations[0].PhysicalLocation.Region.StartLine != 29 {
		t.Errorf("results %+v, want one tp-not-divisible at %s:29", run.Results, bad)
	}

	out, _, _ = kvplan(t, "check", clean, bad, "-o", "junit")
	var junit struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Failures int    `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &junit); err != nil {
		t.Fatal(err)
	}
	if len(junit.Suites) != 2 || junit.Suites[0].Name != clean || junit.Suites[0].Failures != 0 || junit.Suites[1].Name != bad || junit.Suites[1].Failures != 1 || junit.Failures != 1 {
		t.Errorf("JUnit %+v, want a passing suite for %s and one failure for %s", junit, clean, bad)
	}

	out, _, _ = kvplan(t, "check", clean, bad, "-o", "json")
	var js struct {
		Verdict string `json:"verdict"`
		Counts  struct {
			Deny int `json:"deny"`
		} `json:"counts"`
		Results []struct {
			PlanFile string `json:"plan_file"`
			Verdict  string `json:"verdict"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	if js.Verdict != "fail" || js.Counts.Deny != 1 || len(js.Results) != 2 || js.Results[0].Verdict != "pass" || js.Results[1].PlanFile != bad {
		t.Errorf("JSON %+v", js)
	}

	// One input is reported exactly as before: no wrapper.
	one, _, _ := kvplan(t, "check", clean, "-o", "json")
	if !strings.HasPrefix(strings.TrimSpace(one), "{\n  \"plan_file\"") {
		t.Errorf("one input's JSON changed shape: %.80s", one)
	}
	if _, _, code := kvplan(t, "check", clean, clean, "-o", "github"); code != ExitOK {
		t.Errorf("two passing inputs: exit %d, want 0", code)
	}
	if _, errs, code := kvplan(t, "check", "-", "-"); code != ExitUsage || !strings.Contains(errs, "read once") {
		t.Errorf("stdin twice: exit %d, %s", code, errs)
	}
}
