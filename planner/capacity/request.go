package capacity

import "github.com/kvplan/kvplan/perf"

// requestCoster is an engine model that knows what a request costs before
// its worker on a path (*perf.Model: the fitted request_ms and
// request_us_per_token on the direct path). A stand-in timer without it
// costs what the path alone does (0 on the direct path).
type requestCoster interface {
	RequestCost(perf.RequestPath) perf.RequestCost
}

// requestCost is what a request pays on q.Path before it reaches role r's
// worker: the same perf.RequestPath.Cost that kvplan perf, disagg and
// simulate take their TTFT's first term from.
func (q *Query) requestCost(r *role) perf.RequestCost {
	if m, ok := r.timer.(requestCoster); ok {
		return m.RequestCost(q.Path)
	}
	return q.Path.Cost(nil)
}

// requestPart is the request's cost as a TTFT part, at the mean prompt
// (the per-token share is small beside the prompts' prefill, whose spread
// the prefill part carries): "frontend" through one, "engine request" direct.
func (q *Query) requestPart(r *role) part {
	ms := q.requestCost(r).MS(float64(q.InputTokens))
	name := "engine request"
	if q.Path.IsFrontend() {
		name = "frontend"
	}
	return part{name, ms, ms, nil}
}
