package rules

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"
)

// EnvVar documents one name a rule can use.
type EnvVar struct {
	Name string // dotted expr path: "pool.host_required_bytes"
	Type string // expr type: int, float, bool, string, list of string, list of pool
	Unit string // B, B/s, ms, tokens, ratio, ...; "" for names and flags
	Desc string
}

// EnvVars lists every variable of Env, in declaration order, from the
// struct's expr, unit and desc tags. The elements of pools have the fields
// listed under pool.
func EnvVars() []EnvVar {
	var out []EnvVar
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := prefix + f.Tag.Get("expr")
			switch {
			case f.Type.Kind() == reflect.Struct:
				if d := f.Tag.Get("desc"); d != "" {
					out = append(out, EnvVar{Name: name, Type: "pool", Desc: d})
				}
				walk(f.Type, name+".")
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
				out = append(out, EnvVar{Name: name, Type: "list of pool", Desc: f.Tag.Get("desc") + "; each element has the fields of pool"})
			default:
				out = append(out, EnvVar{Name: name, Type: exprType(f.Type), Unit: f.Tag.Get("unit"), Desc: f.Tag.Get("desc")})
			}
		}
	}
	walk(reflect.TypeOf(Env{}), "")
	return out
}

func exprType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int:
		return "int"
	case reflect.Float64:
		return "float"
	case reflect.Bool:
		return "bool"
	case reflect.String:
		return "string"
	case reflect.Slice:
		return "list of " + exprType(t.Elem())
	}
	return t.String()
}

// WriteEnvDoc writes the variables and helpers as aligned text, for
// `kvplan rules env`.
func WriteEnvDoc(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tUNIT\tMEANING")
	for _, v := range EnvVars() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Name, v.Type, v.Unit, v.Desc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nHelpers (numbers may be int or float):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, h := range Helpers() {
		fmt.Fprintf(tw, "  %s\t%s\n", h.Sig, h.Desc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nDisabled expr builtins: %s\n", strings.Join(disabledBuiltins, ", "))
	fmt.Fprintf(w, "Limits: %d expression nodes, a VM memory budget of %d per evaluation.\n", MaxNodes, MemoryBudget)
	return nil
}
