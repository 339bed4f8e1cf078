// Package units parses and formats the sizes, rates and durations that cross
// kvplan's edges: catalog files, plan files and command-line flags. Values are
// parsed once, here, and travel inside the program as plain numbers whose
// names carry their unit (bytes, bytes per second, milliseconds).
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ParseBytes parses a size such as "114688", "272MB", "4GiB" or "3584Mi".
// SI prefixes (k, M, G, T) are powers of 1000 and binary ones (Ki, Mi, Gi,
// KiB, MiB, GiB) powers of 1024. Negative and fractional-byte sizes are refused.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size: want a number of bytes such as 4GiB, 3584Mi or 272MB")
	}
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("size %q is negative: want a positive size such as 4GiB", s)
	}
	v, err := humanize.ParseBytes(t)
	if err != nil {
		return 0, fmt.Errorf("size %q is not understood: want a number with an optional unit (B, kB, MB, GB, KiB, MiB, GiB, Ki, Mi, Gi)", s)
	}
	if v > math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(v), nil
}

// ParseQuantity parses a Kubernetes resource quantity ("3584Mi", "10Gi",
// "4G", "4096") as Kubernetes does, and returns it in bytes. It refuses
// negative values and fractions of a byte.
func ParseQuantity(s string) (int64, error) {
	q, err := resource.ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("memory quantity %q is not a Kubernetes quantity: want e.g. 3584Mi, 10Gi or 4G", s)
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("memory quantity %q is negative: want e.g. 3584Mi", s)
	}
	v, ok := q.AsInt64()
	if !ok {
		return 0, fmt.Errorf("memory quantity %q is not a whole number of bytes: want e.g. 3584Mi", s)
	}
	return v, nil
}

// ParseRate parses a throughput such as "104MB/s", "25GB/s", "1Gbps",
// "100Gb/s" or "3.35TB/s" and returns bytes per second. A lower-case "b"
// before "/s" or "ps" means bits; an upper-case "B" means bytes.
func ParseRate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	bad := fmt.Errorf("rate %q is not understood: want a number with a unit such as 104MB/s, 25GB/s, 1Gbps or 100Gb/s", s)
	var body string
	switch {
	case strings.HasSuffix(t, "/s"):
		body = strings.TrimSuffix(t, "/s")
	case strings.HasSuffix(t, "ps"):
		body = strings.TrimSuffix(t, "ps")
	default:
		return 0, bad
	}
	body = strings.TrimSpace(body)
	if body == "" {
		return 0, bad
	}
	if strings.HasPrefix(body, "-") {
		return 0, fmt.Errorf("rate %q is negative: want a positive rate such as 1Gbps", s)
	}
	bits := strings.HasSuffix(body, "b") || strings.HasSuffix(body, "bit")
	if bits {
		body = strings.TrimSuffix(strings.TrimSuffix(body, "bit"), "b") + "B"
	}
	v, err := humanize.ParseBigBytes(body)
	if err != nil {
		return 0, bad
	}
	f, _ := v.Float64()
	if bits {
		f /= 8
	}
	return f, nil
}

// ParseMS parses a duration such as "0.5ms", "20us" or "1s" and returns
// milliseconds. A bare number is taken as milliseconds.
func ParseMS(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		if f < 0 {
			return 0, fmt.Errorf("duration %q is negative", s)
		}
		return f, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("duration %q is not understood: want e.g. 0.5ms, 20us or 2s", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return float64(d) / float64(time.Millisecond), nil
}

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
