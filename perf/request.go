package perf

import (
	"fmt"

	"github.com/kvplan/kvplan/catalog"
)

// DefaultFrontendMS is what a serving frontend (Dynamo's) costs a request
// in TTFT: FACTS.md §5 measured +13 ms at
// concurrency 1 with Qwen3-0.6B, 512 tokens in.
const DefaultFrontendMS = 13

// Request paths: how a request reaches its worker's scheduler.
const (
	// PathFrontend: through a serving frontend (Dynamo's), which does
	// the HTTP, tokenization and routing in place of the engine's own
	// server, and sends the worker token ids. The request pays the
	// frontend's cost, not the engine's.
	PathFrontend = "frontend"
	// PathDirect: to the engine's own HTTP server (vllm serve, trtllm-serve,
	// sglang.launch_server; behind KServe or llm-d's gateway, which forward
	// the HTTP to it), as the benchmarks the engine model is fitted on were
	// run. The request pays the engine model's fitted request_ms +
	// request_us_per_token × prompt tokens.
	PathDirect = "direct"
)

// RequestPaths are the paths, for help texts and "did you mean".
var RequestPaths = []string{PathFrontend, PathDirect}

// RequestPath is how a request reaches its worker and what that costs it
// before the worker's scheduler sees it. Every command's TTFT starts with
// it (kvplan perf, plan, disagg, simulate, check), through Cost, so the same
// request costs the same in each. The zero value is the direct path.
//
// Why the frontend's cost replaces the engine's and does not add to it:
// the frontend serves the HTTP request and tokenizes it itself, and the
// worker gets token ids. FACTS.md §5 bounds the whole path's fixed cost:
// a cached-prefix request through Dynamo took ~15 ms with one iteration of
// prefill in it, which leaves no room for the engine's own request cost
// (5 ms + 2.94 µs a token for vLLM, 9.4 ms at 1,500 tokens) beside the
// frontend's 13 ms.
type RequestPath struct {
	Name       string  // PathFrontend or PathDirect; "" = PathDirect
	FrontendMS float64 // PathFrontend's cost per request, ms
}

// Frontend is the path through a frontend costing ms a request.
func Frontend(ms float64) RequestPath { return RequestPath{Name: PathFrontend, FrontendMS: ms} }

// Direct is the path straight to the engine's server.
func Direct() RequestPath { return RequestPath{Name: PathDirect} }

// IsFrontend says whether the request goes through a frontend.
func (p RequestPath) IsFrontend() bool { return p.Name == PathFrontend }

// String is the path's name.
func (p RequestPath) String() string {
	if p.IsFrontend() {
		return PathFrontend
	}
	return PathDirect
}

// RequestCost is what a request pays on its path before its worker, as a
// fixed part and a part per prompt token.
type RequestCost struct {
	Path       string  // PathFrontend or PathDirect
	FixedMS    float64 // per request, ms
	PerTokenMS float64 // per prompt token, ms
	// Formula and Source say where the figure comes from, for derivations.
	Formula string
	Source  string
}

// MS is the cost of a request of promptTokens tokens.
func (c RequestCost) MS(promptTokens float64) float64 {
	return c.FixedMS + promptTokens*c.PerTokenMS
}

// Values writes the cost's formula with its numbers for promptTokens.
func (c RequestCost) Values(promptTokens float64) string {
	if c.PerTokenMS == 0 {
		return fmt.Sprintf("%g ms (%s path)", c.FixedMS, c.Path)
	}
	return fmt.Sprintf("%g ms + %g tokens × %g µs (%s path)", c.FixedMS, promptTokens, c.PerTokenMS*1000, c.Path)
}

// Cost is the path's cost with the engine model's efficiencies e (used on
// the direct path; nil there costs 0, for engine models without a request
// cost).
func (p RequestPath) Cost(e *catalog.Efficiency) RequestCost {
	if p.IsFrontend() {
		return RequestCost{Path: PathFrontend, FixedMS: p.FrontendMS,
			Formula: "the frontend's cost per request (HTTP, tokenization, routing, in place of the engine's server)",
			Source:  "FACTS.md §5: Dynamo's frontend, +13 ms at concurrency 1; --frontend-ms sets it"}
	}
	c := RequestCost{Path: PathDirect, Formula: "request_ms + prompt tokens × request_us_per_token (the engine's own HTTP server and tokenizer)"}
	if e != nil {
		c.FixedMS, c.PerTokenMS = e.RequestMS, e.RequestUSTok/1000
		c.Source = "the engine model's " + e.Key() + ", fitted on benchmarks run direct to the engine"
	}
	return c
}

// RequestCost is the cost of the path with this model's efficiencies.
func (m *Model) RequestCost(p RequestPath) RequestCost { return p.Cost(&m.Efficiency) }
