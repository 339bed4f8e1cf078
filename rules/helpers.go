package rules

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/kvplan/kvplan/units"
)

// Helper is a function rules may call, for `kvplan rules env` and docs.
type Helper struct {
	Name string // as called in a rule: mib
	Sig  string // mib(x number) number
	Desc string
}

// Unit helpers turn a number written in a unit into the unit Env uses
// (bytes, milliseconds, bytes per second, ratio), so rules read naturally:
// `pool.host_limit_bytes < gib(4)`, `predicted.ttft_ms > s(1)`.
// Format helpers turn an Env figure into text for messages.
var helpers = []struct {
	Helper
	fn  func(float64) any
	str bool // returns a string
}{
	{Helper{"kib", "kib(x) → B", "x KiB in bytes (×1024)"}, scale(1 << 10), false},
	{Helper{"mib", "mib(x) → B", "x MiB in bytes (×1024²)"}, scale(1 << 20), false},
	{Helper{"gib", "gib(x) → B", "x GiB in bytes (×1024³)"}, scale(1 << 30), false},
	{Helper{"kb", "kb(x) → B", "x kB in bytes (×1000)"}, scale(1e3), false},
	{Helper{"mb", "mb(x) → B", "x MB in bytes (×1000²)"}, scale(1e6), false},
	{Helper{"gb", "gb(x) → B", "x GB in bytes (×1000³)"}, scale(1e9), false},
	{Helper{"tb", "tb(x) → B", "x TB in bytes (×1000⁴)"}, scale(1e12), false},
	{Helper{"gbps", "gbps(x) → B/s", "x gigabits per second in bytes per second (×1e9÷8)"}, scale(1e9 / 8), false},
	{Helper{"us", "us(x) → ms", "x microseconds in milliseconds"}, scale(1e-3), false},
	{Helper{"ms", "ms(x) → ms", "x milliseconds (the identity; reads naturally)"}, scale(1), false},
	{Helper{"s", "s(x) → ms", "x seconds in milliseconds"}, scale(1e3), false},
	{Helper{"pct", "pct(x) → ratio", "x percent as a ratio (pct(20) = 0.2)"}, scale(1e-2), false},
	{Helper{"bytes", "bytes(x B) → text", "a byte count in binary units: \"328 MiB\""}, func(v float64) any { return units.Bytes(int64(math.Round(v))) }, true},
	{Helper{"rate", "rate(x B/s) → text", "a throughput in SI units: \"104 MB/s\""}, func(v float64) any { return units.Rate(v) }, true},
	{Helper{"dur", "dur(x ms) → text", "a duration in milliseconds: \"3308.3 ms\""}, func(v float64) any { return units.MS(v) }, true},
	{Helper{"percent", "percent(x ratio) → text", "a ratio as a percentage: \"35.2%\""}, func(v float64) any { return strconv.FormatFloat(v*100, 'f', 1, 64) + "%" }, true},
	{Helper{"num", "num(x) → text", "a number with thousands separators: \"14,816\""}, func(v float64) any { return thousands(v) }, true},
	{Helper{"tokens", "tokens(x) → text", "a token count: \"14,816 tokens\""}, func(v float64) any { return thousands(v) + " tokens" }, true},
}

// Helpers lists the functions rules may call besides expr's builtins.
func Helpers() []Helper {
	out := make([]Helper, len(helpers))
	for i, h := range helpers {
		out[i] = h.Helper
	}
	return out
}

func scale(k float64) func(float64) any { return func(v float64) any { return v * k } }

func toFloat(x any) (float64, error) {
	switch v := x.(type) {
	case int:
		return float64(v), nil
	case float64:
		return v, nil
	}
	return 0, fmt.Errorf("want a number, got %T", x)
}

func helperOptions() []expr.Option {
	opts := make([]expr.Option, 0, len(helpers))
	for _, h := range helpers {
		fn := h.fn
		call := func(params ...any) (any, error) {
			v, err := toFloat(params[0])
			if err != nil {
				return nil, err
			}
			return fn(v), nil
		}
		if h.str {
			opts = append(opts, expr.Function(h.Name, call, new(func(int) string), new(func(float64) string)))
		} else {
			opts = append(opts, expr.Function(h.Name, call, new(func(int) float64), new(func(float64) float64)))
		}
	}
	return opts
}

func thousands(v float64) string {
	neg := v < 0
	s := strconv.FormatInt(int64(math.Round(math.Abs(v))), 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// formatValue renders a ${...} placeholder's value.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case float64:
		switch {
		case math.IsInf(x, 0) || math.IsNaN(x):
			return strconv.FormatFloat(x, 'f', -1, 64)
		case x == math.Trunc(x) && math.Abs(x) < 1e15:
			return strconv.FormatInt(int64(x), 10)
		case math.Abs(x) >= 1:
			return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(x, 'f', 2, 64), "0"), ".")
		default:
			return strconv.FormatFloat(x, 'g', 3, 64)
		}
	case []string:
		return strings.Join(x, ",")
	}
	return fmt.Sprint(v)
}
