package sim

import "math"

// worker is one simulated worker as the router sees it.
type worker struct {
	cache    *cache
	requests int // requests routed here so far
	// The router's account of the work it sent here (active.go).
	inFlight int   // requests routed here and not finished
	prefill  int   // prompt tokens of routed requests before their first token (Dynamo's active_prefill_tokens)
	blocks   int   // distinct full prompt blocks of the requests in flight (Dynamo's active blocks)
	refs     table // block id → requests in flight here holding it; kept for the kv-aware family only
	// solo: one request is in flight and its blocks (sole) are the active
	// ones; refs is empty (active.go).
	solo bool
	sole []uint64
	// inCache: the cache-only simulation's account, in the cache's pins
	// while no request in flight here has a block the cache could not
	// store (overflowed counts those requests; active.go).
	inCache    bool
	overflowed int
}

// flight is a running request of the cache-only simulation.
type flight struct {
	endMS   float64
	seq     int64
	worker  int32
	scratch int32 // scratch blocks granted
	keep    int32 // of them, blocks full at completion, kept cached
	pins    []int32
	// held: ids is a copy of its full blocks, for the router's account
	// (kv-aware family): with the account in the cache, only when some of
	// them did not fit it.
	held bool
	ids  []uint64
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
	heap    flightHeap // completions
	firsts  eventHeap  // first tokens due, while the router books prefill tokens (kv-aware family)
	nowMS   float64
	seq     int64

	res Result
}

func newCacheSim(cfg Config, kind policyKind, mode loadMode) *cacheSim {
	s := &cacheSim{
		cfg:    cfg,
		mode:   mode,
		router: newRouter(kind, cfg),
	}
	s.workers = s.router.newWorkers(cfg.Workers, cfg.CapacityBlocks)
	for i := range s.workers {
		s.workers[i].inCache = s.router.track && accountInCache
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
	// The events are completions and first tokens, handled in the order
	// of (time, issue order); a request's first token comes before its
	// completion. The two touch different figures of a worker, so only
	// which of them are handled matters, not their order across the two
	// agendas: every event up to the last completion a closed loop waits
	// for, or up to the arrival.
	if s.mode == loadClosed {
		for len(s.heap) >= s.cfg.Concurrency {
			fi := s.heap.pop(s.flights)
			f := &s.flights[fi]
			s.firstsUpTo(f.endMS, f.seq)
			s.nowMS = max(s.nowMS, f.endMS)
			s.complete(fi)
		}
	}
	if s.mode != loadClosed || q.arrivalMS > s.nowMS { // arrival times, or a ramp's first sends
		t := max(q.arrivalMS, s.nowMS)
		for len(s.heap) > 0 && s.flights[s.heap[0]].endMS <= t {
			s.complete(s.heap.pop(s.flights))
		}
		s.firstsUpTo(t, math.MaxInt64)
		s.nowMS = t
	}

	w := s.router.choose(ids, q.in, s.workers)
	if s.router.kind == polKVAwareApprox {
		s.hist.recordSent(ids, q.seen, s.router.ov[w], w)
	}

	kv := kvTokens(q.in, q.out)
	extra := (kv+bs-1)/bs - len(ids)
	fi := s.newFlight()
	f := &s.flights[fi]
	wk := &s.workers[w]
	overlap, granted, pins := wk.cache.acquire(ids, extra, f.pins[:0])

	cachedTokens := overlap * bs
	f.pins = pins
	f.worker = int32(w)
	f.scratch = int32(granted)
	f.keep = int32(min(kv/bs-len(ids), granted))
	f.seq = s.seq
	s.seq++
	prefillEnd := s.nowMS + s.cfg.PrefillMSPerToken*float64(q.in-cachedTokens)
	f.endMS = prefillEnd + s.cfg.DecodeMSPerToken*float64(q.out)
	charge := 0
	if s.router.track && prefillEnd > s.nowMS { // the first token comes at the end of the prefill
		charge = s.router.charge(q.in, w)
		s.firsts.push(event{at: prefillEnd, ord: uint64(f.seq), id: f.worker, n: int32(charge), kind: evFirstToken})
	}
	switch {
	case wk.inCache:
		f.held = wk.cacheAdd(ids, len(pins), charge)
		if f.held {
			f.ids = append(f.ids[:0], ids...)
		}
	case s.router.track: // the account in the table, as the timed simulation keeps it
		f.held = true
		f.ids = append(f.ids[:0], ids...)
		wk.activeAdd(f.ids, charge, true)
	default:
		wk.activeAdd(nil, 0, false)
	}
	s.heap.push(fi, s.flights)

	s.res.count(q, overlap, bs)
	return nil
}

// firstsUpTo handles the first tokens due at or before (atMS, seq), after
// which the router no longer books their prefill.
func (s *cacheSim) firstsUpTo(atMS float64, seq int64) {
	upTo := event{at: atMS, ord: uint64(seq)}
	for len(s.firsts) > 0 && !eventLess(&upTo, &s.firsts[0]) {
		d := s.firsts.pop()
		s.workers[d.id].activePrefillDone(int(d.n))
	}
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
	var held []uint64
	if f.held {
		held = f.ids
	}
	if wk.inCache {
		wk.cacheFree(held, f.pins)
	} else {
		wk.activeFree(held, s.router.track)
	}
	wk.cache.release(f.pins, int(f.scratch), int(f.keep))
	s.freeF = append(s.freeF, fi)
}

func (s *cacheSim) result() (Result, error) {
	for len(s.heap) > 0 {
		s.complete(s.heap.pop(s.flights))
	}
	s.firstsUpTo(math.Inf(1), math.MaxInt64)
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

// flightHeap is a binary min-heap of flight indices ordered by their next
// event's time, then issue order.
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
