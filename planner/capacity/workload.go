package capacity

import (
	"fmt"
	"math"

	"github.com/kvplan/kvplan/openloop"
	"github.com/kvplan/kvplan/sim"
	"github.com/kvplan/kvplan/workload"
)

// checkWorkload reads the arrivals and the workload into what the analytic
// model uses: the squared CV of the gaps between arrivals, and, with a
// length distribution, its classes (requests longer than the model's
// context left out and counted), its mean lengths and its longest request.
func (q *Query) checkWorkload() error {
	b := q.Burstiness
	switch {
	case math.IsNaN(b) || b < 0 || b > 1e6 || b > 0 && b < 1e-3:
		return fmt.Errorf("burstiness %g: want a gamma shape between 0.001 and 1,000,000 (1 = Poisson, below 1 burstier)", b)
	case b > 0 && q.TraceArrivals:
		return fmt.Errorf("give a burstiness or arrivals from the trace, not both")
	case b > 0:
		q.arrivalCV2 = 1 / b
	default:
		q.arrivalCV2 = 1
	}
	w := q.Workload
	if q.TraceArrivals {
		if w == nil || !w.Timed {
			return fmt.Errorf("arrivals from a trace need a lengths file with timestamps (a Mooncake JSONL trace, or a CSV with a timestamp column)")
		}
		rate, cv2, err := w.Arrivals()
		if err != nil {
			return err
		}
		q.arrivalCV2 = math.Max(cv2, 1e-6) // 0 would read as Poisson
		if q.RatePerS == 0 && q.GPUs == 0 {
			q.RatePerS = rate
		}
	}
	switch q.PrefixRouting {
	case "", "round-robin":
	case "kv":
		if w == nil || w.CachedTokens() == nil {
			return fmt.Errorf("prefix routing kv: the workload has no prefix hashes (a Mooncake trace's hash_ids) to find cached")
		}
		if q.CachedFraction > 0 || q.Prefixes > 0 {
			return fmt.Errorf("prefix routing kv takes the prefixes from the trace: give it or a cached fraction or prefixes, not both")
		}
	default:
		return fmt.Errorf("prefix routing %q: want kv (KV-aware routing finds each request's prefix seen before) or round-robin", q.PrefixRouting)
	}
	if w == nil {
		return nil
	}
	var cached []int
	q.traceHit = 0
	if q.PrefixRouting == "kv" {
		cached = w.CachedTokens()
		for _, c := range cached {
			if c > 0 {
				q.traceHit++
			}
		}
		q.traceHit /= float64(len(cached))
	}
	ctx := 0
	if q.Model != nil {
		ctx = q.Model.MaxContext
	}
	classes, dropped := w.Classes(cached, ctx)
	if len(classes) == 0 {
		return fmt.Errorf("%s: every request is longer than %s's context of %d tokens", w.Source, q.Model.Name, ctx)
	}
	q.classes, q.dropped = classes, dropped
	in, out := 0.0, 0.0
	for _, c := range classes {
		in += c.Prob * float64(c.InputTokens)
		out += c.Prob * float64(c.OutputTokens)
	}
	q.InputTokens, q.OutputTokens = max(1, int(math.Round(in))), max(1, int(math.Round(out)))
	q.maxTotal = 0
	for _, r := range w.Requests {
		if t := r.InputTokens + r.OutputTokens; ctx == 0 || t <= ctx {
			q.maxTotal = max(q.maxTotal, t)
		}
	}
	return nil
}

// largestRequest is the most tokens in and out one request holds: what a
// worker's KV slots must hold and max_model_len must allow.
func (q *Query) largestRequest() int {
	if q.classes != nil {
		return q.maxTotal
	}
	return q.InputTokens + q.OutputTokens
}

// workerClasses are the request classes a worker sees with prefix hits:
// each class of the workload split by the hit cases, a hit finding F × its
// input cached (--cached-fraction) or the prefix (--prefixes), a class's
// own cached tokens from the trace otherwise. Nil for fixed lengths (the
// worker takes them and the hits as they are).
func (q *Query) workerClasses(hits []openloop.Hit) []openloop.Class {
	if q.classes == nil {
		return nil
	}
	if len(hits) == 0 {
		hits = []openloop.Hit{{Prob: 1}}
	}
	var out []openloop.Class
	for _, c := range q.classes {
		for _, h := range hits {
			k := openloop.Class{Prob: c.Prob * h.Prob, InputTokens: c.InputTokens, OutputTokens: c.OutputTokens, CachedTokens: c.CachedTokens}
			switch {
			case q.CachedFraction > 0:
				k.CachedTokens = int(math.Round(q.CachedFraction * float64(c.InputTokens)))
			case q.Prefixes > 0 && h.Cached > 0:
				k.CachedTokens = q.PrefixTokens
			case q.Prefixes > 0:
				k.CachedTokens = 0
			}
			k.CachedTokens = min(k.CachedTokens, c.InputTokens-1)
			if k.Prob > 0 {
				out = append(out, k)
			}
		}
	}
	return out
}

// replay is the workload as the timed simulator replays it: its requests
// in order (those longer than the model's context left out, as an engine
// refuses them, and counted), each as often as it takes to issue requests
// in all (when requests are fewer, every k-th of them), with the trace's prompt blocks under KV-aware routing, or the
// shared prefix --cached-fraction or --prefixes describe. With trace
// arrivals, the trace's times compressed or stretched to rate.
func (q *Query) replay(block, requests int, rate float64) (sim.Source, int, error) {
	w := q.Workload
	ctx := q.Model.MaxContext
	scale := 1.0
	if q.TraceArrivals {
		if tr, _, err := w.Arrivals(); err == nil && rate > 0 {
			scale = tr / rate
		}
	}
	var reqs []sim.ReplayRequest
	refused := 0
	for i, r := range w.Requests {
		if ctx > 0 && r.InputTokens+r.OutputTokens > ctx {
			refused++
			continue
		}
		rr := sim.ReplayRequest{ArrivalMS: r.ArrivalMS * scale, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens}
		switch {
		case q.PrefixRouting == "kv":
			rr.HashIDs = r.HashIDs
		case q.CachedFraction > 0:
			rr.Prefix, rr.PrefixTokens = 1, int(math.Round(q.CachedFraction*float64(r.InputTokens)))
		case q.Prefixes > 0:
			rr.Prefix, rr.PrefixTokens = uint64(1+i%q.Prefixes), q.PrefixTokens
		}
		reqs = append(reqs, rr)
	}
	if !q.TraceArrivals && requests < len(reqs) {
		// Fewer simulated requests than the workload holds: every k-th, so
		// the replay has the workload's lengths, not its first hour's. (With
		// the trace's arrivals, its first requests, in order.)
		picked := make([]sim.ReplayRequest, requests)
		for i := range picked {
			picked[i] = reqs[i*len(reqs)/requests]
		}
		reqs = picked
	}
	src, err := sim.Replay{Requests: reqs, Count: requests, BlockSize: block, Timed: q.TraceArrivals}.Open()
	return src, refused, err
}

// workloadText says what the analytic model takes from the workload.
func (q *Query) workloadText() string {
	w := q.Workload
	in, out := w.InputStats(), w.OutputStats()
	s := fmt.Sprintf("requests drawn from %s: input tokens mean %.0f (p50 %d, p95 %d, p99 %d, max %d), output mean %.0f (p50 %d, p95 %d, p99 %d, max %d), as %d classes",
		w.Source, in.Mean, in.P50, in.P95, in.P99, in.Max, out.Mean, out.P50, out.P95, out.P99, out.Max, len(q.classes))
	if q.dropped > 0 {
		s += fmt.Sprintf("; %d of %d requests (%.1f%%) are longer than %s's context of %d tokens: an engine refuses them, so they are left out of every figure",
			q.dropped, len(w.Requests), 100*float64(q.dropped)/float64(len(w.Requests)), q.Model.Name, q.Model.MaxContext)
	}
	return s
}

// WorkloadSummary is the workload's lengths in the JSON (workload).
type WorkloadSummary struct {
	Source       string         `json:"source"`
	Format       string         `json:"format"`
	Requests     int            `json:"requests"`              // in the lengths file (0: every request the same)
	Refused      int            `json:"requests_over_context"` // longer than the model's context: left out
	Classes      int            `json:"classes"`               // the analytic model's classes of requests
	InputTokens  workload.Stats `json:"input_tokens"`
	OutputTokens workload.Stats `json:"output_tokens"`
	// Arrivals: "poisson", "gamma" (burstiness) or "trace" (its timestamps),
	// the squared coefficient of variation of the gaps the queues see.
	Arrivals      string  `json:"arrivals"`
	ArrivalCV2    float64 `json:"arrival_cv2"`
	Burstiness    float64 `json:"burstiness,omitempty"`
	PrefixRouting string  `json:"prefix_routing,omitempty"`
}

// summary is the JSON's workload: the lengths (every request the same
// without a distribution) and the arrivals.
func (q *Query) summary() *WorkloadSummary {
	ws := &WorkloadSummary{Source: "--isl and --osl", Format: workload.FormatFixed, Classes: 1,
		InputTokens:  workload.Stats{Mean: float64(q.InputTokens), P50: q.InputTokens, P95: q.InputTokens, P99: q.InputTokens, Max: q.InputTokens},
		OutputTokens: workload.Stats{Mean: float64(q.OutputTokens), P50: q.OutputTokens, P95: q.OutputTokens, P99: q.OutputTokens, Max: q.OutputTokens},
		Arrivals:     "poisson", ArrivalCV2: q.cv2(), Burstiness: q.Burstiness, PrefixRouting: q.PrefixRouting}
	switch {
	case q.TraceArrivals:
		ws.Arrivals = "trace"
	case q.Burstiness > 0 && q.Burstiness != 1:
		ws.Arrivals = "gamma"
	}
	if w := q.Workload; w != nil {
		ws.Source, ws.Format, ws.Requests, ws.Refused, ws.Classes = w.Source, w.Format, len(w.Requests), q.dropped, len(q.classes)
		ws.InputTokens, ws.OutputTokens = w.InputStats(), w.OutputStats()
	}
	return ws
}

// mixedWait is an aggregated worker's prefill wait when its prompts come
// in many lengths: the M/G/1 wait of their packed GPU times
// (openloop.MG1Wait), its quantiles scaled to the G/G/1 queue's mean,
// (c_a² + c_s²) / (1 + c_s²).
func (q *Query) mixedWait(w *openloop.Worker, ld openloop.Load, ratePerS, ca2 float64) (openloop.WaitDist, bool) {
	alone, _ := w.PrefillMS(int(math.Round(ld.Batch)))
	packed := w.PackedMS(int(math.Round(ld.Batch)))
	_ = alone
	var probs []float64
	for _, k := range w.Classes() {
		probs = append(probs, k.Prob)
	}
	cs2 := ld.Prefill.PackedCV2
	return openloop.MG1Wait(ratePerS, packed, probs, (ca2+cs2)/(1+cs2))
}
