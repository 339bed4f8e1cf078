package safefile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLine is the line cap for traces: 1 MiB, room for about 140,000
// hash ids of 6 digits on one line. The longest line of the Mooncake
// conversation trace is about 2 KB.
const DefaultMaxLine = 1 << 20

// ErrLineTooLong is wrapped by LineReader's error for a line over its cap.
var ErrLineTooLong = errors.New("line too long")

// LineReader streams lines from a reader with a cap on their length, so a
// file without newlines (or with one huge line) cannot make it buffer
// gigabytes. It allocates its buffers once.
//
//	lr := safefile.NewLineReader(f, safefile.DefaultMaxLine)
//	for {
//		line, err := lr.Next()
//		if err == io.EOF { break }
//		if err != nil { return fmt.Errorf("%s:%d: %w", name, lr.Line(), err) } // "trace.jsonl:7: line too long: longer than the 1 MiB line cap"
//		... line is valid until the next call ...
//	}
//
// A trace reader should also cap what one line may hold (hash ids per
// request) after decoding it, or before, with bytes.Count(line, ",").
type LineReader struct {
	br   *bufio.Reader
	max  int
	line int
	long []byte // a line longer than br's buffer, assembled (at most max+1 bytes plus one chunk)
}

// readChunk is the read buffer's size: a line that fits it is returned from
// the buffer without a copy; a longer one is assembled in a second buffer,
// allocated once, up to the cap. (A buffer of the whole cap, 1 MiB, made the
// trace reader 10% slower: the bytes no longer stayed in cache between the
// read and the parse.)
const readChunk = 64 << 10

// NewLineReader reads r; lines longer than maxLine bytes (without the line
// end) are an error. maxLine <= 0 means DefaultMaxLine.
func NewLineReader(r io.Reader, maxLine int) *LineReader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &LineReader{br: bufio.NewReaderSize(r, min(maxLine+2, readChunk)), max: maxLine}
}

// Next returns the next line without its "\n" or "\r\n", and io.EOF after
// the last. The returned slice is only valid until the next call. A last
// line without a newline is returned like the others.
func (l *LineReader) Next() ([]byte, error) {
	b, err := l.br.ReadSlice('\n')
	if err == nil {
		// The common case, a line within the buffer and the cap, without
		// the calls below: a trace reads millions of them.
		l.line++
		b = b[:len(b)-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
		if len(b) > l.max {
			return nil, l.tooLong()
		}
		return b, nil
	}
	if errors.Is(err, bufio.ErrBufferFull) {
		if l.long == nil {
			l.long = make([]byte, 0, l.max+2+readChunk)
		}
		l.long = append(l.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			// Without its "\n" yet, the line is at least len − 1 bytes long
			// (a last "\r" is not part of it).
			if len(l.long) > l.max+1 {
				l.line++
				return nil, l.tooLong()
			}
			b, err = l.br.ReadSlice('\n')
			l.long = append(l.long, b...)
		}
		b = l.long
	}
	switch {
	case err == nil:
	case err == io.EOF:
		if len(b) == 0 {
			return nil, io.EOF
		}
	default:
		return nil, err
	}
	l.line++
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) > l.max {
		return nil, l.tooLong()
	}
	return b, nil
}

// tooLong is the error of a line over the cap, without its place: the
// caller names the file and line (Line), as "trace.jsonl:7: line too long:
// ...", the form of every other error about a line.
func (l *LineReader) tooLong() error {
	return fmt.Errorf("%w: longer than the %s line cap", ErrLineTooLong, formatCap(int64(l.max)))
}

// Line is the 1-based number of the line Next returned last (0 before the
// first call).
func (l *LineReader) Line() int { return l.line }
