package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/kvplan/kvplan/internal/safefile"
)

// MooncakeBlockTokens is the block size of Mooncake trace hash ids.
const MooncakeBlockTokens = 512

// MaxHashIDsPerLine caps the hash ids of one trace line: 65,536 ids are a
// prompt of 33,554,432 tokens (at 512 a block), three times the longest
// context any open model offers (10M tokens) and 128 times the catalog's
// longest (262,144). It bounds what one request costs the simulator (at
// 16-token blocks, 2,097,152 block ids, 16 MiB) whatever the line holds.
const MaxHashIDsPerLine = 1 << 16

// MaxTraceLineBytes caps the length of one trace line (1 MiB,
// safefile.DefaultMaxLine): a line is one request, and the longest line of
// the Mooncake conversation trace is about 2 KB.
const MaxTraceLineBytes = safefile.DefaultMaxLine

// traceKind names trace files in safefile's errors. A trace has no size
// cap: it is streamed, one capped line at a time.
var traceKind = safefile.Kind{Name: "trace"}

// MooncakeReader reads a Mooncake JSONL trace (FAST'25 release), one object
// a line:
//
//	{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, ...]}
//
// timestamp is the arrival in milliseconds; each hash id names a 512-token
// prompt block and stands for it and every block before it; there must be
// ceil(input_length/512) of them. All four fields are required, must be
// non-negative, and timestamps must not decrease. Other fields are ignored.
// Blank lines are skipped.
//
// Block mapping. With block size bs dividing 512, hash id h at position j
// expands into 512/bs sub-blocks whose chained ids are
// id = mix(previous id, key(h, sub-index)), starting from a fixed root, so
// equal hash-id prefixes give equal sub-block ids. The last hash id covers
// only the remaining input_length − 512·(n−1) tokens: its sub-blocks that are
// full get ids; a trailing partial one gets none (see Request.Blocks). At
// bs = 512 each hash id is one block and the last one is partial unless
// input_length is a multiple of 512.
//
// A malformed line is an error "name:line: field: problem", or, with skipBad,
// is skipped and counted (Skipped). Two limits hold whatever skipBad says:
// a line longer than MaxTraceLineBytes stops the read (the rest of such a
// line cannot be told from the next one), and a line with more than
// MaxHashIDsPerLine hash ids is malformed. A trace that yields no request
// at all (an empty file, blank lines only, or every line skipped) is an
// error naming the file: a simulation of nothing is not a result.
type MooncakeReader struct {
	lr      *safefile.LineReader
	name    string
	bs      int
	sub     int // sub-blocks per hash id
	skipBad bool
	closer  io.Closer

	requests int // requests returned so far
	blank    int // blank lines so far
	skipped  int
	lastTS   float64
	rec      mooncakeRecord
	err      error // construction error, reported by Next
}

type mooncakeRecord struct {
	ts                float64
	in, out           int64
	ids               []uint64
	hasTS, hasIn      bool
	hasOut, hasHashes bool
	tooManyIDs        bool // the fast path stopped past MaxHashIDsPerLine
}

// NewMooncakeReader reads a trace from r; name labels errors (a file name).
// blockSize 0 means 512; otherwise it must divide 512.
func NewMooncakeReader(r io.Reader, name string, blockSize int, skipBad bool) *MooncakeReader {
	m := &MooncakeReader{lr: safefile.NewLineReader(r, MaxTraceLineBytes), name: name, bs: blockSize, skipBad: skipBad}
	if m.bs == 0 {
		m.bs = MooncakeBlockTokens
	}
	if m.bs < 1 || MooncakeBlockTokens%m.bs != 0 {
		m.err = fmt.Errorf("block size: %d tokens does not divide the trace's 512-token blocks; use 512 or a divisor such as 256, 128, 64, 32 or 16", blockSize)
		m.bs = MooncakeBlockTokens
	}
	m.sub = MooncakeBlockTokens / m.bs
	return m
}

// OpenMooncake opens a trace file; Close closes it. The path must name a
// regular file (safefile.Open): a FIFO, a device such as /dev/zero, a socket
// or a directory is refused at once, before a byte is read, instead of
// hanging or growing without bound.
func OpenMooncake(path string, blockSize int, skipBad bool) (*MooncakeReader, error) {
	f, err := safefile.Open(path, traceKind)
	if err != nil {
		return nil, err
	}
	m := NewMooncakeReader(f, path, blockSize, skipBad)
	m.closer = f
	return m, nil
}

// Close closes the file opened by OpenMooncake; it is a no-op otherwise.
func (m *MooncakeReader) Close() error {
	if m.closer == nil {
		return nil
	}
	c := m.closer
	m.closer = nil
	return c.Close()
}

// BlockSize is the simulator block size the reader maps the trace onto.
func (m *MooncakeReader) BlockSize() int { return m.bs }

// Timed reports true: trace requests carry arrival times.
func (m *MooncakeReader) Timed() bool { return true }

// Skipped is the number of malformed lines skipped so far.
func (m *MooncakeReader) Skipped() int { return m.skipped }

// Next reads the next request.
func (m *MooncakeReader) Next(r *Request) (bool, error) {
	if m.err != nil {
		return false, m.err
	}
	for {
		b, err := m.lr.Next()
		if err == io.EOF {
			if m.requests == 0 {
				m.err = m.noRequests()
				return false, m.err
			}
			return false, nil
		}
		if errors.Is(err, safefile.ErrLineTooLong) {
			// "trace.jsonl:7: line too long: longer than the 1 MiB line cap"
			m.err = fmt.Errorf("%s:%d: %w", m.name, m.lr.Line(), err)
			return false, m.err
		}
		if err != nil {
			m.err = fmt.Errorf("%s: %w", m.name, err)
			return false, m.err
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			m.blank++
			continue
		}
		if perr := m.parse(b, r); perr != nil {
			if m.skipBad {
				m.skipped++
				continue
			}
			return false, fmt.Errorf("%s:%d: %w", m.name, m.lr.Line(), perr)
		}
		m.requests++
		return true, nil
	}
}

// noRequests is the error of a trace that ended without a request.
func (m *MooncakeReader) noRequests() error {
	var why string
	switch {
	case m.skipped > 0:
		why = fmt.Sprintf("all %d non-blank lines are malformed and were skipped", m.skipped)
	case m.blank > 0:
		why = fmt.Sprintf("its %d lines are blank", m.blank)
	default:
		why = "the file is empty"
	}
	return fmt.Errorf("%s: no requests: %s; a trace holds one JSON object a line with timestamp, input_length, output_length and hash_ids", m.name, why)
}

func (m *MooncakeReader) parse(b []byte, r *Request) error {
	rec := &m.rec
	if !parseMooncakeFast(b, rec) {
		if rec.tooManyIDs {
			return tooManyIDs()
		}
		if err := parseMooncakeSlow(b, rec); err != nil {
			return err
		}
	}
	switch {
	case len(rec.ids) > MaxHashIDsPerLine:
		return tooManyIDs()
	case !rec.hasTS:
		return errors.New("timestamp: missing")
	case !rec.hasIn:
		return errors.New("input_length: missing")
	case !rec.hasOut:
		return errors.New("output_length: missing")
	case !rec.hasHashes:
		return errors.New("hash_ids: missing")
	case rec.ts < 0:
		return fmt.Errorf("timestamp: %g, want a non-negative number of milliseconds", rec.ts)
	case rec.in < 0:
		return fmt.Errorf("input_length: %d, want a non-negative token count", rec.in)
	case rec.out < 0:
		return fmt.Errorf("output_length: %d, want a non-negative token count", rec.out)
	case rec.in > 1<<31-1 || rec.out > 1<<31-1:
		return errors.New("input_length or output_length: more than 2^31 tokens")
	}
	want := (rec.in + MooncakeBlockTokens - 1) / MooncakeBlockTokens
	if int64(len(rec.ids)) != want {
		return fmt.Errorf("hash_ids: %d ids for input_length %d, want ceil(%d/512) = %d", len(rec.ids), rec.in, rec.in, want)
	}
	if rec.ts < m.lastTS {
		return fmt.Errorf("timestamp: %g is before the previous request's %g; the trace must be sorted by time", rec.ts, m.lastTS)
	}
	m.lastTS = rec.ts

	r.ArrivalMS = rec.ts
	r.InputTokens = int(rec.in)
	r.OutputTokens = int(rec.out)
	r.Blocks = MooncakeBlocks(r.Blocks[:0], rec.ids, int(rec.in), m.bs)
	return nil
}

// HashIDs is the last request's hash ids as the trace wrote them (one per
// 512-token block); it is valid until the next call to Next.
func (m *MooncakeReader) HashIDs() []uint64 { return m.rec.ids }

// MooncakeBlocks appends to dst the chained block ids of a prompt of
// inputTokens tokens whose 512-token blocks have the Mooncake hash ids
// hashIDs, at blockSize tokens a block (a divisor of 512), as
// MooncakeReader maps them (see its doc).
func MooncakeBlocks(dst, hashIDs []uint64, inputTokens, blockSize int) []uint64 {
	sub := MooncakeBlockTokens / blockSize
	id := chainRoot
	n := len(hashIDs)
	for j, h := range hashIDs {
		subs := sub
		if j == n-1 {
			subs = (inputTokens - j*MooncakeBlockTokens) / blockSize
		}
		if sub == 1 {
			if subs == 1 {
				id = mix(id, h)
				dst = append(dst, id)
			}
			continue
		}
		for s := range subs {
			id = mix(id, mix(h, uint64(s)))
			dst = append(dst, id)
		}
	}
	return dst
}

// parseMooncakeFast parses the common shape of a line: one object with
// integer fields and the four known keys, no escapes. It reports false on
// anything else, and the slow path then decides and explains.
func parseMooncakeFast(b []byte, rec *mooncakeRecord) bool {
	*rec = mooncakeRecord{ids: rec.ids[:0]}
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipWS(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		k := i + 1
		e := k
		for e < len(b) && b[e] != '"' && b[e] != '\\' {
			e++
		}
		if e >= len(b) || b[e] != '"' {
			return false
		}
		key := b[k:e]
		i = skipWS(b, e+1)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		var ok bool
		switch string(key) {
		case "timestamp":
			var v int64
			v, i, ok = parseUint(b, i)
			rec.ts, rec.hasTS = float64(v), true
		case "input_length":
			rec.in, i, ok = parseUint(b, i)
			rec.hasIn = true
		case "output_length":
			rec.out, i, ok = parseUint(b, i)
			rec.hasOut = true
		case "hash_ids":
			i, ok = parseIDs(b, i, rec)
			rec.hasHashes = true
		}
		if !ok {
			return false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return skipWS(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		i = skipWS(b, i+1)
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// parseUint parses a plain non-negative integer of at most 18 digits
// followed by a delimiter.
func parseUint(b []byte, i int) (int64, int, bool) {
	start := i
	var v int64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		v = v*10 + int64(b[i]-'0')
		i++
	}
	n := i - start
	if n == 0 || n > 18 || (n > 1 && b[start] == '0') {
		return 0, i, false
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, i, false
	}
	return v, i, true
}

// tooManyIDs is the error of a line past MaxHashIDsPerLine.
func tooManyIDs() error {
	return fmt.Errorf("hash_ids: more than %d ids on one line; the cap is %d ids a request (a prompt of %d tokens)",
		MaxHashIDsPerLine, MaxHashIDsPerLine, MaxHashIDsPerLine*MooncakeBlockTokens)
}

func parseIDs(b []byte, i int, rec *mooncakeRecord) (int, bool) {
	if i >= len(b) || b[i] != '[' {
		return i, false
	}
	rec.ids = rec.ids[:0]
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		v, j, ok := parseUint(b, i)
		if !ok {
			return j, false
		}
		if len(rec.ids) == MaxHashIDsPerLine {
			rec.tooManyIDs = true
			return j, false
		}
		rec.ids = append(rec.ids, uint64(v))
		i = skipWS(b, j)
		if i >= len(b) {
			return i, false
		}
		if b[i] == ']' {
			return i + 1, true
		}
		if b[i] != ',' {
			return i, false
		}
		i = skipWS(b, i+1)
	}
}

// parseMooncakeSlow decodes a line with encoding/json, for shapes the fast
// path does not take (fractional timestamps, unknown keys, escapes) and to
// explain errors.
func parseMooncakeSlow(b []byte, rec *mooncakeRecord) error {
	var v struct {
		Timestamp    *float64 `json:"timestamp"`
		InputLength  *int64   `json:"input_length"`
		OutputLength *int64   `json:"output_length"`
		HashIDs      *[]int64 `json:"hash_ids"`
	}
	*rec = mooncakeRecord{ids: rec.ids[:0]}
	if err := json.Unmarshal(b, &v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%s: got a JSON %s, want %s", te.Field, te.Value, mooncakeWant(te.Field))
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, err)
		}
		return fmt.Errorf("invalid JSON: %v", err)
	}
	if v.Timestamp != nil {
		rec.ts, rec.hasTS = *v.Timestamp, true
	}
	if v.InputLength != nil {
		rec.in, rec.hasIn = *v.InputLength, true
	}
	if v.OutputLength != nil {
		rec.out, rec.hasOut = *v.OutputLength, true
	}
	if v.HashIDs != nil {
		rec.hasHashes = true
		for k, h := range *v.HashIDs {
			if h < 0 {
				return fmt.Errorf("hash_ids[%d]: %d, want a non-negative integer", k, h)
			}
			rec.ids = append(rec.ids, uint64(h))
		}
	}
	return nil
}

func mooncakeWant(field string) string {
	switch field {
	case "timestamp":
		return "a number of milliseconds"
	case "hash_ids":
		return "an array of non-negative integers"
	default:
		return "a non-negative integer"
	}
}
