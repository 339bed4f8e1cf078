// Package golit writes Go values as Go source: the composite literals of
// the data files that go generate writes (catalog/embedded_gen.go,
// rules/default_gen.go), so that kvplan does not parse TOML on every run.
package golit

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Write appends v to b as a Go expression inside package pkg (an import
// path): pkg's types unqualified, every field written, exported or not,
// zero values left out, maps in key order, so that the same value gives the
// same bytes. Types of other packages are refused: the file imports nothing.
func Write(b *bytes.Buffer, v any, pkg string) error {
	return literal(b, reflect.ValueOf(v), false, pkg)
}

// typeExpr writes t as Go source inside package pkg.
func typeExpr(t reflect.Type, pkg string) (string, error) {
	switch t.Kind() {
	case reflect.Pointer:
		s, err := typeExpr(t.Elem(), pkg)
		return "*" + s, err
	case reflect.Slice:
		s, err := typeExpr(t.Elem(), pkg)
		return "[]" + s, err
	case reflect.Array:
		s, err := typeExpr(t.Elem(), pkg)
		return fmt.Sprintf("[%d]%s", t.Len(), s), err
	case reflect.Map:
		k, err := typeExpr(t.Key(), pkg)
		if err != nil {
			return "", err
		}
		v, err := typeExpr(t.Elem(), pkg)
		return "map[" + k + "]" + v, err
	}
	if t.Name() == "" {
		return "", fmt.Errorf("unnamed type %s is not supported", t)
	}
	switch t.PkgPath() {
	case "":
		return t.Name(), nil
	case pkg:
		return t.Name(), nil
	}
	return "", fmt.Errorf("type %s of package %s is not supported: the generated file imports nothing", t.Name(), t.PkgPath())
}

// literal writes v. elided is true where Go lets a composite literal drop
// its type (an element of a slice, array or map literal): T{...} becomes
// {...} and &T{...} becomes {...}.
func literal(b *bytes.Buffer, v reflect.Value, elided bool, pkg string) error {
	switch v.Kind() {
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if strings.ContainsAny(s, "NI") {
			return fmt.Errorf("%s is not a finite number", s)
		}
		b.WriteString(s)
	case reflect.String:
		b.WriteString(strconv.Quote(v.String()))
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil")
			return nil
		}
		if v.Elem().Kind() != reflect.Struct {
			return fmt.Errorf("pointer to %s is not supported", v.Elem().Type())
		}
		if !elided {
			b.WriteString("&")
		}
		return literal(b, v.Elem(), elided, pkg)
	case reflect.Struct:
		return structLiteral(b, v, elided, pkg)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("nil")
			return nil
		}
		if err := writeType(b, v.Type(), elided, pkg); err != nil {
			return err
		}
		composite := isComposite(v.Type().Elem())
		b.WriteString("{")
		for i := 0; i < v.Len(); i++ {
			if composite {
				b.WriteString("\n")
			} else if i > 0 {
				b.WriteString(", ")
			}
			if err := literal(b, v.Index(i), true, pkg); err != nil {
				return err
			}
			if composite {
				b.WriteString(",")
			}
		}
		if composite && v.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("}")
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("nil")
			return nil
		}
		if err := writeType(b, v.Type(), elided, pkg); err != nil {
			return err
		}
		keys := v.MapKeys()
		var kerr error
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].Kind() != reflect.String {
				kerr = fmt.Errorf("map keys of kind %s are not supported", keys[i].Kind())
				return false
			}
			return keys[i].String() < keys[j].String()
		})
		if kerr != nil {
			return kerr
		}
		b.WriteString("{")
		for _, k := range keys {
			b.WriteString("\n")
			if err := literal(b, k, true, pkg); err != nil {
				return err
			}
			b.WriteString(": ")
			if err := literal(b, v.MapIndex(k), true, pkg); err != nil {
				return err
			}
			b.WriteString(",")
		}
		if len(keys) > 0 {
			b.WriteString("\n")
		}
		b.WriteString("}")
	default:
		return fmt.Errorf("values of kind %s (%s) are not supported", v.Kind(), v.Type())
	}
	return nil
}

func structLiteral(b *bytes.Buffer, v reflect.Value, elided bool, pkg string) error {
	if err := writeType(b, v.Type(), elided, pkg); err != nil {
		return err
	}
	t := v.Type()
	b.WriteString("{")
	n := 0
	for i := 0; i < t.NumField(); i++ {
		f := v.Field(i)
		if f.IsZero() {
			continue
		}
		b.WriteString("\n" + t.Field(i).Name + ": ")
		if err := literal(b, f, false, pkg); err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name(), t.Field(i).Name, err)
		}
		b.WriteString(",")
		n++
	}
	if n > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}")
	return nil
}

func writeType(b *bytes.Buffer, t reflect.Type, elided bool, pkg string) error {
	if elided {
		return nil
	}
	s, err := typeExpr(t, pkg)
	if err != nil {
		return err
	}
	b.WriteString(s)
	return nil
}

// isComposite reports whether elements of type t are written over lines.
func isComposite(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Pointer, reflect.Slice, reflect.Map, reflect.Array:
		return true
	}
	return false
}
