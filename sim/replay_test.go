package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestGammaVariate(t *testing.T) {
	// Gamma(k, 1) has mean k and variance k; 200,000 draws put the sample
	// mean within 1% and the variance within 3% (several standard errors).
	for _, k := range []float64{0.25, 0.5, 1, 4} {
		rng := rand.New(rand.NewPCG(7, 11))
		n := 200_000
		var sum, sq float64
		for range n {
			x := gammaVariate(rng, k)
			sum += x
			sq += x * x
		}
		mean := sum / float64(n)
		vr := sq/float64(n) - mean*mean
		if math.Abs(mean-k) > 0.01*k || math.Abs(vr-k) > 0.03*k {
			t.Errorf("shape %g: mean %g, variance %g; want %g and %g", k, mean, vr, k, k)
		}
	}
}

// arrivals records the arrival times a run issues.
type arrivals struct{ ms []float64 }

func (a *arrivals) Request(r RequestTiming) { a.ms = append(a.ms, r.ArrivalMS) }
func (a *arrivals) Gaps(float64, int)       {}

func TestBurstyArrivals(t *testing.T) {
	// At 10 requests/s with burstiness 0.25 the gaps have mean 100 ms and
	// squared coefficient of variation 1/0.25 = 4; Poisson's is 1.
	for _, b := range []float64{0, 0.25, 4} {
		reqs := make([]ReplayRequest, 20_000)
		for i := range reqs {
			reqs[i] = ReplayRequest{InputTokens: 16, OutputTokens: 1}
		}
		src, err := Replay{Requests: reqs}.Open()
		if err != nil {
			t.Fatal(err)
		}
		obs := &arrivals{}
		cfg := timedConfig(constStep(0.001), 1000, 64, 64)
		cfg.RatePerS, cfg.Burstiness, cfg.Seed = 10, b, 3
		cfg.Engine.Observer = obs
		if _, err := Run(src, cfg); err != nil {
			t.Fatal(err)
		}
		slices.Sort(obs.ms)
		var sum, sq float64
		for i := 1; i < len(obs.ms); i++ {
			g := obs.ms[i] - obs.ms[i-1]
			sum += g
			sq += g * g
		}
		n := float64(len(obs.ms) - 1)
		mean := sum / n
		cv2 := (sq/n - mean*mean) / (mean * mean)
		want := 1.0
		if b > 0 {
			want = 1 / b
		}
		if math.Abs(mean-100) > 3 || math.Abs(cv2-want) > 0.08*want {
			t.Errorf("burstiness %g: mean gap %.2f ms, CV² %.3f; want 100 ms and %g", b, mean, cv2, want)
		}
	}
	cfg := timedConfig(constStep(1), 100, 64, 64)
	cfg.Burstiness = 0.5
	if _, err := Run(&sliceSource{bs: 16, reqs: []testReq{reqA}}, cfg); err == nil {
		t.Error("burstiness without a rate: want an error")
	}
}

func TestReplayBlocks(t *testing.T) {
	// Hash ids map as the Mooncake reader maps them.
	line := `{"timestamp": 5, "input_length": 1100, "output_length": 7, "hash_ids": [4, 9, 12]}`
	m := NewMooncakeReader(stringsReader(line), "t", 16, false)
	var want Request
	if ok, err := m.Next(&want); !ok || err != nil {
		t.Fatal(ok, err)
	}
	src, err := Replay{Requests: []ReplayRequest{{ArrivalMS: 5, InputTokens: 1100, OutputTokens: 7, HashIDs: []uint64{4, 9, 12}}}, Count: 2, Timed: true}.Open()
	if err != nil {
		t.Fatal(err)
	}
	var a, b Request
	src.Next(&a)
	if !slices.Equal(a.Blocks, want.Blocks) || a.ArrivalMS != 5 || len(a.Blocks) != 1100/16 {
		t.Errorf("round 0: %d blocks at %g ms, want the reader's %d", len(a.Blocks), a.ArrivalMS, len(want.Blocks))
	}
	a.Blocks = slices.Clone(a.Blocks)
	src.Next(&b)
	if b.Blocks[0] == a.Blocks[0] {
		t.Error("round 1 shares blocks with round 0; each round is its own copy")
	}
	// A shared prefix of 40 tokens is 2 full blocks of 16, the same in both
	// requests; the rest differs.
	src, _ = Replay{Requests: []ReplayRequest{{InputTokens: 100, OutputTokens: 1, Prefix: 3, PrefixTokens: 40},
		{InputTokens: 64, OutputTokens: 1, Prefix: 3, PrefixTokens: 40}, {InputTokens: 64, OutputTokens: 1}}}.Open()
	var r [3]Request
	for i := range r {
		src.Next(&r[i])
		r[i].Blocks = slices.Clone(r[i].Blocks)
	}
	if len(r[0].Blocks) != 6 || len(r[1].Blocks) != 4 || !slices.Equal(r[0].Blocks[:2], r[1].Blocks[:2]) || r[0].Blocks[2] == r[1].Blocks[2] {
		t.Errorf("prefix blocks: %v / %v", r[0].Blocks, r[1].Blocks)
	}
	if r[2].Blocks[0] == r[0].Blocks[0] {
		t.Error("a request without a prefix shares its first block")
	}
}

// gapCount counts the gaps an Observer is shown and keeps each request.
type gapCount struct {
	gaps, sum float64
	reqs      []RequestTiming
}

func (g *gapCount) Request(r RequestTiming) { g.reqs = append(g.reqs, r) }
func (g *gapCount) Gaps(ms float64, n int) {
	g.gaps += float64(n)
	g.sum += ms * float64(n)
}

func TestObserver(t *testing.T) {
	// Requests of 200 tokens in, 20, 50 and 80 out on one worker at 20/s:
	// the Observer sees every gap after a first token, Σ (out − 1) of them,
	// and per request the Timing's TTFT and TPOT.
	var reqs []ReplayRequest
	for i := range 300 {
		reqs = append(reqs, ReplayRequest{InputTokens: 200, OutputTokens: 20 + 30*(i%3)})
	}
	src, _ := Replay{Requests: reqs}.Open()
	obs := &gapCount{}
	cfg := timedConfig(affineStep{base: 5, perPrefill: 0.01, perContext: 0.001}, 100_000, 512, 256)
	cfg.RatePerS, cfg.Seed = 20, 1
	cfg.Engine.Observer = obs
	res, err := Run(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := 100.0 * (19 + 49 + 79); obs.gaps != want || len(obs.reqs) != 300 {
		t.Fatalf("%g gaps and %d requests seen, want %g and 300", obs.gaps, len(obs.reqs), want)
	}
	var ttft, tpot float64
	for _, r := range obs.reqs {
		ttft += r.TTFTMS
		tpot += r.TPOTMS()
	}
	if !near(ttft/300, res.TTFTMS.Mean) || !near(tpot/300, res.TPOTMS.Mean) {
		t.Errorf("observer means TTFT %g TPOT %g, timing %g %g", ttft/300, tpot/300, res.TTFTMS.Mean, res.TPOTMS.Mean)
	}
	// The gaps add up to each request's time after its first token.
	dec := 0.0
	for _, r := range obs.reqs {
		dec += r.E2EMS - r.TTFTMS
	}
	if math.Abs(obs.sum-dec) > 1e-6*dec {
		t.Errorf("gaps sum to %g ms, requests decode for %g", obs.sum, dec)
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
