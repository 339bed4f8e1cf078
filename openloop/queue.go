package openloop

import "math"

// Queue is a G/G/c queue: arrivals at Rate per second whose gaps have
// squared coefficient of variation ArrivalCV2 (0 means 1: Poisson), Servers
// identical servers, each taking ServiceMS per job with squared coefficient
// of variation ServiceCV2 (0 = every job takes the same time).
type Queue struct {
	RatePerS   float64
	Servers    int
	ServiceMS  float64
	ServiceCV2 float64
	ArrivalCV2 float64
}

// Wait is what a job waits for a server in a Queue.
type Wait struct {
	Utilization float64 // ρ = λ × service / c; ≥ 1 means no steady state
	PWait       float64 // probability that an arriving job waits (Erlang C)
	MeanMS      float64 // mean wait
	P95MS       float64 // 95th percentile of the wait
	Stable      bool    // ρ < 1
	ScaleMS     float64 // θ of the tail P(W > t) = PWait × exp(−t/θ)
}

// Quantile is the q-quantile of the wait: θ ln(C / (1 − q)) when an
// arrival waits with probability C > 1 − q, else 0 (P95MS at q = 0.95).
func (w Wait) Quantile(q float64) float64 {
	switch {
	case !w.Stable:
		return math.Inf(1)
	case q >= 1:
		return math.Inf(1)
	case w.PWait <= 1-q:
		return 0
	}
	return w.ScaleMS * math.Log(w.PWait/(1-q))
}

// CDF is P(W ≤ t): 1 − C exp(−t/θ).
func (w Wait) CDF(t float64) float64 {
	switch {
	case !w.Stable:
		return 0
	case t < 0:
		return 0
	case w.PWait <= 0 || w.ScaleMS <= 0:
		return 1
	}
	return 1 - w.PWait*math.Exp(-t/w.ScaleMS)
}

// Wait computes the wait of a job in q: the M/M/c wait of Erlang's C formula
// scaled by (c_a² + c_s²)/2 for general arrivals and service times (the
// Allen–Cunneen approximation: exact for M/G/1, Kingman's for G/G/1,
// within a few percent for M/D/c at moderate loads), and its tail taken as
// the M/M/c one with the same scale:
//
//	P(W > t) = C(c, a) × exp(−t / θ),  θ = (c_a² + c_s²)/2 / (c μ − λ)
//
// so p95 = θ × ln(C / 0.05) when C > 0.05, else 0.
func (q Queue) Wait() Wait {
	c := max(1, q.Servers)
	lambda := q.RatePerS / 1000 // per ms
	a := lambda * q.ServiceMS   // offered load, in servers
	w := Wait{Utilization: a / float64(c)}
	if q.RatePerS <= 0 || q.ServiceMS <= 0 {
		w.Stable = true
		return w
	}
	if w.Utilization >= 1 {
		w.PWait, w.MeanMS, w.P95MS = 1, math.Inf(1), math.Inf(1)
		return w
	}
	w.Stable = true
	w.PWait = ErlangC(c, a)
	ca2 := q.ArrivalCV2
	if ca2 == 0 {
		ca2 = 1
	}
	scale := (ca2 + q.ServiceCV2) / 2
	theta := scale / (float64(c)/q.ServiceMS - lambda) // ms
	w.ScaleMS = theta
	w.MeanMS = w.PWait * theta
	if w.PWait > 0.05 {
		w.P95MS = theta * math.Log(w.PWait/0.05)
	}
	return w
}

// ErlangC is the probability that an arrival waits in an M/M/c queue with
// offered load a = λ/μ (in servers, a < c). Up to 64 servers it runs Erlang
// B's recursion B(k) = a B(k−1) / (k + a B(k−1)), C = B(c) / (1 − (a/c)(1 −
// B(c))); beyond, the same quantity in Poisson terms, C = T / (S + T) with
// S = Σ_{k<c} aᵏ/k!, T = aᶜ/c! × c/(c − a), summed in log space over the
// terms within 12 standard deviations of a (the rest is below 1e-30 of the
// sum), so a pool of 10,000 workers costs a few hundred terms, not 10,000.
func ErlangC(c int, a float64) float64 {
	if a <= 0 {
		return 0
	}
	rho := a / float64(c)
	if rho >= 1 {
		return 1
	}
	if c > 64 {
		return erlangCLarge(c, a)
	}
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
		if b < 1e-18 && float64(k) > a {
			return 0 // the terms only shrink from here: C < 1e-18 / (1 − ρ)
		}
	}
	return b / (1 - rho*(1-b))
}

func erlangCLarge(c int, a float64) float64 {
	sd := math.Sqrt(a)
	if float64(c) > a+15*sd+15 {
		return 0 // c is past 15 standard deviations of Poisson(a): C < 1e-40
	}
	// Terms relative to the one at m, by the ratio of neighbours
	// (aᵏ⁺¹/(k+1)!) / (aᵏ/k!) = a/(k+1), so no term over- or underflows.
	k0 := max(0, int(a-12*sd))
	m := min(c-1, max(k0, int(a)))
	sum, r := 1.0, 1.0
	for k := m; k > k0; k-- {
		r *= float64(k) / a
		sum += r
	}
	r = 1
	for k := m + 1; k < c; k++ {
		r *= a / float64(k)
		sum += r
	}
	t := r * a / float64(c) * float64(c) / (float64(c) - a) // aᶜ/c! relative to the term at m, × c/(c − a)
	return t / (sum + t)
}

// PoissonQuantile is the smallest k with P(N ≤ k) ≥ q for N ~ Poisson(mean).
// Above a mean of 500 it uses the normal approximation with a continuity
// correction, whose error there is under one count.
func PoissonQuantile(mean, q float64) int {
	if mean <= 0 {
		return 0
	}
	if mean > 500 {
		return int(math.Ceil(mean + normalQuantile(q)*math.Sqrt(mean) - 0.5))
	}
	p := math.Exp(-mean)
	cdf := p
	k := 0
	for cdf < q && k < 100_000 {
		k++
		p *= mean / float64(k)
		cdf += p
	}
	return k
}

// PoissonPMF fills pmf[k] = P(N = k) for N ~ Poisson(mean), k < len(pmf),
// and puts the rest of the mass (k ≥ len(pmf)−1) in the last entry, so the
// entries add up to 1.
func PoissonPMF(mean float64, pmf []float64) {
	if len(pmf) == 0 {
		return
	}
	clear(pmf)
	if mean <= 0 {
		pmf[0] = 1
		return
	}
	// The term at the mode in log space (no underflow of exp(−mean) for
	// large means), its neighbours by the ratio mean/k.
	n := len(pmf)
	m := min(n-1, int(mean))
	lg, _ := math.Lgamma(float64(m) + 1)
	pmf[m] = math.Exp(float64(m)*math.Log(mean) - mean - lg)
	for k := m - 1; k >= 0; k-- {
		pmf[k] = pmf[k+1] * float64(k+1) / mean
	}
	for k := m + 1; k < n; k++ {
		pmf[k] = pmf[k-1] * mean / float64(k)
	}
	sum := 0.0
	for _, p := range pmf {
		sum += p
	}
	pmf[n-1] += math.Max(0, 1-sum)
}

// normalQuantile is Φ⁻¹(q) for the q this package uses.
func normalQuantile(q float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*q-1)
}

// WaitDist is a queue's waiting time as a distribution on a grid: P(W ≤
// k h) = cum[k], every quantile scaled by Scale.
type WaitDist struct {
	h     float64
	cum   []float64
	Scale float64
}

// waitGrid is the grid steps of a WaitDist.
const waitGrid = 512

// MG1Wait is the waiting time of an M/G/1 queue (first come, first
// served) at ratePerS whose service takes serviceMS[i] with probability
// prob[i], as the Pollaczek–Khinchine formula has it: the wait is a sum of
// N residual service times, N geometric (P(N = n) = (1 − ρ) ρⁿ) and each
// residual of density P(S > x) / E[S], summed on a grid by Panjer's
// recursion. Unlike an exponential tail with the same mean, it keeps the
// tail a few long services give. scale multiplies every quantile (the
// ratio of a G/G/1 queue's mean wait to the M/G/1's: (c_a² + c_s²) / (1 +
// c_s²) for arrivals of squared coefficient of variation c_a²). ok is false
// when the queue has no steady state.
func MG1Wait(ratePerS float64, serviceMS, prob []float64, scale float64) (WaitDist, bool) {
	lam := ratePerS / 1000
	var es, es2, smax float64
	for i, s := range serviceMS {
		es += prob[i] * s
		es2 += prob[i] * s * s
		smax = math.Max(smax, s)
	}
	rho := lam * es
	if !(rho < 1) || es <= 0 {
		return WaitDist{}, rho < 1
	}
	meanW := lam * es2 / (2 * (1 - rho))
	upper := 40*meanW + 4*smax
	for range 4 {
		d := WaitDist{h: upper / waitGrid, Scale: scale}
		// Residual service time on the grid: bin j holds [(j − ½)h, (j + ½)h).
		f := make([]float64, waitGrid+1)
		for i, s := range serviceMS {
			for j := 0; j <= waitGrid; j++ {
				lo, hi := math.Max(0, (float64(j)-0.5)*d.h), (float64(j)+0.5)*d.h
				if lo >= s {
					break
				}
				f[j] += prob[i] * (math.Min(hi, s) - lo) / es
			}
		}
		// Compound geometric: g₀ = (1 − ρ)/(1 − ρ f₀), g_k = ρ/(1 − ρ f₀) Σ_j f_j g_{k−j}.
		jmax := min(waitGrid, int(math.Ceil(smax/d.h))+1) // f is 0 past the longest service
		g := make([]float64, waitGrid+1)
		g[0] = (1 - rho) / (1 - rho*f[0])
		c := rho / (1 - rho*f[0])
		for k := 1; k <= waitGrid; k++ {
			s := 0.0
			for j := 1; j <= min(k, jmax); j++ {
				s += f[j] * g[k-j]
			}
			g[k] = c * s
		}
		d.cum = make([]float64, waitGrid+1)
		acc := 0.0
		for k, v := range g {
			acc += v
			d.cum[k] = math.Min(1, acc)
		}
		if d.cum[waitGrid] >= 0.9995 {
			return d, true
		}
		upper *= 4
	}
	return WaitDist{}, false
}

// Quantile is the wait's q-quantile.
func (d WaitDist) Quantile(q float64) float64 {
	for k, c := range d.cum {
		if c >= q {
			return float64(k) * d.h * d.Scale
		}
	}
	return math.Inf(1)
}

// InFlight is the wait of a prompt for a prefill iteration in flight when
// it arrives, on a worker whose prefill iterations take IterMS and run in
// lockstep across its ranks (a worker of data-parallel ranks). At a load
// where a prompt's prefill starts with the iteration after it arrives, the
// iteration in flight is the previous arrival's, begun G earlier, G the gap
// between the worker's arrivals: the wait is (IterMS − G)⁺,
//
//	P(W > t) = F(IterMS − t),  0 ≤ t < IterMS,
//
// F the gaps' distribution: gamma of mean 1000/RatePerS ms and squared
// coefficient of variation GapCV2 (0 = 1, Poisson: F(x) = 1 − exp(−λx); a
// round-robin share of n workers is Erlang-n, GapCV2 = 1/n).
type InFlight struct {
	RatePerS float64
	GapCV2   float64
	IterMS   float64
}

func (f InFlight) shape() float64 {
	if f.GapCV2 <= 0 {
		return 1
	}
	return 1 / f.GapCV2
}

// gapCDF is F(x): the regularized lower incomplete gamma P(k, k λ x).
func (f InFlight) gapCDF(x float64) float64 {
	if x <= 0 || f.RatePerS <= 0 {
		return 0
	}
	k := f.shape()
	return regGammaP(k, k*f.RatePerS/1000*x)
}

// PWait is the probability that an arrival waits, F(IterMS).
func (f InFlight) PWait() float64 { return f.gapCDF(f.IterMS) }

// MeanMS is the mean wait, ∫₀^IterMS F(x) dx (Simpson's rule).
func (f InFlight) MeanMS() float64 {
	if f.IterMS <= 0 {
		return 0
	}
	const n = 256
	h := f.IterMS / n
	sum := f.gapCDF(0) + f.gapCDF(f.IterMS)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f.gapCDF(float64(i)*h)
	}
	return sum * h / 3
}

// Quantile is the q-quantile of the wait: IterMS − F⁻¹(1 − q) when
// F(IterMS) > 1 − q, else 0 (F inverted by bisection).
func (f InFlight) Quantile(q float64) float64 {
	if f.IterMS <= 0 || f.gapCDF(f.IterMS) <= 1-q {
		return 0
	}
	lo, hi := 0.0, f.IterMS
	for range 60 {
		mid := (lo + hi) / 2
		if f.gapCDF(mid) < 1-q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return f.IterMS - (lo+hi)/2
}

// regGammaP is the regularized lower incomplete gamma function P(a, x): its
// series for x < a + 1, else 1 − its continued fraction (Lentz).
func regGammaP(a, x float64) float64 {
	if x <= 0 {
		return 0
	}
	lg, _ := math.Lgamma(a)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1; n < 500; n++ {
			term *= x / (a + float64(n))
			sum += term
			if math.Abs(term) < math.Abs(sum)*1e-15 {
				break
			}
		}
		return math.Min(1, sum*math.Exp(-x+a*math.Log(x)-lg))
	}
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1; i < 500; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return math.Max(0, 1-math.Exp(-x+a*math.Log(x)-lg)*h)
}
