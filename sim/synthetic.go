package sim

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Synthetic defaults.
const (
	DefaultSyntheticBlockSize = 16  // Dynamo's block size (FACTS §5)
	DefaultOutputTokens       = 128 // the router experiment's output length
)

// Synthetic is the router experiment of FACTS §5: Prefixes distinct prompts
// of PrefixTokens tokens, each sent Repeats times, in an order shuffled with
// Seed (PCG from math/rand/v2). Every send changes its last TailTokens
// tokens, so the blocks that hold any of them are unique to the send, while
// the blocks before are shared by every send of the prefix. The prompt is
// PrefixTokens long in total (the tail is part of it), and every send
// decodes OutputTokens (0 means 128). BlockSize 0 means 16.
//
// Example: 12 prefixes × 1,500 tokens, 6 repeats, 24 tail tokens, blocks of
// 16: 93 full blocks (1500/16 = 93.75), of which 92 (1,472 tokens ≤ 1,476
// shared) are shared and block 92 (tokens 1,472–1,487) holds changed tokens,
// plus a 12-token partial block. 72 requests, of which 60 are repeats.
//
// The source keeps the shuffled order, 4 bytes a request, and computes block
// ids on the fly.
type Synthetic struct {
	Prefixes, PrefixTokens, Repeats, TailTokens, OutputTokens, BlockSize int
	Seed                                                                 uint64
}

// Open validates s and returns a Source over its requests.
func (s Synthetic) Open() (Source, error) {
	if s.BlockSize == 0 {
		s.BlockSize = DefaultSyntheticBlockSize
	}
	if s.OutputTokens == 0 {
		s.OutputTokens = DefaultOutputTokens
	}
	switch {
	case s.Prefixes < 1 || s.PrefixTokens < 1 || s.Repeats < 1:
		return nil, fmt.Errorf("synthetic workload %dx%dx%d: prefixes, tokens and repeats must be at least 1", s.Prefixes, s.PrefixTokens, s.Repeats)
	case s.TailTokens < 0 || s.TailTokens > s.PrefixTokens:
		return nil, fmt.Errorf("synthetic tail tokens: %d, want 0 to %d (the prefix length)", s.TailTokens, s.PrefixTokens)
	case s.OutputTokens < 0:
		return nil, fmt.Errorf("synthetic output tokens: %d, want 0 or more", s.OutputTokens)
	case s.BlockSize < 1:
		return nil, fmt.Errorf("block size: %d, want at least 1", s.BlockSize)
	case s.Prefixes > (1<<31-1)/s.Repeats: // the product would overflow int64 for large counts
		return nil, fmt.Errorf("synthetic workload %dx%dx%d: more than 2^31 requests", s.Prefixes, s.PrefixTokens, s.Repeats)
	}
	n := s.Prefixes * s.Repeats
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i / s.Repeats)
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x9e3779b97f4a7c15))
	rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	full := s.PrefixTokens / s.BlockSize
	return &syntheticSource{
		s:      s,
		order:  order,
		full:   full,
		shared: min((s.PrefixTokens-s.TailTokens)/s.BlockSize, full),
	}, nil
}

type syntheticSource struct {
	s      Synthetic
	order  []int32
	next   int
	full   int // full blocks per request
	shared int // leading blocks shared by every send of a prefix
}

func (g *syntheticSource) BlockSize() int { return g.s.BlockSize }

func (g *syntheticSource) Next(r *Request) (bool, error) {
	if g.next >= len(g.order) {
		return false, nil
	}
	k := g.next
	g.next++
	p := uint64(g.order[k])
	r.ArrivalMS = 0
	r.InputTokens = g.s.PrefixTokens
	r.OutputTokens = g.s.OutputTokens
	ids := r.Blocks[:0]
	id := chainRoot
	base := mix(p, 0x243f6a8885a308d3) // prefix p's content stream
	for i := 0; i < g.shared; i++ {
		id = mix(id, base+uint64(i))
		ids = append(ids, id)
	}
	if g.shared < g.full {
		// The first block holding changed tokens differs per send; chaining
		// makes every later block differ too.
		id = mix(id, mix(base, uint64(k)+1<<40))
		ids = append(ids, id)
		for i := g.shared + 1; i < g.full; i++ {
			id = mix(id, uint64(i))
			ids = append(ids, id)
		}
	}
	r.Blocks = ids
	return true, nil
}

// ParseSyntheticSpec parses "PREFIXESxTOKENSxREPEATS", such as "12x1500x6"
// ("×" and "X" also separate).
func ParseSyntheticSpec(spec string) (prefixes, tokens, repeats int, err error) {
	norm := strings.NewReplacer("×", "x", "X", "x").Replace(strings.TrimSpace(spec))
	parts := strings.Split(norm, "x")
	bad := func(why string) error {
		return fmt.Errorf("synthetic spec %q: %s; want PREFIXESxTOKENSxREPEATS, e.g. 12x1500x6", spec, why)
	}
	if len(parts) != 3 {
		return 0, 0, 0, bad(fmt.Sprintf("%d fields", len(parts)))
	}
	var v [3]int
	names := [3]string{"prefixes", "tokens", "repeats"}
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return 0, 0, 0, bad(fmt.Sprintf("%s %q is not a positive whole number", names[i], p))
		}
		v[i] = n
	}
	return v[0], v[1], v[2], nil
}
