package report

import (
	"encoding/json"
	"io"
)

// WriteCheckJSON writes r as indented JSON with stable field names.
func WriteCheckJSON(w io.Writer, r *CheckResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
