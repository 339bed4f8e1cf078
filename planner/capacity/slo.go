package capacity

import (
	"fmt"
	"math"
	"strings"

	"github.com/kvplan/kvplan/openloop"
	"github.com/kvplan/kvplan/slo"
)

// checkSLO folds the p95 shorthands into q.SLO, checks every target and
// asks for at least one.
func (q *Query) checkSLO() error {
	fold := func(short float64, dst *float64, what string) error {
		switch {
		case short == 0:
		case *dst == 0:
			*dst = short
		case *dst != short:
			return fmt.Errorf("%s SLO given twice, %g ms and %g ms", what, short, *dst)
		}
		return nil
	}
	if err := fold(q.TTFTP95MS, &q.SLO.TTFTMS, "TTFT p95"); err != nil {
		return err
	}
	if err := fold(q.ITLP95MS, &q.SLO.ITLMS, "ITL p95"); err != nil {
		return err
	}
	if err := q.SLO.Check(); err != nil {
		return err
	}
	if q.SLO.Empty() {
		var flags []string
		for _, t := range slo.Targets {
			flags = append(flags, "--"+t.Name)
		}
		return fmt.Errorf("no SLO given: set at least one target (%s)", strings.Join(flags, ", "))
	}
	q.TTFTP95MS, q.ITLP95MS = q.SLO.TTFTMS, q.SLO.ITLMS
	return nil
}

// targets is q.SLO.Given(), kept while the SLO stays the same (judgeSLO
// runs in every evaluation).
func (q *Query) targets() []slo.Given {
	if q.given == nil || q.givenFor != q.SLO {
		q.given, q.givenFor = q.SLO.Given(), q.SLO
	}
	return q.given
}

// cv2 is the squared coefficient of variation of the gaps between
// arrivals (1 for Poisson, the default).
func (q *Query) cv2() float64 {
	if q.arrivalCV2 > 0 {
		return q.arrivalCV2
	}
	return 1
}

// judgeSLO computes every figure the SLO names and compares it with its
// target: worst is the largest figure / target (for goodput, the share of
// requests that miss over the share allowed to), ok that none exceeds 1,
// and limit what the worst one is bounded by. A tie goes to the decode
// figure (ITL, TPOT), as when TTFT and ITL p95 were the only targets.
func (q *Query) judgeSLO(e *evaluation) {
	given := q.targets()
	e.figs = e.figBuf[:len(given)]
	e.worst, e.ok = 0, true
	worst := -1
	for i, g := range given {
		v := q.figure(e, g.Target)
		e.figs[i] = v
		r := ratio(g, v)
		if r > 1 {
			e.ok = false
		}
		if worst < 0 || r > e.worst || r == e.worst && decodeMetric(g.Metric) && !decodeMetric(given[worst].Metric) {
			e.worst, worst = r, i
		}
	}
	if e.ok || worst < 0 {
		return
	}
	e.limit = q.cause(e, given[worst].Target)
}

// ratio is how far a figure is from its target: figure / target, or for
// goodput the share of requests missing their targets over the share
// allowed to (0.15 missing against 0.10 allowed: 1.5).
func ratio(g slo.Given, v float64) float64 {
	if g.Metric == slo.Goodput {
		return (1 - v) / math.Max(1-g.Value, 1e-9)
	}
	return v / g.Value
}

func decodeMetric(m string) bool { return m == slo.ITL || m == slo.TPOT }

// cause names what bounds a missed target.
func (q *Query) cause(e *evaluation, t slo.Target) string {
	switch t.Metric {
	case slo.ITL, slo.TPOT:
		return openloop.LimitDecode
	case slo.E2E:
		if q.decodeDominates(e) {
			return openloop.LimitDecode
		}
	case slo.Goodput:
		a, b, c := q.SLO.PerRequest()
		pa, pb, pc := 1.0, 1.0, 1.0
		if a > 0 {
			pa = cdfOf(func(x float64) float64 { return sumQuantile(e.ttftParts, x) }, a)
		}
		if b > 0 {
			pb = q.tpotShare(e, b)
		}
		if c > 0 {
			pc = cdfOf(func(x float64) float64 { return sumQuantile(q.e2eParts(e), x) }, c)
		}
		if pb < pa && pb <= pc || pc < pa && q.decodeDominates(e) {
			return openloop.LimitDecode
		}
	}
	return e.ttftCause()
}

// decodeDominates reports whether a request's decode, more than its TTFT,
// makes its end-to-end time long (at the 95th percentile).
func (q *Query) decodeDominates(e *evaluation) bool {
	parts := q.e2eParts(e)
	d := parts[len(parts)-1]
	return d.p95MS > e.ttftP95MS
}

// figure computes the SLO figure of target t for e.
func (q *Query) figure(e *evaluation, t slo.Target) float64 {
	switch t.Metric {
	case slo.TTFT:
		return sumQuantile(e.ttftParts, t.Q)
	case slo.ITL:
		if t.Q == 0.95 {
			return e.itlP95MS
		}
		return e.itlQuantile(t.Q)
	case slo.TPOT:
		if t.Stat == "mean" {
			return e.itlMeanMS // the mean of every request's mean gap is the mean gap (decodeDist)
		}
		return q.decode(e).tpotQuantile(t.Q)
	case slo.E2E:
		return sumQuantile(q.e2eParts(e), t.Q)
	case slo.Goodput:
		return q.goodput(e)
	}
	return math.NaN()
}

// itlQuantile is the q-quantile of the gaps between tokens on the decoding
// pool's worker.
func (e *evaluation) itlQuantile(x float64) float64 {
	ld := e.decodeLd
	return e.decoder.ITLQuantiles(ld.Batch, ld.MixedShare, ld.BatchCap, []float64{x})[0]
}

// decode is e's decode distribution, built once.
func (q *Query) decode(e *evaluation) *decodeDist {
	if e.decodeDst == nil {
		e.decodeDst = newDecodeDist(e.decoder, e.decodeLd, e.prefills, q.SeparatePrefill)
	}
	return e.decodeDst
}

// oneToken is the share of requests with a single output token: they have
// no TPOT and no decode.
func oneToken(w *openloop.Worker) float64 {
	p := 0.0
	for _, k := range w.Classes() {
		if k.OutputTokens < 2 {
			p += k.Prob
		}
	}
	return p
}

// e2eParts are TTFT's parts and the decode: a request's (output − 1) gaps,
// whose mean is (mean output − 1) × mean ITL and whose percentiles are
// those of the decode distribution's n × S + X.
func (q *Query) e2eParts(e *evaluation) []part {
	d := q.decode(e)
	one := oneToken(e.decoder)
	mean := (e.decoder.OutputMean() - 1) * e.itlMeanMS
	dec := part{name: "decode", meanMS: mean, p95MS: d.decodeQuantile(0.95, one), at: func(x float64) float64 { return d.decodeQuantile(x, one) }}
	return append(append([]part(nil), e.ttftParts...), dec)
}

// tpotShare is the share of requests whose TPOT is within b ms (those of
// one output token are).
func (q *Query) tpotShare(e *evaluation, b float64) float64 {
	one := oneToken(e.decoder)
	return one + (1-one)*q.decode(e).tpotCDF(b)
}

// goodput is the share of requests that meet every per-request target:
// P(TTFT ≤ a) × P(TPOT ≤ b) × P(E2E ≤ c), each from its distribution. The
// three are taken as independent; a request that waits long for its first
// token tends to decode slowly too (both follow the load it arrives in), so
// the product errs low: a conservative goodput.
func (q *Query) goodput(e *evaluation) float64 {
	a, b, c := q.SLO.PerRequest()
	p := 1.0
	if a > 0 {
		p *= cdfOf(func(x float64) float64 { return sumQuantile(e.ttftParts, x) }, a)
	}
	if b > 0 {
		p *= q.tpotShare(e, b)
	}
	if c > 0 {
		p *= cdfOf(func(x float64) float64 { return sumQuantile(q.e2eParts(e), x) }, c)
	}
	return p
}

// decodeMeets reports whether a decode worker at load ld meets the SLO's
// decode targets (ITL percentiles, TPOT mean and p99) on its own: the
// first step of sizing a disaggregated candidate.
func (q *Query) decodeMeets(w *openloop.Worker, ld openloop.Load) bool {
	if !ld.Stable {
		return false
	}
	e := &evaluation{decoder: w, decodeLd: ld, itlMeanMS: ld.ITLMeanMS, itlP95MS: ld.ITLP95MS}
	for _, g := range q.targets() {
		if decodeMetric(g.Metric) && q.figure(e, g.Target) > g.Value {
			return false
		}
	}
	return true
}

// missesSLO says, per target e misses, by how much.
func (q *Query) missesSLO(e *evaluation) []string {
	var out []string
	for i, g := range q.targets() {
		if i >= len(e.figs) || ratio(g, e.figs[i]) <= 1 {
			continue
		}
		v := e.figs[i]
		switch {
		case g.Metric == slo.Goodput:
			out = append(out, fmt.Sprintf("goodput %.1f%% < %.4g%% (%s per request)", v*100, g.Value*100, q.SLO.PerRequestString()))
		case g.Metric == slo.TTFT && g.Stat == "p95":
			out = append(out, fmt.Sprintf("TTFT p95 %.0f ms > %.0f ms (+%.0f%%)", v, g.Value, (v/g.Value-1)*100))
		case g.Metric == slo.ITL && g.Stat == "p95":
			out = append(out, fmt.Sprintf("ITL p95 %.1f ms > %.1f ms (+%.0f%%)", v, g.Value, (v/g.Value-1)*100))
		default:
			out = append(out, fmt.Sprintf("%s %.4g ms > %.4g ms (+%.0f%%)", g.Label(), v, g.Value, (v/g.Value-1)*100))
		}
	}
	return out
}
