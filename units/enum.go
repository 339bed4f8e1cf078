package units

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/internal/suggest"
)

// ParseEnum matches value against allowed without regard to case or
// surrounding spaces and returns the allowed spelling: ParseEnum("FP8",
// kvDtypes) is "fp8", ParseEnum("JSON", formats) is "json". An unknown value
// is an error listing what is accepted, with a did-you-mean.
func ParseEnum(value string, allowed []string) (string, error) {
	v := strings.TrimSpace(value)
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return a, nil
		}
	}
	q := make([]string, len(allowed))
	for i, a := range allowed {
		q[i] = fmt.Sprintf("%q", a)
	}
	hint := ""
	if len(v) <= safetext.MaxQuoted { // a 10 MB value is no typo
		hint = suggest.DidYouMean(v, allowed)
	}
	return "", fmt.Errorf("%s is not accepted: want one of %s%s", safetext.Quote(value), strings.Join(q, ", "), hint)
}
