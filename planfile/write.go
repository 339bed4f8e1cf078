package planfile

import (
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// FieldValue is one value of a plan under its dotted plan-file key.
type FieldValue struct {
	Field string // "pools.prefill.memory_limit"
	Value any    // string, int, float64, bool or []string
	// Unset: the field was not written and holds its zero, listed only
	// because include asked (a default the engine takes, such as its
	// memory fraction). It has no value to write: WriteTOML writes it as a
	// comment, and a reader must not take the zero for a setting.
	Unset bool
}

// Values lists the plan's values in plan-file order ([deployment], [model],
// [workload], [pools.*] by name, [link], [router], [transport], [runtime],
// [slo]): every field that was written somewhere (it has a place), that
// holds a value other than its zero, or that include (when not nil) asks for.
func (p *Plan) Values(include func(field string) bool) []FieldValue {
	var out []FieldValue
	add := func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			tag, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			f, field := v.Field(i), prefix+"."+tag
			if f.Kind() == reflect.Pointer {
				if f.IsNil() {
					continue
				}
				f = f.Elem()
			}
			unset := f.IsZero() && !p.Has(field)
			if unset && (include == nil || !include(field)) {
				continue
			}
			out = append(out, FieldValue{Field: field, Value: f.Interface(), Unset: unset})
		}
	}
	add("deployment", reflect.ValueOf(p.Deployment))
	add("model", reflect.ValueOf(p.Model))
	add("workload", reflect.ValueOf(p.Workload))
	for _, n := range p.PoolNames() {
		add("pools."+n, reflect.ValueOf(*p.Pools[n]))
	}
	add("link", reflect.ValueOf(p.Link))
	add("router", reflect.ValueOf(p.Router))
	add("transport", reflect.ValueOf(p.Transport))
	add("runtime", reflect.ValueOf(p.Runtime))
	add("slo", reflect.ValueOf(p.SLO))
	return out
}

var bareKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) }) // compiled on first use, not at start-up

// tomlKey quotes a key that is not a bare TOML key.
func tomlKey(k string) string {
	if bareKey().MatchString(k) {
		return k
	}
	return strconv.Quote(k)
}

// tomlValue renders a value as TOML.
func tomlValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// WriteTOML writes the plan as a plan file, table by table, one key a line
// (the fields Values lists; an Unset one as a comment line); comment(field),
// when not "", follows the value as "# ...". The output reads back with Parse.
func (p *Plan) WriteTOML(w io.Writer, include func(field string) bool, comment func(field string) string) error {
	var b strings.Builder
	table := ""
	for _, fv := range p.Values(include) {
		dot := strings.LastIndex(fv.Field, ".")
		tbl, k := fv.Field[:dot], fv.Field[dot+1:]
		if tbl != table {
			if table != "" {
				b.WriteString("\n")
			}
			parts := strings.SplitN(tbl, ".", 2)
			header := parts[0]
			if len(parts) == 2 {
				header += "." + tomlKey(parts[1])
			}
			fmt.Fprintf(&b, "[%s]\n", header)
			table = tbl
		}
		line := k + " = " + tomlValue(fv.Value)
		if fv.Unset {
			line = "# " + k + " is not set"
		}
		if comment != nil {
			if c := comment(fv.Field); c != "" {
				line += "  # " + c
			}
		}
		b.WriteString(line + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
