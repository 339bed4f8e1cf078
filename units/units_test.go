package units

import "testing"

func TestParseBytes(t *testing.T) {
	cases := []struct {
		in   string
		want int64
	}{
		{"114688", 114688},
		{"272MB", 272_000_000},
		{"4GiB", 4 * 1024 * 1024 * 1024},
		{"3584Mi", 3584 * 1024 * 1024},
		{"4G", 4_000_000_000},
	}
	for _, c := range cases {
		got, err := ParseBytes(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "-3", "lots", "4XB"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) succeeded; want an error", bad)
		}
	}
}

func TestParseQuantity(t *testing.T) {
	cases := []struct {
		in   string
		want int64
	}{
		{"3584Mi", 3_758_096_384},
		{"10Gi", 10_737_418_240},
		{"4G", 4_000_000_000},
		{"4096", 4096},
	}
	for _, c := range cases {
		got, err := ParseQuantity(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseQuantity(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"-1Gi", "100m", "x"} {
		if _, err := ParseQuantity(bad); err == nil {
			t.Errorf("ParseQuantity(%q) succeeded; want an error", bad)
		}
	}
}

func TestParseRate(t *testing.T) {
	cases := []struct {
		in   string
		want float64
	}{
		{"104MB/s", 104e6},
		{"25GB/s", 25e9},
		{"1Gbps", 125e6},
		{"100Gb/s", 12.5e9},
		{"3.35TB/s", 3.35e12},
		{"608MB/s", 608e6},
	}
	for _, c := range cases {
		got, err := ParseRate(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "104MB", "-1Gbps", "fast/s"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) succeeded; want an error", bad)
		}
	}
}

func TestParseMS(t *testing.T) {
	cases := []struct {
		in   string
		want float64
	}{
		{"13", 13}, {"0.5ms", 0.5}, {"20us", 0.02}, {"2s", 2000},
	}
	for _, c := range cases {
		got, err := ParseMS(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseMS(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	if _, err := ParseMS("-1ms"); err == nil {
		t.Error("ParseMS(-1ms) succeeded; want an error")
	}
}

func TestCents(t *testing.T) {
	cases := []struct {
		in    float64
		cents float64
		usd   string
	}{
		{91.19999999999999, 91.2, "$91.20"}, // 8 × 11.4 in floats
		{8 * 11.4, 91.2, "$91.20"},
		{0.125, 0.13, "$0.13"}, // half away from zero
		{27.52, 27.52, "$27.52"},
		{0, 0, "$0.00"},
		{-3.456, -3.46, "-$3.46"},
	}
	for _, c := range cases {
		if got := Cents(c.in); got != c.cents {
			t.Errorf("Cents(%v) = %v, want %v", c.in, got, c.cents)
		}
		if got := USD(c.in); got != c.usd {
			t.Errorf("USD(%v) = %q, want %q", c.in, got, c.usd)
		}
	}
}
