package sim

import (
	"fmt"
	"io"
)

// worker is one simulated worker.
type worker struct {
	cache    *cache
	running  int // requests in flight
	requests int // requests routed here so far
}

// flight is a running request.
type flight struct {
	endMS   float64
	seq     int64
	worker  int32
	scratch int32
	pins    []int32
}

// simulation is the state of one Run.
type simulation struct {
	cfg     Config
	timed   bool
	router  *router
	workers []worker
	hist    *history // full-block ids of earlier requests (see history)

	flights []flight
	freeF   []int32
	heap    flightHeap
	nowMS   float64
	seq     int64

	res Result
}

// Run simulates one policy (cfg.Policy) over the requests of src.
func Run(src Source, cfg Config) (Result, error) {
	return run(src, cfg, 0)
}

// RunAll runs each policy over a fresh source from open (closing it after
// if it is an io.Closer) and returns one Result per policy, in order.
// policies may contain "all"; nil or empty means all.
func RunAll(open func() (Source, error), cfg Config, policies []string) ([]Result, error) {
	if len(policies) == 0 {
		policies = []string{AllPolicies}
	}
	names, err := ResolvePolicies(policies)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(names))
	offset := 0
	for _, name := range names {
		src, err := open()
		if err != nil {
			return out, err
		}
		c := cfg
		c.Policy = name
		r, err := run(src, c, offset)
		if cl, ok := src.(io.Closer); ok {
			if cerr := cl.Close(); err == nil && cerr != nil {
				err = cerr
			}
		}
		if err != nil {
			return out, fmt.Errorf("policy %s: %w", name, err)
		}
		offset += r.Requests
		out = append(out, r)
	}
	return out, nil
}

func run(src Source, cfg Config, progressOffset int) (Result, error) {
	cfg, timed, err := cfg.settle(src)
	if err != nil {
		return Result{}, err
	}
	kind, err := policyKindOf(cfg.Policy)
	if err != nil {
		return Result{}, err
	}
	words := 0
	if kind == polKVAwareApprox {
		words = (cfg.Workers + 7) / 8
	}
	s := &simulation{
		cfg:     cfg,
		timed:   timed,
		router:  newRouter(kind, cfg),
		workers: make([]worker, cfg.Workers),
		hist:    newHistory(cfg.SeenBlocks, words),
	}
	for i := range s.workers {
		s.workers[i].cache = newCache(cfg.CapacityBlocks)
	}
	defer s.hist.release()
	s.res.Name = cfg.Policy
	s.res.BlockSize = cfg.BlockSize

	var req Request
	for {
		ok, err := src.Next(&req)
		if err != nil {
			return Result{}, err
		}
		if !ok {
			break
		}
		if err := s.step(&req); err != nil {
			return Result{}, err
		}
		if cfg.Progress != nil && s.res.Requests%progressEvery == 0 {
			cfg.Progress(progressOffset + s.res.Requests)
		}
	}
	for len(s.heap) > 0 {
		s.complete(s.heap.pop(s.flights))
	}
	if cfg.Progress != nil {
		cfg.Progress(progressOffset + s.res.Requests)
	}
	if sk, ok := src.(Skipper); ok {
		s.res.SkippedLines = sk.Skipped()
	}
	return s.result(), nil
}

func (s *simulation) step(req *Request) error {
	bs := s.cfg.BlockSize
	if req.InputTokens < 0 || req.OutputTokens < 0 {
		return fmt.Errorf("request %d: negative token count (input %d, output %d)", s.res.Requests+1, req.InputTokens, req.OutputTokens)
	}
	if len(req.Blocks) != req.InputTokens/bs {
		return fmt.Errorf("request %d: %d full block ids for %d input tokens at %d tokens a block, want %d",
			s.res.Requests+1, len(req.Blocks), req.InputTokens, bs, req.InputTokens/bs)
	}

	// Issue: wait for a free slot (concurrency) or for the arrival time.
	if s.timed {
		t := max(req.ArrivalMS, s.nowMS)
		for len(s.heap) > 0 && s.flights[s.heap[0]].endMS <= t {
			s.complete(s.heap.pop(s.flights))
		}
		s.nowMS = t
	} else {
		for len(s.heap) >= s.cfg.Concurrency {
			f := s.heap.pop(s.flights)
			s.nowMS = max(s.nowMS, s.flights[f].endMS)
			s.complete(f)
		}
	}

	// Which leading blocks were seen before: ids are chained, so the seen
	// blocks form a prefix (see history). kv-aware-approx finds it together
	// with every worker's overlap.
	ids := req.Blocks
	s.hist.begin(len(ids))
	var seenRun int
	if s.hist.words > 0 {
		seenRun = s.hist.overlaps(ids, s.router.ov)
	} else {
		seenRun = s.hist.observe(ids)
	}

	reqBlocks := (req.InputTokens + bs - 1) / bs
	w := s.router.choose(req, reqBlocks, s.workers)
	if s.hist.words > 0 {
		s.hist.recordSent(ids, seenRun, s.router.ov[w], w)
	}

	extra := (req.InputTokens+req.OutputTokens+bs-1)/bs - len(ids)
	fi := s.newFlight()
	f := &s.flights[fi]
	wk := &s.workers[w]
	overlap, granted, pins := wk.cache.acquire(ids, extra, f.pins[:0])
	wk.running++
	wk.requests++

	cachedTokens := overlap * bs
	f.pins = pins
	f.worker = int32(w)
	f.scratch = int32(granted)
	f.seq = s.seq
	s.seq++
	f.endMS = s.nowMS + s.cfg.PrefillMSPerToken*float64(req.InputTokens-cachedTokens) + s.cfg.DecodeMSPerToken*float64(req.OutputTokens)
	s.heap.push(fi, s.flights)

	r := &s.res
	r.Requests++
	r.InputTokens += int64(req.InputTokens)
	r.CachedTokens += int64(cachedTokens)
	r.BlocksReferenced += int64(len(ids))
	r.RepeatedBlocks += int64(seenRun)
	if seenRun > 0 {
		r.RepeatRequests++
		if 2*overlap >= seenRun {
			r.HitRequests++
		}
	}
	return nil
}

func (s *simulation) newFlight() int32 {
	if n := len(s.freeF); n > 0 {
		fi := s.freeF[n-1]
		s.freeF = s.freeF[:n-1]
		return fi
	}
	s.flights = append(s.flights, flight{})
	return int32(len(s.flights) - 1)
}

func (s *simulation) complete(fi int32) {
	f := &s.flights[fi]
	wk := &s.workers[f.worker]
	wk.cache.release(f.pins, int(f.scratch))
	wk.running--
	s.freeF = append(s.freeF, fi)
}

func (s *simulation) result() Result {
	r := s.res
	if r.InputTokens > 0 {
		r.CachedTokenRatio = float64(r.CachedTokens) / float64(r.InputTokens)
	}
	if r.RepeatRequests > 0 {
		r.HitRate = float64(r.HitRequests) / float64(r.RepeatRequests)
	}
	r.Workers = make([]WorkerResult, len(s.workers))
	for i, wk := range s.workers {
		c := wk.cache
		wr := WorkerResult{
			Index:               i,
			Requests:            wk.requests,
			PeakOccupancyBlocks: c.peak,
			Evictions:           c.evictions,
			OverflowBlocks:      c.overflow,
		}
		if r.Requests > 0 {
			wr.RequestShare = float64(wk.requests) / float64(r.Requests)
		}
		r.Evictions += c.evictions
		r.OverflowBlocks += c.overflow
		r.Workers[i] = wr
	}
	return r
}

// flightHeap is a binary min-heap of flight indices ordered by completion
// time, then issue order.
type flightHeap []int32

func flightLess(fs []flight, a, b int32) bool {
	if fs[a].endMS != fs[b].endMS {
		return fs[a].endMS < fs[b].endMS
	}
	return fs[a].seq < fs[b].seq
}

func (h *flightHeap) push(fi int32, fs []flight) {
	*h = append(*h, fi)
	q := *h
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !flightLess(fs, q[i], q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *flightHeap) pop(fs []flight) int32 {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q = q[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && flightLess(fs, q[r], q[l]) {
			m = r
		}
		if !flightLess(fs, q[m], q[i]) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}
