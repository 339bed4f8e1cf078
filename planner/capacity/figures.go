package capacity

import (
	"fmt"

	"github.com/kvplan/kvplan/planner"

	"github.com/kvplan/kvplan/slo"
	"github.com/kvplan/kvplan/units"
)

// FigureNote says of one figure which percentile it is and how the
// analytic model derives it.
type FigureNote struct {
	Figure     string `json:"figure"`     // the JSON name: ttft_p95_ms, tpot_mean_ms, ...
	Percentile string `json:"percentile"` // what it is a percentile (or mean) of
	Derivation string `json:"derivation"`
}

// figureNotes lists the figures of every candidate, and for each what it
// is and how it is derived.
func figureNotes(q *Query) []FigureNote {
	ttft := "Σ parts' means + √Σ (part's percentile − its mean)² over the request path (frontend or engine, --request-path), iteration in flight, prefill queue (Allen–Cunneen tail C e^(−t/θ)), prefill (the prompts' mixture), KV transfer, seat wait and first decode step, taken as independent; a part below its mean at that percentile adds its mean, so p50 is at least the mean"
	itl := "the gaps a sequence sees: iterations of 1 + N sequences, N ~ Poisson(batch) (the arrival theorem), a share of them carrying a prefill chunk of one of the prompts (weighed by its chunks); the percentile of that mixture"
	out := []FigureNote{
		{"ttft_p50_ms", "50th percentile of time to first token over requests", ttft},
		{"ttft_p90_ms", "90th percentile of time to first token over requests", ttft},
		{"ttft_p95_ms", "95th percentile of time to first token over requests", ttft},
		{"ttft_p99_ms", "99th percentile of time to first token over requests", ttft},
		{"itl_p50_ms", "50th percentile of the gaps between tokens, over every gap (vLLM bench's ITL)", itl},
		{"itl_p90_ms", "90th percentile of the gaps between tokens", itl},
		{"itl_p95_ms", "95th percentile of the gaps between tokens", itl},
		{"itl_p99_ms", "99th percentile of the gaps between tokens", itl},
		{"itl_mean_ms", "mean gap between tokens", "1 / (u / chunk iteration + (1 − u) / decode step), u the share of time in iterations that carry prefill; the decode batch from Little's law"},
		{"tpot_mean_ms", "mean over requests of (E2E − TTFT) / (output tokens − 1), as vLLM bench's mean_tpot", "the mean gap between tokens: every request's gaps are drawn from the same iterations, so the mean of the per-request means is the mean gap"},
		{"tpot_p99_ms", "99th percentile over requests of TPOT", "per request S + X/n + Z: S the decode-only step at the batch, Z the batch's variation over the request's life (variance 2B/3 sequences), X the chunk iterations of the prompts that arrive while it decodes (compound Poisson, Panjer's recursion), n its gaps; the mixture over the output lengths"},
		{"e2e_p95_ms", "95th percentile of end-to-end latency over requests", "TTFT's parts and the decode (n × S + X per request) combined as TTFT's are"},
		{"goodput", "share of requests meeting every per-request target (TTFT, TPOT, E2E), as vLLM bench --goodput", "P(TTFT ≤ target) × P(TPOT ≤ target) × P(E2E ≤ target), taken as independent: a request that waits long also tends to decode slowly, so this errs low"},
	}
	if q.Workload != nil {
		out = append(out, FigureNote{"workload", "the request lengths", q.workloadText()})
	}
	return out
}

// fillPercentiles computes the percentiles a candidate shows and says when
// one is below its mean.
func (q *Query) fillPercentiles(c *Candidate, e *evaluation) {
	if !e.judged() || e.decoder == nil {
		return
	}
	c.TTFTP50MS = finite(sumQuantile(e.ttftParts, 0.5))
	c.TTFTP90MS = finite(sumQuantile(e.ttftParts, 0.9))
	c.TTFTP99MS = finite(sumQuantile(e.ttftParts, 0.99))
	ld := e.decodeLd
	itl := e.decoder.ITLQuantiles(ld.Batch, ld.MixedShare, ld.BatchCap, []float64{0.5, 0.9, 0.99})
	c.ITLP50MS, c.ITLP90MS, c.ITLP99MS = finite(itl[0]), finite(itl[1]), finite(itl[2])
	c.TPOTMeanMS = finite(e.itlMeanMS)
	c.TPOTP99MS = finite(q.decode(e).tpotQuantile(0.99))
	c.E2EP95MS = finite(sumQuantile(q.e2eParts(e), 0.95))
	if a, b, d := q.SLO.PerRequest(); a > 0 || b > 0 || d > 0 {
		g := q.goodput(e)
		c.Goodput = &g
	}
	if c.ITLP95MS > 0 && c.ITLP95MS < c.ITLMeanMS {
		chunk := ld.Prefill.ChunkMS
		hold := "hold it with --tpot"
		if q.SLO.TPOTMeanMS > 0 {
			hold = "the TPOT mean target holds it"
		}
		c.PercentileNotes = append(c.PercentileNotes, fmt.Sprintf(
			"ITL p95 %s is below the mean gap %s: %.1f%% of the gaps carry a prefill chunk (about %s each), fewer than 5%%, so the 95th percentile is a decode-only gap while those chunks pull the mean up; every user averages %s a token (TPOT mean): %s",
			units.MS(c.ITLP95MS), units.MS(c.ITLMeanMS), ld.MixedShare*100, units.MS(chunk), units.MS(c.TPOTMeanMS), hold))
	}
	for _, x := range []struct {
		name    string
		p, mean float64
	}{{"TTFT p50", c.TTFTP50MS, c.TTFTMeanMS}} {
		if x.p > 0 && x.p < x.mean {
			c.PercentileNotes = append(c.PercentileNotes, fmt.Sprintf("%s %s is below its mean %s", x.name, units.MS(x.p), units.MS(x.mean)))
		}
	}
}

// judged reports whether e was carried and its figures computed.
func (e *evaluation) judged() bool { return e.figs != nil }

// targetValue is a candidate's figure for target t.
func (c *Candidate) targetValue(t slo.Target) (float64, bool) {
	switch t.JSON {
	case "ttft_p50_ms":
		return c.TTFTP50MS, true
	case "ttft_p90_ms":
		return c.TTFTP90MS, true
	case "ttft_p95_ms":
		return c.TTFTP95MS, true
	case "ttft_p99_ms":
		return c.TTFTP99MS, true
	case "itl_p50_ms":
		return c.ITLP50MS, true
	case "itl_p90_ms":
		return c.ITLP90MS, true
	case "itl_p95_ms":
		return c.ITLP95MS, true
	case "itl_p99_ms":
		return c.ITLP99MS, true
	case "tpot_mean_ms":
		return c.TPOTMeanMS, true
	case "tpot_p99_ms":
		return c.TPOTP99MS, true
	case "e2e_p95_ms":
		return c.E2EP95MS, true
	case "goodput":
		if c.Goodput == nil {
			return 0, false
		}
		return *c.Goodput, true
	}
	return 0, false
}

// Figure is a candidate's predicted figure for the target named by its
// JSON name (ttft_p95_ms, tpot_mean_ms, goodput, ...).
func (c *Candidate) Figure(t slo.Target) (float64, bool) { return c.targetValue(t) }

// Figure is the simulated figure for the target t.
func (s *Simulated) Figure(t slo.Target) (float64, bool) {
	switch t.JSON {
	case "ttft_p50_ms":
		return s.TTFTP50MS, true
	case "ttft_p90_ms":
		return s.TTFTP90MS, true
	case "ttft_p95_ms":
		return s.TTFTP95MS, true
	case "ttft_p99_ms":
		return s.TTFTP99MS, true
	case "itl_p50_ms":
		return s.ITLP50MS, true
	case "itl_p90_ms":
		return s.ITLP90MS, true
	case "itl_p95_ms":
		return s.ITLP95MS, true
	case "itl_p99_ms":
		return s.ITLP99MS, true
	case "tpot_mean_ms":
		return s.TPOTMeanMS, true
	case "tpot_p99_ms":
		return s.TPOTP99MS, true
	case "e2e_p95_ms":
		return s.E2EP95MS, true
	case "goodput":
		if s.Goodput == nil {
			return 0, false
		}
		return *s.Goodput, true
	}
	return 0, false
}

// explainTargets adds to d every figure the SLO names beyond TTFT and ITL
// p95, with how it is derived and its target.
func (q *Query) explainTargets(c *Candidate, d *planner.Derivation) {
	notes := map[string]FigureNote{}
	for _, n := range figureNotes(q) {
		notes[n.Figure] = n
	}
	for _, g := range q.SLO.Given() {
		if g.JSON == "ttft_p95_ms" || g.JSON == "itl_p95_ms" {
			continue
		}
		v, ok := c.Figure(g.Target)
		if !ok {
			continue
		}
		unit, target := "ms", fmt.Sprintf("target ≤ %g ms", g.Value)
		if g.Metric == slo.Goodput {
			unit, target = "share", fmt.Sprintf("target ≥ %g (%s per request)", g.Value, q.SLO.PerRequestString())
		}
		n := notes[g.JSON]
		d.Add(g.JSON, v, unit, n.Percentile+": "+n.Derivation, "%s", target)
	}
	for _, n := range c.PercentileNotes {
		d.Note(n)
	}
}
