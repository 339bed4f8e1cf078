// Package safetext makes untrusted text (names, paths and values from plan
// files, catalogs, rule packs and traces) safe to echo: control characters
// become visible escapes instead of reaching a terminal or a CI log, and long
// values are cut with an ellipsis and their length.
//
// It has no dependencies outside the standard library.
package safetext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxQuoted is how many bytes of a value Quote shows before cutting it.
const MaxQuoted = 80

// Quote returns s double-quoted with Go escapes (as %q does), cut after
// MaxQuoted bytes: "aaaa…" (10485760 bytes). Use it to echo a user's value
// in an error message.
func Quote(s string) string {
	if len(s) <= MaxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(cut(s, MaxQuoted)+"…") + " (" + strconv.Itoa(len(s)) + " bytes)"
}

// Clip cuts s to at most max bytes (at a character boundary) and appends
// "… (N bytes)" naming the original length; shorter strings are unchanged.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return cut(s, max) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// ClipWords cuts every run of more than max bytes without a space in s,
// as Clip does: a parser's message that quotes a 100,000-digit number
// keeps its words and loses the digits ("1111…  (100000 bytes) is out of
// range for int64").
func ClipWords(s string, max int) string {
	if len(s) <= max {
		return s
	}
	var b strings.Builder
	for i, w := range strings.Split(s, " ") {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Clip(w, max))
	}
	return b.String()
}

// cut returns the longest prefix of s of at most n bytes that does not end
// inside a UTF-8 sequence.
func cut(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Terminal returns s with every character that could drive a terminal
// written as a visible escape: C0 controls other than newline and tab, DEL,
// C1 controls (U+0080–U+009F, which include the 8-bit CSI), bidirectional
// overrides and isolates (U+202A–U+202E, U+2066–U+2069), and bytes that are
// not UTF-8. ESC [31m prints as \x1b[31m. Newlines and tabs stay.
func Terminal(s string) string { return escape(s, false) }

// Line is Terminal for one-line contexts (an error line, a CI log line): it
// also escapes newline, carriage return and tab, so the value cannot start a
// line of its own.
func Line(s string) string { return escape(s, true) }

// escape does the work of Terminal and Line; it allocates only when s needs
// escaping.
func escape(s string, oneLine bool) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if needsEscape(r, size, oneLine) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !needsEscape(r, size, oneLine) {
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x100:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		default:
			b.WriteString(`\u`)
			b.WriteString(hex2(byte(r >> 8)))
			b.WriteString(hex2(byte(r)))
		}
		i += size
	}
	return b.String()
}

func needsEscape(r rune, size int, oneLine bool) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r == '\n' || r == '\t':
		return oneLine
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// HasControl reports whether s holds a character Terminal would escape.
func HasControl(s string) bool { return escape(s, false) != s }
