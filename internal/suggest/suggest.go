// Package suggest finds the names closest to a mistyped one, for the "did
// you mean" of every error kvplan prints about an unknown name: catalog
// entries, rule ids, environment fields and simulator policies.
package suggest

import (
	"sort"
	"strings"

	"github.com/xrash/smetrics"
)

// minScore is the Jaro-Winkler similarity below which a name is not offered.
const minScore = 0.8

// maxName is the longest name Closest compares.
const maxName = 256

// Closest returns up to n of names most similar to name, best first,
// ignoring case. A name that contains what was typed ranks higher.
func Closest(name string, names []string, n int) []string {
	if len(name) > maxName {
		return nil // a 10 MB "name" is no typo, and comparing it is slow
	}
	want := strings.ToLower(strings.TrimSpace(name))
	type scored struct {
		name  string
		score float64
	}
	var cands []scored
	seen := map[string]bool{}
	for _, c := range names {
		if c == "" || seen[c] {
			continue
		}
		seen[c] = true
		lc := strings.ToLower(c)
		s := smetrics.JaroWinkler(want, lc, 0.7, 4)
		if want != "" && strings.Contains(lc, want) {
			s += 0.2
		}
		// Jaro-Winkler scores short names low: "l5" is 0.7 from "l4". A
		// name one edit away is offered all the same, after the close ones.
		if s < minScore && len(want) >= 2 && abs(len(want)-len(lc)) <= 1 && smetrics.WagnerFischer(want, lc, 1, 1, 1) == 1 {
			s = minScore
		}
		if s >= minScore {
			cands = append(cands, scored{c, s})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	var out []string
	for _, c := range cands {
		if len(out) == n {
			break
		}
		out = append(out, c.name)
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// DidYouMean returns "; did you mean X?" for the closest of names, or "".
func DidYouMean(name string, names []string) string {
	if c := Closest(name, names, 1); len(c) > 0 {
		return "; did you mean " + c[0] + "?"
	}
	return ""
}
