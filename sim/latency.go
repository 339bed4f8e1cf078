package sim

import (
	"math"
	"slices"
)

// Latency summarises a distribution of milliseconds: nearest-rank
// percentiles (p50 is the value at rank ceil(0.5 × n)) and the mean.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
}

// latencyGamma is the bucket ratio of latencySketch: a percentile is off by
// at most (γ − 1)/(γ + 1), 0.1%, of its value.
const latencyGamma = 1.002

var latencyLogGamma = math.Log(latencyGamma)

// latencyExactMax is the most values a latencySketch keeps as they are.
const latencyExactMax = 1 << 14

// latencySketch collects non-negative milliseconds in bounded memory. Up to
// latencyExactMax values it keeps them, and its percentiles are exact; past
// that it moves them into a logarithmic histogram (bucket i holds values in
// (γ^(i−1), γ^i]) with a count of zeros, so a run of any length keeps its
// percentiles in a few tens of KB. A percentile is then the geometric
// middle of its bucket, clamped to [min, max]: within 0.1% of the
// nearest-rank value, and exact when all values are equal. The sum (so the
// mean), the minimum and the maximum stay exact. The buckets span only the
// range of values seen (about 1,150 buckets a decade).
type latencySketch struct {
	n, zeros int64
	sum      float64
	min, max float64
	exact    []float64 // the values, until there are too many
	binned   bool
	off      int // bucket index of counts[0]
	counts   []int64
}

func (s *latencySketch) add(v float64) {
	if !(v > 0) {
		v = 0 // negative only by rounding; NaN never comes from the model's sums
	}
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	s.sum += v
	if !s.binned {
		if len(s.exact) < latencyExactMax {
			s.exact = append(s.exact, v)
			return
		}
		s.binned = true
		for _, x := range s.exact {
			s.bin(x)
		}
		s.exact = nil
	}
	s.bin(v)
}

// bin counts v in its bucket.
func (s *latencySketch) bin(v float64) {
	if v == 0 {
		s.zeros++
		return
	}
	i := int(math.Ceil(math.Log(v) / latencyLogGamma))
	switch {
	case len(s.counts) == 0:
		s.off = i
		s.counts = append(s.counts, 0)
	case i < s.off:
		grown := make([]int64, len(s.counts)+s.off-i, max(2*len(s.counts), len(s.counts)+s.off-i))
		copy(grown[s.off-i:], s.counts)
		s.counts, s.off = grown, i
	case i >= s.off+len(s.counts):
		s.counts = append(s.counts, make([]int64, i-s.off-len(s.counts)+1)...)
	}
	s.counts[i-s.off]++
}

// quantile returns the nearest-rank value at fraction p of the values.
func (s *latencySketch) quantile(p float64) float64 {
	if s.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(p * float64(s.n)))
	rank = min(max(rank, 1), s.n)
	if !s.binned {
		slices.Sort(s.exact)
		return s.exact[rank-1]
	}
	if rank <= s.zeros {
		return 0
	}
	seen := s.zeros
	for k, c := range s.counts {
		seen += c
		if seen >= rank {
			i := float64(k + s.off)
			v := 2 * math.Pow(latencyGamma, i) / (latencyGamma + 1)
			return min(max(v, s.min), s.max)
		}
	}
	return s.max
}

func (s *latencySketch) summary() Latency {
	if s.n == 0 {
		return Latency{}
	}
	return Latency{P50: s.quantile(0.5), P90: s.quantile(0.9), P99: s.quantile(0.99), Mean: s.sum / float64(s.n)}
}
