package sim

// Event kinds of the timed simulation.
const (
	evIteration uint8 = iota // an engine's iteration ends (id: engine, ver)
	evLink                   // the shared link's first transfer moves its last byte (ver)
	evArrived                // a transfer's latency has passed: its KV is on the decode worker (id: seq)
	evDelivered              // a routed request leaves the frontend for its worker (id: seq)
	// The cache-only simulation's one kind: a request's first token, when
	// the router stops booking its prefill (id: worker, n: the tokens
	// booked; ord: the request's issue order).
	evFirstToken
)

// event is one entry of the timed simulation's agenda, at time at. Entries
// are never removed: a superseded one (an iteration cut short, a link whose
// next completion moved) carries an old version and is skipped when popped.
// The link's transfers in flight use the same entries, at their virtual
// finish.
type event struct {
	at   float64
	ord  uint64 // push order: ties go first in, first out
	id   int32
	ver  uint32
	n    int32
	kind uint8
}

// eventHeap is a binary min-heap by at, then push order.
type eventHeap []event

func eventLess(a, b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.ord < b.ord
}

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !eventLess(&q[i], &q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
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
		if r := l + 1; r < n && eventLess(&q[r], &q[l]) {
			m = r
		}
		if !eventLess(&q[m], &q[i]) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

// deque is a ring buffer of sequence indices: a waiting queue that takes
// preempted sequences back at its head.
type deque struct {
	buf        []int32
	head, size int
}

func (d *deque) len() int { return d.size }

func (d *deque) grow() {
	n := max(8, 2*len(d.buf))
	nb := make([]int32, n)
	for i := range d.size {
		nb[i] = d.buf[(d.head+i)%len(d.buf)]
	}
	d.buf, d.head = nb, 0
}

func (d *deque) pushBack(v int32) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.size)%len(d.buf)] = v
	d.size++
}

func (d *deque) pushFront(v int32) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = v
	d.size++
}

func (d *deque) front() int32 { return d.buf[d.head] }

func (d *deque) popFront() int32 {
	v := d.buf[d.head]
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	return v
}
