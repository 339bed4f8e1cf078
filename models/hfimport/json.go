package hfimport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/kvplan/kvplan/internal/safetext"
)

// ImportError is a config.json that cannot be read as a catalog entry. It
// prints as "file:line:col: field: message"; Line is 0 when the problem is
// not at one place in the file (a missing field), and Field is "" when it is
// not one field's (a JSON syntax error).
type ImportError struct {
	File  string
	Line  int
	Col   int
	Field string // dotted path in the config: "text_config.layer_types"
	Msg   string
}

func (e *ImportError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// decoderKeys names the objects that multimodal wrappers nest their decoder
// under, in the order they are tried.
var decoderKeys = []string{"text_config", "llm_config", "language_config"}

// wrapperKeys may sit at the top of a multimodal wrapper instead of inside
// its decoder config; they are read from the top when the decoder lacks them.
var wrapperKeys = map[string]bool{
	"torch_dtype": true, "dtype": true, "quantization_config": true, "tie_word_embeddings": true, "model_type": true,
}

// hfConfig is a parsed config.json: the decoder's keys (the top level, or a
// nested text_config) and the top level, with the byte offset of every key
// so that errors can name a line.
type hfConfig struct {
	file   string
	data   []byte
	top    map[string]any
	dec    map[string]any
	prefix string           // "text_config." when the decoder is nested, else ""
	offs   map[string]int64 // "key" and "text_config.key" → offset of the key in data

	defaults     map[string]any  // the model type's config-class defaults, for keys the file leaves out
	usedDefaults map[string]bool // the defaults read
}

// parseConfig reads config.json bytes. A syntax error names file:line:col;
// so do invalid UTF-8 and a key given twice in one object. Python's
// Infinity, -Infinity and NaN literals are accepted (see jsontext.go).
func parseConfig(data []byte, file string) (*hfConfig, error) {
	if err := checkUTF8(data, file); err != nil {
		return nil, err
	}
	t := sanitize(data)
	at := func(off int64) (int, int) { return lineCol(data, t.origOffset(off)) }
	d := json.NewDecoder(bytes.NewReader(t.san))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	if err == nil {
		// Anything but white space after the object is a syntax error too.
		if _, err2 := d.Token(); err2 != io.EOF {
			line, col := at(d.InputOffset())
			return nil, &ImportError{File: file, Line: line, Col: col, Msg: "JSON syntax: data after the top-level object"}
		}
	}
	if err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line, col := at(se.Offset)
			return nil, &ImportError{File: file, Line: line, Col: col, Msg: "JSON syntax: " + se.Error()}
		case errors.Is(err, io.EOF):
			return nil, &ImportError{File: file, Msg: "JSON syntax: the file is empty; expected a config.json object"}
		case errors.Is(err, io.ErrUnexpectedEOF):
			line, col := lineCol(data, int64(len(data))+1) // just past the last byte
			return nil, &ImportError{File: file, Line: line, Col: col, Msg: "JSON syntax: unexpected end of file"}
		case errors.As(err, &te):
			line, col := at(te.Offset)
			return nil, &ImportError{File: file, Line: line, Col: col, Msg: "JSON: " + te.Error()}
		}
		return nil, &ImportError{File: file, Msg: "JSON: " + err.Error()}
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, &ImportError{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf("expected a JSON object (a Hugging Face config.json), got %s", jsonType(v))}
	}
	offs, err := t.keyOffsets(file)
	if err != nil {
		return nil, err
	}
	c := &hfConfig{file: file, data: data, top: top, dec: top, offs: offs}
	for _, k := range decoderKeys {
		switch tc := top[k].(type) {
		case nil:
			continue
		case map[string]any:
			c.dec, c.prefix = tc, k+"."
		default:
			return nil, c.errAt(k, "is %s; expected the decoder's config object", jsonType(tc))
		}
		break
	}
	return c, nil
}

// lineCol turns a byte offset into a 1-based line and column. The offset of
// a json.SyntaxError is just past the offending byte.
func lineCol(data []byte, off int64) (int, int) {
	if off > 0 {
		off-- // point at the offending byte, not past it
	}
	off = min(off, int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return line, int(off) - start + 1
}

// numberText is a JSON number for a message: as written, or for one of
// more than 80 digits (a 1,000,000-digit number was echoed whole) its
// first digits and its length.
func numberText(n json.Number) string {
	return safetext.Clip(string(n), safetext.MaxQuoted)
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		if lit, ok := nonFinite(v); ok {
			return "the non-finite number " + lit
		}
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// lookup finds key in the decoder config, then (for the few keys multimodal
// wrappers keep at the top) in the top level. field is the key's dotted path.
func (c *hfConfig) lookup(key string) (v any, field string, present bool) {
	if v, ok := c.dec[key]; ok {
		return v, c.prefix + key, true
	}
	if c.prefix != "" && wrapperKeys[key] {
		if v, ok := c.top[key]; ok {
			return v, key, true
		}
	}
	if d, ok := c.defaults[key]; ok {
		if c.usedDefaults == nil {
			c.usedDefaults = map[string]bool{}
		}
		c.usedDefaults[key] = true
		return d, c.prefix + key, true
	}
	return nil, c.prefix + key, false
}

// errAt is an error about the field at dotted path field, with its line
// when the key is in the file.
func (c *hfConfig) errAt(field, format string, a ...any) error {
	e := &ImportError{File: c.file, Field: field, Msg: fmt.Sprintf(format, a...)}
	if off, ok := c.offs[field]; ok {
		e.Line, e.Col = lineCol(c.data, off+1)
	}
	return e
}

// errf is an error about a decoder key.
func (c *hfConfig) errf(key, format string, a ...any) error {
	_, field, _ := c.lookup(key)
	return c.errAt(field, format, a...)
}

// has reports whether key is present with a non-null value.
func (c *hfConfig) has(key string) bool {
	v, _, ok := c.lookup(key)
	return ok && v != nil
}

// int reads an integer key. ok is false when it is absent or null.
func (c *hfConfig) int(key string) (n int, ok bool, err error) {
	v, field, present := c.lookup(key)
	if !present || v == nil {
		return 0, false, nil
	}
	num, isNum := v.(json.Number)
	if !isNum {
		return 0, false, c.errAt(field, "is %s; expected an integer", jsonType(v))
	}
	if i, err := num.Int64(); err == nil {
		return int(i), true, nil
	}
	f, err := num.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false, c.errAt(field, "is %s; expected an integer", numberText(num))
	}
	return int(f), true, nil
}

// intAlias reads the first present key of aliases; a second alias with a
// different value is a contradiction.
func (c *hfConfig) intAlias(aliases ...string) (n int, key string, ok bool, err error) {
	for _, k := range aliases {
		v, found, err := c.int(k)
		if err != nil {
			return 0, "", false, err
		}
		if !found {
			continue
		}
		if !ok {
			n, key, ok = v, k, true
		} else if v != n {
			return 0, "", false, c.errf(k, "is %d but %s is %d; they name the same thing", v, key, n)
		}
	}
	return n, key, ok, nil
}

// positive reads a required integer > 0 from the first present alias.
func (c *hfConfig) positive(aliases ...string) (int, error) {
	n, key, ok, err := c.intAlias(aliases...)
	if err != nil {
		return 0, err
	}
	if !ok {
		v, _, present := c.lookup(aliases[0])
		if present && v == nil {
			return 0, c.errf(aliases[0], "is null; expected an integer > 0")
		}
		msg := "missing"
		if len(aliases) > 1 {
			msg += " (also looked for " + strings.Join(aliases[1:], ", ") + ")"
		}
		return 0, c.errf(aliases[0], "%s", msg)
	}
	if n <= 0 {
		return 0, c.errf(key, "must be > 0 (got %d)", n)
	}
	if n > maxDim {
		return 0, c.errf(key, "is %d; no real model has a dimension above %d", n, maxDim)
	}
	return n, nil
}

// maxDim bounds every size the importer multiplies, so that a corrupt
// config gets an error instead of an overflow or a huge allocation.
const maxDim = 1 << 24

// optPositive reads an optional integer; when present it must be > 0.
func (c *hfConfig) optPositive(aliases ...string) (int, bool, error) {
	n, key, ok, err := c.intAlias(aliases...)
	if err != nil || !ok {
		return 0, false, err
	}
	if n <= 0 {
		return 0, false, c.errf(key, "must be > 0 (got %d)", n)
	}
	if n > maxDim {
		return 0, false, c.errf(key, "is %d; no real model has a dimension above %d", n, maxDim)
	}
	return n, true, nil
}

// nonNeg reads an optional integer >= 0; absent or null reads as 0.
func (c *hfConfig) nonNeg(aliases ...string) (int, error) {
	n, key, ok, err := c.intAlias(aliases...)
	if err != nil || !ok {
		return 0, err
	}
	if n < 0 {
		return 0, c.errf(key, "must be >= 0 (got %d)", n)
	}
	return n, nil
}

// bool reads a boolean key. ok is false when it is absent or null.
func (c *hfConfig) bool(key string) (b, ok bool, err error) {
	v, field, present := c.lookup(key)
	if !present || v == nil {
		return false, false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, false, c.errAt(field, "is %s; expected true or false", jsonType(v))
	}
	return b, true, nil
}

// str reads a string key; "" when absent or null.
func (c *hfConfig) str(key string) (string, error) {
	v, field, present := c.lookup(key)
	if !present || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if _, nf := nonFinite(v); !ok || nf {
		return "", c.errAt(field, "is %s; expected a string", jsonType(v))
	}
	return s, nil
}

// list reads a list key. ok is false when it is absent or null.
func (c *hfConfig) list(key string) ([]any, bool, error) {
	v, field, present := c.lookup(key)
	if !present || v == nil {
		return nil, false, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, false, c.errAt(field, "is %s; expected a list", jsonType(v))
	}
	return l, true, nil
}

// strList reads a list of strings.
func (c *hfConfig) strList(key string) ([]string, bool, error) {
	l, ok, err := c.list(key)
	if err != nil || !ok {
		return nil, ok, err
	}
	out := make([]string, len(l))
	for i, x := range l {
		s, isStr := x.(string)
		if _, nf := nonFinite(x); !isStr || nf {
			return nil, false, c.errf(key, "entry %d is %s; expected a string", i, jsonType(x))
		}
		out[i] = s
	}
	return out, true, nil
}

// intList reads a list of integers.
func (c *hfConfig) intList(key string) ([]int, bool, error) {
	l, ok, err := c.list(key)
	if err != nil || !ok {
		return nil, ok, err
	}
	out := make([]int, len(l))
	for i, x := range l {
		num, isNum := x.(json.Number)
		if !isNum {
			return nil, false, c.errf(key, "entry %d is %s; expected an integer", i, jsonType(x))
		}
		n, err := num.Int64()
		if err != nil {
			return nil, false, c.errf(key, "entry %d is %s; expected an integer", i, numberText(num))
		}
		out[i] = int(n)
	}
	return out, true, nil
}

// object reads an object key, from the decoder or (for wrapper keys) the top.
func (c *hfConfig) object(key string) (map[string]any, string, error) {
	v, field, present := c.lookup(key)
	if !present || v == nil {
		return nil, field, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, field, c.errAt(field, "is %s; expected an object", jsonType(v))
	}
	return m, field, nil
}
