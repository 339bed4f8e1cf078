package units

import (
	"math"
	"testing"
)

// TestBytesFormat: two significant digits in binary units, whole units from
// 10 up, half up; worked by hand (1536 / 1024 = 1.5; 10188 / 1024 = 9.949 →
// 9.9; 10200 / 1024 = 9.961 → 10.0 → "10": the carry drops the decimal;
// 172,032,000 / 2^20 = 164.06).
func TestBytesFormat(t *testing.T) {
	cases := []struct {
		in   int64
		want string
	}{
		{0, "0 B"}, {9, "9 B"}, {10, "10 B"}, {1023, "1023 B"},
		{1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {10188, "9.9 KiB"}, {10200, "10 KiB"}, {10240, "10 KiB"},
		{114688, "112 KiB"}, {172032000, "164 MiB"}, {1 << 30, "1.0 GiB"}, {3 << 39, "1.5 TiB"},
		{-1536, "-1.5 KiB"}, {math.MaxInt64, "8.0 EiB"}, {math.MinInt64, "-8.0 EiB"},
	}
	for _, c := range cases {
		if got := Bytes(c.in); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRateFormat: SI prefixes, the figure cut (not rounded) to three
// decimals without trailing zeros; 1000 B/s is 1 kB/s, not 1000 B/s.
func TestRateFormat(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{0, "0 B/s"}, {1, "1 B/s"}, {999.9999, "999.999 B/s"}, {1000, "1 kB/s"}, {104e6, "104 MB/s"},
		{1.25e9, "1.25 GB/s"}, {12.5e9, "12.5 GB/s"}, {25e9 / 3, "8.333 GB/s"}, {-2e6, "-2 MB/s"},
		{1e-3, "1 mB/s"}, {1e33, "1000 QB/s"}, {math.Inf(1), "+Inf QB/s"},
	}
	for _, c := range cases {
		if got := Rate(c.in); got != c.want {
			t.Errorf("Rate(%g) = %q, want %q", c.in, got, c.want)
		}
	}
}
