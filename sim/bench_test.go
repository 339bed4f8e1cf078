package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// traceForBench returns the full conversation trace, from $KVPLAN_TRACE or
// ../shared/traces/mooncake/ beside the repository, or skips.
func traceForBench(b *testing.B) []byte {
	b.Helper()
	path := os.Getenv("KVPLAN_TRACE")
	if path == "" {
		path = filepath.Join("..", "..", "shared", "traces", "mooncake", "conversation_trace.jsonl")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Skipf("conversation trace not available (%v); set KVPLAN_TRACE", err)
	}
	return data
}

// memSource replays requests held in memory, to time the simulator alone.
type memSource struct {
	reqs  []Request
	bs    int
	timed bool
	next  int
}

func (m *memSource) BlockSize() int { return m.bs }
func (m *memSource) Timed() bool    { return m.timed }
func (m *memSource) Next(r *Request) (bool, error) {
	if m.next >= len(m.reqs) {
		return false, nil
	}
	q := &m.reqs[m.next]
	m.next++
	r.ArrivalMS, r.InputTokens, r.OutputTokens = q.ArrivalMS, q.InputTokens, q.OutputTokens
	r.Blocks = q.Blocks // the simulator only reads Blocks
	return true, nil
}

func loadAll(b *testing.B, src Source, timed bool) *memSource {
	b.Helper()
	m := &memSource{bs: src.BlockSize(), timed: timed}
	for {
		var r Request
		ok, err := src.Next(&r)
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			return m
		}
		m.reqs = append(m.reqs, r)
	}
}

// BenchmarkTraceParse times reading the whole conversation trace.
func BenchmarkTraceParse(b *testing.B) {
	data := traceForBench(b)
	b.SetBytes(int64(len(data)))
	var r Request
	for b.Loop() {
		src := NewMooncakeReader(bytes.NewReader(data), "trace", 0, false)
		for {
			ok, err := src.Next(&r)
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
		}
	}
}

// BenchmarkTrace runs each policy over the conversation trace (12,031
// requests, 512-token blocks) on 8 workers of 200,000 tokens (390 blocks),
// following the trace's timestamps, with the requests pre-loaded.
func BenchmarkTrace(b *testing.B) {
	data := traceForBench(b)
	mem := loadAll(b, NewMooncakeReader(bytes.NewReader(data), "trace", 0, false), true)
	for _, pol := range Policies() {
		b.Run(pol, func(b *testing.B) {
			cfg := Config{Workers: 8, CapacityBlocks: 200000 / 512, Policy: pol, Seed: 1}
			var res Result
			for b.Loop() {
				mem.next = 0
				var err error
				if res, err = Run(mem, cfg); err != nil {
					b.Fatal(err)
				}
			}
			reportRefs(b, res)
		})
	}
}

// BenchmarkTraceAllPoliciesFromBytes is the CLI's path: parse the trace and
// simulate, once per policy.
func BenchmarkTraceAllPoliciesFromBytes(b *testing.B) {
	data := traceForBench(b)
	cfg := Config{Workers: 8, CapacityBlocks: 200000 / 512, Seed: 1}
	open := func() (Source, error) { return NewMooncakeReader(bytes.NewReader(data), "trace", 0, false), nil }
	for b.Loop() {
		if _, err := RunAll(open, cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyntheticMillion runs one million requests of the router
// workload (1,000 prefixes × 1,500 tokens × 1,000 sends, 24 tail tokens,
// blocks of 16: 93 full blocks a request) on 2 workers of 14,816 slots (926
// blocks), sequentially, source included.
func BenchmarkSyntheticMillion(b *testing.B) {
	for _, pol := range Policies() {
		b.Run(pol, func(b *testing.B) {
			cfg := Config{Workers: 2, CapacityBlocks: 14816 / 16, Policy: pol, Seed: 1}
			syn := Synthetic{Prefixes: 1000, PrefixTokens: 1500, Repeats: 1000, TailTokens: 24, Seed: 1}
			var res Result
			for b.Loop() {
				src, err := syn.Open()
				if err != nil {
					b.Fatal(err)
				}
				if res, err = Run(src, cfg); err != nil {
					b.Fatal(err)
				}
			}
			reportRefs(b, res)
		})
	}
}

func reportRefs(b *testing.B, res Result) {
	b.Helper()
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(res.BlocksReferenced)/perOp, "blockrefs/s")
	b.ReportMetric(float64(res.Requests), "requests/op")
}
