package hfimport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The JSON text a config.json may contain beyond strict JSON, and what
// strict JSON parsers accept silently but a planner must not.
//
//   - Python's json module writes float('inf') and float('nan') as the bare
//     literals Infinity, -Infinity and NaN (Nemotron-H's time_step_limit).
//     They are read as a marker string, so that a key kvplan needs which
//     holds one is an error naming it, while any other key is ignored.
//   - A key given twice in one object: encoding/json keeps the last one, a
//     Python reader too; which one the author meant is unknowable, so it is
//     an error.
//   - Invalid UTF-8: encoding/json replaces the bytes with U+FFFD; it is an
//     error instead.

// nonFiniteMark starts the string that stands for a non-finite literal.
const nonFiniteMark = "\x00nonfinite:"

// nonFiniteLiterals are the literals Python writes for non-finite floats.
var nonFiniteLiterals = []string{"-Infinity", "Infinity", "NaN"}

// textEdit is one literal replaced in the sanitized text.
type textEdit struct {
	at      int64 // offset of the replacement in the sanitized text
	newLen  int64
	origLen int64
}

// jsonText is a config's bytes and the strict-JSON text parsed in their
// place, with the map from offsets in the one back to the other.
type jsonText struct {
	orig  []byte
	san   []byte
	edits []textEdit
}

// origOffset maps an offset in the sanitized text back to the original.
func (t *jsonText) origOffset(off int64) int64 {
	shift := int64(0)
	for _, e := range t.edits {
		switch {
		case off >= e.at+e.newLen:
			shift += e.newLen - e.origLen
		case off > e.at:
			return e.at - shift // inside a replacement: its start
		}
	}
	return off - shift
}

// checkUTF8 reports the first invalid UTF-8 sequence of data.
func checkUTF8(data []byte, file string) error {
	if utf8.Valid(data) {
		return nil
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			line, col := lineCol(data, int64(i)+1)
			return &ImportError{File: file, Line: line, Col: col,
				Msg: fmt.Sprintf("invalid UTF-8 (byte 0x%02x); a config.json must be UTF-8 text", data[i])}
		}
		i += n
	}
	return nil
}

// sanitize replaces the non-finite literals outside strings by marker
// strings and returns the strict-JSON text.
func sanitize(data []byte) *jsonText {
	t := &jsonText{orig: data}
	if !bytes.Contains(data, []byte("Infinity")) && !bytes.Contains(data, []byte("NaN")) {
		t.san = data
		return t
	}
	out := make([]byte, 0, len(data)+32)
	inStr, esc := false, false
	for i := 0; i < len(data); i++ {
		b := data[i]
		if inStr {
			out = append(out, b)
			switch {
			case esc:
				esc = false
			case b == '\\':
				esc = true
			case b == '"':
				inStr = false
			}
			continue
		}
		if b == '"' {
			inStr = true
			out = append(out, b)
			continue
		}
		replaced := false
		for _, lit := range nonFiniteLiterals {
			if bytes.HasPrefix(data[i:], []byte(lit)) && literalBoundary(data, i, len(lit)) {
				rep := fmt.Sprintf(`"\u0000nonfinite:%s"`, lit)
				t.edits = append(t.edits, textEdit{at: int64(len(out)), newLen: int64(len(rep)), origLen: int64(len(lit))})
				out = append(out, rep...)
				i += len(lit) - 1
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, b)
		}
	}
	t.san = out
	return t
}

// literalBoundary reports whether data[i:i+n] stands alone as a value: the
// previous non-space byte opens a value and the next byte ends it.
func literalBoundary(data []byte, i, n int) bool {
	j := i - 1
	for j >= 0 && isSpace(data[j]) {
		j--
	}
	if j >= 0 && !strings.ContainsRune(":,[", rune(data[j])) {
		return false
	}
	if k := i + n; k < len(data) && !isSpace(data[k]) && !strings.ContainsRune(",]}", rune(data[k])) {
		return false
	}
	return true
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// nonFinite returns the literal a marker string stands for.
func nonFinite(v any) (string, bool) {
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(s, nonFiniteMark) {
		return "", false
	}
	return strings.TrimPrefix(s, nonFiniteMark), true
}

// keyOffsets records where each key of the top-level object, and of each
// object directly under it, starts ("key" and "parent.key", offsets in the
// original text), and fails on a key that appears twice in one object, at
// any depth.
func (t *jsonText) keyOffsets(file string) (map[string]int64, error) {
	offs := map[string]int64{}
	d := json.NewDecoder(bytes.NewReader(t.san))
	type frame struct {
		obj    bool
		expect bool   // next token of an object is a key
		key    string // last key read in this object
		seen   map[string]int64
	}
	var stack []frame
	path := func(key string) string {
		var parts []string
		for _, f := range stack[:len(stack)-1] {
			if f.obj {
				parts = append(parts, f.key)
			}
		}
		return strings.Join(append(parts, key), ".")
	}
	for {
		before := d.InputOffset()
		tok, err := d.Token()
		if err != nil {
			return offs, nil // syntax errors are reported by the decoder proper
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && top.obj && top.expect {
			if s, ok := tok.(string); ok {
				// before is the end of the previous token; skip to the quote.
				at := t.origOffset(before + int64(bytes.IndexByte(t.san[before:], '"')))
				if first, dup := top.seen[s]; dup {
					line, col := lineCol(t.orig, at+1)
					firstLine, _ := lineCol(t.orig, first+1)
					return nil, &ImportError{File: file, Line: line, Col: col, Field: path(s),
						Msg: fmt.Sprintf("appears twice in the same object (first on line %d); JSON readers keep only one of them, so say which you mean", firstLine)}
				}
				top.seen[s] = at
				top.key, top.expect = s, false
				if len(stack) <= 2 {
					p := s
					if len(stack) == 2 {
						p = stack[0].key + "." + s
					}
					offs[p] = at
				}
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{obj: true, expect: true, seen: map[string]int64{}})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].expect = true
		}
	}
}
