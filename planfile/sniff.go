package planfile

import (
	"bytes"
	"regexp"
	"sync"
)

// tomlLine is a TOML table header or key = value line (compiled on first
// use, not at start-up).
var tomlLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\[\[?\s*[A-Za-z0-9_."-]+(\s*\.\s*[A-Za-z0-9_."-]+)*\s*\]\]?|[A-Za-z0-9_."-]+(\s*\.\s*[A-Za-z0-9_."-]+)*\s*=)`)
})

// LooksLikePlan tells a plan file (TOML) from a Kubernetes manifest or Helm
// values (YAML or JSON) by content, for input without a name (`kvplan
// check -` reads stdin): its first line that is not blank or a comment is a
// TOML table header ("[model]") or a key = value line. YAML's "key: value",
// "---", "- item" and JSON's "{" are not.
func LooksLikePlan(data []byte) bool {
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))) // a UTF-8 BOM
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		return tomlLine().Match(line)
	}
	return false
}
