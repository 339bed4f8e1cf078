package units

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/kvplan/kvplan/internal/safetext"
)

// The one number grammar of kvplan, shared by counts, sizes, rates and
// durations in flags, plan files and catalogs:
//
//	number   = digits [ "." digits ] [ exponent ]   | "." digits [ exponent ]
//	digits   = digit { [ "_" ] digit }               (underscores group digits: 10_000)
//	exponent = ( "e" | "E" ) [ "+" | "-" ] digit { digit }
//	value    = number [ " " ] unit
//
// Numbers are exact decimals (no float rounding on the way in): "1.5Gi" is
// 1.5 × 2^30 = 1,610,612,736 bytes exactly. A leading "-" is refused with a
// message, and so are NaN, Inf, hex and exponents beyond ±maxExponent.

const (
	maxInputLen = 64 // longer values are refused before any parsing
	maxExponent = 30 // |e| above this is refused: 1e31 of anything is a typo
)

// splitNumber parses the number at the start of s and returns it exactly,
// with the rest of s (the unit), spaces between them removed. what names the
// kind of value in messages ("size", "count", "rate", "duration").
func splitNumber(s, what, example string) (*big.Rat, string, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, "", fmt.Errorf("empty %s: want %s", what, example)
	}
	if len(t) > maxInputLen {
		return nil, "", fmt.Errorf("%s %s is %d characters long: want at most %d, e.g. %s", what, safetext.Quote(t), len(t), maxInputLen, example)
	}
	if t[0] == '-' {
		return nil, "", fmt.Errorf("%s %q is negative: want %s", what, t, example)
	}
	if t[0] == '+' {
		t = t[1:]
	}
	i, digits, dot := 0, 0, false
	var mant strings.Builder
	for ; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= '0' && c <= '9':
			mant.WriteByte(c)
			digits++
		case c == '_' && i > 0 && isDigit(t[i-1]) && i+1 < len(t) && isDigit(t[i+1]):
			// digit separator
		case c == '.' && !dot:
			mant.WriteByte(c)
			dot = true
		default:
			goto mantissaDone
		}
	}
mantissaDone:
	if digits == 0 {
		lower := strings.ToLower(t)
		if strings.HasPrefix(lower, "nan") || strings.HasPrefix(lower, "inf") {
			return nil, "", fmt.Errorf("%s %q is not a finite number: want %s", what, t, example)
		}
		return nil, "", fmt.Errorf("%s %q does not start with a number: want %s", what, t, example)
	}
	if i < len(t) && t[i] == 'x' && mant.String() == "0" {
		return nil, "", fmt.Errorf("%s %q: hexadecimal is not accepted: want %s", what, t, example)
	}
	exp := 0
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		j := i + 1
		neg := false
		if j < len(t) && (t[j] == '+' || t[j] == '-') {
			neg = t[j] == '-'
			j++
		}
		k := j
		for k < len(t) && isDigit(t[k]) {
			exp = exp*10 + int(t[k]-'0')
			if exp > maxExponent {
				return nil, "", fmt.Errorf("%s %q: exponent beyond ±%d is not accepted: want %s", what, t, maxExponent, example)
			}
			k++
		}
		// "2E" is two exa-; "2e6" is two million. An exponent needs digits.
		if k > j {
			if neg {
				exp = -exp
			}
			i = k
		} else {
			exp = 0
		}
	}
	r, ok := new(big.Rat).SetString(mant.String())
	if !ok {
		return nil, "", fmt.Errorf("%s %q is not a number: want %s", what, t, example)
	}
	if exp != 0 {
		p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil))
		if exp > 0 {
			r.Mul(r, p)
		} else {
			r.Quo(r, p)
		}
	}
	return r, strings.TrimSpace(t[i:]), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// prefixes are the multipliers a unit may start with. SI prefixes are
// powers of 1000, IEC ones (with "i") powers of 1024. Upper and lower case
// are the same, except "m": Kubernetes reads it as milli, so it is refused
// rather than silently taken as mega.
var siPrefix = map[byte]int{'k': 1, 'K': 1, 'M': 2, 'G': 3, 'g': 3, 'T': 4, 't': 4, 'P': 5, 'p': 5, 'E': 6, 'e': 6}

// splitPrefix takes an SI or IEC prefix from the start of unit and returns
// its multiplier and the rest. A unit without prefix has multiplier 1.
func splitPrefix(unit, what, value, example string) (*big.Rat, string, error) {
	if unit == "" {
		return big.NewRat(1, 1), "", nil
	}
	if unit[0] == 'm' {
		return nil, "", fmt.Errorf("%s %q: \"m\" is milli (as in Kubernetes): write M for mega (10⁶) or Mi for mebi (2²⁰); want %s", what, value, example)
	}
	n, ok := siPrefix[unit[0]]
	if !ok {
		return big.NewRat(1, 1), unit, nil
	}
	rest := unit[1:]
	base := int64(1000)
	if strings.HasPrefix(rest, "i") || strings.HasPrefix(rest, "I") {
		base, rest = 1024, rest[1:]
	}
	m := new(big.Int).Exp(big.NewInt(base), big.NewInt(int64(n)), nil)
	return new(big.Rat).SetInt(m), rest, nil
}

// ratToInt64 rounds r up to a whole number (as Kubernetes rounds a fractional
// quantity of bytes) and checks it fits an int64.
func ratToInt64(r *big.Rat, what, value string) (int64, error) {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return 0, fmt.Errorf("%s %q is too large: want at most %d", what, value, int64(math.MaxInt64))
	}
	return q.Int64(), nil
}

// ratToFloat converts r to the nearest float64 and checks it is finite.
func ratToFloat(r *big.Rat, what, value string) (float64, error) {
	f, _ := r.Float64()
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("%s %q is too large", what, value)
	}
	return f, nil
}
