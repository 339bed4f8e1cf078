package units

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestSizeGrammar: one grammar for sizes in flags, plans and catalogs. The
// expected values are written out by hand (1 GiB = 1,073,741,824 bytes).
func TestSizeGrammar(t *testing.T) {
	const gi = 1 << 30
	cases := []struct {
		in   string
		want int64
	}{
		{"4GiB", 4 * gi},
		{"4 GiB", 4 * gi},
		{"4Gi", 4 * gi},
		{"4GIB", 4 * gi}, // prefix case does not matter
		{"4gi", 4 * gi},
		{"1.5Gi", 1610612736}, // 1.5 × 1,073,741,824, exactly
		{"1.5 GiB", 1610612736},
		{"2.7 GiB", 2899102925}, // 2.7 × 2^30 = 2,899,102,924.8, rounded up as Kubernetes does
		{"1.3Gi", 1395864372},   // 1,395,864,371.2 → up
		{"272MB", 272_000_000},
		{"272 MB", 272_000_000},
		{"4G", 4_000_000_000},
		{"4k", 4000},
		{"4K", 4000},
		{"4KiB", 4096},
		{"1e9", 1_000_000_000},
		{"1.5e3MB", 1_500_000_000},
		{"10_737_418_240", 10737418240},
		{"0.5", 1}, // half a byte rounds up, as Kubernetes' Value() does
		{"9223372036854775807", math.MaxInt64},
		{"8EiB", 0}, // placeholder replaced below: 8 EiB = 2^63 overflows
	}
	for _, c := range cases[:len(cases)-1] {
		got, err := ParseBytes(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
		q, err := ParseQuantity(c.in)
		if err != nil || q != c.want {
			t.Errorf("ParseQuantity(%q) = %d, %v; want %d (one grammar)", c.in, q, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"8EiB", "too large"},
		{"9223372036854775808", "too large"},
		{"100m", `"m" is milli`},
		{"4Gb", "in bits (lower-case b): a size is in bytes, write B (4GB)"},
		{"4gib", "write B (4GiB)"},
		{"-1Gi", "negative"},
		{"NaN", "not a finite number"},
		{"Inf", "not a finite number"},
		{"0x10", "hexadecimal"},
		{"1e400", "exponent beyond"},
		{"4XB", "not understood"},
		{"", "empty size"},
		{strings.Repeat("9", 1000), "characters long"},
	} {
		_, err := ParseBytes(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseBytes(%.40q) error = %v; want one containing %q", c.in, err, c.want)
		}
	}
}

func TestCountGrammar(t *testing.T) {
	cases := []struct {
		in   string
		want int64
	}{
		{"8000", 8000},
		{"1.5k", 1500},
		{"1.5K", 1500},
		{"2M", 2_000_000},
		{"1e6", 1_000_000},
		{"1E6", 1_000_000},
		{"2.5e3", 2500},
		{"10_000", 10000},
		{"7B", 7_000_000_000},
		{" 32 ", 32},
		{"+5", 5},
	}
	for _, c := range cases {
		got, err := ParseCount(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseCount(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"1.2345k", "not a whole number (1234.500)"},
		{"0.5", "not a whole number"},
		{"1e19", "too large"},
		{"3m", `"m" is milli`},
		{"lots", "does not start with a number"},
		{"1_", "not understood"},
		{"-3", "negative"},
		{"nan", "not a finite number"},
	} {
		_, err := ParseCount(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseCount(%q) error = %v; want one containing %q", c.in, err, c.want)
		}
	}
}

func TestRateGrammar(t *testing.T) {
	cases := []struct {
		in   string
		want float64
	}{
		{"25 GB/s", 25e9},
		{"800Gbit/s", 100e9},
		{"1.5GiB/s", 1610612736},
		{"10kbps", 1250},
		{"1MBps", 1e6},
		{"0B/s", 0},
	}
	for _, c := range cases {
		got, err := ParseRate(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"InfGB/s", "NaN B/s", "10mbps", "1GB", "1XB/s", "-1GB/s", "1e31GB/s"} {
		if v, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) = %v; want an error", bad, v)
		}
	}
}

func TestDurationGrammar(t *testing.T) {
	cases := []struct {
		in   string
		want float64
	}{
		{"0.5ms", 0.5},
		{"0.5 ms", 0.5},
		{"20µs", 0.02},
		{"20μs", 0.02}, // Greek mu, not micro sign
		{"1.5 min", 90_000},
		{"1m30s", 90_000},
		{"1h", 3_600_000},
		{"1e3", 1000},
		{"250ns", 0.00025},
	}
	for _, c := range cases {
		got, err := ParseMS(c.in)
		if err != nil || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("ParseMS(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"Inf", "+Inf", "NaN", "-1ms", "5 fortnights", "1e99s"} {
		if v, err := ParseMS(bad); err == nil {
			t.Errorf("ParseMS(%q) = %v; want an error", bad, v)
		}
	}
}

func TestParseNumber(t *testing.T) {
	for in, want := range map[string]float64{"0.9": 0.9, "1.5k": 1500, "1e6": 1e6, "2.5M": 2.5e6} {
		if got, err := ParseNumber(in); err != nil || got != want {
			t.Errorf("ParseNumber(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"NaN", "Inf", "-Inf", "1x", "1B"} {
		if _, err := ParseNumber(bad); err == nil {
			t.Errorf("ParseNumber(%q) succeeded", bad)
		}
	}
}

func TestParseEnum(t *testing.T) {
	formats := []string{"table", "json", "markdown"}
	if got, err := ParseEnum("JSON", formats); err != nil || got != "json" {
		t.Errorf("ParseEnum(JSON) = %q, %v", got, err)
	}
	if got, err := ParseEnum(" FP8 ", []string{"bf16", "fp8"}); err != nil || got != "fp8" {
		t.Errorf("ParseEnum(FP8) = %q, %v", got, err)
	}
	_, err := ParseEnum("jsn", formats)
	if err == nil || err.Error() != `"jsn" is not accepted: want one of "table", "json", "markdown"; did you mean json?` {
		t.Errorf("ParseEnum(jsn) error = %v", err)
	}
	_, err = ParseEnum(strings.Repeat("x", 10<<20), formats)
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("a 10 MiB value is echoed in full: %d bytes", len(err.Error()))
	}
}

func TestCheckRanges(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{CheckFloat(math.NaN(), 0, 1e6, "ms"), "NaN is not a finite number: want 0 to 1,000,000 ms"},
		{CheckFloat(math.Inf(1), 0, 1e6, "ms"), "+Inf is not a finite number: want 0 to 1,000,000 ms"},
		{CheckFloat(-0.5, 0, 1, ""), "-0.5 is out of range: want 0 to 1"},
		{CheckFloat(1.5, 0, 1, ""), "1.5 is out of range: want 0 to 1"},
		{CheckInt(math.MaxInt64, 1, 10_000_000, "tokens"), "9223372036854775807 is out of range: want 1 to 10,000,000 tokens"},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("got %v, want %q", c.err, c.want)
		}
	}
	if CheckFloat(0.9, 0, 1, "") != nil || CheckInt(5, 1, 5, "") != nil {
		t.Error("in-range values refused")
	}
	var re *RangeError
	if !errors.As(CheckInt(0, 1, 2, ""), &re) {
		t.Error("CheckInt error is not a *RangeError")
	}
}

// TestCheckedArithmetic: the KV product bytes × tokens × tp of the issue
// (input_tokens = 2^63-1 gave negative KV bytes).
func TestCheckedArithmetic(t *testing.T) {
	for _, c := range []struct {
		a, b int64
		want int64
		ok   bool
	}{
		{3, 4, 12, true},
		{-3, 4, -12, true},
		{math.MaxInt64, 1, math.MaxInt64, true},
		{math.MinInt64, 1, math.MinInt64, true},
		{-1 << 62, 2, math.MinInt64, true},
		{1 << 62, 2, 0, false},
		{math.MinInt64, -1, 0, false},
		{math.MaxInt64, 114688, 0, false},
		{0, math.MaxInt64, 0, true},
	} {
		got, err := MulInt64(c.a, c.b)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("MulInt64(%d, %d) = %d, %v; want %d ok=%v", c.a, c.b, got, err, c.want, c.ok)
		}
	}
	if _, err := AddInt64(math.MaxInt64, 1); err == nil {
		t.Error("MaxInt64 + 1 did not overflow")
	}
	if s, err := AddInt64(math.MinInt64, math.MaxInt64); err != nil || s != -1 {
		t.Errorf("MinInt64 + MaxInt64 = %d, %v", s, err)
	}
	// qwen3-8b: 36 layers × 8 kv heads × 128 dim × 2 (K,V) × 2 bytes = 147,456 B/token.
	if kv, err := Product(147456, 8000, 2); err != nil || kv != 2_359_296_000 {
		t.Errorf("Product = %d, %v", kv, err)
	}
	_, err := NewInt(147456).Mul(math.MaxInt64).Mul(2).Value()
	var oe *OverflowError
	if !errors.As(err, &oe) || !strings.Contains(err.Error(), "overflows a 64-bit integer") {
		t.Errorf("chain overflow error = %v", err)
	}
	if v, err := NewInt(2).Mul(3).Add(4).Value(); err != nil || v != 10 {
		t.Errorf("2×3+4 = %d, %v", v, err)
	}
	for _, f := range []float64{math.NaN(), math.Inf(-1), 9.3e18, -9.3e18} {
		if _, err := FloatToInt64(f); err == nil {
			t.Errorf("FloatToInt64(%g) succeeded", f)
		}
	}
	if v, err := FloatToInt64(2.5); err != nil || v != 3 {
		t.Errorf("FloatToInt64(2.5) = %d, %v", v, err)
	}
}

func TestFlagValues(t *testing.T) {
	c := &CountFlag{Min: 1, Max: 10_000_000}
	if err := c.Set("1.5k"); err != nil || c.V != 1500 {
		t.Errorf("CountFlag 1.5k = %d, %v", c.V, err)
	}
	if err := c.Set("9223372036854775807"); err == nil || !strings.Contains(err.Error(), "want 1 to 10,000,000") {
		t.Errorf("CountFlag range error = %v", err)
	}
	d := &DurationFlag{}
	if err := d.Set("Inf"); err == nil {
		t.Error("DurationFlag accepted Inf")
	}
	n := &NumberFlag{Min: 0, Max: 1}
	if err := n.Set("NaN"); err == nil {
		t.Error("NumberFlag accepted NaN")
	}
	e := &EnumFlag{Allowed: []string{"table", "json"}}
	if err := e.Set("JSON"); err != nil || e.V != "json" {
		t.Errorf("EnumFlag JSON = %q, %v", e.V, err)
	}
}

// TestParseMemoryForgottenUnit: a bare number under 1 KiB is a forgotten
// unit (issue 23: --memory-limit 16 was 16 bytes without a hint).
func TestParseMemoryForgottenUnit(t *testing.T) {
	for _, s := range []string{"16", "0.5", " 512 ", "1023"} {
		_, err := ParseMemory(s)
		if err == nil || !strings.Contains(err.Error(), "did you mean "+strings.TrimSpace(s)+"Gi?") {
			t.Errorf("%q: %v, want a did-you-mean %sGi", s, err, strings.TrimSpace(s))
		}
	}
	for _, tc := range []struct {
		s    string
		want int64
	}{{"16Gi", 16 << 30}, {"1024", 1024}, {"4096", 4096}, {"1e9", 1e9}, {"3584Mi", 3584 << 20}, {"0", 0}, {"512B", 512}} {
		if got, err := ParseMemory(tc.s); err != nil || got != tc.want {
			t.Errorf("%q: %d, %v; want %d", tc.s, got, err, tc.want)
		}
	}
}
