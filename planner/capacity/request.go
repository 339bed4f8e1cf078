package capacity

import (
	"fmt"

	"github.com/kvplan/kvplan/perf"
)

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
	return q.costOn(r, q.Path)
}

// costOn is what a request pays on path with role r's engine model.
func (q *Query) costOn(r *role, path perf.RequestPath) perf.RequestCost {
	if m, ok := r.timer.(requestCoster); ok {
		return m.RequestCost(path)
	}
	return path.Cost(nil)
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

// requestAssumption says which path the TTFTs take and what the other one
// would cost, with the engine model of role r (the first shape's): through
// a frontend the engine's own fitted request cost is left out, and for an
// engine whose fit carries a large one (SGLang's) that is a difference a
// reader must see.
func (q *Query) requestAssumption(r *role) string {
	n := float64(q.InputTokens)
	cur := q.requestCost(r)
	other := perf.Frontend(perf.DefaultFrontendMS)
	if q.Path.IsFrontend() {
		other = perf.Direct()
	}
	oc := q.costOn(r, other)
	if q.Path.IsFrontend() && oc.MS(n) == 0 {
		return fmt.Sprintf("requests reach the workers through a frontend (Dynamo's) at %.3g ms each, in place of the engine's own server; this engine model prices no request cost of its own for the direct path (--request-path direct)", cur.MS(n))
	}
	if q.Path.IsFrontend() {
		return fmt.Sprintf("requests reach the workers through a frontend (Dynamo's) at %.3g ms each, in place of the engine's own server; direct to the engine's server (--request-path direct: KServe, llm-d, a Service) its fitted request cost would be %.3g ms at %d prompt tokens",
			cur.MS(n), oc.MS(n), q.InputTokens)
	}
	return fmt.Sprintf("requests reach the engine's own server directly (KServe, llm-d, a Service): its fitted request cost, %.3g ms at %d prompt tokens; through a frontend (--request-path frontend: Dynamo) %.3g ms in its place",
		cur.MS(n), q.InputTokens, oc.MS(n))
}
