// Package slo is the service-level objective of a deployment as users state
// it: targets on percentiles of time to first token (TTFT) and of
// inter-token latency (ITL), on the mean and 99th percentile of time per
// output token (TPOT, as vLLM bench's mean_tpot: per request (E2E − TTFT) /
// (output tokens − 1), then over requests), on the 95th percentile of
// end-to-end latency, and on goodput (the share of requests that meet every
// per-request target, as DistServe and `vllm bench --goodput` count it).
//
// One type serves `kvplan plan`'s flags, the plan file's [slo] table (which
// `kvplan check` reads) and the simulator's verification. It imports nothing
// of the project but the number checks (units) and the did-you-mean helper.
package slo

import (
	"fmt"
	"math"
	"strings"

	"github.com/kvplan/kvplan/internal/suggest"
	"github.com/kvplan/kvplan/units"
)

// MaxMS bounds a latency target: a day.
const MaxMS = 86_400_000

// SLO holds the targets; 0 means none. TTFTMS and ITLMS are the 95th
// percentiles (plan keys ttft_ms and itl_ms, the names kvplan plan has
// always written; ttft_p95_ms and itl_p95_ms say the same and are folded in
// by Normalize).
type SLO struct {
	TTFTP50MS float64 `toml:"ttft_p50_ms,omitzero" json:"ttft_p50_ms,omitempty"`
	TTFTP90MS float64 `toml:"ttft_p90_ms,omitzero" json:"ttft_p90_ms,omitempty"`
	TTFTMS    float64 `toml:"ttft_ms,omitzero" json:"ttft_p95_ms,omitempty"` // the 95th percentile
	TTFTP99MS float64 `toml:"ttft_p99_ms,omitzero" json:"ttft_p99_ms,omitempty"`

	ITLP50MS float64 `toml:"itl_p50_ms,omitzero" json:"itl_p50_ms,omitempty"`
	ITLP90MS float64 `toml:"itl_p90_ms,omitzero" json:"itl_p90_ms,omitempty"`
	ITLMS    float64 `toml:"itl_ms,omitzero" json:"itl_p95_ms,omitempty"` // the 95th percentile
	ITLP99MS float64 `toml:"itl_p99_ms,omitzero" json:"itl_p99_ms,omitempty"`

	TPOTMeanMS float64 `toml:"tpot_mean_ms,omitzero" json:"tpot_mean_ms,omitempty"`
	TPOTP99MS  float64 `toml:"tpot_p99_ms,omitzero" json:"tpot_p99_ms,omitempty"`
	E2EP95MS   float64 `toml:"e2e_p95_ms,omitzero" json:"e2e_p95_ms,omitempty"`

	// Goodput is the share of requests, in (0, 1], that must meet every
	// per-request target: TTFT within the smallest TTFT target, TPOT within
	// the smallest TPOT target, E2E within the E2E target.
	Goodput float64 `toml:"goodput,omitzero" json:"goodput,omitempty"`

	// TTFTP95MS and ITLP95MS are the plan keys ttft_p95_ms and itl_p95_ms,
	// spellings of ttft_ms and itl_ms; Normalize moves them there.
	TTFTP95MS float64 `toml:"ttft_p95_ms,omitzero" json:"-"`
	ITLP95MS  float64 `toml:"itl_p95_ms,omitzero" json:"-"`
}

// Metrics a target is on.
const (
	TTFT    = "ttft"
	ITL     = "itl"
	TPOT    = "tpot"
	E2E     = "e2e"
	Goodput = "goodput"
)

// Target is one kind of target: a statistic of a metric.
type Target struct {
	Name   string  // the flag: "ttft-p95", "tpot", "goodput"
	Key    string  // the plan file key: "ttft_ms", "tpot_mean_ms", "goodput"
	JSON   string  // the figure's JSON name: "ttft_p95_ms", "tpot_mean_ms", "goodput"
	Metric string  // TTFT, ITL, TPOT, E2E or Goodput
	Stat   string  // "p50", "p90", "p95", "p99", "mean" or "share"
	Q      float64 // the quantile (0.95); 0 for a mean or a share
	field  func(*SLO) *float64
}

// Label is how a target is named in prose: "TTFT p95", "TPOT mean", "goodput".
func (t Target) Label() string {
	if t.Metric == Goodput {
		return "goodput"
	}
	return strings.ToUpper(t.Metric) + " " + t.Stat
}

// Targets lists every kind of target, in the order they are shown.
var Targets = []Target{
	{"ttft-p50", "ttft_p50_ms", "ttft_p50_ms", TTFT, "p50", 0.50, func(s *SLO) *float64 { return &s.TTFTP50MS }},
	{"ttft-p90", "ttft_p90_ms", "ttft_p90_ms", TTFT, "p90", 0.90, func(s *SLO) *float64 { return &s.TTFTP90MS }},
	{"ttft-p95", "ttft_ms", "ttft_p95_ms", TTFT, "p95", 0.95, func(s *SLO) *float64 { return &s.TTFTMS }},
	{"ttft-p99", "ttft_p99_ms", "ttft_p99_ms", TTFT, "p99", 0.99, func(s *SLO) *float64 { return &s.TTFTP99MS }},
	{"itl-p50", "itl_p50_ms", "itl_p50_ms", ITL, "p50", 0.50, func(s *SLO) *float64 { return &s.ITLP50MS }},
	{"itl-p90", "itl_p90_ms", "itl_p90_ms", ITL, "p90", 0.90, func(s *SLO) *float64 { return &s.ITLP90MS }},
	{"itl-p95", "itl_ms", "itl_p95_ms", ITL, "p95", 0.95, func(s *SLO) *float64 { return &s.ITLMS }},
	{"itl-p99", "itl_p99_ms", "itl_p99_ms", ITL, "p99", 0.99, func(s *SLO) *float64 { return &s.ITLP99MS }},
	{"tpot", "tpot_mean_ms", "tpot_mean_ms", TPOT, "mean", 0, func(s *SLO) *float64 { return &s.TPOTMeanMS }},
	{"tpot-p99", "tpot_p99_ms", "tpot_p99_ms", TPOT, "p99", 0.99, func(s *SLO) *float64 { return &s.TPOTP99MS }},
	{"e2e-p95", "e2e_p95_ms", "e2e_p95_ms", E2E, "p95", 0.95, func(s *SLO) *float64 { return &s.E2EP95MS }},
	{"goodput", "goodput", "goodput", Goodput, "share", 0, func(s *SLO) *float64 { return &s.Goodput }},
}

// Value is a target's value in s (0 = not given).
func (t Target) Value(s SLO) float64 { return *t.field(&s) }

// Set sets a target's value in s.
func (t Target) Set(s *SLO, v float64) { *t.field(s) = v }

// Lookup finds a target by its flag name ("ttft-p95"), plan key
// ("ttft_p95_ms", "ttft_ms") or JSON name, in any case; an unknown name is
// an error that lists the metrics and percentiles offered, with a "did you
// mean".
func Lookup(name string) (Target, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, t := range Targets {
		if n == t.Name || n == t.Key || n == t.JSON {
			return t, nil
		}
	}
	switch n {
	case "ttft_p95_ms":
		return Targets[2], nil
	case "itl_p95_ms":
		return Targets[6], nil
	case "tpot-mean", "tpot_ms":
		return Targets[8], nil
	}
	return Target{}, unknown(name, false)
}

// Keys lists the plan file's [slo] keys.
func Keys() []string {
	var keys []string
	for _, t := range Targets {
		keys = append(keys, t.Key)
	}
	return append(keys, "ttft_p95_ms", "itl_p95_ms")
}

// UnknownKey is the error for an [slo] key that names no target: the keys
// offered, with a "did you mean".
func UnknownKey(key string) error { return unknown(key, true) }

func unknown(name string, keys bool) error {
	var names []string
	for _, t := range Targets {
		if keys {
			names = append(names, t.Key)
		} else {
			names = append(names, t.Name)
		}
	}
	msg := fmt.Sprintf("unknown SLO %q", name)
	if keys {
		msg += suggest.DidYouMean(strings.ToLower(name), Keys())
	} else {
		msg += suggest.DidYouMean(strings.ToLower(name), names)
	}
	return fmt.Errorf("%s (offered: TTFT and ITL at p50, p90, p95 and p99, TPOT mean and p99, E2E p95, goodput: %s)", msg, strings.Join(names, ", "))
}

// Given is a target with its value.
type Given struct {
	Target
	Value float64
}

// Given lists the targets s sets, in Targets order.
func (s SLO) Given() []Given {
	var out []Given
	for _, t := range Targets {
		if v := t.Value(s); v != 0 {
			out = append(out, Given{t, v})
		}
	}
	return out
}

// Empty reports whether s sets no target.
func (s SLO) Empty() bool { return len(s.Given()) == 0 }

// Normalize moves ttft_p95_ms and itl_p95_ms into ttft_ms and itl_ms; the
// two spellings of one target given with different values are a problem
// at the alias key (ttft_p95_ms, itl_p95_ms), the value of ttft_ms kept.
func (s *SLO) Normalize() []Problem {
	var out []Problem
	fold := func(alias, dst *float64, t Target, aliasKey string) {
		switch {
		case *alias == 0:
			return
		case *dst != 0 && *dst != *alias:
			out = append(out, Problem{Target: t, Key: aliasKey,
				Msg: fmt.Sprintf("%g and %s = %g name the same target (the 95th percentile): give one", *alias, t.Key, *dst)})
		default:
			*dst = *alias
		}
		*alias = 0
	}
	fold(&s.TTFTP95MS, &s.TTFTMS, Targets[2], "ttft_p95_ms")
	fold(&s.ITLP95MS, &s.ITLMS, Targets[6], "itl_p95_ms")
	return out
}

// Problem is one invalid target: the target, the plan key it was read
// from, and what is wrong.
type Problem struct {
	Target Target
	Key    string
	Msg    string
}

// Problems checks every target of s (after Normalize): latencies above 0
// and at most a day, goodput in (0, 1] and with a per-request target to
// count against.
func (s SLO) Problems() []Problem {
	var out []Problem
	for _, t := range Targets {
		v := t.Value(s)
		if t.Metric == Goodput {
			if v != 0 && (math.IsNaN(v) || v <= 0 || v > 1) {
				out = append(out, Problem{t, t.Key, fmt.Sprintf("%g: want a share of requests in (0, 1], e.g. 0.9", v)})
			}
			continue
		}
		if v < 0 {
			out = append(out, Problem{t, t.Key, fmt.Sprintf("%g is negative: want milliseconds, or leave it out", v)})
		} else if err := units.CheckFloat(v, 0, MaxMS, "ms"); err != nil {
			out = append(out, Problem{t, t.Key, err.Error()})
		}
	}
	if s.Goodput > 0 && s.Goodput <= 1 {
		if a, b, c := s.PerRequest(); a == 0 && b == 0 && c == 0 {
			out = append(out, Problem{Targets[len(Targets)-1], "goodput", "a goodput counts the requests that meet every per-request target: give a TTFT, TPOT or E2E target with it"})
		}
	}
	return out
}

// Check is Problems as one error naming each target by its flag (--ttft-p95).
func (s SLO) Check() error {
	ps := append((&s).Normalize(), s.Problems()...)
	if len(ps) == 0 {
		return nil
	}
	var msgs []string
	for _, p := range ps {
		msgs = append(msgs, "--"+p.Target.Name+" "+p.Msg)
	}
	return fmt.Errorf("%s", strings.Join(msgs, "; "))
}

// PerRequest is the thresholds a request is held to for goodput: TTFT within
// the smallest TTFT target, TPOT within the smallest TPOT target, E2E within
// the E2E target (0 = none of that metric).
func (s SLO) PerRequest() (ttftMS, tpotMS, e2eMS float64) {
	least := func(vs ...float64) float64 {
		m := 0.0
		for _, v := range vs {
			if v > 0 && (m == 0 || v < m) {
				m = v
			}
		}
		return m
	}
	return least(s.TTFTP50MS, s.TTFTP90MS, s.TTFTMS, s.TTFTP99MS), least(s.TPOTMeanMS, s.TPOTP99MS), s.E2EP95MS
}

// String says the targets: "TTFT p95 ≤ 500 ms, TPOT mean ≤ 40 ms, goodput ≥
// 90% (TTFT ≤ 500 ms and TPOT ≤ 40 ms per request)", or "none".
func (s SLO) String() string {
	var parts []string
	for _, g := range s.Given() {
		if g.Metric == Goodput {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s ≤ %g ms", g.Label(), g.Value))
	}
	if s.Goodput > 0 {
		parts = append(parts, fmt.Sprintf("goodput ≥ %s%% (%s per request)", fmtMS(s.Goodput*100), s.PerRequestString()))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// PerRequestString says the per-request thresholds: "TTFT ≤ 500 ms and TPOT ≤ 40 ms".
func (s SLO) PerRequestString() string {
	a, b, c := s.PerRequest()
	var out []string
	for _, x := range []struct {
		name string
		v    float64
	}{{"TTFT", a}, {"TPOT", b}, {"E2E", c}} {
		if x.v > 0 {
			out = append(out, fmt.Sprintf("%s ≤ %g ms", x.name, x.v))
		}
	}
	return strings.Join(out, " and ")
}

func fmtMS(v float64) string { return fmt.Sprintf("%.4g", v) }
