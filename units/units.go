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

	"github.com/dustin/go-humanize"
)

// Bytes formats a byte count for people, in binary units: "328 MiB".
func Bytes(b int64) string {
	if b < 0 {
		return "-" + humanize.IBytes(uint64(-b))
	}
	return humanize.IBytes(uint64(b))
}

// Rate formats bytes per second for people, in SI units: "104 MB/s".
func Rate(bytesPerS float64) string {
	return humanize.SIWithDigits(bytesPerS, 3, "B/s")
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
