package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTerminalAndLine(t *testing.T) {
	cases := []struct{ in, term, line string }{
		{"plain", "plain", "plain"},
		{"two\nlines\tand tab", "two\nlines\tand tab", `two\nlines\tand tab`},
		{"red \x1b[31mALERT\x1b[0m", `red \x1b[31mALERT\x1b[0m`, `red \x1b[31mALERT\x1b[0m`},
		{"cr\roverwrite", `cr\roverwrite`, `cr\roverwrite`},
		{"bell\x07 del\x7f nul\x00", `bell\x07 del\x7f nul\x00`, `bell\x07 del\x7f nul\x00`},
		{"c1 csi \u009b2J", `c1 csi \x9b2J`, `c1 csi \x9b2J`},
		{"bidi \u202eevil\u2066", `bidi \u202eevil\u2066`, `bidi \u202eevil\u2066`},
		{"bad utf8 \xff\xfe", `bad utf8 \xff\xfe`, `bad utf8 \xff\xfe`},
		{"ünïcödé → ok", "ünïcödé → ok", "ünïcödé → ok"},
	}
	for _, c := range cases {
		if got := Terminal(c.in); got != c.term {
			t.Errorf("Terminal(%q) = %q, want %q", c.in, got, c.term)
		}
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
	}
}

func TestClipAndQuote(t *testing.T) {
	if got := Clip("short", 10); got != "short" {
		t.Errorf("Clip short = %q", got)
	}
	if got, want := Clip("abcdefghij", 4), "abcd… (10 bytes)"; got != want {
		t.Errorf("Clip = %q, want %q", got, want)
	}
	// "é" is two bytes: a cut at 1 must not split it.
	if got, want := Clip("éé", 1), "… (4 bytes)"; got != want {
		t.Errorf("Clip at a rune boundary = %q, want %q", got, want)
	}
	long := strings.Repeat("x", 10<<20)
	q := Quote(long)
	if want := `"` + strings.Repeat("x", MaxQuoted) + `…" (10485760 bytes)`; q != want {
		t.Errorf("Quote of 10 MiB = %.120q…, want %q", q, want)
	}
	if got := Quote("a\nb"); got != `"a\nb"` {
		t.Errorf("Quote escapes = %s", got)
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a\nb", "\x1b[2J", "\u202e", "\xff", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := Line(s)
		if !utf8.ValidString(l) {
			t.Fatalf("Line(%q) = %q is not UTF-8", s, l)
		}
		for _, r := range l {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				t.Fatalf("Line(%q) = %q keeps control %U", s, l, r)
			}
		}
		term := Terminal(s)
		for _, r := range term {
			if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f)) {
				t.Fatalf("Terminal(%q) keeps control %U", s, r)
			}
		}
		c := Clip(s, 16)
		if !utf8.ValidString(s) {
			return
		}
		if !utf8.ValidString(c) {
			t.Fatalf("Clip(%q) = %q splits a character", s, c)
		}
	})
}

func TestClipWords(t *testing.T) {
	long := strings.Repeat("1", 100_000)
	if got, want := ClipWords(long+" is out of range for int64", 80), strings.Repeat("1", 80)+"… (100000 bytes) is out of range for int64"; got != want {
		t.Errorf("got %q", got)
	}
	if got := ClipWords("short words stay", 5); got != "short words stay" {
		t.Errorf("got %q", got)
	}
}
