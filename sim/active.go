package sim

// The routers' view of load is the router's own account of the work it has
// sent to each worker, as Dynamo's KV router keeps it (its ActiveSequences,
// lib/kv-router/src/sequences: add_request when it routes a request,
// mark_prefill_completed at the request's first token, free when the
// response ends), not the engine's state. Three figures per worker:
//
//   - inFlight: requests routed there and not finished. It is all that
//     Dynamo's least-loaded mode counts (lib/runtime/src/pipeline/network/
//     egress/push_router.rs, least_loaded: "the instance with the fewest
//     active connections", an occupancy counter taken at selection and
//     released when the response stream ends).
//   - prefill: Dynamo's active_prefill_tokens, the prompt tokens of requests
//     routed there whose first token has not come yet, each counted as the
//     router saw it when it routed it: its prompt less the overlap it saw
//     (ActiveSequences::new_tokens(isl, overlap)). Queued and prefilling
//     requests both count: this is the prefill backlog.
//   - blocks: Dynamo's active blocks, the distinct full prompt blocks of the
//     requests routed there and not finished; a block two in-flight
//     requests share counts once (router_assume_kv_reuse, on by default).
//     Generated tokens are not counted (router_track_output_blocks is off by
//     default), and cached blocks no running request holds are not load.
//
// The engine's own block use (cached-but-evictable blocks, a decode's
// growing tail) is not the router's signal. The simulator used to balance on
// it, and that herded prefill: a worker whose requests had only just
// arrived held the fewest blocks, because its requests had not decoded yet,
// so the next arrival joined its prefill queue.

// activeAdd records a request routed to w: its full prompt blocks ids
// (kept by the caller until activeFree) and the prefill tokens the router
// charges it. track keeps the deduplicated block count (the kv-aware
// family's cost needs it; least-loaded does not). While a worker has one
// request in flight its blocks are that request's own (w.sole); the table
// of references is filled only when a second one joins, so a sequential
// load pays nothing for it.
func (w *worker) activeAdd(ids []uint64, prefillTokens int, track bool) {
	w.requests++
	w.prefill += prefillTokens
	w.inFlight++
	if !track {
		return
	}
	switch {
	case w.inFlight == 1:
		w.solo, w.sole, w.blocks = true, ids, len(ids)
		return
	case w.solo:
		w.solo, w.blocks = false, 0
		w.hold(w.sole)
		w.sole = nil
	}
	w.hold(ids)
}

// hold adds one reference to each of ids in the table.
func (w *worker) hold(ids []uint64) {
	for _, id := range ids {
		w.hold1(id)
	}
}

// hold1 adds one reference to id in the table.
func (w *worker) hold1(id uint64) {
	at, ok := w.refs.find(id)
	if ok {
		w.refs.vals[at]++
		return
	}
	if w.refs.n < w.refs.limit {
		w.refs.setAt(at, id, 1)
	} else {
		w.refs.insertNew(id, 1)
	}
	w.blocks++
}

// unhold takes one reference off each of ids in the table.
func (w *worker) unhold(ids []uint64) {
	for _, id := range ids {
		w.unhold1(id)
	}
}

// unhold1 takes one reference off id in the table, and id out of it with
// its last.
func (w *worker) unhold1(id uint64) {
	at, ok := w.refs.find(id)
	if !ok {
		panic("sim: router frees a block it never counted")
	}
	if w.refs.vals[at] > 1 {
		w.refs.vals[at]--
		return
	}
	w.refs.delAt(at)
	w.blocks--
}

// activePrefillDone is Dynamo's mark_prefill_completed: the request's first
// token came, its prefill tokens leave the backlog.
func (w *worker) activePrefillDone(prefillTokens int) { w.prefill -= prefillTokens }

// activeFree is Dynamo's free: the request ended (a prefill worker's when
// its prefill did).
func (w *worker) activeFree(ids []uint64, track bool) {
	w.inFlight--
	if !track {
		return
	}
	if w.solo {
		w.solo, w.sole, w.blocks = false, nil, 0
		return
	}
	w.unhold(ids)
}

// decodeAdd and decodeFree keep a decode worker's account: the requests
// sent there and their prompt blocks, each request's counted on its own.
func (w *worker) decodeAdd(blocks int) {
	w.inFlight++
	w.requests++
	w.blocks += blocks
}

func (w *worker) decodeFree(blocks int) {
	w.inFlight--
	w.blocks -= blocks
}

// newBlocks is how many of ids the worker's in-flight requests do not hold
// already: the blocks a request would add to its active blocks
// (ActiveSequences::new_blocks, which counts every block not held). Block
// ids are chained (an id stands for its whole prefix), so the held blocks of
// a request are a leading run and the count stops at the first miss; with
// one request in flight, they are the run it shares with that request; with
// the account in the cache, the run of blocks stored there and pinned.
func (w *worker) newBlocks(ids []uint64) int {
	if w.inCache && w.overflowed == 0 {
		return len(ids) - w.cache.pinnedRun(ids)
	}
	if w.solo {
		n := 0
		for n < len(ids) && n < len(w.sole) && ids[n] == w.sole[n] {
			n++
		}
		return len(ids) - n
	}
	for i, id := range ids {
		if !w.refs.has(id) {
			return len(ids) - i
		}
	}
	return 0
}

// activeBlocks is Dynamo's active blocks of the worker: the distinct full
// prompt blocks of its requests in flight.
func (w *worker) activeBlocks() int {
	if w.inCache && w.overflowed == 0 {
		return w.cache.pinned
	}
	return w.blocks
}

// The cache-only simulation keeps the account in its caches. There a
// request pins its full prompt blocks in its worker's cache from the moment
// it is routed to its end, the span the account covers, so a stored block's
// pin count is the number of requests in flight there that hold it, the
// cache's pinned blocks are the account's active blocks, and a request's
// held run is the run of its blocks stored there and pinned: nothing to keep
// beside the cache (w.inCache). The exception is a block that did not fit
// (cache.acquire's overflow: every block pinned), which its request holds
// without the cache storing it. While a request with such a block is in
// flight on a worker (w.overflowed counts them), that worker keeps the
// account in its table of references, as the timed simulation does: filled
// from the cache's pin counts when the first such request comes, emptied
// when the last one ends, and the cache's pins stand again.
//
// accountInCache off keeps the cache-only simulation's account in the
// table, as before: the reference the cache's account is tested against.
var accountInCache = true

// cacheAdd records a request routed to w in the cache-only simulation, once
// the cache has pinned the blocks of ids it could (pinned of them; fewer
// than len(ids) if some overflowed), and reports whether the caller must
// keep a copy of ids for cacheFree (the request holds a block the cache
// does not).
func (w *worker) cacheAdd(ids []uint64, pinned, prefillTokens int) (keepIDs bool) {
	w.requests++
	w.prefill += prefillTokens
	w.inFlight++
	over := pinned < len(ids)
	switch {
	case over && w.overflowed == 0:
		// The account leaves the cache: every pinned block, as many
		// references as pins (this request's included), then this
		// request's blocks the cache did not store. Right after acquire an
		// id of ids is stored exactly when it was pinned, since once a
		// block overflows nothing is free for the ones after it.
		w.fillFromPins()
		for _, id := range ids {
			if !w.cache.index.has(id, w.cache.slots) {
				w.hold1(id)
			}
		}
	case w.overflowed > 0:
		w.hold(ids)
	}
	if over {
		w.overflowed++
	}
	return over
}

// cacheFree records the end of a request of the cache-only simulation,
// before its pins are released: held is the copy of its blocks cacheAdd
// asked for, or nil, and then its blocks are the ids of its pinned slots.
func (w *worker) cacheFree(held []uint64, pins []int32) {
	w.inFlight--
	if w.overflowed == 0 {
		return
	}
	if held != nil {
		w.unhold(held)
		w.overflowed--
		if w.overflowed == 0 {
			w.refs.clear()
			w.blocks = 0
		}
		return
	}
	for _, p := range pins {
		w.unhold1(w.cache.slots[p].id)
	}
}

// fillFromPins sets the table of references to the cache's pins.
func (w *worker) fillFromPins() {
	if w.refs.keys == nil {
		w.refs = newTable(64, 3)
	}
	w.blocks = 0
	for _, sl := range w.cache.slots {
		if sl.id != 0 && sl.ref > 0 {
			w.refs.insertNew(sl.id, sl.ref)
			w.blocks++
		}
	}
}
