package capacity

import "github.com/kvplan/kvplan/catalog"

func SetSimPolicy(p string) { simPolicy = p }

// SetMaxSimWorkers sets the most workers Verify replays, and returns the
// old value (a test compares a sample with the whole pool).
func SetMaxSimWorkers(n int) int { old := maxSimWorkers; maxSimWorkers = n; return old }

// At is c's shape with other worker counts, at rate: the figures the search
// would give those counts.
func (q *Query) At(c *Candidate, workers []int, rate float64) *Candidate {
	return q.candidateAt(c.shape, workers, rate)
}

// Workers are c's worker counts per role.
func (c *Candidate) Workers() []int { return append([]int(nil), c.load.workers...) }

// SetMaxVerifyTokens sets the tokens one verification replays, and returns
// the old value.
func SetMaxVerifyTokens(n int) int { old := maxVerifyTokens; maxVerifyTokens = n; return old }

// LayoutOptions lists the layout keys ("tp1 dp16 ep16 over ib-ndr") the
// search offers m on g with tensor-parallel sizes tps, and its notes.
func (q *Query) LayoutOptions(m *catalog.Model, g *catalog.GPU, tps []int) (keys, notes []string) {
	for _, o := range q.layoutOptions(m, g, tps, func(s string) { notes = append(notes, s) }) {
		keys = append(keys, o.key())
	}
	return keys, notes
}
