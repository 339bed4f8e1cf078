package sim

import (
	"errors"
	"fmt"
)

// ReplayRequest is one request of a Replay.
type ReplayRequest struct {
	ArrivalMS                 float64
	InputTokens, OutputTokens int
	// HashIDs are the prompt's Mooncake 512-token block hashes (see
	// MooncakeReader); prompts that share leading hashes share those blocks.
	HashIDs []uint64
	// Prefix, when above 0 and without HashIDs, names a shared prefix: the
	// prompt's first PrefixTokens tokens are that prefix's, the same blocks
	// in every request naming it. The rest of a prompt is its own.
	Prefix       uint64
	PrefixTokens int
}

// Replay is a Source over requests held in memory, issued Count times in
// all (0 = once each): past the last it starts over, each round a copy of
// the first with blocks of its own (every id, and every prefix, salted by
// the round) and, when Timed, arriving later by the first round's span
// plus its mean gap. BlockSize 0 means 16; with HashIDs it must divide 512.
type Replay struct {
	Requests  []ReplayRequest
	Count     int
	BlockSize int
	Timed     bool
}

// Open validates r and returns its Source.
func (r Replay) Open() (Source, error) {
	if r.BlockSize == 0 {
		r.BlockSize = DefaultSyntheticBlockSize
	}
	switch {
	case len(r.Requests) == 0:
		return nil, errors.New("replay: no requests")
	case r.BlockSize < 1:
		return nil, fmt.Errorf("block size: %d, want at least 1", r.BlockSize)
	case r.Count < 0:
		return nil, fmt.Errorf("replay: %d requests, want 0 (each once) or more", r.Count)
	}
	for i, q := range r.Requests {
		switch {
		case q.InputTokens < 0 || q.OutputTokens < 0:
			return nil, fmt.Errorf("replay request %d: negative token count (input %d, output %d)", i+1, q.InputTokens, q.OutputTokens)
		case len(q.HashIDs) > 0 && MooncakeBlockTokens%r.BlockSize != 0:
			return nil, fmt.Errorf("block size: %d tokens does not divide the 512-token hash blocks", r.BlockSize)
		case len(q.HashIDs) > 0 && len(q.HashIDs) != (q.InputTokens+MooncakeBlockTokens-1)/MooncakeBlockTokens:
			return nil, fmt.Errorf("replay request %d: %d hash ids for %d input tokens", i+1, len(q.HashIDs), q.InputTokens)
		case r.Timed && (i > 0 && q.ArrivalMS < r.Requests[i-1].ArrivalMS || q.ArrivalMS < 0):
			return nil, fmt.Errorf("replay request %d: arrival %g ms is negative or before the previous one", i+1, q.ArrivalMS)
		}
	}
	if r.Count == 0 {
		r.Count = len(r.Requests)
	}
	span := 0.0
	if n := len(r.Requests); r.Timed && n > 0 {
		first, last := r.Requests[0].ArrivalMS, r.Requests[n-1].ArrivalMS
		span = last - first
		if n > 1 {
			span += span / float64(n-1)
		}
	}
	return &replayGen{r: r, span: span}, nil
}

type replayGen struct {
	r    Replay
	next int
	span float64
	salt []uint64
}

func (g *replayGen) BlockSize() int { return g.r.BlockSize }

// Timed reports whether the requests carry arrival times.
func (g *replayGen) Timed() bool { return g.r.Timed }

func (g *replayGen) Next(out *Request) (bool, error) {
	if g.next >= g.r.Count {
		return false, nil
	}
	k := g.next
	g.next++
	n := len(g.r.Requests)
	q := g.r.Requests[k%n]
	round := uint64(k / n)
	bs := g.r.BlockSize
	out.ArrivalMS = q.ArrivalMS + float64(round)*g.span
	out.InputTokens, out.OutputTokens = q.InputTokens, q.OutputTokens
	ids := out.Blocks[:0]
	full := q.InputTokens / bs
	switch {
	case len(q.HashIDs) > 0:
		hs := q.HashIDs
		if round > 0 {
			g.salt = g.salt[:0]
			for _, h := range hs {
				g.salt = append(g.salt, mix(h, round<<32|0x5eed))
			}
			hs = g.salt
		}
		ids = MooncakeBlocks(ids, hs, q.InputTokens, bs)
	default:
		id := chainRoot
		shared := 0
		if q.Prefix > 0 {
			shared = min(q.PrefixTokens/bs, full)
			base := mix(q.Prefix, 0x243f6a8885a308d3^round)
			for i := range shared {
				id = mix(id, base+uint64(i))
				ids = append(ids, id)
			}
		}
		own := mix(uint64(k)+1, 0x13198a2e03707344)
		for i := shared; i < full; i++ {
			id = mix(id, own+uint64(i))
			ids = append(ids, id)
		}
	}
	out.Blocks = ids
	return true, nil
}
