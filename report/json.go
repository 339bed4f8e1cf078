package report

import (
	"encoding/json"
	"io"
)

// renderJSON writes v as indented JSON with a trailing newline. Field names
// come from v's json tags and are a documented contract (README).
func renderJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
