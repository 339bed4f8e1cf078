package sim

import (
	"fmt"
	"math"
)

// Engine roles.
const (
	roleAggregated uint8 = iota
	rolePrefill
	roleDecode
)

var roleNames = [...]string{roleAggregated: "aggregated", rolePrefill: "prefill", roleDecode: "decode"}

// seq is one request in the timed simulation.
type seq struct {
	in, out int
	ids     []uint64 // full prompt block ids (own copy)
	seen    int      // as prepared: for the cache figures
	repeat  bool
	remote  bool // waiting at a decode worker for its transferred KV

	engine  int32 // engine holding it now
	pengine int32 // its prefill engine, while disaggregated
	counted bool  // cache figures counted (at its first admission)
	routed  int32 // the worker the router sent it to (Config.Workers' index)
	charge  int   // prefill tokens the router booked for it, until its first token

	kv, gen int     // tokens with KV on the engine; output tokens sampled
	pins    []int32 // stored prompt blocks held on the engine
	scratch int     // other blocks held on the engine
	ppins   []int32 // prefill engine's blocks, held until the transfer ends
	pscr    int

	arrivalMS, waitFromMS, queueMS float64
	firstMS, xferFromMS, xferMS    float64
	lastMS                         float64 // its last token, for Engine.Observer's gaps
}

// known is the tokens of the sequence so far: the prompt and the output.
func (s *seq) known() int { return s.in + s.gen }

// engine is one worker running iterations.
type engine struct {
	idx     int32
	role    uint8
	cache   *cache
	rt      *worker // the router's account of it
	step    StepTimer
	budget  int
	maxSeqs int

	waiting   deque
	running   []int32 // admission order
	receiving int     // admitted decode-side, KV in flight

	busy     bool
	pending  bool
	ver      uint32
	startMS  float64
	endMS    float64
	chunks   []int32 // prefill chunks of this iteration, with chunkN
	chunkN   []int
	decodes  []int32
	k        int     // steps in this iteration (1 unless a decode stretch)
	d0, dd   float64 // stretch: first step's time and per-step change
	busyMS   float64
	preempts int64
}

// timedSim is one policy's timed simulation.
type timedSim struct {
	cfg  Config
	eng  *Engine
	mode loadMode
	bs   int

	router   *router
	hist     *history
	workers  []worker // the router's view: aggregated or prefill workers
	dworkers []worker // decode workers' view
	engines  []*engine
	links    []linkState // one per path (Link.Paths)
	linkVer  []uint32

	seqs  []seq
	freeS []int32

	agenda   eventHeap
	ord      uint64
	pendingE []*engine
	nowMS    float64
	inFlight int

	// scratch buffers for StepTimer calls
	pTok, pCtx, dCtx, dCtx2 []int

	res        Result
	ttft, tpot latencySketch
	e2e, queue latencySketch
	xfer       latencySketch
	firstMS    float64
	lastMS     float64
	started    bool
	completed  int
	outTokens  int64
	rejected   int
}

func newTimedSim(cfg Config, kind policyKind, mode loadMode, hist *history) (*timedSim, error) {
	e := cfg.Engine
	s := &timedSim{
		cfg:    cfg,
		eng:    e,
		mode:   mode,
		bs:     cfg.BlockSize,
		router: newRouter(kind, cfg),
		hist:   hist,
	}
	s.workers = s.router.newWorkers(cfg.Workers, cfg.CapacityBlocks)
	role := roleAggregated
	if e.DecodeWorkers > 0 {
		role = rolePrefill
		s.dworkers = make([]worker, e.DecodeWorkers)
		s.links = make([]linkState, max(e.Link.Paths, 1))
		for i := range s.links {
			s.links[i] = newLink(e.Link)
		}
		s.linkVer = make([]uint32, len(s.links))
	}
	for i := range s.workers {
		s.engines = append(s.engines, &engine{idx: int32(len(s.engines)), role: role, cache: s.workers[i].cache, rt: &s.workers[i],
			step: e.Step, budget: e.MaxNumBatchedTokens, maxSeqs: e.MaxNumSeqs})
	}
	for i := range s.dworkers {
		s.dworkers[i].cache = newCache(e.DecodeCapacityBlocks)
		s.engines = append(s.engines, &engine{idx: int32(len(s.engines)), role: roleDecode, cache: s.dworkers[i].cache, rt: &s.dworkers[i],
			step: e.DecodeStep, budget: e.DecodeMaxNumBatchedTokens, maxSeqs: e.DecodeMaxNumSeqs})
	}
	s.res.Name = cfg.Policy
	s.res.BlockSize = cfg.BlockSize
	return s, nil
}

func (s *timedSim) routerOf() *router { return s.router }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// step issues one request: it runs the agenda up to the request's arrival
// (or until a client of the closed loop is free), routes it, and hands it to
// its worker Engine.FrontendMS later.
func (s *timedSim) step(q *prepared, ids []uint64) error {
	if s.mode == loadClosed {
		for s.inFlight >= s.cfg.Concurrency {
			if !s.processOne() {
				return fmt.Errorf("timed simulation stalled with %d requests in flight and nothing scheduled", s.inFlight)
			}
		}
	}
	if s.mode != loadClosed || q.arrivalMS > s.nowMS { // arrival times, or a ramp's first sends
		s.runUntil(max(q.arrivalMS, s.nowMS))
	}
	if !s.started {
		s.started, s.firstMS = true, s.nowMS
	}
	out := max(q.out, 1) // an engine samples at least one token
	if s.rejects(q.in, out) {
		s.rejected++
		return nil
	}
	si := s.newSeq()
	sq := &s.seqs[si]
	sq.in, sq.out = q.in, out
	sq.ids = append(sq.ids[:0], ids...)
	sq.seen, sq.repeat = q.seen, q.repeat
	sq.arrivalMS = s.nowMS
	s.inFlight++
	// The frontend's router decides as the request comes in (kv-aware-approx
	// must: it records its decision in the pass's history, which the pass
	// reads request by request); the worker gets it after the frontend.
	sq.engine = s.route(sq, q)
	if fe := s.eng.FrontendMS + s.eng.FrontendMSPerToken*float64(q.in); fe > 0 {
		s.push(s.nowMS+fe, evDelivered, si, 0)
		return nil
	}
	s.enqueue(si)
	return nil
}

// route picks the worker of a request and books it in the router's
// account, from its decision on (queued requests are load).
func (s *timedSim) route(sq *seq, q *prepared) int32 {
	w := s.router.choose(sq.ids, sq.in, s.workers)
	if s.router.kind == polKVAwareApprox {
		s.hist.recordSent(sq.ids, q.seen, s.router.ov[w], w)
	}
	sq.routed, sq.charge = int32(w), s.router.charge(sq.in, w)
	s.workers[w].activeAdd(sq.ids, sq.charge, s.router.track)
	return int32(w)
}

// enqueue puts a routed request in its worker's queue.
func (s *timedSim) enqueue(si int32) {
	sq := &s.seqs[si]
	e := s.engines[sq.engine]
	sq.pengine = e.idx
	sq.waitFromMS = s.nowMS
	e.waiting.pushBack(si)
	s.kick(e)
}

// rejects reports whether a request could never run: an empty prompt (vLLM
// refuses it) or one whose KV could never fit a worker.
func (s *timedSim) rejects(in, out int) bool {
	bs := s.bs
	if in < 1 {
		return true
	}
	if s.eng.DecodeWorkers == 0 {
		return ceilDiv(kvTokens(in, out), bs) > s.cfg.CapacityBlocks
	}
	return ceilDiv(in, bs) > s.cfg.CapacityBlocks || ceilDiv(kvTokens(in, out), bs) > s.eng.DecodeCapacityBlocks
}

func (s *timedSim) newSeq() int32 {
	if n := len(s.freeS); n > 0 {
		i := s.freeS[n-1]
		s.freeS = s.freeS[:n-1]
		ids, pins, ppins := s.seqs[i].ids, s.seqs[i].pins, s.seqs[i].ppins
		s.seqs[i] = seq{ids: ids[:0], pins: pins[:0], ppins: ppins[:0]}
		return i
	}
	s.seqs = append(s.seqs, seq{})
	return int32(len(s.seqs) - 1)
}

func (s *timedSim) push(t float64, kind uint8, id int32, ver uint32) {
	s.ord++
	s.agenda.push(event{at: t, ord: s.ord, id: id, ver: ver, kind: kind})
}

// kick tells an engine it has new work: an idle one is scheduled once the
// clock moves on (so that every request arriving at this instant joins its
// first iteration); a busy one ends its decode stretch at the step in
// progress.
func (s *timedSim) kick(e *engine) {
	if e.busy {
		s.truncate(e)
		return
	}
	if !e.pending {
		e.pending = true
		s.pendingE = append(s.pendingE, e)
	}
}

// flush schedules the engines kicked at the current time.
func (s *timedSim) flush() {
	for len(s.pendingE) > 0 {
		list := s.pendingE
		s.pendingE = nil
		for _, e := range list {
			e.pending = false
			s.schedule(e)
		}
	}
}

// runUntil processes every event due at or before t and leaves the clock at
// t; engines kicked at t are scheduled only when the clock moves past it.
func (s *timedSim) runUntil(t float64) {
	for {
		next := math.Inf(1)
		if len(s.agenda) > 0 {
			next = s.agenda[0].at
		}
		switch {
		case next <= t && next <= s.nowMS: // the current instant's events first
			s.handle(s.agenda.pop())
		case len(s.pendingE) > 0 && t > s.nowMS: // moving on: start the kicked engines now
			s.flush()
		case next <= t:
			s.handle(s.agenda.pop())
		default:
			s.nowMS = max(s.nowMS, t)
			return
		}
	}
}

// processOne handles the current instant's next event, or schedules the
// engines kicked at it, or handles the next event; it reports false when
// there is nothing left to do.
func (s *timedSim) processOne() bool {
	switch {
	case len(s.agenda) > 0 && s.agenda[0].at <= s.nowMS:
		s.handle(s.agenda.pop())
	case len(s.pendingE) > 0:
		s.flush()
	case len(s.agenda) > 0:
		s.handle(s.agenda.pop())
	default:
		return false
	}
	return true
}

func (s *timedSim) handle(ev event) {
	s.nowMS = max(s.nowMS, ev.at)
	switch ev.kind {
	case evIteration:
		e := s.engines[ev.id]
		if ev.ver != e.ver || !e.busy {
			return
		}
		s.endIteration(e)
	case evLink:
		p := ev.id
		if ev.ver != s.linkVer[p] {
			return
		}
		si := s.links[p].finish(s.nowMS)
		s.linkChanged(p)
		if l := s.links[p].latencyMS; l > 0 {
			s.push(s.nowMS+l, evArrived, si, 0)
		} else {
			s.transferDone(si)
		}
	case evArrived:
		s.transferDone(ev.id)
	case evDelivered:
		s.enqueue(ev.id)
	}
}

// linkChanged re-arms path p's next completion.
func (s *timedSim) linkChanged(p int32) {
	s.linkVer[p]++
	if t := s.links[p].next(); !math.IsInf(t, 1) {
		s.push(t, evLink, p, s.linkVer[p])
	}
}

// ---- scheduling ----

// schedule plans and starts an engine's next iteration at the current time,
// or leaves it idle when it has nothing to run.
func (s *timedSim) schedule(e *engine) {
	budget := e.budget
	e.chunks, e.chunkN, e.decodes = e.chunks[:0], e.chunkN[:0], e.decodes[:0]
	preempted := false
	if !s.eng.SeparatePrefill {
		// vLLM: running sequences in admission order, decodes and prefill
		// chunks together, then waiting ones.
		budget, preempted = s.serveRunning(e, budget, seqAny)
		s.admitWaiting(e, budget, preempted)
	} else {
		// SGLang: a prefill iteration when there is prefill to do, else a
		// decode iteration of every running sequence.
		budget, preempted = s.serveRunning(e, budget, seqPrefilling)
		s.admitWaiting(e, budget, preempted)
		if len(e.chunks) == 0 {
			s.serveRunning(e, math.MaxInt, seqDecoding)
		}
	}
	s.start(e)
}

// Which running sequences serveRunning serves.
const (
	seqAny uint8 = iota
	seqPrefilling
	seqDecoding
)

// serveRunning schedules e's running sequences of the given kind, in
// admission order, within budget tokens, growing their blocks and
// preempting when they do not fit. It returns the budget left and whether
// it preempted.
func (s *timedSim) serveRunning(e *engine, budget int, kind uint8) (int, bool) {
	preempted := false
	for i := 0; i < len(e.running) && budget > 0; i++ {
		si := e.running[i]
		sq := &s.seqs[si]
		decoding := sq.known()-sq.kv == 1 && sq.gen > 0
		if (kind == seqPrefilling && decoding) || (kind == seqDecoding && !decoding) {
			continue
		}
		n := min(sq.known()-sq.kv, budget)
		self := false
		for !s.allocate(e, sq, sq.kv+n) {
			// Preempt the most recently admitted running sequence; if that
			// is this one, it waits and the others go on.
			victim := e.running[len(e.running)-1]
			s.preempt(e, victim)
			preempted = true
			if victim == si {
				self = true
				break
			}
		}
		if self {
			break // nothing after it is running any more
		}
		budget -= n
		if decoding {
			e.decodes = append(e.decodes, si)
		} else {
			e.chunks = append(e.chunks, si)
			e.chunkN = append(e.chunkN, n)
		}
	}
	return budget, preempted
}

// admitWaiting admits e's waiting sequences, first come first served,
// within budget tokens, unless this iteration preempted (vLLM admits none
// then).
func (s *timedSim) admitWaiting(e *engine, budget int, preempted bool) {
	bs := s.bs
	for !preempted && budget > 0 && e.waiting.len() > 0 && len(e.running)+e.receiving < e.maxSeqs {
		si := e.waiting.front()
		sq := &s.seqs[si]
		if sq.remote {
			// A decode worker takes a transferred request: blocks for its
			// whole prompt, then the transfer.
			need := ceilDiv(sq.in, bs)
			if need > e.cache.available() {
				break
			}
			e.waiting.popFront()
			e.cache.grant(need)
			sq.scratch = need
			sq.queueMS += s.nowMS - sq.waitFromMS
			e.receiving++
			sq.xferFromMS = s.nowMS
			bytes := float64(sq.in) * s.eng.Link.BytesPerToken
			p := (e.idx - int32(len(s.workers))) % int32(len(s.links)) // the decode worker's path
			if done, shared := s.links[p].start(s.nowMS, bytes, si, s.ord); shared {
				s.ord++
				s.linkChanged(p)
			} else {
				s.push(done, evArrived, si, 0)
			}
			continue
		}
		cached := 0
		overlap := 0
		if e.role != roleDecode {
			overlap = e.cache.match(sq.ids)
			// A hit never covers the last known token: the engine
			// recomputes it to sample.
			cached = min(overlap, (sq.known()-1)/bs) * bs
		}
		n := min(sq.known()-cached, budget)
		kv0 := sq.kv
		sq.kv = cached
		if !s.allocate(e, sq, cached+n) {
			sq.kv = kv0
			break
		}
		e.waiting.popFront()
		sq.queueMS += s.nowMS - sq.waitFromMS
		if !sq.counted {
			sq.counted = true
			s.res.count(&prepared{in: sq.in, n: len(sq.ids), seen: sq.seen, repeat: sq.repeat}, overlap, bs)
		}
		e.running = append(e.running, si)
		budget -= n
		e.chunks = append(e.chunks, si)
		e.chunkN = append(e.chunkN, n)
	}
}

// start times the iteration planned on e and starts it, or leaves e idle
// when nothing was planned.
func (s *timedSim) start(e *engine) {
	if len(e.chunks) == 0 && len(e.decodes) == 0 {
		return
	}
	// Time the iteration.
	s.pTok, s.pCtx, s.dCtx = s.pTok[:0], s.pCtx[:0], s.dCtx[:0]
	for i, si := range e.chunks {
		s.pTok = append(s.pTok, e.chunkN[i])
		s.pCtx = append(s.pCtx, s.seqs[si].kv)
	}
	for _, si := range e.decodes {
		s.dCtx = append(s.dCtx, s.seqs[si].kv)
	}
	e.k = 1
	e.d0 = s.stepMS(e, s.pTok, s.pCtx, s.dCtx)
	e.dd = 0
	if len(e.chunks) == 0 && !s.eng.ExactSteps {
		s.stretch(e)
	}
	e.busy = true
	e.startMS = s.nowMS
	e.endMS = s.nowMS + stretchMS(e.k, e.d0, e.dd)
	e.ver++
	s.push(e.endMS, evIteration, e.idx, e.ver)
}

// stepMS calls the engine model and guards the clock against a model that
// returns nonsense.
func (s *timedSim) stepMS(e *engine, pTok, pCtx, dCtx []int) float64 {
	d := e.step.StepMS(pTok, pCtx, dCtx)
	if !(d >= 0) || math.IsInf(d, 0) {
		panic(fmt.Sprintf("sim: step-time model returned %g ms for %d prefill chunks and %d decodes", d, len(pTok), len(dCtx)))
	}
	return d
}

// stretch extends a decode-only iteration over as many steps as nothing
// changes: up to the first sequence to finish, and as far as free blocks let
// every sequence grow. Its steps are timed by the model at the first and the
// last step, linearly in between.
func (s *timedSim) stretch(e *engine) {
	bs := s.bs
	kmax := math.MaxInt
	for _, si := range e.decodes {
		sq := &s.seqs[si]
		kmax = min(kmax, sq.out-sq.gen)
	}
	if kmax <= 1 {
		return
	}
	// The first step's blocks are held; more steps need more blocks.
	extra := func(k int) int {
		n := 0
		for _, si := range e.decodes {
			sq := &s.seqs[si]
			n += ceilDiv(sq.kv+k, bs) - ceilDiv(sq.kv+1, bs)
		}
		return n
	}
	avail := e.cache.available()
	k := kmax
	if extra(k) > avail {
		lo, hi := 1, kmax // extra(lo) fits, extra(hi) does not
		for hi-lo > 1 {
			m := int(uint(lo+hi) >> 1)
			if extra(m) <= avail {
				lo = m
			} else {
				hi = m
			}
		}
		k = lo
	}
	if k <= 1 {
		return
	}
	for _, si := range e.decodes {
		sq := &s.seqs[si]
		if g := ceilDiv(sq.kv+k, bs) - ceilDiv(sq.kv+1, bs); g > 0 {
			e.cache.grant(g)
			sq.scratch += g
		}
	}
	s.dCtx2 = s.dCtx2[:0]
	for _, c := range s.dCtx {
		s.dCtx2 = append(s.dCtx2, c+k-1)
	}
	last := s.stepMS(e, nil, nil, s.dCtx2)
	e.k = k
	e.dd = (last - e.d0) / float64(k-1)
}

// stretchMS is the time of the first j steps of a stretch whose first step
// takes d0 and each next one dd more.
func stretchMS(j int, d0, dd float64) float64 {
	fj := float64(j)
	return fj*d0 + dd*fj*(fj-1)/2
}

// inProgress returns the step of e's stretch in progress at now: the first
// that ends at or after now.
func (s *timedSim) inProgress(e *engine) int {
	lo, hi := 1, e.k // step hi ends at or after now
	if e.startMS+stretchMS(1, e.d0, e.dd) >= s.nowMS {
		return 1
	}
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if e.startMS+stretchMS(m, e.d0, e.dd) >= s.nowMS {
			hi = m
		} else {
			lo = m
		}
	}
	return hi
}

// truncate ends a decode stretch at the end of the step in progress, so that
// the engine can take new work at its next iteration.
func (s *timedSim) truncate(e *engine) {
	if e.k <= 1 {
		return
	}
	hi := s.inProgress(e)
	if hi >= e.k {
		return
	}
	bs := s.bs
	for _, si := range e.decodes {
		sq := &s.seqs[si]
		if g := ceilDiv(sq.kv+e.k, bs) - ceilDiv(sq.kv+hi, bs); g > 0 {
			e.cache.scratch -= g
			sq.scratch -= g
		}
	}
	e.k = hi
	e.endMS = e.startMS + stretchMS(hi, e.d0, e.dd)
	e.ver++
	s.push(e.endMS, evIteration, e.idx, e.ver)
}

// allocate makes sq hold the blocks for t tokens of KV on e, storing (or
// pinning) the prompt blocks that t fills; it reports false, changing
// nothing, when they do not fit.
func (s *timedSim) allocate(e *engine, sq *seq, t int) bool {
	bs := s.bs
	need := ceilDiv(t, bs)
	stored := 0
	if e.role != roleDecode {
		stored = min(t/bs, len(sq.ids))
	}
	if stored < len(sq.pins) {
		stored = len(sq.pins)
	}
	scratch := need - stored
	if scratch < 0 {
		scratch = 0
	}
	cost := scratch - sq.scratch
	if stored > len(sq.pins) {
		cost += e.cache.pinCost(sq.ids[len(sq.pins):stored])
	}
	if cost > e.cache.available() {
		return false
	}
	e.cache.scratch -= sq.scratch
	sq.scratch = 0
	for _, id := range sq.ids[len(sq.pins):stored] {
		sq.pins = append(sq.pins, e.cache.pinOrStore(id))
	}
	e.cache.grant(scratch)
	sq.scratch = scratch
	return true
}

// release frees what sq holds on e: its prompt blocks stay cached; of its
// other blocks, those filled with KV stay cached (unindexed) on a worker
// that caches prefixes, and the rest are freed.
func (s *timedSim) release(e *engine, pins []int32, scratch, kv int) {
	keep := 0
	if e.role != roleDecode {
		keep = min(max(kv/s.bs-len(pins), 0), scratch)
	}
	e.cache.release(pins, scratch, keep)
}

// preempt sends a running sequence back to the head of e's queue; it will
// recompute everything it had (vLLM's recompute preemption).
func (s *timedSim) preempt(e *engine, si int32) {
	sq := &s.seqs[si]
	e.running = e.running[:len(e.running)-1]
	s.release(e, sq.pins, sq.scratch, sq.kv)
	sq.pins, sq.scratch, sq.kv = sq.pins[:0], 0, 0
	sq.waitFromMS = s.nowMS
	e.waiting.pushFront(si)
	e.preempts++
	s.res.timing().Preemptions++
	// Drop it from this iteration's plan if it was scheduled already.
	for i, c := range e.decodes {
		if c == si {
			e.decodes = append(e.decodes[:i], e.decodes[i+1:]...)
			break
		}
	}
	for i, c := range e.chunks {
		if c == si {
			e.chunks = append(e.chunks[:i], e.chunks[i+1:]...)
			e.chunkN = append(e.chunkN[:i], e.chunkN[i+1:]...)
			break
		}
	}
}

// endIteration applies an iteration's work and schedules the next.
func (s *timedSim) endIteration(e *engine) {
	e.busy = false
	e.busyMS += e.endMS - e.startMS
	now := s.nowMS
	obs := s.eng.Observer
	for i, si := range e.chunks {
		sq := &s.seqs[si]
		sq.kv += e.chunkN[i]
		if sq.kv == sq.known() {
			if obs != nil && sq.gen > 0 {
				obs.Gaps(now-sq.lastMS, 1) // a preempted sequence's next token, after recomputing
			}
			s.sample(sq, now)
		}
	}
	if obs != nil && len(e.decodes) > 0 {
		// Each decoding sequence waits from its last token to the end of the
		// first step; the stretch's later steps are shared by all of them.
		t1 := e.startMS + stretchMS(1, e.d0, e.dd)
		for _, si := range e.decodes {
			obs.Gaps(t1-s.seqs[si].lastMS, 1)
		}
		for j := 1; j < e.k; j++ {
			obs.Gaps(e.d0+float64(j)*e.dd, len(e.decodes))
		}
	}
	for _, si := range e.decodes {
		sq := &s.seqs[si]
		sq.kv += e.k
		sq.gen += e.k - 1
		s.sample(sq, now)
	}
	// Sequences that finished or left leave the running list, in order.
	kept := e.running[:0]
	for _, si := range e.running {
		sq := &s.seqs[si]
		switch {
		case e.role == rolePrefill && sq.gen > 0:
			s.handOff(e, si)
		case e.role != rolePrefill && sq.gen >= sq.out:
			s.finish(e, si)
		default:
			kept = append(kept, si)
		}
	}
	e.running = kept
	if len(e.running) > 0 || e.waiting.len() > 0 {
		s.kick(e)
	}
}

// sample records one sampled token of sq at now. The first one ends the
// prefill the router booked (on a prefill worker, handOff does).
func (s *timedSim) sample(sq *seq, now float64) {
	sq.gen++
	sq.lastMS = now
	if sq.gen == 1 && !(s.seqEngine(sq).role == rolePrefill) {
		sq.firstMS = now
		if sq.charge > 0 { // aggregated; a prefill worker's charge ends at handOff
			s.workers[sq.routed].activePrefillDone(sq.charge)
			sq.charge = 0
		}
	}
}

func (s *timedSim) seqEngine(sq *seq) *engine { return s.engines[sq.engine] }

// handOff moves a prefilled request from its prefill engine to a decode
// worker, where it waits for blocks for its KV. The prefill request ends
// for the router here (Dynamo's prefill router frees it when the prefill
// worker answers, before the KV moves). The decode worker is the one with
// the fewest active blocks by the router's account: Dynamo's decode
// routing, whose cost keeps potential_decode_blocks alone (its decode
// router forces the overlap credit to 0 and tracks no prefill tokens;
// selector/default.rs), whatever policy routes the prefill. Each request's
// prompt counts on its own, as the simulated decode worker holds it (it
// caches no prefixes).
func (s *timedSim) handOff(p *engine, si int32) {
	sq := &s.seqs[si]
	sq.ppins, sq.pins = sq.pins, sq.ppins[:0]
	sq.pscr, sq.scratch = sq.scratch, 0
	pw := &s.workers[sq.routed]
	pw.activePrefillDone(sq.charge)
	sq.charge = 0
	pw.activeFree(sq.ids, s.router.track)
	d := 0
	for j := 1; j < len(s.dworkers); j++ {
		if x, y := s.dworkers[j].blocks, s.dworkers[d].blocks; x < y || (x == y && fewerRouted(s.dworkers, j, d)) {
			d = j
		}
	}
	de := s.engines[len(s.workers)+d]
	sq.engine = de.idx
	sq.remote = true
	sq.gen = 0 // the decode worker samples the first token again
	sq.kv = 0
	sq.waitFromMS = s.nowMS
	de.rt.decodeAdd(len(sq.ids))
	de.waiting.pushBack(si)
	s.kick(de)
}

// transferDone lands a request's KV on its decode worker and frees its
// blocks on the prefill worker.
func (s *timedSim) transferDone(si int32) {
	sq := &s.seqs[si]
	sq.xferMS = s.nowMS - sq.xferFromMS
	p := s.engines[sq.pengine]
	s.release(p, sq.ppins, sq.pscr, sq.in)
	sq.ppins, sq.pscr = sq.ppins[:0], 0
	if len(p.running) > 0 || p.waiting.len() > 0 {
		s.kick(p)
	}
	d := s.engines[sq.engine]
	d.receiving--
	sq.remote = false
	sq.kv = max(sq.in-1, 0) // the last prompt token is recomputed to sample
	d.running = append(d.running, si)
	s.kick(d)
}

// finish completes a request on its (aggregated or decode) engine.
func (s *timedSim) finish(e *engine, si int32) {
	sq := &s.seqs[si]
	now := s.nowMS
	s.release(e, sq.pins, sq.scratch, sq.kv)
	sq.pins, sq.scratch = sq.pins[:0], 0
	if e.role == roleDecode {
		e.rt.decodeFree(len(sq.ids))
	} else {
		s.workers[sq.routed].activeFree(sq.ids, s.router.track)
	}
	s.inFlight--
	s.completed++
	s.outTokens += int64(sq.out)
	s.lastMS = max(s.lastMS, now)
	s.ttft.add(sq.firstMS - sq.arrivalMS)
	s.e2e.add(now - sq.arrivalMS)
	if sq.out > 1 {
		s.tpot.add((now - sq.firstMS) / float64(sq.out-1))
	}
	s.queue.add(sq.queueMS)
	s.xfer.add(sq.xferMS)
	if obs := s.eng.Observer; obs != nil {
		obs.Request(RequestTiming{InputTokens: sq.in, OutputTokens: sq.out, ArrivalMS: sq.arrivalMS,
			TTFTMS: sq.firstMS - sq.arrivalMS, E2EMS: now - sq.arrivalMS})
	}
	s.freeS = append(s.freeS, si)
}

func (s *timedSim) result() (Result, error) {
	for s.processOne() {
	}
	if s.inFlight > 0 {
		return Result{}, fmt.Errorf("timed simulation ended with %d requests unfinished", s.inFlight)
	}
	r := s.res
	r.finish(append(append([]worker(nil), s.workers...), s.dworkers...))
	t := r.timing()
	t.Completed, t.Rejected = s.completed, s.rejected
	t.TTFTMS, t.TPOTMS, t.E2EMS = s.ttft.summary(), s.tpot.summary(), s.e2e.summary()
	t.QueueMS, t.TransferMS = s.queue.summary(), s.xfer.summary()
	t.DurationMS = s.lastMS - s.firstMS
	if t.DurationMS > 0 {
		t.RequestsPerS = float64(s.completed) / t.DurationMS * 1000
		t.OutputTokensPerS = float64(s.outTokens) / t.DurationMS * 1000
	}
	for i, e := range s.engines {
		wt := &WorkerTiming{Role: roleNames[e.role], Preemptions: e.preempts}
		if t.DurationMS > 0 {
			wt.GPUBusyFraction = e.busyMS / t.DurationMS
		}
		r.Workers[i].WorkerTiming = wt
	}
	return r, nil
}
