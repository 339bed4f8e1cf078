package sim

// sliceSource replays hand-written requests. Each request lists the content
// keys of its full blocks; the source chains them the way sources must, so
// two requests whose key lists start the same share those leading blocks.
type sliceSource struct {
	bs    int
	timed bool
	reqs  []testReq
	next  int
}

type testReq struct {
	arrivalMS float64
	keys      []uint64 // content of each full block
	partial   int      // extra prompt tokens after the full blocks
	output    int
}

func (s *sliceSource) BlockSize() int { return s.bs }
func (s *sliceSource) Timed() bool    { return s.timed }
func (s *sliceSource) Next(r *Request) (bool, error) {
	if s.next >= len(s.reqs) {
		return false, nil
	}
	q := s.reqs[s.next]
	s.next++
	r.ArrivalMS = q.arrivalMS
	r.InputTokens = len(q.keys)*s.bs + q.partial
	r.OutputTokens = q.output
	r.Blocks = r.Blocks[:0]
	id := chainRoot
	for _, k := range q.keys {
		id = mix(id, k)
		r.Blocks = append(r.Blocks, id)
	}
	return true, nil
}

// Block content keys for hand-worked cases: prefix A has blocks a1 a2 a3,
// and so on.
const (
	a1 = 101 + iota
	a2
	a3
	b1
	b2
	c1
	c2
)

var (
	reqA = testReq{keys: []uint64{a1, a2, a3}}
	reqB = testReq{keys: []uint64{b1, b2}}
	reqC = testReq{keys: []uint64{c1, c2}}
)
