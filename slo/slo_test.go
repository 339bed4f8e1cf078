package slo

import (
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"ttft-p95", "ttft_p95_ms"}, {"TTFT_P95_MS", "ttft_p95_ms"}, {"ttft_ms", "ttft_p95_ms"},
		{"itl_p95_ms", "itl_p95_ms"}, {"tpot", "tpot_mean_ms"}, {"tpot-mean", "tpot_mean_ms"},
		{"tpot_p99_ms", "tpot_p99_ms"}, {"e2e-p95", "e2e_p95_ms"}, {"goodput", "goodput"},
	} {
		got, err := Lookup(c.name)
		if err != nil || got.JSON != c.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", c.name, got.JSON, err, c.want)
		}
	}
	for _, c := range []struct{ name, want string }{
		{"ttft-p97", "did you mean ttft-p9"}, {"tpt", "did you mean tpot?"}, {"latency", "offered: TTFT and ITL at p50"},
	} {
		if _, err := Lookup(c.name); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Lookup(%q) = %v; want an error with %q", c.name, err, c.want)
		}
	}
	if err := UnknownKey("tpot_ms_mean"); !strings.Contains(err.Error(), "did you mean tpot_mean_ms?") {
		t.Errorf("UnknownKey: %v", err)
	}
}

func TestNormalize(t *testing.T) {
	s := SLO{TTFTP95MS: 500, ITLP95MS: 40}
	if ps := s.Normalize(); len(ps) != 0 || s.TTFTMS != 500 || s.ITLMS != 40 || s.TTFTP95MS != 0 {
		t.Errorf("folded %+v, problems %v", s, ps)
	}
	s = SLO{TTFTMS: 400, TTFTP95MS: 500}
	ps := s.Normalize()
	if len(ps) != 1 || ps[0].Key != "ttft_p95_ms" || !strings.Contains(ps[0].Msg, "ttft_ms = 400") || s.TTFTMS != 400 {
		t.Errorf("conflict: %+v, %v", s, ps)
	}
	s = SLO{TTFTMS: 500, TTFTP95MS: 500} // the same value twice is no conflict
	if ps := s.Normalize(); len(ps) != 0 {
		t.Errorf("equal spellings: %v", ps)
	}
}

func TestProblems(t *testing.T) {
	for _, c := range []struct {
		s    SLO
		key  string
		want string
	}{
		{SLO{TTFTMS: 500, Goodput: 1.5}, "goodput", "want a share of requests in (0, 1]"},
		{SLO{TTFTMS: 500, Goodput: -0.1}, "goodput", "want a share of requests in (0, 1]"},
		{SLO{ITLMS: 40, Goodput: 0.9}, "goodput", "give a TTFT, TPOT or E2E target"},
		{SLO{TPOTP99MS: -3}, "tpot_p99_ms", "is negative"},
		{SLO{E2EP95MS: 1e9}, "e2e_p95_ms", "out of range: want 0 to 86,400,000 ms"},
	} {
		ps := c.s.Problems()
		if len(ps) != 1 || ps[0].Key != c.key || !strings.Contains(ps[0].Msg, c.want) {
			t.Errorf("%+v: %v; want one problem at %s with %q", c.s, ps, c.key, c.want)
		}
	}
	if ps := (SLO{TTFTMS: 500, TPOTMeanMS: 40, Goodput: 1}).Problems(); len(ps) != 0 {
		t.Errorf("goodput 1 with targets: %v", ps)
	}
	if err := (SLO{TTFTMS: 500, Goodput: 2}).Check(); err == nil || !strings.HasPrefix(err.Error(), "--goodput 2:") {
		t.Errorf("Check names the flag: %v", err)
	}
}

func TestPerRequest(t *testing.T) {
	// The smallest target of each metric: a request within TTFT 300 ms is
	// within every TTFT target given; ITL targets are not per request.
	s := SLO{TTFTP50MS: 300, TTFTMS: 800, ITLMS: 20, TPOTMeanMS: 40, TPOTP99MS: 60, E2EP95MS: 9000, Goodput: 0.9}
	a, b, c := s.PerRequest()
	if a != 300 || b != 40 || c != 9000 {
		t.Errorf("PerRequest = %g, %g, %g; want 300, 40, 9000", a, b, c)
	}
	want := "TTFT p50 ≤ 300 ms, TTFT p95 ≤ 800 ms, ITL p95 ≤ 20 ms, TPOT mean ≤ 40 ms, TPOT p99 ≤ 60 ms, E2E p95 ≤ 9000 ms, goodput ≥ 90% (TTFT ≤ 300 ms and TPOT ≤ 40 ms and E2E ≤ 9000 ms per request)"
	if got := s.String(); got != want {
		t.Errorf("String:\n%s\nwant\n%s", got, want)
	}
	if (SLO{}).String() != "none" || !(SLO{}).Empty() {
		t.Error("an empty SLO says none")
	}
}
