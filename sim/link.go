package sim

import "math"

// linkState is the KV link under processor sharing: the transfers in flight
// share its throughput equally, so with n in flight each moves at rate/n.
// It keeps a virtual clock v, the bytes every transfer in flight has moved
// since the clock started, which advances at rate/n per millisecond; a
// transfer of b bytes that starts at virtual time v0 has moved all of its
// bytes at v0 + b, whatever joins or leaves meanwhile. So an arrival or a
// departure costs a heap operation, not a pass over the transfers.
type linkState struct {
	bytesPerMS float64
	latencyMS  float64
	dedicated  bool

	v, t float64 // virtual bytes at real time t (ms)
	q    psHeap  // transfers in flight by virtual finish
}

type psEntry struct {
	vEnd float64
	seq  int32
	ord  uint64 // start order, for ties
}

func newLink(l Link) linkState {
	return linkState{bytesPerMS: l.BytesPerS / 1000, latencyMS: l.LatencyMS, dedicated: l.Dedicated}
}

// advance moves the virtual clock to real time now.
func (l *linkState) advance(now float64) {
	if n := len(l.q); n > 0 {
		l.v += (now - l.t) * l.bytesPerMS / float64(n)
	}
	l.t = now
}

// start adds a transfer of bytes at now and returns, for a dedicated link,
// its completion time (the shared link's completions come from next).
func (l *linkState) start(now, bytes float64, seq int32, ord uint64) (doneMS float64, shared bool) {
	if l.dedicated {
		return now + bytes/l.bytesPerMS + l.latencyMS, false
	}
	l.advance(now)
	l.q.push(psEntry{vEnd: l.v + bytes, seq: seq, ord: ord})
	return 0, true
}

// next returns the real time at which the first transfer in flight moves
// its last byte, or +Inf when none is in flight.
func (l *linkState) next() float64 {
	if len(l.q) == 0 {
		return math.Inf(1)
	}
	return l.t + max(l.q[0].vEnd-l.v, 0)*float64(len(l.q))/l.bytesPerMS
}

// finish removes the first transfer at now (its next()) and returns it.
func (l *linkState) finish(now float64) int32 {
	l.advance(now)
	e := l.q.pop()
	if len(l.q) == 0 {
		l.v, l.t = 0, now // restart the clock: no rounding carried over idle gaps
	}
	return e.seq
}

// psHeap is a binary min-heap by virtual finish, then start order.
type psHeap []psEntry

func psLess(a, b psEntry) bool {
	if a.vEnd != b.vEnd {
		return a.vEnd < b.vEnd
	}
	return a.ord < b.ord
}

func (h *psHeap) push(e psEntry) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !psLess(q[i], q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *psHeap) pop() psEntry {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q = q[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && psLess(q[r], q[l]) {
			m = r
		}
		if !psLess(q[m], q[i]) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}
