package main

import (
	"strings"

	"github.com/xrash/smetrics"
)

// didYouMean returns "; did you mean X?" for the closest of names, or "".
func didYouMean(name string, names []string) string {
	best, score := "", 0.0
	for _, n := range names {
		if s := smetrics.JaroWinkler(strings.ToLower(name), strings.ToLower(n), 0.7, 4); s > score {
			best, score = n, s
		}
	}
	if score < 0.7 {
		return ""
	}
	return "; did you mean " + best + "?"
}
