package sim

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
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

// BenchmarkTraceAllPoliciesFromBytes is the CLI's path: parse the trace once
// and simulate all six policies, on every core.
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

// BenchmarkTraceAgainstPhysicalLimit times, alternately in each iteration,
// the physical limit of simulating six policies on the conversation trace
// (one parse, then one hash probe per block reference per policy into a
// worker-sized table: see physicalLimit) and the real thing (RunAll, all six
// policies, 8 workers × 390 blocks), and reports both and their ratio.
func BenchmarkTraceAgainstPhysicalLimit(b *testing.B) {
	data := traceForBench(b)
	cfg := Config{Workers: 8, CapacityBlocks: 200000 / 512, Seed: 1}
	open := func() (Source, error) { return NewMooncakeReader(bytes.NewReader(data), "trace", 0, false), nil }
	var limit, full time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		physicalLimit(b, data, len(Policies()), cfg.Workers, cfg.CapacityBlocks)
		t1 := time.Now()
		if _, err := RunAll(open, cfg, nil); err != nil {
			b.Fatal(err)
		}
		limit += t1.Sub(t0)
		full += time.Since(t1)
		n++
	}
	b.ReportMetric(limit.Seconds()*1000/float64(n), "limit-ms")
	b.ReportMetric(full.Seconds()*1000/float64(n), "six-policies-ms")
	b.ReportMetric(float64(full)/float64(limit), "×limit")
}

// physicalLimit is the least work any simulation of policies over the
// trace must do: parse it once, and for each policy look every block
// reference up once in a hash table the size of a worker's cache index
// (capacity blocks in the cache's own table at its own load, with the
// request's worker chosen round-robin). It decides nothing and stores
// nothing.
func physicalLimit(b *testing.B, data []byte, policies, workers, capacity int) {
	tables := make([]table, policies*workers)
	var fill uint64 = 1
	for i := range tables {
		tables[i] = newTable(capacity, 3)
		for range capacity {
			fill = mix(fill, 7)
			tables[i].insertNew(fill, 0)
		}
	}
	src := NewMooncakeReader(bytes.NewReader(data), "trace", 0, false)
	var r Request
	hits := 0
	for k := 0; ; k++ {
		ok, err := src.Next(&r)
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			break
		}
		w := k % workers
		for p := range policies {
			t := &tables[p*workers+w]
			for _, id := range r.Blocks {
				if t.has(id) {
					hits++
				}
			}
		}
	}
	if hits > 0 {
		b.Fatal("random fill ids matched trace blocks")
	}
}

// BenchmarkTraceScaling runs all six policies over the conversation trace
// replayed 1, 10 and 100 times (each replay with its own block ids, so the
// distinct blocks grow with it, and shifted in time by the trace's span),
// streamed from memory, and reports the time per request and the peak heap.
// Near-linear time shows as a flat ns/request; bounded memory as a peak heap
// that stops growing once the seen-block history reaches its bound.
func BenchmarkTraceScaling(b *testing.B) {
	data := traceForBench(b)
	base := loadAll(b, NewMooncakeReader(bytes.NewReader(data), "trace", 0, false), true)
	for _, times := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("x%d", times), func(b *testing.B) {
			cfg := Config{Workers: 8, CapacityBlocks: 200000 / 512, Seed: 1}
			var peak uint64
			var requests int
			for b.Loop() {
				runtime.GC()
				stop := sampleHeap(&peak)
				res, err := RunAll(func() (Source, error) { return &replaySource{base: base, times: times}, nil }, cfg, nil)
				stop()
				if err != nil {
					b.Fatal(err)
				}
				requests = res[0].Requests
			}
			perOp := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(perOp/float64(requests)*1e9, "ns/request")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(requests), "requests/op")
		})
	}
}

// sampleHeap records the largest heap in use, sampled every millisecond
// until stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// replaySource replays base times; replay k maps every block id through
// mix(id, k) (chained ids stay chained: equal prefixes within a replay stay
// equal, replays share nothing) and shifts arrivals by k × the trace's span.
type replaySource struct {
	base  *memSource
	times int
	k, i  int
}

func (r *replaySource) BlockSize() int { return r.base.bs }
func (r *replaySource) Timed() bool    { return true }
func (r *replaySource) Next(q *Request) (bool, error) {
	if r.i == len(r.base.reqs) {
		r.k++
		r.i = 0
	}
	if r.k == r.times {
		return false, nil
	}
	src := &r.base.reqs[r.i]
	r.i++
	span := r.base.reqs[len(r.base.reqs)-1].ArrivalMS + 1
	q.ArrivalMS = src.ArrivalMS + float64(r.k)*span
	q.InputTokens, q.OutputTokens = src.InputTokens, src.OutputTokens
	q.Blocks = q.Blocks[:0]
	for _, id := range src.Blocks {
		if r.k > 0 {
			id = mix(id, uint64(r.k))
		}
		q.Blocks = append(q.Blocks, id)
	}
	return true, nil
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

// benchStep stands in for the engine model in the timed benchmarks: an
// affine step time of a magnitude like an 8B model's on one data-center GPU
// (5 ms a step, 0.02 ms a prefill token, 20 ns a context token of decode).
// It costs a few nanoseconds a call; the real model costs more, and
// cmd/kvplan's benchmark times the simulator with it.
var benchStep = affineStep{base: 5, perPrefill: 0.02, perContext: 2e-5}

// cpuSeconds is the process's user and system time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkTimedTrace runs the conversation trace (12,031 requests) through
// the timed simulation, one policy, 8 workers of 200,000 KV tokens with
// vLLM's defaults for a GPU under 70 GiB (2,048 batched tokens, 256
// sequences), at the trace's timestamps, parsing included. It reports
// simulated requests per CPU second (the goal: 100,000).
func BenchmarkTimedTrace(b *testing.B) {
	data := traceForBench(b)
	for _, pol := range []string{KVAware, RoundRobin} {
		b.Run(pol, func(b *testing.B) {
			cfg := Config{Workers: 8, CapacityBlocks: 200000 / 512, Seed: 1, Policy: pol,
				Engine: &Engine{Step: benchStep, MaxNumBatchedTokens: 2048, MaxNumSeqs: 256}}
			var res Result
			cpu0 := cpuSeconds()
			for b.Loop() {
				var err error
				if res, err = Run(NewMooncakeReader(bytes.NewReader(data), "trace", 0, false), cfg); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuSeconds() - cpu0
			b.ReportMetric(float64(res.Requests*b.N)/cpu, "requests/CPU-s")
			b.ReportMetric(res.Timing.TTFTMS.P50, "ttft-p50-ms")
		})
	}
}

// BenchmarkTimedSyntheticMillion runs one million requests of the router
// workload (1,000 prefixes × 1,500 tokens × 1,000 sends, 64 output tokens)
// through the timed simulation at 32 clients on 2 workers of 14,816 slots,
// and reports the peak heap: bounded by the caches and the requests in
// flight, not by the million.
func BenchmarkTimedSyntheticMillion(b *testing.B) {
	syn := Synthetic{Prefixes: 1000, PrefixTokens: 1500, Repeats: 1000, TailTokens: 24, OutputTokens: 64, Seed: 1}
	cfg := Config{Workers: 2, CapacityBlocks: 14816 / 16, Seed: 1, Policy: KVAware, Concurrency: 32,
		Engine: &Engine{Step: benchStep, MaxNumBatchedTokens: 2048, MaxNumSeqs: 256}}
	var res Result
	var peak uint64
	cpu0 := cpuSeconds()
	for b.Loop() {
		runtime.GC()
		stop := sampleHeap(&peak)
		src, err := syn.Open()
		if err != nil {
			b.Fatal(err)
		}
		res, err = Run(src, cfg)
		stop()
		if err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuSeconds() - cpu0
	b.ReportMetric(float64(res.Requests*b.N)/cpu, "requests/CPU-s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(res.Timing.Completed), "completed/op")
}
