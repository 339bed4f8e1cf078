package tomlpos

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/kvplan/kvplan/internal/safetext"
)

// Error is a problem at a place in a file: "file:line[:col]: field: message".
// Plan files and catalogs are TOML and give lines only; a plan read from a
// Kubernetes manifest also knows the column.
type Error struct {
	File  string
	Line  int
	Col   int    // 1-based column; 0 = unknown
	Field string // dotted key path, or "" when the problem is not one field's
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// DecodeStrict decodes data into v and refuses keys that v does not declare.
// Errors carry file and line; an unknown key lists the keys accepted there.
// Guard runs first, so hostile shapes never reach the decoder.
func DecodeStrict(file string, data []byte, v any) (*Index, error) {
	if err := Guard(file, data); err != nil {
		return nil, err
	}
	md, err := toml.Decode(string(data), v)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{File: file, Line: pe.Position.Line, Msg: "TOML syntax: " + safetext.ClipWords(pe.Message, safetext.MaxQuoted)}
		}
		// Type mismatches come back as plain errors naming the key.
		return nil, &Error{File: file, Msg: err.Error()}
	}
	idx := New(data)
	seen := map[string]int{}
	for _, k := range md.Undecoded() {
		path := []string(k)
		s := strings.Join(path, ".")
		n := seen[s]
		seen[s]++
		msg := "unknown key"
		if accepted := acceptedKeys(reflect.TypeOf(v), path[:len(path)-1]); len(accepted) > 0 {
			msg += "; accepted here: " + strings.Join(accepted, ", ")
		}
		return nil, &Error{File: file, Line: idx.Line(path, n), Field: s, Msg: msg}
	}
	return idx, nil
}

// acceptedKeys lists the toml keys of the struct reached by following path
// from t, or nil when the path leads to a map or to nothing known.
func acceptedKeys(t reflect.Type, path []string) []string {
	for {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() == reflect.Map {
			if len(path) == 0 {
				return nil
			}
			t, path = t.Elem(), path[1:]
			continue
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		if len(path) == 0 {
			break
		}
		f, ok := fieldByKey(t, path[0])
		if !ok {
			return nil
		}
		t, path = f.Type, path[1:]
	}
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("toml"), ",")[0]
		if tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	sort.Strings(keys)
	return keys
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if strings.Split(f.Tag.Get("toml"), ",")[0] == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
