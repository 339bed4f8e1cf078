package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestProgressRender(t *testing.T) {
	p := &progressLine{total: 2_000_000, done: 1_234_567, unit: "requests", name: "kv-aware-no-events", phase: "replaying the trace"}
	cases := []struct {
		width int
		want  []string // substrings, in order
		not   []string
	}{
		{120, []string{"kv-aware-no-events · replaying the trace [", "] 1,234,567 / 2,000,000 requests 61%"}, nil},
		{80, []string{"kv-aware-no-events · replaying…", "[", "1,234,567 / 2,000,000 requests 61%"}, nil},
		{50, []string{"kv-a", "1,234,567 / 2,000,000 requests 61%"}, nil},
		{40, []string{"1,234,567 / 2,000,000 requests 61%"}, []string{"kv-"}},
		{20, []string{"61%"}, []string{"["}},
		{3, []string{"6…"}, nil},
	}
	for _, c := range cases {
		got := p.render(c.width)
		if n := utf8.RuneCountInString(got); n >= c.width {
			t.Errorf("width %d: %d columns: %q", c.width, n, got)
		}
		at := 0
		for _, w := range c.want {
			i := strings.Index(got[at:], w)
			if i < 0 {
				t.Errorf("width %d: %q lacks %q", c.width, got, w)
				break
			}
			at += i + len(w)
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("width %d: %q has %q", c.width, got, w)
			}
		}
	}
	// 1,234,567 of 2,000,000 is 61.7%: floor(61.7% of 8 columns) = 4 filled.
	if got := bar(10, 1_234_567, 2_000_000); got != "[====>   ]" {
		t.Errorf("bar: %q", got)
	}
	unknown := &progressLine{done: 42_000, unit: "requests", name: "6 policies", phase: "reading the trace"}
	if got := unknown.render(80); got != "6 policies · reading the trace 42,000 requests" {
		t.Errorf("unknown total: %q", got)
	}
}

func TestProgressThrottleAndFinish(t *testing.T) {
	var out bytes.Buffer
	clock := time.Unix(0, 0)
	p := &progressLine{w: &out, width: func() int { return 60 }, now: func() time.Time { return clock }, total: 100}
	p.Phase("round-robin", "replaying") // a phase change draws at once
	draws := strings.Count(out.String(), "\r")
	for i := range 50 {
		clock = clock.Add(10 * time.Millisecond)
		p.Set(int64(i))
	}
	// 500 ms of updates at most every 100 ms: 5 draws.
	if n := strings.Count(out.String(), "\r") - draws; n != 5 {
		t.Errorf("%d draws in 500 ms, want 5", n)
	}
	p.Finish()
	if !strings.HasSuffix(out.String(), "\r\x1b[K") {
		t.Errorf("Finish did not clear the line: %q", out.String()[max(0, out.Len()-20):])
	}
	var nilLine *progressLine // off: every method is a no-op
	nilLine.Phase("x", "y")
	nilLine.Set(1)
	nilLine.Finish()
	if newProgress(&out, &out, 10, "") != nil {
		t.Error("a progress line on a buffer, not a terminal")
	}
}
