package workload

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/kvplan/kvplan/internal/safefile"
)

// DaySeconds is the length of the day a rate profile describes.
const DaySeconds = 86_400

// MaxPeriods bounds a rate profile's rows: a point a minute.
const MaxPeriods = 1440

// profileFile is a rate profile read whole.
var profileFile = safefile.Kind{Name: "rate profile", MaxBytes: 1 << 20}

// Period is one row of a rate profile: from StartS seconds into the day
// (until the next row's start, the last until the day wraps to the first)
// requests arrive at RatePerS.
type Period struct {
	StartS   float64
	RatePerS float64
	Line     int // the row's line in the file
}

// Profile is a day's traffic, period by period.
type Profile struct {
	Source  string
	Periods []Period
}

// Start formats a period's start as HH:MM (HH:MM:SS when it has seconds).
func (p Period) Start() string { return clock(p.StartS) }

func clock(s float64) string {
	t := int(math.Round(s))
	h, m, sec := t/3600, t/60%60, t%60
	if sec != 0 {
		return fmt.Sprintf("%02d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d", h, m)
}

// LengthS is how long period i lasts: to the next start, the last to the
// first's start a day later.
func (p *Profile) LengthS(i int) float64 {
	if i+1 < len(p.Periods) {
		return p.Periods[i+1].StartS - p.Periods[i].StartS
	}
	return p.Periods[0].StartS + DaySeconds - p.Periods[i].StartS
}

// Peak is the period of the highest rate (the first of equals).
func (p *Profile) Peak() int {
	best := 0
	for i, q := range p.Periods {
		if q.RatePerS > p.Periods[best].RatePerS {
			best = i
		}
	}
	return best
}

// ReadProfile reads a rate profile: a CSV of two columns, the time a period
// starts and its rate in requests per second, one row a period (a header
// row may name them). A time is a clock time, HH:MM or HH:MM:SS, or a
// number of hours into the day (0, 1, 1.5, ...). Times must be at least 0,
// before 24:00 and increasing; rates finite and at least 0. Errors name the
// file, the line and the field.
func ReadProfile(path string) (*Profile, error) {
	data, err := safefile.ReadFile(path, profileFile)
	if err != nil {
		return nil, fmt.Errorf("--rate-profile: %w", err)
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	r.FieldsPerRecord = -1
	r.Comment = '#'
	p := &Profile{Source: path}
	for row := 0; ; row++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("--rate-profile %s:%d: %v", path, line, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) < 2 {
			return nil, fmt.Errorf("--rate-profile %s:%d: %d column, want the time a period starts and its requests/s (e.g. 09:00,42)", path, line, len(rec))
		}
		if row == 0 {
			if _, err := parseClock(rec[0]); err != nil {
				if _, err := strconv.ParseFloat(strings.TrimSpace(rec[1]), 64); err != nil {
					continue // a header row
				}
			}
		}
		t, err := parseClock(rec[0])
		if err != nil {
			return nil, fmt.Errorf("--rate-profile %s:%d: time %q: %v", path, line, strings.TrimSpace(rec[0]), err)
		}
		rate, err := strconv.ParseFloat(strings.TrimSpace(rec[1]), 64)
		if err != nil || math.IsNaN(rate) || math.IsInf(rate, 0) || rate < 0 || rate > 10_000_000 {
			return nil, fmt.Errorf("--rate-profile %s:%d: rate %q: want requests per second, a finite number from 0 to 10,000,000", path, line, strings.TrimSpace(rec[1]))
		}
		if n := len(p.Periods); n > 0 && t <= p.Periods[n-1].StartS {
			return nil, fmt.Errorf("--rate-profile %s:%d: time %s is not after the previous row's %s: the rows must go forward through the day", path, line, clock(t), clock(p.Periods[n-1].StartS))
		}
		if len(p.Periods) >= MaxPeriods {
			return nil, fmt.Errorf("--rate-profile %s: more than %d periods (one a minute)", path, MaxPeriods)
		}
		p.Periods = append(p.Periods, Period{StartS: t, RatePerS: rate, Line: line})
	}
	if len(p.Periods) == 0 {
		return nil, fmt.Errorf("--rate-profile %s: no periods: want rows of a start time and a rate, e.g. 00:00,12 then 01:00,9", path)
	}
	if p.Periods[p.Peak()].RatePerS <= 0 {
		return nil, fmt.Errorf("--rate-profile %s: every rate is 0: there is no traffic to plan for", path)
	}
	return p, nil
}

// parseClock reads HH:MM[:SS] or hours, into seconds into the day.
func parseClock(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		if len(parts) > 3 {
			return 0, fmt.Errorf("want HH:MM, HH:MM:SS or hours")
		}
		t := 0.0
		for i, part := range parts {
			v, err := strconv.Atoi(part)
			if err != nil || v < 0 || (i > 0 && v > 59) {
				return 0, fmt.Errorf("want HH:MM, HH:MM:SS or hours")
			}
			t += float64(v) * []float64{3600, 60, 1}[i]
		}
		if t >= DaySeconds {
			return 0, fmt.Errorf("%s is not within the day (00:00 to 23:59:59)", s)
		}
		return t, nil
	}
	h, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsNaN(h) || math.IsInf(h, 0):
		return 0, fmt.Errorf("want HH:MM, HH:MM:SS or hours")
	case h < 0:
		return 0, fmt.Errorf("negative: a period starts at 0 hours or later")
	case h >= 24:
		return 0, fmt.Errorf("%g hours is not within the day (0 to 24)", h)
	}
	return h * 3600, nil
}
