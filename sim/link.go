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

	v, t float64   // virtual bytes at real time t (ms)
	q    eventHeap // transfers in flight: at is the virtual finish, id the sequence
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
	l.q.push(event{at: l.v + bytes, id: seq, ord: ord})
	return 0, true
}

// next returns the real time at which the first transfer in flight moves
// its last byte, or +Inf when none is in flight.
func (l *linkState) next() float64 {
	if len(l.q) == 0 {
		return math.Inf(1)
	}
	return l.t + max(l.q[0].at-l.v, 0)*float64(len(l.q))/l.bytesPerMS
}

// finish removes the first transfer at now (its next()) and returns it.
func (l *linkState) finish(now float64) int32 {
	l.advance(now)
	e := l.q.pop()
	if len(l.q) == 0 {
		l.v, l.t = 0, now // restart the clock: no rounding carried over idle gaps
	}
	return e.id
}
