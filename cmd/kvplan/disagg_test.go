package main

import (
	"strings"
	"testing"
)

// TestDisaggLoadFlags: disagg's flags for the comparison at a load. A
// mistyped --engine was ignored without --rate, and --rate was ignored
// with --same-gpu or no output tokens; each is now exit 2 with what to do.
func TestDisaggLoadFlags(t *testing.T) {
	base := []string{"disagg", "--model", "qwen3-0.6b"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--link", "1gbe", "--engine", "vlm"}, `unknown engine "vlm"; did you mean vllm?`},
		{[]string{"--same-gpu", "--rate", "2"}, "with --same-gpu there is no second GPU to compare, so leave --rate out"},
		{[]string{"--link", "1gbe", "--output-tokens", "0", "--rate", "2"}, "give --output-tokens of at least 1"},
		{[]string{"--link", "1gbe", "--rate", "NaN"}, `--rate "NaN": want requests per second above 0`},
		{[]string{"--link", "1gbe", "--rate", "0"}, `--rate "0": want requests per second above 0`},
		{[]string{"--link", "1gbe", "--rate", "1e9"}, "(at most 1,000,000)"},
		{[]string{"--link", "1gbe", "--decode-tp", "3"}, "--decode-tp: tp 3 does not fit qwen3-0.6b"},
		{[]string{"--link", "1gbee"}, "did you mean 1gbe"},
	}
	for _, c := range cases {
		_, errOut, code := kvplan(t, append(append([]string{}, base...), c.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 with %q", c.args, code, errOut, c.want)
		}
	}
	// The same flags in any case, at a load, work.
	if _, errOut, code := kvplan(t, append(base, "--link", "1gbe", "--rate", "2", "--engine", "SGLang")...); code != ExitOK {
		t.Errorf("--engine SGLang --rate 2: exit %d: %s", code, errOut)
	}
}
