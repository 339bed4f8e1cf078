package units

import (
	"fmt"
	"math"
	"strconv"
)

// RangeError is a number outside the range a field accepts. It prints the
// value and the range: "9223372036854775807 is out of range: want 1 to
// 10,000,000 tokens".
type RangeError struct {
	Value     string // the value as written or formatted
	Min, Max  string // the accepted range, formatted
	Unit      string // "" or a unit word for the message ("tokens", "ms")
	NotFinite bool   // NaN or ±Inf
}

func (e *RangeError) Error() string {
	unit := ""
	if e.Unit != "" {
		unit = " " + e.Unit
	}
	if e.NotFinite {
		return fmt.Sprintf("%s is not a finite number: want %s to %s%s", e.Value, e.Min, e.Max, unit)
	}
	return fmt.Sprintf("%s is out of range: want %s to %s%s", e.Value, e.Min, e.Max, unit)
}

// CheckFloat returns nil when v is finite and lo <= v <= hi, and a
// *RangeError stating the range otherwise. NaN and ±Inf always fail, which
// is what `x < 0` checks get wrong (NaN < 0 is false). unit may be "".
func CheckFloat(v, lo, hi float64, unit string) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return &RangeError{Value: strconv.FormatFloat(v, 'g', -1, 64), Min: formatFloat(lo), Max: formatFloat(hi), Unit: unit, NotFinite: true}
	}
	if v < lo || v > hi {
		return &RangeError{Value: formatFloat(v), Min: formatFloat(lo), Max: formatFloat(hi), Unit: unit}
	}
	return nil
}

// CheckInt returns nil when lo <= v <= hi, and a *RangeError stating the
// range otherwise. unit may be "".
func CheckInt(v, lo, hi int64, unit string) error {
	if v < lo || v > hi {
		return &RangeError{Value: strconv.FormatInt(v, 10), Min: Thousands(lo), Max: Thousands(hi), Unit: unit}
	}
	return nil
}

// Finite reports whether every value is neither NaN nor ±Inf.
func Finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// formatFloat writes a range bound: integers with thousands separators,
// others in the shortest exact form.
func formatFloat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return Thousands(int64(v))
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Thousands writes n with comma thousands separators: 10,000,000.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
