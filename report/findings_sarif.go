package report

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/kvplan/kvplan/rules"
)

// SARIF 2.1.0 output, validated in tests against the OASIS schema.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool       sarifTool       `json:"tool"`
	Artifacts  []sarifArtifact `json:"artifacts"`
	Results    []sarifResult   `json:"results"`
	Properties *sarifRunProps  `json:"properties,omitempty"`
}

// sarifRunProps carries kvplan's notes (what it assumed), which SARIF has
// no field for.
type sarifRunProps struct {
	Notes []string `json:"kvplanNotes"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string          `json:"id"`
	ShortDescription     sarifText       `json:"shortDescription"`
	FullDescription      *sarifText      `json:"fullDescription,omitempty"`
	Help                 *sarifText      `json:"help,omitempty"`
	DefaultConfiguration sarifRuleConfig `json:"defaultConfiguration"`
	Properties           map[string]any  `json:"properties,omitempty"`
}

type sarifRuleConfig struct {
	Level string `json:"level"`
}

type sarifArtifact struct {
	Location sarifArtifactLocation `json:"location"`
}

type sarifArtifactLocation struct {
	URI string `json:"uri"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

func sarifLevel(s rules.Severity) string {
	switch s {
	case rules.Deny:
		return "error"
	case rules.Warn:
		return "warning"
	}
	return "note"
}

// WriteCheckSARIF writes a SARIF 2.1.0 log: every rule evaluated in
// tool.driver.rules (its why as full description, its fix as help) and one
// result per finding, located at the line (and column, for a manifest) of
// the field involved, in the file it was written in. A rule that failed at
// run time appears as its own rule "rule-error/<id>", and so does a
// manifest reader's finding ("manifest/not-understood"). Notes go in the
// run's properties.
func WriteCheckSARIF(w io.Writer, r *CheckResult) error {
	return WriteChecksSARIF(w, []*CheckResult{r})
}

// WriteChecksSARIF writes the results of several inputs as one SARIF run
// (code scanning refuses several runs of one tool and category in an
// upload): every input is an artifact, the rules are listed once, and the
// results of every input follow in order.
func WriteChecksSARIF(w io.Writer, rs []*CheckResult) error {
	var artifacts []sarifArtifact
	seenArtifact := map[string]bool{}
	for _, r := range rs {
		if uri := sarifURI(r.PlanFile); !seenArtifact[uri] {
			seenArtifact[uri] = true
			artifacts = append(artifacts, sarifArtifact{Location: sarifArtifactLocation{URI: uri}})
		}
	}
	driver := sarifDriver{Name: "kvplan", InformationURI: "https://github.com/kvplan/kvplan", Rules: []sarifRule{}}
	index := map[string]int{}
	addRule := func(id string, sev rules.Severity, why, fix string) {
		if _, ok := index[id]; ok {
			return
		}
		index[id] = len(driver.Rules)
		short := id
		if why != "" {
			short = firstSentence(why)
		}
		sr := sarifRule{ID: id, ShortDescription: sarifText{termText(short)}, DefaultConfiguration: sarifRuleConfig{sarifLevel(sev)},
			Properties: map[string]any{"severity": string(sev)}}
		if why != "" {
			sr.FullDescription = &sarifText{termText(why)}
		}
		if fix != "" {
			sr.Help = &sarifText{termText(fix)}
		}
		driver.Rules = append(driver.Rules, sr)
	}
	results := []sarifResult{}
	var notes []string
	for _, r := range rs {
		for _, x := range r.Rules {
			addRule(x.ID, x.Severity, x.Why, x.Fix)
		}
		for _, f := range r.Findings {
			if _, ok := index[f.RuleID]; !ok {
				addRule(f.RuleID, f.Severity, f.Why, "")
			}
			msg := termText(f.Message)
			if f.Fix != "" {
				msg += " Fix: " + termText(f.Fix)
			}
			fileURI := sarifURI(r.file(f))
			if !seenArtifact[fileURI] {
				seenArtifact[fileURI] = true
				artifacts = append(artifacts, sarifArtifact{Location: sarifArtifactLocation{URI: fileURI}})
			}
			loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifactLocation{URI: fileURI}}}
			if f.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Line, StartColumn: f.Col}
			}
			results = append(results, sarifResult{RuleID: f.RuleID, RuleIndex: index[f.RuleID], Level: sarifLevel(f.Severity),
				Message: sarifText{msg}, Locations: []sarifLocation{loc}})
		}
		for _, n := range r.Notes {
			notes = append(notes, lineText(n.String()))
		}
	}
	run := sarifRun{Tool: sarifTool{Driver: driver}, Artifacts: artifacts, Results: results}
	if len(notes) > 0 {
		run.Properties = &sarifRunProps{Notes: notes}
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{run},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

// firstSentence returns text up to its first ". ", or all of it.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}
