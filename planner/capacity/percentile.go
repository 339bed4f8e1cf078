package capacity

import (
	"math"
	"sort"

	"github.com/kvplan/kvplan/openloop"
)

// part is one term of TTFT (or of E2E): its mean, its 95th percentile and
// its other percentiles.
type part struct {
	name          string
	meanMS, p95MS float64
	// at is the part's q-quantile; nil for a constant part. At q = 0.95 the
	// part's p95MS is used, so the 95th percentile stays what it always was.
	at func(q float64) float64
}

// quantile is the part's q-quantile.
func (p part) quantile(q float64) float64 {
	switch {
	case q == 0.95:
		return p.p95MS
	case p.at == nil:
		return p.meanMS
	}
	return p.at(q)
}

// sumQuantile is the q-quantile of a sum of independent parts, taken as the
// sum of their means plus their excesses over the mean (quantile − mean)
// added in quadrature: exact for normal parts, and between the largest
// part's excess and the plain sum of quantiles otherwise. A part below its
// mean at q (a wait that is 0 for most requests) adds its mean. So the
// median is at least the mean: an upper bound when the parts are skewed.
func sumQuantile(parts []part, q float64) float64 {
	m, sq := 0.0, 0.0
	for _, p := range parts {
		m += p.meanMS
		x := math.Max(0, p.quantile(q)-p.meanMS)
		sq += x * x
	}
	return m + math.Sqrt(sq)
}

// cdfOf inverts a quantile function at t: the largest q in [0.5, 0.9999]
// with quantile(q) ≤ t, found by bisection; 0 when even the median is
// above t (the rule above gives no lower percentiles), 1 when the 99.99th
// percentile is within t.
func cdfOf(quantile func(float64) float64, t float64) float64 {
	lo, hi := 0.5, 0.9999
	if quantile(lo) > t {
		return 0
	}
	if quantile(hi) <= t {
		return 1
	}
	for range 40 {
		mid := (lo + hi) / 2
		if quantile(mid) <= t {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// normalQuantile is Φ⁻¹(q).
func normalQuantile(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }

// decodeDist is the distribution of a request's decode: its time per
// output token after the first (TPOT) and its decode time. A request of n
// gaps sees decode-only iterations of S = step(1 + B) on average, whose
// mean over its life varies with the batch (a sequence's batch-mates over
// a lifetime of its own length: for an M/G/∞ count, the variance of the
// time average is 2B/3), and the prompts that arrive at its worker while it
// decodes: M of them, Poisson, each adding its chunk iterations' time over
// the decode steps they replace, e_k = alone_k − chunks_k × S (alone_k with
// SeparatePrefill, whose prefill iterations carry no decodes). The rate of
// M is set so that the mean TPOT is the mean ITL: m = n × (ITL − S) / E[e].
// So TPOT = S + X/n + Z, X compound Poisson (Panjer's recursion on a grid),
// Z normal with the batch's variance.
type decodeDist struct {
	sMS, sdMS float64
	groups    []decodeGroup
}

// decodeGroup is the requests of one range of output lengths: their
// share, their gaps n, and their added time X on a grid of h ms
// (cum[k] = P(X ≤ k h)).
type decodeGroup struct {
	p   float64
	n   float64
	h   float64
	cum []float64
}

// decodeGrid is the number of grid steps of X.
const decodeGrid = 256

// decodeGroups bounds the output-length groups a decodeDist keeps.
const decodeGroups = 8

// newDecodeDist builds the decode distribution of a decoding worker w at
// load ld. prefills says whether it prefills too (an aggregated worker).
func newDecodeDist(w *openloop.Worker, ld openloop.Load, prefills, separate bool) *decodeDist {
	d := &decodeDist{sMS: w.DecodeStepAt(1 + ld.Batch)}
	if slope := w.DecodeStepAt(2+ld.Batch) - d.sMS; slope > 0 {
		d.sdMS = slope * math.Sqrt(2*ld.Batch/3)
	}
	// Severity: each prompt class's added time.
	var sev []float64
	var sevP []float64
	if prefills && ld.ITLMeanMS > d.sMS {
		b := int(math.Round(ld.Batch))
		if separate {
			b = 0
		}
		alone, chunks := w.PrefillMS(b)
		for i, k := range w.Classes() {
			e := alone[i]
			if !separate {
				e -= float64(max(1, chunks[i])) * d.sMS
			}
			if e > 0 {
				sev = append(sev, e)
				sevP = append(sevP, k.Prob)
			}
		}
	}
	meanE, sqE := 0.0, 0.0
	for i, e := range sev {
		meanE += sevP[i] * e
		sqE += sevP[i] * e * e
	}
	perGap := 0.0 // m / n
	if meanE > 0 {
		perGap = (ld.ITLMeanMS - d.sMS) / meanE
	}
	// Output groups: the classes by gaps, cut into groups of equal share.
	type out struct{ n, p float64 }
	var outs []out
	for _, k := range w.Classes() {
		if k.OutputTokens >= 2 {
			outs = append(outs, out{float64(k.OutputTokens - 1), k.Prob})
		}
	}
	sort.Slice(outs, func(i, j int) bool { return outs[i].n < outs[j].n })
	total := 0.0
	for _, o := range outs {
		total += o.p
	}
	var acc, gp, gn float64
	flush := func() {
		if gp <= 0 {
			return
		}
		g := decodeGroup{p: gp / total, n: gn / gp}
		m := perGap * g.n
		upper := m*meanE + 12*math.Sqrt(m*sqE)
		for _, e := range sev {
			upper = math.Max(upper, e)
		}
		if m <= 0 || upper <= 0 {
			g.cum = []float64{1}
			g.h = 1
		} else {
			g.h = upper / decodeGrid
			g.cum = panjer(m, sev, sevP, g.h)
		}
		d.groups = append(d.groups, g)
		gp, gn = 0, 0
	}
	for _, o := range outs {
		gp += o.p
		gn += o.p * o.n
		acc += o.p
		if acc >= float64(len(d.groups)+1)*total/decodeGroups {
			flush()
		}
	}
	flush()
	return d
}

// panjer is the distribution of a compound Poisson sum of rate m whose
// terms take sev[i] with probability p[i], on a grid of h (Panjer's
// recursion: g₀ = exp(−m (1 − f₀)), g_k = (m/k) Σ_j j f_j g_{k−j}); it
// returns the cumulative probabilities at 0, h, 2h, ....
func panjer(m float64, sev, p []float64, h float64) []float64 {
	f := make([]float64, decodeGrid+1)
	for i, e := range sev {
		f[min(decodeGrid, int(math.Round(e/h)))] += p[i]
	}
	var js []int // the grid steps a term takes
	for j := 1; j <= decodeGrid; j++ {
		if f[j] != 0 {
			js = append(js, j)
		}
	}
	g := make([]float64, decodeGrid+1)
	g[0] = math.Exp(-m * (1 - f[0]))
	for k := 1; k <= decodeGrid; k++ {
		s := 0.0
		for _, j := range js {
			if j > k {
				break
			}
			s += float64(j) * f[j] * g[k-j]
		}
		g[k] = m / float64(k) * s
	}
	cum := make([]float64, decodeGrid+1)
	c := 0.0
	for k, v := range g {
		c += v
		cum[k] = math.Min(1, c)
	}
	return cum
}

// tpotCDF is P(TPOT ≤ t) over the requests with at least two output tokens.
func (d *decodeDist) tpotCDF(t float64) float64 {
	out := 0.0
	for _, g := range d.groups {
		// P(S + Z + X/n ≤ t) = Σ_k P(X = k h) Φ((t − S − k h / n) / σ).
		prev := 0.0
		for k, c := range g.cum {
			pk := c - prev
			prev = c
			if pk <= 0 {
				continue
			}
			x := t - d.sMS - float64(k)*g.h/g.n
			if d.sdMS > 0 {
				out += g.p * pk * 0.5 * math.Erfc(-x/(d.sdMS*math.Sqrt2))
			} else if x >= 0 {
				out += g.p * pk
			}
		}
	}
	return out
}

// tpotQuantile is the q-quantile of TPOT, by bisection on tpotCDF.
func (d *decodeDist) tpotQuantile(q float64) float64 {
	lo, hi := d.sMS-6*d.sdMS, d.sMS+6*d.sdMS
	for _, g := range d.groups {
		hi = math.Max(hi, d.sMS+6*d.sdMS+float64(len(g.cum))*g.h/g.n)
	}
	for range 50 {
		mid := (lo + hi) / 2
		if d.tpotCDF(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// decodeQuantile is the q-quantile of a request's decode time, n × S + X
// (the batch's variation left out: it is small beside the prompts'), over
// every request (one output token: none).
func (d *decodeDist) decodeQuantile(q, pNoDecode float64) float64 {
	cdf := func(t float64) float64 {
		c := pNoDecode
		for _, g := range d.groups {
			x := t - g.n*d.sMS
			if x < 0 {
				continue
			}
			c += (1 - pNoDecode) * g.p * g.cum[min(len(g.cum)-1, int(math.Floor(x/g.h)))]
		}
		return c
	}
	lo, hi := 0.0, 0.0
	for _, g := range d.groups {
		hi = math.Max(hi, g.n*d.sMS+float64(len(g.cum))*g.h)
	}
	for range 50 {
		mid := (lo + hi) / 2
		if cdf(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
