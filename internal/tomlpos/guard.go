package tomlpos

import "fmt"

// Limits of Guard. Real kvplan files stay far below them: the deepest key
// of a plan is three parts (pools.prefill.memory_limit) and its deepest
// value two levels (an array of strings in a table).
const (
	MaxKeyParts = 32  // dotted parts of one key or table header
	MaxKeyBytes = 256 // bytes of one part of a key
	MaxDepth    = 32  // nesting of arrays and inline tables, headers included
)

// Guard scans a TOML document before it is decoded and refuses shapes that
// make BurntSushi/toml slow or hungry out of proportion to the file's size:
// keys of many dotted parts (its cost grows with the square of the parts,
// upstream issue #496: a 16 KB key of 8,000 parts takes 3 s and 2.5 GB),
// deep nesting (2,000 nested inline tables take 470 MB) and huge keys. It
// knows comments, basic and literal strings, multi-line ones and escapes;
// it does not validate the document (the decoder does). Errors are *Error
// with the line.
func Guard(file string, data []byte) error {
	line := 1
	depth := 0
	parts := 0         // parts of the dotted run being read
	afterAtom := false // the last token was a key part (bare or quoted)
	afterDot := false  // ... followed by a dot
	at := func(msg string, a ...any) error { return &Error{File: file, Line: line, Msg: fmt.Sprintf(msg, a...)} }
	atom := func() error {
		if afterDot {
			parts++
		} else {
			parts = 1
		}
		afterAtom, afterDot = true, false
		if parts > MaxKeyParts {
			return at("a key with more than %d dotted parts is refused before decoding (decoding time grows with the square of the parts)", MaxKeyParts)
		}
		return nil
	}
	reset := func() { parts, afterAtom, afterDot = 0, false, false }
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '\n':
			line++
			reset()
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			start, startLine := i, line
			end, nl := skipString(data, i)
			line += nl
			if end < 0 {
				return nil // unterminated: the decoder reports it with its line
			}
			i = end
			if key := next(data, i); key == '.' || key == '=' || key == ']' {
				if i-start-2 > MaxKeyBytes {
					line = startLine
					return at("a key of %d bytes is refused: keys may have at most %d bytes", i-start-2, MaxKeyBytes)
				}
			}
			if err := atom(); err != nil {
				return err
			}
		case isBare(c):
			start := i
			for i < len(data) && isBare(data[i]) {
				i++
			}
			if key := next(data, i); (key == '.' || key == '=' || key == ']') && i-start > MaxKeyBytes {
				return at("a key of %d bytes is refused: keys may have at most %d bytes", i-start, MaxKeyBytes)
			}
			if err := atom(); err != nil {
				return err
			}
		case c == '.':
			if afterAtom {
				afterAtom, afterDot = false, true
			} else {
				reset()
			}
			i++
		case c == '[' || c == '{':
			depth++
			if depth > MaxDepth {
				return at("arrays and inline tables nested more than %d deep are refused before decoding", MaxDepth)
			}
			reset()
			i++
		case c == ']' || c == '}':
			if depth > 0 {
				depth--
			}
			reset()
			i++
		default:
			reset()
			i++
		}
	}
	return nil
}

// next returns the first byte at or after i that is not a space or tab, or 0.
func next(data []byte, i int) byte {
	for ; i < len(data); i++ {
		if data[i] != ' ' && data[i] != '\t' {
			return data[i]
		}
	}
	return 0
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// skipString returns the index just past the string starting at data[i] (a
// quote), and the newlines it spans; -1 when it does not end.
func skipString(data []byte, i int) (int, int) {
	q := data[i]
	multi := i+2 < len(data) && data[i+1] == q && data[i+2] == q
	nl := 0
	if multi {
		j := i + 3
		for j < len(data) {
			switch {
			case data[j] == '\\' && q == '"' && j+1 < len(data):
				if data[j+1] == '\n' {
					nl++
				}
				j += 2
			case data[j] == q && j+2 < len(data) && data[j+1] == q && data[j+2] == q:
				// Up to two more quotes may close it: """a""""" ends after five.
				j += 3
				for k := 0; k < 2 && j < len(data) && data[j] == q; k++ {
					j++
				}
				return j, nl
			default:
				if data[j] == '\n' {
					nl++
				}
				j++
			}
		}
		return -1, nl
	}
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			if q == '"' {
				j++
			}
		case q:
			return j + 1, 0
		case '\n':
			return -1, 0
		}
	}
	return -1, 0
}
