// Package workload is the traffic a deployment is planned for, as users
// have it: the lengths of its requests (a distribution, not one ISL and
// OSL), and, from a trace, when they arrive and which prompt blocks they
// share. It reads Mooncake-style JSONL traces, benchmark results with
// per-request arrays (vLLM bench's input_lens and output_lens) and
// two-column CSV files, and draws vLLM bench's random dataset. The analytic
// model (planner/capacity) reads it as classes of requests, and the timed
// simulator replays it request by request: one description for both.
package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Formats a Workload is read from.
const (
	FormatFixed     = "fixed"          // every request the same: --isl and --osl
	FormatRandom    = "random"         // vLLM bench's random dataset: --isl N --isl-range-ratio R
	FormatMooncake  = "mooncake-jsonl" // timestamp, input_length, output_length, hash_ids per line
	FormatVLLMBench = "vllm-bench"     // a benchmark result with input_lens and output_lens arrays
	FormatCSV       = "csv"            // two columns: input and output tokens
)

// Request is one request of a workload.
type Request struct {
	ArrivalMS    float64 // from the trace's start; only when the workload is Timed
	InputTokens  int
	OutputTokens int
	// HashIDs are the prompt's 512-token block hashes (Mooncake traces);
	// nil when the source has none.
	HashIDs []uint64
}

// Workload is a list of requests and where it came from.
type Workload struct {
	Source   string // the file, or the flags it was drawn from
	Format   string
	Requests []Request
	// Timed: the requests carry arrival times (a trace's timestamps).
	Timed bool
	// Skipped counts rows left out because they hold no usable request
	// (no prompt or no output: a failed benchmark request).
	Skipped int
}

// RandomRequests is how many requests Random draws: enough that the
// percentiles of the draw are those of the distribution to well under 1%.
const RandomRequests = 10_000

// Random draws RandomRequests requests as vLLM bench's random dataset does
// (vllm/benchmarks/datasets.py, RandomDataset.get_sampling_params): input
// lengths uniform over the integers in [⌊N(1 − R)⌋, ⌈N(1 + R)⌉], output
// lengths likewise with their own ratio, at least 1; R in [0, 1). Seeded.
func Random(inputTokens int, inputRatio float64, outputTokens int, outputRatio float64, seed uint64) (*Workload, error) {
	for _, r := range []struct {
		name string
		v    float64
	}{{"--isl-range-ratio", inputRatio}, {"--osl-range-ratio", outputRatio}} {
		if math.IsNaN(r.v) || r.v < 0 || r.v >= 1 {
			return nil, fmt.Errorf("%s %g: want a ratio in [0, 1), as vLLM bench's --random-range-ratio", r.name, r.v)
		}
	}
	if inputTokens < 1 || outputTokens < 1 {
		return nil, fmt.Errorf("random lengths: %d in and %d out, want at least 1 of each", inputTokens, outputTokens)
	}
	bounds := func(n int, r float64) (int, int) {
		lo := int(math.Floor(float64(n) * (1 - r)))
		hi := int(math.Ceil(float64(n) * (1 + r)))
		return max(1, lo), max(1, hi)
	}
	inLo, inHi := bounds(inputTokens, inputRatio)
	outLo, outHi := bounds(outputTokens, outputRatio)
	rng := rand.New(rand.NewPCG(seed, 0xa5a5_1d1d))
	w := &Workload{Format: FormatRandom,
		Source: fmt.Sprintf("uniform %d–%d tokens in, %d–%d out (vLLM bench's random dataset, %d draws)", inLo, inHi, outLo, outHi, RandomRequests)}
	w.Requests = make([]Request, RandomRequests)
	for i := range w.Requests {
		w.Requests[i] = Request{InputTokens: inLo + rng.IntN(inHi-inLo+1), OutputTokens: outLo + rng.IntN(outHi-outLo+1)}
	}
	return w, nil
}

// Stats summarises a length distribution: nearest-rank percentiles (p50 is
// the value at rank ⌈0.5 n⌉), the mean and the largest.
type Stats struct {
	Mean float64 `json:"mean"`
	P50  int     `json:"p50"`
	P95  int     `json:"p95"`
	P99  int     `json:"p99"`
	Max  int     `json:"max"`
}

func stats(vs []int) Stats {
	if len(vs) == 0 {
		return Stats{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	rank := func(p float64) int { return s[min(len(s), max(1, int(math.Ceil(p*float64(len(s))))))-1] }
	sum := 0.0
	for _, v := range s {
		sum += float64(v)
	}
	return Stats{Mean: sum / float64(len(s)), P50: rank(0.5), P95: rank(0.95), P99: rank(0.99), Max: s[len(s)-1]}
}

// InputStats and OutputStats summarise the input and output lengths.
func (w *Workload) InputStats() Stats {
	return stats(w.lengths(func(r Request) int { return r.InputTokens }))
}
func (w *Workload) OutputStats() Stats {
	return stats(w.lengths(func(r Request) int { return r.OutputTokens }))
}

func (w *Workload) lengths(f func(Request) int) []int {
	out := make([]int, len(w.Requests))
	for i, r := range w.Requests {
		out[i] = f(r)
	}
	return out
}

// Arrivals is what a timed workload's timestamps say of its arrivals: the
// mean rate (requests over the span, the span taken as n − 1 gaps) and the
// squared coefficient of variation of the gaps (1 for a Poisson process).
func (w *Workload) Arrivals() (ratePerS, gapCV2 float64, err error) {
	n := len(w.Requests)
	if !w.Timed || n < 3 {
		return 0, 0, fmt.Errorf("%s: arrivals need a trace with timestamps and at least 3 requests", w.Source)
	}
	span := w.Requests[n-1].ArrivalMS - w.Requests[0].ArrivalMS
	if !(span > 0) {
		return 0, 0, fmt.Errorf("%s: every request has the same timestamp: the trace says no rate", w.Source)
	}
	mean := span / float64(n-1)
	sq := 0.0
	for i := 1; i < n; i++ {
		d := w.Requests[i].ArrivalMS - w.Requests[i-1].ArrivalMS - mean
		sq += d * d
	}
	return float64(n-1) / span * 1000, sq / float64(n-1) / (mean * mean), nil
}

// CachedTokens is, per request, the prompt tokens an unbounded prefix cache
// holds when it arrives: its leading 512-token blocks whose hash ids an
// earlier request's prompt began with (a hash id stands for its block and
// every block before it), at most all but the prompt's last token (an
// engine recomputes it to sample). Nil without hash ids.
func (w *Workload) CachedTokens() []int {
	seen := map[uint64]bool{}
	var out []int
	for _, r := range w.Requests {
		if len(r.HashIDs) == 0 {
			return nil
		}
		run := 0
		for _, h := range r.HashIDs {
			if !seen[h] {
				break
			}
			run++
		}
		for _, h := range r.HashIDs {
			seen[h] = true
		}
		out = append(out, min(run*512, max(0, r.InputTokens-1)))
	}
	return out
}

// Class is one class of requests: a share Prob of them, with the mean
// input, output and cached tokens of the requests it stands for.
type Class struct {
	Prob                      float64
	InputTokens, OutputTokens int
	CachedTokens              int
}

// Class bins: the input lengths are cut at these quantiles (finer in the
// tail, which sets the prefill and TTFT percentiles), and each input bin's
// outputs at the outputQuantiles of its own requests.
var (
	inputQuantiles  = []float64{0, 0.2, 0.4, 0.6, 0.75, 0.85, 0.92, 0.96, 0.985, 1}
	outputQuantiles = []float64{0, 0.25, 0.5, 0.75, 0.95, 1}
)

// Classes turns the requests into at most 45 classes for the analytic
// model: 9 bins of input length (by quantile, finer in the tail), each cut
// into 5 bins of its requests' output lengths; a class takes its requests'
// share and their mean lengths (and mean cached tokens, when cached is
// given, one per request). Requests longer than maxTotal tokens in and out
// together (the model's context; 0 = no bound) are left out and counted:
// an engine refuses them.
func (w *Workload) Classes(cached []int, maxTotal int) (classes []Class, dropped int) {
	type req struct{ in, out, cached int }
	var rs []req
	for i, r := range w.Requests {
		if maxTotal > 0 && r.InputTokens+r.OutputTokens > maxTotal {
			dropped++
			continue
		}
		c := 0
		if cached != nil {
			c = cached[i]
		}
		rs = append(rs, req{r.InputTokens, r.OutputTokens, c})
	}
	if len(rs) == 0 {
		return nil, dropped
	}
	slices.SortStableFunc(rs, func(a, b req) int { return a.in - b.in })
	cut := func(n int, qs []float64) []int {
		var edges []int
		for _, q := range qs {
			e := int(math.Round(q * float64(n)))
			if len(edges) == 0 || e > edges[len(edges)-1] {
				edges = append(edges, e)
			}
		}
		return edges
	}
	total := float64(len(rs))
	ie := cut(len(rs), inputQuantiles)
	for a := 0; a+1 < len(ie); a++ {
		bin := slices.Clone(rs[ie[a]:ie[a+1]])
		slices.SortStableFunc(bin, func(x, y req) int { return x.out - y.out })
		in, cs := 0.0, 0.0
		for _, r := range bin {
			in += float64(r.in)
			cs += float64(r.cached)
		}
		in /= float64(len(bin))
		cs /= float64(len(bin))
		oe := cut(len(bin), outputQuantiles)
		for b := 0; b+1 < len(oe); b++ {
			part := bin[oe[b]:oe[b+1]]
			out := 0.0
			for _, r := range part {
				out += float64(r.out)
			}
			out /= float64(len(part))
			classes = append(classes, Class{Prob: float64(len(part)) / total, InputTokens: max(1, int(math.Round(in))),
				OutputTokens: max(1, int(math.Round(out))), CachedTokens: int(math.Round(cs))})
		}
	}
	return classes, dropped
}

// MaxTotal is the most tokens in and out together of one request.
func (w *Workload) MaxTotal() int {
	m := 0
	for _, r := range w.Requests {
		m = max(m, r.InputTokens+r.OutputTokens)
	}
	return m
}
