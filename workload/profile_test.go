package workload

import (
	"strings"
	"testing"
)

func TestReadProfile(t *testing.T) {
	p, err := ReadProfile("../testdata/plan/day-profile.csv")
	if err != nil {
		t.Fatal(err)
	}
	// 24 hourly rows, the peak 42/s at 12:00 (the file's literal content).
	if len(p.Periods) != 24 || p.Periods[p.Peak()].Start() != "12:00" || p.Periods[p.Peak()].RatePerS != 42 || p.LengthS(23) != 3600 {
		t.Errorf("%d periods, peak %s at %g", len(p.Periods), p.Periods[p.Peak()].Start(), p.Periods[p.Peak()].RatePerS)
	}
	for _, c := range []struct {
		in    string
		s     float64
		wants string
	}{{"09:30", 34200, "09:30"}, {"9.5", 34200, "09:30"}, {"23:59:30", 86370, "23:59:30"}} {
		v, err := parseClock(c.in)
		if err != nil || v != c.s || clock(v) != c.wants {
			t.Errorf("parseClock(%q) = %g (%s), %v", c.in, v, clock(v), err)
		}
	}
}

func TestReadProfileBadInput(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"bad-negative.csv", "bad-negative.csv:3: time \"-1\": negative"},
		{"bad-order.csv", "bad-order.csv:4: time 01:00 is not after the previous row's 02:00"},
		{"bad-hour.csv", "bad-hour.csv:3: time \"25:00\": 25:00 is not within the day"},
		{"bad-rate.csv", "bad-rate.csv:3: rate \"fast\": want requests per second"},
	} {
		_, err := ReadProfile("../testdata/plan/" + c.file)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.file, err, c.want)
		}
	}
}
