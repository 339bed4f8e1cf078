// Package units parses and formats the counts, sizes, rates and durations
// that cross kvplan's edges: catalog files, plan files and command-line flags.
// Values are parsed once, here, with one grammar (number.go), and travel
// inside the program as plain numbers whose names carry their unit (bytes,
// bytes per second, milliseconds). The package also holds the one validation
// path for numbers: finite, within a stated range (check.go), and products
// that cannot overflow (checked.go).
package units

import (
	"math"
	"strconv"
	"strings"
)

// Bytes formats a byte count for people, in binary units: "328 MiB", "1.5
// KiB", "9 B". The figure keeps two significant digits (whole units from 10
// up), rounded half up: the format of go-humanize's IBytes, which kvplan used
// until it dropped the dependency (its init compiled a regexp on every start).
func Bytes(b int64) string {
	if b < 0 {
		return "-" + iecBytes(uint64(-b))
	}
	return iecBytes(uint64(b))
}

var iecUnits = [...]string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

func iecBytes(s uint64) string {
	if s < 10 {
		return strconv.FormatUint(s, 10) + " B"
	}
	e := math.Floor(math.Log(float64(s)) / math.Log(1024))
	v := float64(s) / math.Pow(1024, e)
	intDigits := countDigits(int64(v))
	digits := max(2-intDigits, 0)
	scale := math.Pow10(digits)
	v = math.Floor(v*scale+0.5) / scale
	if n := countDigits(int64(v)); n > intDigits { // 9.96 KiB rounds to 10 KiB, not 10.0
		digits = max(digits-(n-intDigits), 0)
	}
	return strconv.FormatFloat(v, 'f', digits, 64) + " " + iecUnits[int(e)]
}

func countDigits(n int64) int {
	d := 0
	for ; n != 0; n /= 10 {
		d++
	}
	return d
}

// Rate formats bytes per second for people, in SI units: "104 MB/s",
// "1.25 GB/s". The figure is cut (not rounded) to three decimals and its
// trailing zeros dropped, as go-humanize's SIWithDigits(v, 3, "B/s").
func Rate(bytesPerS float64) string {
	v, prefix := siScale(bytesPerS)
	s := strconv.FormatFloat(v, 'f', 6, 64)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = strings.TrimRight(s[:i+4], "0") // three decimals, then no trailing zeros
		s = strings.TrimSuffix(s, ".")
	}
	return s + " " + prefix + "B/s"
}

// siPrefixes are the SI prefixes from 10^-30 (quecto) to 10^30 (quetta), one
// per three powers of ten.
var siPrefixes = [...]string{"q", "r", "y", "z", "a", "f", "p", "n", "µ", "m", "", "k", "M", "G", "T", "P", "E", "Z", "Y", "R", "Q"}

// siScale returns x in the unit of its SI prefix: 1.04e8 is 104 and "M".
// Beyond the prefixes the value keeps the extra powers of ten.
func siScale(x float64) (float64, string) {
	if x == 0 {
		return 0, ""
	}
	mag := math.Abs(x)
	exp := math.Floor(math.Floor(math.Log(mag)/math.Log(10))/3) * 3
	exp = math.Max(-30, math.Min(30, exp)) // NaN stays NaN
	v := mag / math.Pow(10, exp)
	if v == 1000 && exp+3 <= 30 { // 1000 k is 1 M
		exp += 3
		v = mag / math.Pow(10, exp)
	}
	prefix := ""
	if i := int(exp+30) / 3; exp == exp && i >= 0 && i < len(siPrefixes) {
		prefix = siPrefixes[i]
	}
	return math.Copysign(v, x), prefix
}

// MS formats milliseconds for people: "3308.3 ms".
func MS(ms float64) string {
	switch {
	case ms >= 100:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	case ms >= 1:
		return strconv.FormatFloat(ms, 'f', 2, 64) + " ms"
	default:
		return strconv.FormatFloat(ms, 'f', 3, 64) + " ms"
	}
}

// Cents rounds an amount in US dollars to whole cents, half away from
// zero: 91.19999999999999 is 91.2. Money is rounded here, at the edge, so
// that no output prints (or encodes in JSON) the float noise of a sum of
// prices.
func Cents(usd float64) float64 {
	return math.Round(usd*100) / 100
}

// USD formats an amount in US dollars with cents: "$91.20".
func USD(usd float64) string {
	s := strconv.FormatFloat(math.Abs(Cents(usd)), 'f', 2, 64)
	if Cents(usd) < 0 {
		return "-$" + s
	}
	return "$" + s
}

// Unknown is how every output prints a figure kvplan could not determine
// (a GPU without a price), instead of a 0 that reads as free.
const Unknown = "unknown"

// USDOrUnknown formats an amount that may be unknown (nil): "$91.20" or
// "unknown". Prices print through it in every table.
func USDOrUnknown(usd *float64) string {
	if usd == nil {
		return Unknown
	}
	return USD(*usd)
}
