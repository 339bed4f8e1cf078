package units

import (
	"fmt"
	"math"
	"math/bits"
)

// OverflowError is an integer product or sum that does not fit an int64.
type OverflowError struct {
	Op   string // "×" or "+"
	A, B int64
}

func (e *OverflowError) Error() string {
	return fmt.Sprintf("%d %s %d overflows a 64-bit integer (at most %s)", e.A, e.Op, e.B, Thousands(math.MaxInt64))
}

// MulInt64 returns a × b, or an *OverflowError when it does not fit.
func MulInt64(a, b int64) (int64, error) {
	if a == 0 || b == 0 {
		return 0, nil
	}
	neg := (a < 0) != (b < 0)
	ua, ub := absU(a), absU(b)
	hi, lo := bits.Mul64(ua, ub)
	limit := uint64(math.MaxInt64)
	if neg {
		limit++ // |MinInt64|
	}
	if hi != 0 || lo > limit {
		return 0, &OverflowError{Op: "×", A: a, B: b}
	}
	if neg {
		return int64(-lo), nil // -lo wraps to MinInt64 correctly when lo = 2^63
	}
	return int64(lo), nil
}

// AddInt64 returns a + b, or an *OverflowError when it does not fit.
func AddInt64(a, b int64) (int64, error) {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		return 0, &OverflowError{Op: "+", A: a, B: b}
	}
	return s, nil
}

// Product returns the product of factors (1 for none), or an
// *OverflowError naming the first step that overflowed:
// units.Product(bytesPerToken, tokens, tp).
func Product(factors ...int64) (int64, error) {
	p := int64(1)
	for _, f := range factors {
		var err error
		if p, err = MulInt64(p, f); err != nil {
			return 0, err
		}
	}
	return p, nil
}

func absU(x int64) uint64 {
	if x < 0 {
		return uint64(-(x + 1)) + 1
	}
	return uint64(x)
}

// Int is an int64 that remembers the first overflow of a chain of products
// and sums, so a formula reads as written and is checked once at the end:
//
//	kv, err := units.Int(bytesPerToken).Mul(tokens).Mul(tp).Value()
//
// The zero value is 0 with no error.
type Int struct {
	v   int64
	err error
}

// NewInt starts a chain at v. (Int(v) would be a conversion, so the
// constructor has its own name.)
func NewInt(v int64) Int { return Int{v: v} }

// Mul multiplies by x unless an earlier step overflowed.
func (c Int) Mul(x int64) Int {
	if c.err != nil {
		return c
	}
	c.v, c.err = MulInt64(c.v, x)
	return c
}

// Add adds x unless an earlier step overflowed.
func (c Int) Add(x int64) Int {
	if c.err != nil {
		return c
	}
	c.v, c.err = AddInt64(c.v, x)
	return c
}

// Value returns the result, or the first overflow.
func (c Int) Value() (int64, error) {
	if c.err != nil {
		return 0, c.err
	}
	return c.v, nil
}

// FloatToInt64 rounds a finite float to the nearest int64, or fails for NaN,
// ±Inf and values outside the int64 range (a float figure about to become a
// byte count or a token count).
func FloatToInt64(f float64) (int64, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%g is not a finite number", f)
	}
	r := math.Round(f)
	// 2^63 is exactly representable; every float below it fits.
	if r >= 9223372036854775808.0 || r < -9223372036854775808.0 {
		return 0, fmt.Errorf("%g does not fit a 64-bit integer (at most %s)", f, Thousands(math.MaxInt64))
	}
	return int64(r), nil
}
