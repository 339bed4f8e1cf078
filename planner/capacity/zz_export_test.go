package capacity

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
