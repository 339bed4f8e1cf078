package capacity

import (
	"cmp"
	"slices"
)

// ParetoPoint is one candidate at one rate: how fast each user is served
// (output tokens/s per user, 1000 / mean ITL) against how much the GPUs
// produce (output tokens/s per GPU).
type ParetoPoint struct {
	Mode              string  `json:"mode"`
	Candidate         string  `json:"candidate"`
	RatePerS          float64 `json:"requests_per_s"`
	TokensPerSPerUser float64 `json:"tokens_per_s_per_user"`
	TokensPerSPerGPU  float64 `json:"output_tokens_per_s_per_gpu"`
	OnFront           bool    `json:"on_front"`
}

// paretoFractions are the shares of a candidate's capacity it is drawn at.
var paretoFractions = []float64{0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 1}

// Pareto traces every candidate that meets the SLO from a tenth of its
// capacity to all of it, and marks per mode the points no other point of
// that mode beats on both axes (the Pareto front).
func (q *Query) Pareto(res *Result) []ParetoPoint {
	var pts []ParetoPoint
	for _, c := range res.Candidates {
		if !c.MeetsSLO || c.RequestsPerSCapacity <= 0 {
			continue
		}
		for _, f := range paretoFractions {
			rate := f * c.RequestsPerSCapacity
			e := q.evaluate(c.shape, c.load.workers, rate)
			if !e.ok || e.itlMeanMS <= 0 {
				continue
			}
			pts = append(pts, ParetoPoint{Mode: c.Mode, Candidate: c.Describe(), RatePerS: rate,
				TokensPerSPerUser: 1000 / e.itlMeanMS, TokensPerSPerGPU: rate * float64(q.OutputTokens) / float64(c.GPUs)})
		}
	}
	for i := range pts {
		pts[i].OnFront = true
		for j := range pts {
			if i != j && pts[j].Mode == pts[i].Mode && dominates(pts[j], pts[i]) {
				pts[i].OnFront = false
				break
			}
		}
	}
	slices.SortStableFunc(pts, func(a, b ParetoPoint) int {
		return cmp.Or(cmp.Compare(a.Mode, b.Mode), cmp.Compare(a.TokensPerSPerUser, b.TokensPerSPerUser), cmp.Compare(b.TokensPerSPerGPU, a.TokensPerSPerGPU))
	})
	return pts
}

// dominates reports whether a is at least as good as b on both axes and
// better on one.
func dominates(a, b ParetoPoint) bool {
	return a.TokensPerSPerUser >= b.TokensPerSPerUser && a.TokensPerSPerGPU >= b.TokensPerSPerGPU &&
		(a.TokensPerSPerUser > b.TokensPerSPerUser || a.TokensPerSPerGPU > b.TokensPerSPerGPU)
}
