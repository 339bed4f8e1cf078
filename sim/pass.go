package sim

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
)

// The one pass. RunAll reads the source once and feeds every policy from
// the same requests: a producer parses, validates, classifies each request
// against the one history of seen blocks, and hands batches of prepared
// requests to one goroutine per policy. Policies share nothing but the
// read-only batches, so each result is exactly what a run of that policy
// alone gives, whatever the scheduling of the goroutines.
//
// kv-aware-approx is the one policy whose routing state is the history
// itself (the workers each block was sent to), so it runs inside the
// producer, request by request, between the history's probe and its record.

// prepared is one request as the producer hands it to the policies.
type prepared struct {
	arrivalMS float64
	in, out   int
	off, n    int // ids are batch.ids[off : off+n]
	// seen is the number of leading ids seen in earlier requests, as far as
	// the history remembers (see history).
	seen int
	// repeat reports whether the first block was seen in an earlier
	// request: exact while the first-block set has room (see firstSeen).
	repeat bool
}

// batch is a run of prepared requests; its ids are shared read-only by the
// policies until the last one is done with it.
type batch struct {
	reqs    []prepared
	ids     []uint64
	pending atomic.Int32
}

// Batch limits: a batch closes at batchRequests requests or batchIDs ids
// (a request longer than that gets a batch of its own), and at most
// batchesInFlight batches exist, so the pass holds a bounded amount of
// workload whatever the trace length.
const (
	batchRequests   = 512
	batchIDs        = 1 << 15
	batchesInFlight = 6
)

// policySim is one policy's simulation, fed prepared requests in order.
type policySim interface {
	step(p *prepared, ids []uint64) error
	result() (Result, error)
}

// RunAll runs each policy over the requests of one source from open (closed
// after if it is an io.Closer) and returns one Result per policy, in order.
// policies may contain "all"; nil or empty means all. The source is read
// once; policies run on their own goroutines, so up to GOMAXPROCS cores.
func RunAll(open func() (Source, error), cfg Config, policies []string) ([]Result, error) {
	if len(policies) == 0 {
		policies = []string{AllPolicies}
	}
	names, err := ResolvePolicies(policies)
	if err != nil {
		return nil, err
	}
	src, err := open()
	if err != nil {
		return nil, err
	}
	out, err := runPass(src, cfg, names, true)
	if cl, ok := src.(io.Closer); ok {
		if cerr := cl.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	return out, err
}

// Run simulates one policy (cfg.Policy) over the requests of src.
func Run(src Source, cfg Config) (Result, error) {
	if cfg.Policy == "" {
		cfg.Policy = defaultPolicy
	}
	if _, err := policyKindOf(cfg.Policy); err != nil {
		return Result{}, err
	}
	res, err := runPass(src, cfg, []string{cfg.Policy}, false)
	if err != nil {
		return Result{}, err
	}
	return res[0], nil
}

// runPass is the one pass. parallel false runs every policy in the calling
// goroutine, request by request (the reference the parallel pass must
// equal).
func runPass(src Source, cfg Config, names []string, parallel bool) ([]Result, error) {
	cfg, mode, err := cfg.settle(src)
	if err != nil {
		return nil, err
	}
	kinds := make([]policyKind, len(names))
	for i, n := range names {
		if kinds[i], err = policyKindOf(n); err != nil {
			return nil, err
		}
	}
	words := 0
	for _, k := range kinds {
		if k == polKVAwareApprox {
			words = (cfg.Workers + 7) / 8
		}
	}
	p := &producer{
		cfg:   cfg,
		mode:  mode,
		src:   src,
		hist:  newHistory(cfg.SeenBlocks, words),
		first: newFirstSeen(cfg.SeenBlocks),
	}
	defer p.hist.release()
	defer p.first.release()
	if cfg.RatePerS > 0 {
		p.rng = rand.New(rand.NewPCG(cfg.Seed, arrivalStreamSalt))
	}
	// One request at a time (a closed loop of one client), nothing is in
	// flight when a request is routed: every load is 0, kv-aware-no-events
	// sees no overlap, so its cost is the same on every worker, and both it
	// and least-loaded go by the tie-break alone; they route alike
	// (TestNoEventsIsLoadBalancing and TestOnePassEqualsSeparateRuns check
	// it against running it on its own). Then the pass simulates one and
	// reports it under both names. Under load they differ: least-loaded
	// counts requests, kv-aware-no-events prefill tokens and blocks.
	alias := -1 // index of kv-aware-no-events, reported from least-loaded
	ll := slices.Index(kinds, polLeastLoaded)
	sequential := mode == loadClosed && cfg.Concurrency == 1
	if ne := slices.Index(kinds, polKVAwareNoEvents); ne >= 0 && ll >= 0 && parallel && sequential {
		alias = ne
	}
	sims := make([]policySim, len(names))
	for i, n := range names {
		if i == alias {
			continue
		}
		c := cfg
		c.Policy = n
		if sims[i], err = newPolicySim(c, kinds[i], mode, p.hist); err != nil {
			return nil, err
		}
		if kinds[i] == polKVAwareApprox {
			p.approx = sims[i]
		}
	}
	// Inline: the approx policy always (it shares the history), and every
	// policy when there is no parallelism to gain.
	var workers []policySim
	run := 0
	for _, s := range sims {
		if s != nil {
			run++
		}
	}
	for _, s := range sims {
		if s == nil {
			continue
		}
		if !parallel || run == 1 || s == p.approx {
			p.inline = append(p.inline, s)
		} else {
			workers = append(workers, s)
		}
	}
	p.nPolicies = len(sims)
	if err := p.run(workers); err != nil {
		return nil, err
	}
	out := make([]Result, len(sims))
	for i, s := range sims {
		if i == alias {
			continue
		}
		r, err := s.result()
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", names[i], err)
		}
		if sk, ok := src.(Skipper); ok {
			r.SkippedLines = sk.Skipped()
		}
		r.RepeatUncertain = p.first.uncertain
		r.ForgottenBlockIDs = p.hist.forgotten
		out[i] = r
	}
	if alias >= 0 {
		out[alias] = out[ll].renamed(names[alias])
	}
	return out, nil
}

// arrivalStreamSalt separates the Poisson arrival stream from the random
// policy's, which uses the same seed.
const arrivalStreamSalt = 0x2545f4914f6cdd1d

// producer reads the source and prepares requests for every policy.
type producer struct {
	cfg    Config
	mode   loadMode
	src    Source
	hist   *history
	first  *firstSeen
	rng    *rand.Rand // Poisson arrivals, with cfg.RatePerS
	clock  float64    // last Poisson arrival
	approx policySim  // kv-aware-approx, if run
	inline []policySim

	nPolicies int
	requests  int
	doneByW   atomic.Int64 // requests done by the goroutine policies
}

// run reads every request and feeds the inline policies and, through
// batches, the worker goroutines.
func (p *producer) run(workers []policySim) error {
	if len(workers) == 0 {
		return p.runInline()
	}
	var (
		wg    sync.WaitGroup
		chans = make([]chan *batch, len(workers))
		errs  = make([]error, len(workers))
		free  = make(chan *batch, batchesInFlight)
		made  = 0
	)
	panics := make([]any, len(workers))
	for i, w := range workers {
		chans[i] = make(chan *batch, batchesInFlight)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range chans[i] {
				if errs[i] == nil && panics[i] == nil {
					panics[i] = stepBatch(w, b, &errs[i])
					p.doneByW.Add(int64(len(b.reqs)))
				}
				if b.pending.Add(-1) == 0 {
					free <- b
				}
			}
		}()
	}
	next := func() *batch {
		var b *batch
		if made < batchesInFlight {
			select {
			case b = <-free:
			default:
				made++
				b = getBatch()
			}
		} else {
			b = <-free
		}
		b.reqs, b.ids = b.reqs[:0], b.ids[:0]
		return b
	}
	ship := func(b *batch) {
		b.pending.Store(int32(len(workers)))
		for _, c := range chans {
			c <- b
		}
	}
	stop := func() error {
		for _, c := range chans {
			close(c)
		}
		wg.Wait()
		for range made {
			putBatch(<-free)
		}
		for _, v := range panics {
			if v != nil {
				panic(v) // a bug in a policy: raised where the caller can recover it
			}
		}
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}

	var req Request
	b := next()
	for {
		ok, err := p.src.Next(&req)
		if err != nil {
			ship(b)
			_ = stop()
			return err
		}
		if !ok {
			break
		}
		if len(b.reqs) > 0 && (len(b.reqs) == batchRequests || len(b.ids)+len(req.Blocks) > batchIDs) {
			ship(b)
			b = next()
		}
		off := len(b.ids)
		b.ids = append(b.ids, req.Blocks...)
		b.reqs = append(b.reqs, prepared{})
		q := &b.reqs[len(b.reqs)-1]
		ids := b.ids[off:]
		if err := p.prepare(&req, q, ids); err != nil {
			ship(b)
			_ = stop()
			return err
		}
		q.off = off
		for _, s := range p.inline {
			if err := s.step(q, ids); err != nil {
				ship(b)
				_ = stop()
				return err
			}
		}
		if p.cfg.Progress != nil && p.requests%progressEvery == 0 {
			p.cfg.Progress(p.progress())
		}
	}
	ship(b)
	if err := stop(); err != nil {
		return err
	}
	if p.cfg.Progress != nil {
		p.cfg.Progress(p.requests * p.nPolicies)
	}
	return nil
}

// stepBatch feeds one batch to a policy on its goroutine; it stops at the
// first error (into *err) and returns what a bug panicked with, so that the
// goroutine can go on draining batches and the caller re-raise it.
func stepBatch(w policySim, b *batch, err *error) (panicked any) {
	defer func() { panicked = recover() }()
	for k := range b.reqs {
		q := &b.reqs[k]
		if *err = w.step(q, b.ids[q.off:q.off+q.n]); *err != nil {
			return nil
		}
	}
	return nil
}

// runInline feeds the policies in this goroutine, straight from the
// source's request.
func (p *producer) runInline() error {
	var (
		req Request
		q   prepared
	)
	for {
		ok, err := p.src.Next(&req)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if err := p.prepare(&req, &q, req.Blocks); err != nil {
			return err
		}
		for _, s := range p.inline {
			if err := s.step(&q, req.Blocks); err != nil {
				return err
			}
		}
		if p.cfg.Progress != nil && p.requests%progressEvery == 0 {
			p.cfg.Progress(p.progress())
		}
	}
	if p.cfg.Progress != nil {
		p.cfg.Progress(p.requests * p.nPolicies)
	}
	return nil
}

var batchPool sync.Pool // of *batch

func getBatch() *batch {
	if b, ok := batchPool.Get().(*batch); ok {
		return b
	}
	return &batch{reqs: make([]prepared, 0, batchRequests), ids: make([]uint64, 0, batchIDs)}
}

func putBatch(b *batch) {
	if cap(b.ids) > 4*batchIDs {
		return // grown for one huge request: let it go
	}
	batchPool.Put(b)
}

// progress counts requests done over all policies.
func (p *producer) progress() int {
	return p.requests*len(p.inline) + int(p.doneByW.Load())
}

// prepare validates req and classifies it into q, whose ids are ids (a
// copy of req.Blocks, or req.Blocks itself).
func (p *producer) prepare(req *Request, q *prepared, ids []uint64) error {
	bs := p.cfg.BlockSize
	n := p.requests + 1
	if req.InputTokens < 0 || req.OutputTokens < 0 {
		return fmt.Errorf("request %d: negative token count (input %d, output %d)", n, req.InputTokens, req.OutputTokens)
	}
	if len(req.Blocks) != req.InputTokens/bs {
		return fmt.Errorf("request %d: %d full block ids for %d input tokens at %d tokens a block, want %d",
			n, len(req.Blocks), req.InputTokens, bs, req.InputTokens/bs)
	}
	if p.mode == loadTrace && (!(req.ArrivalMS >= 0) || math.IsInf(req.ArrivalMS, 0)) {
		return fmt.Errorf("request %d: arrival %g ms, want a finite time ≥ 0", n, req.ArrivalMS)
	}
	p.requests = n
	*q = prepared{arrivalMS: req.ArrivalMS, in: req.InputTokens, out: req.OutputTokens, n: len(ids)}
	switch {
	case p.rng != nil:
		if b := p.cfg.Burstiness; b > 0 && b != 1 {
			p.clock += gammaVariate(p.rng, b) / b / p.cfg.RatePerS * 1000
		} else {
			p.clock += p.rng.ExpFloat64() / p.cfg.RatePerS * 1000
		}
		q.arrivalMS = p.clock
	case p.mode == loadClosed:
		// A closed loop sends when a client is free; only the first
		// requests of a ramp wait for their send time.
		q.arrivalMS = 0
		if c := p.cfg.Concurrency; p.cfg.RampMS > 0 && n <= c {
			q.arrivalMS = p.cfg.RampMS * (float64(n-1) + 0.5) / float64(c)
		}
	}
	p.hist.begin(len(ids))
	if p.approx != nil {
		// The approx policy reads every worker's overlap in the same probe,
		// routes inline and records where the request went.
		q.seen = p.hist.overlaps(ids, p.approxRouter().ov)
	} else {
		q.seen = p.hist.observe(ids)
	}
	q.repeat = q.seen > 0
	if len(ids) > 0 {
		q.repeat = p.first.observe(ids[0], q.repeat)
	}
	return nil
}

func (p *producer) approxRouter() *router { return p.approx.(routed).routerOf() }

// routed is implemented by the policy simulations; the producer uses it to
// hand kv-aware-approx its overlaps and to record its decision.
type routed interface{ routerOf() *router }

// newPolicySim builds one policy's simulation for the pass; hist is the
// pass's history, which kv-aware-approx records its decisions in.
func newPolicySim(cfg Config, kind policyKind, mode loadMode, hist *history) (policySim, error) {
	if kind != polKVAwareApprox {
		hist = nil
	}
	if cfg.Engine != nil {
		return newTimedSim(cfg, kind, mode, hist)
	}
	s := newCacheSim(cfg, kind, mode)
	s.hist = hist
	return s, nil
}

// firstSeen is the exact record of first blocks behind Result.RepeatRequests:
// a request is a repeat when its first block's id was seen before, and ids
// are chained, so one id per request decides it. It holds up to limit ids
// (SeenBlocks/4; at most 16 bytes an id, so 32 MiB under the default bound)
// and never forgets one; once full it stops learning new first blocks, and
// requests it then cannot place (not in the set, and not in the block
// history either) are counted in uncertain: the repeat count is then a lower
// bound, short by at most uncertain.
type firstSeen struct {
	t         *idTable
	limit     int // 0 = no bound
	full      bool
	uncertain int
}

func newFirstSeen(seenBlocks int) *firstSeen {
	limit := 0
	if seenBlocks > 0 {
		limit = max(seenBlocks/4, 1)
	}
	return &firstSeen{t: getIDTable(0, limit), limit: limit}
}

func (f *firstSeen) release() {
	putIDTable(f.t)
	f.t = nil
}

// observe reports whether id (a request's first block) was seen before,
// given what the block history says, and records it.
func (f *firstSeen) observe(id uint64, histSeen bool) bool {
	if f.t.find(id) >= 0 {
		return true
	}
	if f.limit > 0 && f.t.n >= f.limit {
		f.full = true
		if !histSeen {
			f.uncertain++
		}
		return histSeen
	}
	f.t.reserve(1)
	f.t.insertNew(id)
	return histSeen
}
