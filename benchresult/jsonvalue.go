package benchresult

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/internal/tomlpos"
)

// jsonValue is one top-level JSON value of a file and the line it starts on.
type jsonValue struct {
	v    any
	line int
}

// decodeJSON reads every top-level value of data (one for a JSON file,
// one a line for JSON lines). Python's json module writes the bare tokens
// NaN, Infinity and -Infinity, which strict JSON forbids (SGLang's
// "request_rate": Infinity); they are read as the strings "NaN",
// "Infinity" and "-Infinity", which the field readers take as "not
// measured" (or, for a request rate, as "all at once").
func decodeJSON(file string, data []byte) ([]jsonValue, error) {
	data = quoteBareNonFinite(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []jsonValue
	for {
		start := skipSpace(data, int(dec.InputOffset()))
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, jsonError(file, data, start, err)
		}
		v, err := decodeSkipping(raw)
		if err != nil {
			return nil, jsonError(file, data, start, err)
		}
		out = append(out, jsonValue{v: v, line: lineAt(data, start)})
	}
	if len(out) == 0 {
		return nil, &tomlpos.Error{File: file, Msg: "empty file: no JSON value in it"}
	}
	return out, nil
}

// skipKeys are the bulky top-level arrays no reader takes: generated
// texts, and per-request timings (the files' own aggregates are the
// measured figures). Leaving them undecoded makes a 1.7 MB vLLM file with
// per-request arrays four times faster to read.
var skipKeys = map[string]bool{"generated_texts": true, "itls": true, "ttfts": true, "start_times": true, "errors_detail": true}

// decodeSkipping decodes a JSON value; an object's skipKeys are left out.
func decodeSkipping(raw json.RawMessage) (any, error) {
	if len(raw) == 0 || raw[0] != '{' {
		var v any
		err := json.Unmarshal(raw, &v)
		return v, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(top))
	for k, r := range top {
		if skipKeys[k] {
			out[k] = nil
			continue
		}
		var v any
		if err := json.Unmarshal(r, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// jsonError turns a decoder error into one that names the line.
func jsonError(file string, data []byte, start int, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		off := int(se.Offset)
		if off > 0 {
			off-- // the offset is after the offending byte
		}
		return &tomlpos.Error{File: file, Line: lineAt(data, off), Col: colAt(data, off), Msg: "malformed JSON: " + se.Error()}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &tomlpos.Error{File: file, Line: lineAt(data, len(data)),
			Msg: fmt.Sprintf("truncated: the JSON value that starts on line %d does not end (the file was cut short?)", lineAt(data, start))}
	}
	return &tomlpos.Error{File: file, Line: lineAt(data, start), Msg: "malformed JSON: " + err.Error()}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// lineAt is the 1-based line of byte offset off.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

func colAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return off - bytes.LastIndexByte(data[:off], '\n')
}

// quoteBareNonFinite rewrites the bare tokens NaN, Infinity and -Infinity
// outside strings as strings. Newlines are kept, so lines stay where they
// were. Data without them is returned as it is.
func quoteBareNonFinite(data []byte) []byte {
	if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
		return data
	}
	var out []byte
	last := 0
	for i := 0; i < len(data); {
		j := bytes.IndexAny(data[i:], `"NI`)
		if j < 0 {
			break
		}
		i += j
		if data[i] == '"' { // skip the string
			for i++; i < len(data); {
				k := bytes.IndexAny(data[i:], `"\`)
				if k < 0 {
					i = len(data)
					break
				}
				i += k
				if data[i] == '\\' {
					i += 2
					continue
				}
				i++
				break
			}
			continue
		}
		tok := "NaN"
		if data[i] == 'I' {
			tok = "Infinity"
		}
		if !bytes.HasPrefix(data[i:], []byte(tok)) {
			i++
			continue
		}
		from := i
		if i > 0 && data[i-1] == '-' {
			from--
		}
		out = append(out, data[last:from]...)
		out = append(out, '"')
		out = append(out, data[from:i+len(tok)]...)
		out = append(out, '"')
		i += len(tok)
		last = i
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}

// fields reads typed fields out of decoded JSON (or YAML) objects, and
// keeps the first problem, naming the file, the run's line and the field.
type fields struct {
	file string
	line int
	err  error
}

func (f *fields) fail(field, format string, a ...any) {
	if f.err == nil {
		f.err = &tomlpos.Error{File: f.file, Line: f.line, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// obj returns m[key] as an object, or nil when absent or null; another
// type is an error.
func (f *fields) obj(m map[string]any, path, key string) map[string]any {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	o, ok := v.(map[string]any)
	if !ok {
		f.fail(join(path, key), "want an object, got %s", describe(v))
		return nil
	}
	return o
}

// arr returns m[key] as an array, or nil when absent or null.
func (f *fields) arr(m map[string]any, path, key string) []any {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	a, ok := v.([]any)
	if !ok {
		f.fail(join(path, key), "want an array, got %s", describe(v))
		return nil
	}
	return a
}

// str returns m[key] as a string ("" when absent or null); a number is
// written out as the file wrote it.
func (f *fields) str(m map[string]any, path, key string) string {
	switch v := m[key].(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case int:
		return strconv.Itoa(v)
	case bool:
		return strconv.FormatBool(v)
	default:
		f.fail(join(path, key), "want a string, got %s", describe(v))
		return ""
	}
}

// num returns m[key] as a finite number, or nil when absent, null, NaN or
// infinite ("not measured"). A string holding a number is read as that
// number (vLLM's --metadata values are strings); any other value is an
// error.
func (f *fields) num(m map[string]any, path, key string) *float64 {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	x, finite, ok := number(v)
	if !ok {
		f.fail(join(path, key), "want a number, got %s", describe(v))
		return nil
	}
	if !finite {
		return nil
	}
	return &x
}

// numOr is num's value, or def when not measured.
func (f *fields) numOr(m map[string]any, path, key string, def float64) float64 {
	if p := f.num(m, path, key); p != nil {
		return *p
	}
	return def
}

// count returns m[key] as a whole number ≥ 0, or def when absent or null.
func (f *fields) count(m map[string]any, path, key string, def int) int {
	p := f.num(m, path, key)
	if p == nil {
		return def
	}
	if *p < 0 || *p != math.Trunc(*p) || *p > 1e12 {
		f.fail(join(path, key), "want a whole number ≥ 0, got %s", strconv.FormatFloat(*p, 'g', -1, 64))
		return def
	}
	return int(*p)
}

// rate returns a request rate: a finite rate, +Inf for "inf" or Infinity
// (every request at once), or 0 when absent or null.
func (f *fields) rate(m map[string]any, path, key string) float64 {
	v, ok := m[key]
	if !ok || v == nil {
		return 0
	}
	x, finite, ok := number(v)
	switch {
	case !ok:
		f.fail(join(path, key), "want a request rate (a number or \"inf\"), got %s", describe(v))
		return 0
	case !finite && x > 0:
		return math.Inf(1)
	case !finite || x < 0:
		f.fail(join(path, key), "want a request rate ≥ 0 or \"inf\", got %s", describe(v))
		return 0
	}
	return x
}

// ints reads an array of whole numbers (per-request lengths).
func (f *fields) ints(a []any, path string) []int {
	out := make([]int, len(a))
	for i, v := range a {
		x, finite, ok := number(v)
		if !ok || !finite || x < 0 || x != math.Trunc(x) || x > 1e9 {
			f.fail(fmt.Sprintf("%s[%d]", path, i), "want a token count, got %s", describe(v))
			return nil
		}
		out[i] = int(x)
	}
	return out
}

// number reads v as a number: finite reports whether it is finite. The
// strings "NaN", "Infinity", "-Infinity", "inf", "-inf" and "nan" (and
// numbers written as strings) are numbers too.
func number(v any) (x float64, finite, ok bool) {
	switch v := v.(type) {
	case float64:
		return v, !math.IsNaN(v) && !math.IsInf(v, 0), true
	case int:
		return float64(v), true, true
	case string:
		s := strings.TrimSpace(v)
		switch strings.ToLower(s) {
		case "nan":
			return math.NaN(), false, true
		case "inf", "infinity", "+inf", "+infinity":
			return math.Inf(1), false, true
		case "-inf", "-infinity":
			return math.Inf(-1), false, true
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, false, false
		}
		return x, !math.IsNaN(x) && !math.IsInf(x, 0), true
	}
	return 0, false, false
}

// describe names a value's type and, for a scalar, the value, for errors.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "the string " + safetext.Quote(safetext.Clip(v, 40))
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case []any:
		return fmt.Sprintf("an array of %d", len(v))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// keysOf lists an object's keys, sorted.
func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
