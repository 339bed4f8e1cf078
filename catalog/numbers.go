package catalog

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/kvplan/kvplan/units"
)

// MaxInt is the largest integer a catalog field may hold: 10^15, a
// thousand times the parameters of the largest model served today, and
// small enough that the planner's products of catalog figures can be
// checked rather than wrap (a huge head count used to give "-4 B per
// token"). Fields have narrower limits of their own in validate.go.
const MaxInt = 1_000_000_000_000_000

// numberErrs checks every number of an entry (a pointer to a struct), by
// reflection, so fields added later are covered too: floats must be finite
// (TOML accepts nan and inf, and `x < 0` checks let NaN through) and
// integers at most MaxInt. Fields are named by their toml path.
func numberErrs(entry any) []fieldErr {
	var errs []fieldErr
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Struct:
			t := v.Type()
			for i := 0; i < t.NumField(); i++ {
				tag := strings.Split(t.Field(i).Tag.Get("toml"), ",")[0]
				if tag == "" || tag == "-" || !t.Field(i).IsExported() {
					continue
				}
				walk(v.Field(i), strings.TrimPrefix(path+"."+tag, "."))
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), path)
			}
		case reflect.Float32, reflect.Float64:
			if f := v.Float(); !units.Finite(f) {
				errs = append(errs, fieldErr{path, fmt.Sprintf("%g is not a finite number", f)})
			}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if n := v.Int(); n > MaxInt {
				errs = append(errs, fieldErr{path, fmt.Sprintf("%d is too large: want at most %s", n, units.Thousands(MaxInt))})
			}
		}
	}
	walk(reflect.ValueOf(entry), "")
	return errs
}
