package units

import (
	"strconv"
)

// The flag values below implement flag.Value (Set and String), so a command
// can take a count, size, rate or duration in the one grammar from any flag
// library that accepts a flag.Value (urfave/cli's GenericFlag does):
//
//	&cli.GenericFlag{Name: "tokens", Value: &units.CountFlag{V: 8000, Min: 1, Max: 10_000_000}}
//
// Set refuses a value outside [Min, Max] with the range in the message;
// Min = Max = 0 means no bound beyond the type's own.

// CountFlag is a whole count ("8000", "1.5k", "2M", "1e6").
type CountFlag struct {
	V        int64
	Min, Max int64
}

// Set parses s with ParseCount and checks the range.
func (f *CountFlag) Set(s string) error {
	v, err := ParseCount(s)
	if err != nil {
		return err
	}
	if f.Min != 0 || f.Max != 0 {
		if err := CheckInt(v, f.Min, f.Max, ""); err != nil {
			return err
		}
	}
	f.V = v
	return nil
}

func (f *CountFlag) String() string { return strconv.FormatInt(f.V, 10) }

// SizeFlag is a size in bytes ("4GiB", "1.5Gi", "272MB").
type SizeFlag struct {
	V        int64
	Min, Max int64
}

// Set parses s with ParseBytes and checks the range.
func (f *SizeFlag) Set(s string) error {
	v, err := ParseBytes(s)
	if err != nil {
		return err
	}
	if f.Min != 0 || f.Max != 0 {
		if err := CheckInt(v, f.Min, f.Max, "bytes"); err != nil {
			return err
		}
	}
	f.V = v
	return nil
}

func (f *SizeFlag) String() string { return strconv.FormatInt(f.V, 10) }

// NumberFlag is a finite real number ("0.9", "1.5k", "1e6").
type NumberFlag struct {
	V        float64
	Min, Max float64
}

// Set parses s with ParseNumber and checks the range.
func (f *NumberFlag) Set(s string) error {
	v, err := ParseNumber(s)
	if err != nil {
		return err
	}
	if f.Min != 0 || f.Max != 0 {
		if err := CheckFloat(v, f.Min, f.Max, ""); err != nil {
			return err
		}
	}
	f.V = v
	return nil
}

func (f *NumberFlag) String() string { return strconv.FormatFloat(f.V, 'g', -1, 64) }

// DurationFlag is a duration in milliseconds ("0.5ms", "2s"; bare = ms).
type DurationFlag struct {
	MS       float64
	Min, Max float64
}

// Set parses s with ParseMS and checks the range.
func (f *DurationFlag) Set(s string) error {
	v, err := ParseMS(s)
	if err != nil {
		return err
	}
	if f.Min != 0 || f.Max != 0 {
		if err := CheckFloat(v, f.Min, f.Max, "ms"); err != nil {
			return err
		}
	}
	f.MS = v
	return nil
}

func (f *DurationFlag) String() string { return strconv.FormatFloat(f.MS, 'g', -1, 64) }

// RateFlag is a throughput in bytes per second ("104MB/s", "1Gbps").
type RateFlag struct {
	BytesPerS float64
	Min, Max  float64
}

// Set parses s with ParseRate and checks the range.
func (f *RateFlag) Set(s string) error {
	v, err := ParseRate(s)
	if err != nil {
		return err
	}
	if f.Min != 0 || f.Max != 0 {
		if err := CheckFloat(v, f.Min, f.Max, "B/s"); err != nil {
			return err
		}
	}
	f.BytesPerS = v
	return nil
}

func (f *RateFlag) String() string { return strconv.FormatFloat(f.BytesPerS, 'g', -1, 64) }

// EnumFlag is one of Allowed, matched without regard to case.
type EnumFlag struct {
	V       string
	Allowed []string
}

// Set matches s with ParseEnum.
func (f *EnumFlag) Set(s string) error {
	v, err := ParseEnum(s, f.Allowed)
	if err != nil {
		return err
	}
	f.V = v
	return nil
}

func (f *EnumFlag) String() string { return f.V }
