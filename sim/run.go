package sim

// worker is one simulated worker as the router sees it.
type worker struct {
	cache    *cache
	running  int // requests in flight (queued or running)
	requests int // requests routed here so far
	// queued is the prompt blocks of requests routed here and not yet
	// admitted (timed mode): the router counts them as this worker's load,
	// as Dynamo's router counts the blocks of every request it has routed.
	queued int
	// ahead is the blocks a decode stretch holds for steps that have not
	// started yet (timed mode), which the router must not see.
	ahead int
}

// load is the worker's active blocks as the router counts them (Dynamo's
// decode_blocks): blocks held by running requests plus those of requests
// waiting for admission.
func (w *worker) load() int { return w.cache.active() + w.queued - w.ahead }

// flight is a running request of the cache-only simulation.
type flight struct {
	endMS   float64
	seq     int64
	worker  int32
	scratch int32 // scratch blocks granted
	keep    int32 // of them, blocks full at completion, kept cached
	pins    []int32
}

// cacheSim is one policy's cache-only simulation: requests take the
// service time of Config.PrefillMSPerToken and DecodeMSPerToken, whatever
// else their worker is doing.
type cacheSim struct {
	cfg     Config
	mode    loadMode
	router  *router
	hist    *history // the pass's history, for kv-aware-approx only
	workers []worker

	flights []flight
	freeF   []int32
	heap    flightHeap
	nowMS   float64
	seq     int64

	res Result
}

func newCacheSim(cfg Config, kind policyKind, mode loadMode) *cacheSim {
	s := &cacheSim{
		cfg:     cfg,
		mode:    mode,
		router:  newRouter(kind, cfg),
		workers: make([]worker, cfg.Workers),
	}
	for i := range s.workers {
		s.workers[i].cache = newCache(cfg.CapacityBlocks)
	}
	s.res.Name = cfg.Policy
	s.res.BlockSize = cfg.BlockSize
	return s
}

func (s *cacheSim) routerOf() *router { return s.router }

// kvTokens is the tokens of KV a request holds when it completes: its
// prompt and every output token but the last, which is sampled and never
// fed back (vLLM's num_computed_tokens at the end is input + output − 1).
func kvTokens(in, out int) int {
	if out > 0 {
		return in + out - 1
	}
	return in
}

func (s *cacheSim) step(q *prepared, ids []uint64) error {
	bs := s.cfg.BlockSize

	// Issue: wait for a free slot (concurrency) or for the arrival time.
	if s.mode == loadClosed {
		for len(s.heap) >= s.cfg.Concurrency {
			f := s.heap.pop(s.flights)
			s.nowMS = max(s.nowMS, s.flights[f].endMS)
			s.complete(f)
		}
	} else {
		t := max(q.arrivalMS, s.nowMS)
		for len(s.heap) > 0 && s.flights[s.heap[0]].endMS <= t {
			s.complete(s.heap.pop(s.flights))
		}
		s.nowMS = t
	}

	reqBlocks := (q.in + bs - 1) / bs
	w := s.router.choose(ids, reqBlocks, s.workers)
	if s.router.kind == polKVAwareApprox {
		s.hist.recordSent(ids, q.seen, s.router.ov[w], w)
	}

	kv := kvTokens(q.in, q.out)
	extra := (kv+bs-1)/bs - len(ids)
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
	f.keep = int32(min(kv/bs-len(ids), granted))
	f.seq = s.seq
	s.seq++
	f.endMS = s.nowMS + s.cfg.PrefillMSPerToken*float64(q.in-cachedTokens) + s.cfg.DecodeMSPerToken*float64(q.out)
	s.heap.push(fi, s.flights)

	s.res.count(q, overlap, bs)
	return nil
}

// count adds one routed request to the cache figures.
func (r *Result) count(q *prepared, overlap, bs int) {
	r.Requests++
	r.InputTokens += int64(q.in)
	r.CachedTokens += int64(overlap * bs)
	r.BlocksReferenced += int64(q.n)
	r.RepeatedBlocks += int64(q.seen)
	if q.repeat {
		r.RepeatRequests++
		// The seen run is at least 1 (the first block) and at least the
		// overlap (a cached block was seen); both only matter when the
		// history has forgotten.
		if 2*overlap >= max(q.seen, 1) {
			r.HitRequests++
		}
	}
}

func (s *cacheSim) newFlight() int32 {
	if n := len(s.freeF); n > 0 {
		fi := s.freeF[n-1]
		s.freeF = s.freeF[:n-1]
		return fi
	}
	s.flights = append(s.flights, flight{})
	return int32(len(s.flights) - 1)
}

func (s *cacheSim) complete(fi int32) {
	f := &s.flights[fi]
	wk := &s.workers[f.worker]
	wk.cache.release(f.pins, int(f.scratch), int(f.keep))
	wk.running--
	s.freeF = append(s.freeF, fi)
}

func (s *cacheSim) result() (Result, error) {
	for len(s.heap) > 0 {
		s.complete(s.heap.pop(s.flights))
	}
	r := s.res
	r.finish(s.workers)
	return r, nil
}

// finish fills the ratios and the per-worker cache figures.
func (r *Result) finish(ws []worker) {
	if r.InputTokens > 0 {
		r.CachedTokenRatio = float64(r.CachedTokens) / float64(r.InputTokens)
	}
	if r.RepeatRequests > 0 {
		r.HitRate = float64(r.HitRequests) / float64(r.RepeatRequests)
	}
	r.Workers = make([]WorkerResult, len(ws))
	for i, wk := range ws {
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
