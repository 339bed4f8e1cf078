package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kvplan/kvplan/planfile"
	"github.com/kvplan/kvplan/rules"
)

// ManifestShow is what `kvplan manifest show` prints: the plan read from a
// manifest, with the place each value came from, what was assumed or
// skipped, and the manifest's own findings.
type ManifestShow struct {
	Manifest string          `json:"manifest"`
	Kinds    []string        `json:"kinds"` // documents read
	Plan     *planfile.Plan  `json:"-"`
	Notes    []CheckNote     `json:"notes"`
	Findings []rules.Finding `json:"findings"`
	// Defaults are the values the engine takes when the manifest does not
	// say them, field → why ("vLLM's default"); they are shown with their
	// reason instead of a place.
	Defaults map[string]string `json:"defaults,omitempty"`
}

// ManifestFormats lists the formats of `kvplan manifest show -o`.
func ManifestFormats() []string { return []string{"toml", "json"} }

// WriteManifest renders s as a plan file with each value's place as a
// comment (toml), or as JSON.
func WriteManifest(w io.Writer, format string, s *ManifestShow) error {
	switch format {
	case "toml", "":
		return writeManifestTOML(w, s)
	case "json":
		return writeManifestJSON(w, s)
	}
	return fmt.Errorf("output format %q is not one of %s", format, strings.Join(ManifestFormats(), ", "))
}

// place is a value's place for a comment: "line:col" in the manifest itself,
// "file:line:col" in another file (a plan file), "" when nothing wrote it.
func (s *ManifestShow) place(field string) string {
	if !s.Plan.Has(field) {
		if why, ok := s.Defaults[field]; ok {
			return "default: " + why
		}
		return ""
	}
	at := s.Plan.Pos(field)
	if at.File == s.Manifest {
		at.File = ""
		return strings.TrimPrefix(at.String(), ":")
	}
	return at.String()
}

func writeManifestTOML(w io.Writer, s *ManifestShow) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# kvplan manifest show %s: %s\n", s.Manifest, strings.Join(s.Kinds, ", "))
	b.WriteString("# The plan kvplan reviews; each value's comment is the line:col it was read from, or the default it takes.\n")
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "# note: %s\n", oneLineText(n.String()))
	}
	for _, f := range s.Findings {
		fmt.Fprintf(&b, "# %s %s: %s: %s\n", f.Severity, f.RuleID, f.Pos(), oneLineText(f.Message))
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return s.Plan.WriteTOML(w, s.isDefault, s.place)
}

func (s *ManifestShow) isDefault(field string) bool {
	_, ok := s.Defaults[field]
	return ok
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// manifestJSON is the JSON form: the plan's values under their plan-file
// keys, and the place of each.
type manifestJSON struct {
	*ManifestShow
	Plan   map[string]any          `json:"plan"`
	Places map[string]planfile.Pos `json:"places"`
}

func writeManifestJSON(w io.Writer, s *ManifestShow) error {
	doc := manifestJSON{ManifestShow: s, Plan: map[string]any{}, Places: map[string]planfile.Pos{}}
	if doc.Notes == nil {
		doc.Notes = []CheckNote{}
	}
	if doc.Findings == nil {
		doc.Findings = []rules.Finding{}
	}
	for _, fv := range s.Plan.Values(s.isDefault) {
		if fv.Unset {
			continue // a default the engine takes: the defaults map says which
		}
		parts := strings.Split(fv.Field, ".")
		m := doc.Plan
		for i, k := range parts[:len(parts)-1] {
			if i == 1 && parts[0] == "pools" {
				k = strings.Join(parts[1:len(parts)-1], ".")
			}
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
			if i == 1 && parts[0] == "pools" {
				break
			}
		}
		m[parts[len(parts)-1]] = fv.Value
		if s.Plan.Has(fv.Field) {
			doc.Places[fv.Field] = s.Plan.Pos(fv.Field)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
