package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Policy names accepted by Config.Policy and RunAll.
const (
	RoundRobin       = "round-robin"
	Random           = "random"
	LeastLoaded      = "least-loaded"
	KVAware          = "kv-aware"
	KVAwareNoEvents  = "kv-aware-no-events"
	KVAwareApprox    = "kv-aware-approx"
	AllPolicies      = "all"
	defaultPolicy    = KVAware
	maxSuggestEdits  = 3
	randomStreamSalt = 0x5851f42d4c957f2d
)

var policyNames = []string{RoundRobin, Random, LeastLoaded, KVAware, KVAwareNoEvents, KVAwareApprox}

// Policies returns the routing policy names, in the order RunAll reports
// them for "all".
func Policies() []string {
	return append([]string(nil), policyNames...)
}

// ResolvePolicies validates names, expands "all" and drops duplicates,
// keeping the first occurrence. An unknown name is an error that suggests
// the nearest known one.
func ResolvePolicies(names []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == AllPolicies {
			for _, p := range policyNames {
				add(p)
			}
			continue
		}
		if err := checkPolicy(n); err != nil {
			return nil, err
		}
		add(n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no policy given; want one of %s, or %s", strings.Join(policyNames, ", "), AllPolicies)
	}
	return out, nil
}

func checkPolicy(name string) error {
	for _, p := range policyNames {
		if p == name {
			return nil
		}
	}
	known := strings.Join(policyNames, ", ") + ", " + AllPolicies
	if s := suggest(name, append(policyNames[:len(policyNames):len(policyNames)], AllPolicies)); s != "" {
		return fmt.Errorf("unknown policy %q; did you mean %q? (known: %s)", name, s, known)
	}
	return fmt.Errorf("unknown policy %q (known: %s)", name, known)
}

// suggest returns the candidate nearest to name by edit distance, if it is
// close enough to be a plausible typo, or one that name is a prefix of.
func suggest(name string, candidates []string) string {
	best, bestD := "", maxSuggestEdits+1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(name), c)
		if d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" {
		return best
	}
	for _, c := range candidates {
		if name != "" && strings.HasPrefix(c, strings.ToLower(name)) {
			return c
		}
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

type policyKind int

const (
	polRoundRobin policyKind = iota
	polRandom
	polLeastLoaded
	polKVAware
	polKVAwareNoEvents
	polKVAwareApprox
)

func policyKindOf(name string) (policyKind, error) {
	switch name {
	case RoundRobin:
		return polRoundRobin, nil
	case Random:
		return polRandom, nil
	case LeastLoaded:
		return polLeastLoaded, nil
	case KVAware:
		return polKVAware, nil
	case KVAwareNoEvents:
		return polKVAwareNoEvents, nil
	case KVAwareApprox:
		return polKVAwareApprox, nil
	case AllPolicies:
		return 0, fmt.Errorf("policy %q runs several policies; use RunAll", name)
	}
	return 0, checkPolicy(name)
}

// router picks a worker for each request. Its load signal is its own
// account of what it sent where (worker.inFlight, prefill, blocks; see
// active.go), updated as it routes a request, at the request's first token
// and at its end.
type router struct {
	kind   policyKind
	bs     int
	scale  float64
	credit float64
	next   int        // round-robin cursor
	rng    *rand.Rand // random
	// ov is each worker's overlap with the request being routed: kv-aware
	// fills it in choose, kv-aware-approx before it (history.overlaps).
	ov []int
	// held is, for kv-aware, each worker's run of the request's blocks
	// held by its requests in flight when cacheOverlaps could read it in
	// the same walk (the account in the cache), else -1.
	held []int
	// track: the policy weighs Dynamo's active blocks and prefill tokens
	// (the kv-aware family), so the workers keep them.
	track bool
}

func newRouter(kind policyKind, cfg Config) *router {
	r := &router{kind: kind, bs: cfg.BlockSize, scale: cfg.PrefillLoadScale, credit: cfg.OverlapCredit}
	switch kind {
	case polRandom:
		r.rng = rand.New(rand.NewPCG(cfg.Seed, randomStreamSalt))
	case polKVAware, polKVAwareApprox:
		r.ov = make([]int, cfg.Workers)
	}
	if kind == polKVAware {
		r.held = make([]int, cfg.Workers)
	}
	r.track = kind == polKVAware || kind == polKVAwareApprox || kind == polKVAwareNoEvents
	return r
}

// newWorkers returns n workers of capacityBlocks each, keeping what the
// router's policy weighs.
func (r *router) newWorkers(n, capacityBlocks int) []worker {
	ws := make([]worker, n)
	for i := range ws {
		ws[i].cache = newCache(capacityBlocks)
		if r.track {
			ws[i].refs = newTable(64, 3) // sparse: short probe runs for a delete-heavy table
		}
	}
	return ws
}

// fewerRouted breaks exact ties of the load-aware policies: the worker that
// has received fewer requests so far, then the lower index. Dynamo draws
// among tied workers uniformly at random (reservoir sampling in
// select_exact_min_and_increment and in the KV selector's
// minimum_cost_index); this deterministic stand-in gives each tied worker
// its turn, so a sequential workload (nothing in flight when a request is
// routed, every load 0) alternates like round-robin instead of piling onto
// worker 0, as random ties would spread it on average.
func fewerRouted(ws []worker, a, b int) bool {
	if x, y := ws[a].requests, ws[b].requests; x != y {
		return x < y
	}
	return a < b
}

// choose returns the worker for a request of in prompt tokens whose full
// blocks are ids.
func (r *router) choose(ids []uint64, in int, ws []worker) int {
	switch r.kind {
	case polRoundRobin:
		w := r.next
		r.next = (r.next + 1) % len(ws)
		return w
	case polRandom:
		return r.rng.IntN(len(ws))
	case polLeastLoaded:
		// Dynamo's least-loaded mode: the fewest requests in flight.
		best := 0
		for w := 1; w < len(ws); w++ {
			if x, y := ws[w].inFlight, ws[best].inFlight; x < y || (x == y && fewerRouted(ws, w, best)) {
				best = w
			}
		}
		return best
	}
	// kv-aware family: Dynamo's cost (lib/kv-router/src/scheduling/
	// selector/default.rs, worker_logit, with the loads of
	// selector/mod.rs WorkerSelectionInput::row):
	//
	//	prefill_load_scale × max(0, (active_prefill_tokens + isl) / block
	//	                            − overlap_score_credit × overlap)
	//	+ active_blocks + new_blocks
	//
	// where the first term is the worker's prefill backlog with this
	// request on it, less what its cache holds, and the second its active
	// blocks with this request's added (potential_decode_blocks).
	if r.kind == polKVAware {
		r.cacheOverlaps(ids, ws)
	}
	fb := float64(r.bs)
	best := -1
	var bestCost float64
	for w := range ws {
		overlap := 0
		if r.kind != polKVAwareNoEvents {
			overlap = r.ov[w]
		}
		prefill := float64(ws[w].prefill+in)/fb - r.credit*float64(overlap)
		if prefill < 0 {
			prefill = 0
		}
		active := ws[w].activeBlocks()
		added := len(ids)
		switch {
		case active == 0:
		case r.held != nil && r.held[w] >= 0:
			added = len(ids) - r.held[w]
		default:
			added = ws[w].newBlocks(ids)
		}
		cost := r.scale*prefill + float64(active+added)
		if best < 0 || cost < bestCost || (cost == bestCost && fewerRouted(ws, w, best)) {
			best, bestCost = w, cost
		}
	}
	return best
}

// charge is the prefill tokens the router books for a request of in prompt
// tokens sent to w: its prompt less the overlap it saw there
// (ActiveSequences::new_tokens). Only the kv-aware family keeps the figure.
func (r *router) charge(in, w int) int {
	switch r.kind {
	case polKVAware, polKVAwareApprox:
		return max(in-r.ov[w]*r.bs, 0)
	case polKVAwareNoEvents:
		return in
	}
	return 0
}

// cacheOverlaps sets r.ov to each worker's cache.match(ids), and r.held to
// its held run where the account is in the cache (the run of those blocks
// pinned, read in the same walk), else -1. A worker at a time, not a block
// at a time for all workers: each scan is a tight loop over one index that
// stops at its first miss, which measured faster than interleaving the
// workers' indexes (BenchmarkSyntheticMillion, where overlaps run to ~90
// blocks).
func (r *router) cacheOverlaps(ids []uint64, ws []worker) {
	for w := range ws {
		wk := &ws[w]
		if wk.inCache && wk.overflowed == 0 && wk.cache.pinned > 0 {
			r.ov[w], r.held[w] = wk.cache.matchPinned(ids)
			continue
		}
		r.ov[w], r.held[w] = wk.cache.match(ids), -1
	}
}
