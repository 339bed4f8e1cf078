package units

import (
	"fmt"
	"math/big"
	"strings"
	"time"
)

const (
	sizeExample     = "a size such as 4GiB, 1.5Gi, 3584Mi, 272MB or 2.7 GiB"
	countExample    = "a count such as 8000, 1.5k, 2M or 1e6"
	rateExample     = "a rate such as 104MB/s, 25 GB/s, 1Gbps, 100Gb/s or 1.5GiB/s"
	durationExample = "a duration such as 0.5ms, 20us, 2s or 1.5 min (a bare number is ms)"
	numberExample   = "a number such as 0.9, 1.5k or 1e6"
)

// ParseBytes parses a size: "114688", "272MB", "4GiB", "3584Mi", "1.5Gi",
// "2.7 GiB", "1e9". SI prefixes (k, M, G, T, P, E) are powers of 1000 and IEC
// ones (Ki, Mi, Gi, Ti, Pi, Ei, with or without B) powers of 1024; case does
// not matter except that "m" (milli) is refused and a lower-case "b" is bits,
// refused in a size. A fraction of a byte rounds up, as Kubernetes rounds
// it. Negative, non-finite and too-large sizes are refused.
func ParseBytes(s string) (int64, error) {
	r, err := parseSize(s, "size")
	if err != nil {
		return 0, err
	}
	return ratToInt64(r, "size", strings.TrimSpace(s))
}

// ParseQuantity parses a memory quantity in bytes. It accepts every
// Kubernetes quantity kvplan meets in manifests ("3584Mi", "10Gi", "4G",
// "4096", "1e3", "1.5Gi") and the rest of ParseBytes's grammar ("4GiB",
// "2.7 GiB"): one size grammar for flags, plans and manifests. Milli
// quantities ("100m") are refused: a thousandth of a byte is a typo.
func ParseQuantity(s string) (int64, error) {
	r, err := parseSize(s, "memory quantity")
	if err != nil {
		return 0, err
	}
	return ratToInt64(r, "memory quantity", strings.TrimSpace(s))
}

// ParseMemory parses a memory size people type (a container limit, a host
// cache, an RSS) with ParseQuantity's grammar, and refuses a bare number
// below 1 KiB: "16" is 16 bytes, which no worker runs in, so it is a
// forgotten unit and the error says "did you mean 16Gi?". A bare number of
// 1 KiB or more ("4096", "1e9") is bytes, as Kubernetes reads it.
func ParseMemory(s string) (int64, error) {
	v, err := ParseQuantity(s)
	if err != nil {
		return 0, err
	}
	t := strings.TrimSpace(s)
	if v > 0 && v < 1024 && bareNumber(t) {
		return 0, fmt.Errorf("memory quantity %q has no unit, so it is %d bytes: did you mean %sGi? (write the unit: 16Gi, 3584Mi, 4GB)", t, v, t)
	}
	return v, nil
}

// bareNumber reports whether s is a number with no unit letter.
func bareNumber(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' && c != '+' && c != '_' && c != 'e' && c != 'E' && c != '-' {
			return false
		}
	}
	return s != ""
}

func parseSize(s, what string) (*big.Rat, error) {
	n, unit, err := splitNumber(s, what, sizeExample)
	if err != nil {
		return nil, err
	}
	t := strings.TrimSpace(s)
	mult, rest, err := splitPrefix(unit, what, t, sizeExample)
	if err != nil {
		return nil, err
	}
	switch rest {
	case "", "B", "byte", "bytes":
	case "b", "bit", "bits":
		return nil, fmt.Errorf("%s %q is in bits (lower-case b): a size is in bytes, write B (%s)", what, t, canonicalSize(t, unit, rest))
	default:
		return nil, fmt.Errorf("%s %q: unit %q is not understood: want %s", what, t, unit, sizeExample)
	}
	return n.Mul(n, mult), nil
}

// canonicalSize rewrites a size written in bits the way it was probably
// meant, for a suggestion: "4Gb" → "4GB", "4gib" → "4GiB".
func canonicalSize(t, unit, rest string) string {
	num := strings.TrimSpace(strings.TrimSuffix(t, unit))
	prefix := strings.TrimSuffix(unit, rest)
	if prefix == "" {
		return num + "B"
	}
	p := strings.ToUpper(prefix[:1])
	if p == "K" && len(prefix) == 1 {
		p = "k"
	}
	if len(prefix) > 1 {
		p += "i"
	}
	return num + p + "B"
}

// ParseRate parses a throughput and returns bytes per second: "104MB/s",
// "25 GB/s", "1Gbps", "100Gb/s", "800Gbit/s", "3.35TB/s", "1.5GiB/s". An
// upper-case "B" is bytes, a lower-case "b" or "bit" bits. Prefixes are those
// of ParseBytes. Zero is accepted (callers that need a positive rate say so);
// negative and non-finite rates are refused.
func ParseRate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	n, unit, err := splitNumber(s, "rate", rateExample)
	if err != nil {
		return 0, err
	}
	var body string
	switch {
	case strings.HasSuffix(unit, "/s"):
		body = strings.TrimSuffix(unit, "/s")
	case strings.HasSuffix(unit, "ps"):
		body = strings.TrimSuffix(unit, "ps")
	default:
		return 0, fmt.Errorf("rate %q has no per-second unit: want %s", t, rateExample)
	}
	mult, rest, err := splitPrefix(body, "rate", t, rateExample)
	if err != nil {
		return 0, err
	}
	switch rest {
	case "B":
	case "b", "bit":
		mult.Quo(mult, big.NewRat(8, 1))
	default:
		return 0, fmt.Errorf("rate %q: unit %q is not understood: want %s", t, unit, rateExample)
	}
	return ratToFloat(n.Mul(n, mult), "rate", t)
}

// durationUnit returns a unit ParseMS accepts, in milliseconds (a switch,
// not a map of *big.Rat built at every start).
func durationUnit(unit string) (*big.Rat, bool) {
	switch unit {
	case "ns":
		return big.NewRat(1, 1_000_000), true
	case "us", "µs", "μs":
		return big.NewRat(1, 1000), true
	case "ms":
		return big.NewRat(1, 1), true
	case "s", "sec":
		return big.NewRat(1000, 1), true
	case "m", "min":
		return big.NewRat(60_000, 1), true
	case "h":
		return big.NewRat(3_600_000, 1), true
	}
	return nil, false
}

// ParseMS parses a duration and returns milliseconds: "0.5ms", "20us",
// "20µs", "2s", "1.5 min", "1h", "1m30s" (Go's compound form) or a bare
// number, taken as milliseconds. "m" is minutes, as in Go. Negative and
// non-finite durations are refused.
func ParseMS(s string) (float64, error) {
	t := strings.TrimSpace(s)
	n, unit, err := splitNumber(s, "duration", durationExample)
	if err != nil {
		return 0, err
	}
	if unit == "" {
		return ratToFloat(n, "duration", t)
	}
	if k, ok := durationUnit(unit); ok {
		return ratToFloat(n.Mul(n, k), "duration", t)
	}
	if d, err := time.ParseDuration(t); err == nil && d >= 0 {
		return float64(d) / float64(time.Millisecond), nil
	}
	return 0, fmt.Errorf("duration %q: unit %q is not understood: want %s", t, unit, durationExample)
}

// countSuffix are the multipliers a count may carry.
var countSuffix = map[string]int64{"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "B": 1e9, "T": 1e12}

// ParseCount parses a whole count: "8000", "10_000", "1.5k", "2M", "1e6",
// "7B" (billions, as parameter counts are written). It must come out whole
// ("1.2345k" is refused) and fit an int64; use CheckInt for a narrower range.
func ParseCount(s string) (int64, error) {
	t := strings.TrimSpace(s)
	n, unit, err := splitNumber(s, "count", countExample)
	if err != nil {
		return 0, err
	}
	k, ok := countSuffix[unit]
	if !ok {
		if unit == "m" {
			return 0, fmt.Errorf("count %q: \"m\" is milli: write M for millions; want %s", t, countExample)
		}
		return 0, fmt.Errorf("count %q: suffix %q is not understood: want %s", t, unit, countExample)
	}
	n.Mul(n, new(big.Rat).SetInt64(k))
	if !n.IsInt() {
		return 0, fmt.Errorf("count %q is not a whole number (%s): want %s", t, n.FloatString(3), countExample)
	}
	if !n.Num().IsInt64() {
		return 0, fmt.Errorf("count %q is too large: want at most 9223372036854775807", t)
	}
	return n.Num().Int64(), nil
}

// ParseNumber parses a finite, non-negative real number with an optional SI
// suffix (k, M, G, T): "0.9", "1.5k", "1e6", "2.5M". NaN and Inf are refused.
func ParseNumber(s string) (float64, error) {
	t := strings.TrimSpace(s)
	n, unit, err := splitNumber(s, "number", numberExample)
	if err != nil {
		return 0, err
	}
	k, ok := countSuffix[unit]
	if !ok || unit == "B" {
		return 0, fmt.Errorf("number %q: suffix %q is not understood: want %s", t, unit, numberExample)
	}
	return ratToFloat(n.Mul(n, new(big.Rat).SetInt64(k)), "number", t)
}
