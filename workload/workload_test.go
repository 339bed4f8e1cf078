package workload

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const dir = "../testdata/workload/"

func TestReadMooncake(t *testing.T) {
	// The first 200 lines of the Mooncake conversation trace; the expected
	// figures were computed from the file's own fields with a short Python
	// script (nearest-rank percentiles), not with this package.
	w, err := Read("../testdata/sim/conversation_excerpt.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if w.Format != FormatMooncake || !w.Timed || len(w.Requests) != 200 || len(w.Requests[0].HashIDs) != 14 {
		t.Fatalf("format %s timed %v, %d requests", w.Format, w.Timed, len(w.Requests))
	}
	in, out := w.InputStats(), w.OutputStats()
	if math.Abs(in.Mean-13910.895) > 1e-9 || in.P50 != 8772 || in.P95 != 45922 || in.P99 != 87172 || in.Max != 120633 {
		t.Errorf("input %+v", in)
	}
	if math.Abs(out.Mean-356.895) > 1e-9 || out.P50 != 366 || out.P95 != 632 || out.P99 != 904 || out.Max != 929 {
		t.Errorf("output %+v", out)
	}
	// 200 requests over 72,000 ms: 199 gaps, 2.7639/s; gaps CV² 7.29.
	rate, cv2, err := w.Arrivals()
	if err != nil || math.Abs(rate-2.763888889) > 1e-6 || math.Abs(cv2-7.2916669) > 1e-5 {
		t.Errorf("arrivals %g/s, CV² %g, %v", rate, cv2, err)
	}
	// Leading blocks seen before: 164,864 of 2,782,179 prompt tokens.
	sum := 0
	for _, c := range w.CachedTokens() {
		sum += c
	}
	if sum != 164864 {
		t.Errorf("cached tokens %d, want 164864", sum)
	}
}

func TestReadBench(t *testing.T) {
	// vLLM bench's input_lens and output_lens (figures from Python, as above).
	w, err := Read(dir + "vllm-bench-sharegpt-excerpt.json")
	if err != nil {
		t.Fatal(err)
	}
	in, out := w.InputStats(), w.OutputStats()
	if w.Format != FormatVLLMBench || w.Timed || len(w.Requests) != 200 {
		t.Fatalf("%+v", w)
	}
	if math.Abs(in.Mean-213.295) > 1e-9 || in.P50 != 82 || in.P95 != 696 || in.P99 != 775 || in.Max != 933 {
		t.Errorf("input %+v", in)
	}
	if math.Abs(out.Mean-213.85) > 1e-9 || out.P50 != 151 || out.P95 != 608 || out.P99 != 770 || out.Max != 780 {
		t.Errorf("output %+v", out)
	}
}

func TestReadCSV(t *testing.T) {
	w, err := Read(dir + "lengths.csv")
	if err != nil || len(w.Requests) != 3 || w.Requests[2].InputTokens != 3000 || w.Requests[2].OutputTokens != 500 || w.Timed {
		t.Fatalf("%+v, %v", w, err)
	}
	w, err = Read(dir + "lengths-header.csv")
	if err != nil || len(w.Requests) != 3 || !w.Timed || w.Skipped != 1 || w.Requests[2].ArrivalMS != 1000 || w.Requests[1].InputTokens != 1000 {
		t.Fatalf("%+v, %v", w, err)
	}
}

func TestReadBadInput(t *testing.T) {
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty.csv")
	os.WriteFile(empty, nil, 0o644)
	noLengths := filepath.Join(tmp, "x.jsonl")
	os.WriteFile(noLengths, []byte(`{"input_length": 0, "output_length": 5}`+"\n"), 0o644)
	for _, c := range []struct{ path, want string }{
		{empty, "the file is empty; want a Mooncake JSONL trace (input_length, output_length)"},
		{dir + "bad-header.csv", "no usable columns: the header \"request,tokens\" names no input column (input_tokens, input_length"},
		{dir + "bad-none.csv", "no usable rows: looked for rows of two numbers, input and output tokens"},
		{dir + "bad-number.csv", "bad-number.csv:2: output: \"abc\" is not a token count"},
		{dir + "bad-time.csv", "bad-time.csv:3: timestamp 5 is before the previous row's"},
		{dir + "bad-no-arrays.json", "no usable rows: a benchmark result needs per-request arrays input_lens and output_lens"},
		{noLengths, "no usable rows: looked for input_length and output_length above 0"},
		{filepath.Join(tmp, "missing.csv"), "missing.csv"},
	} {
		_, err := Read(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.path, err, c.want)
		}
	}
}

func TestRandom(t *testing.T) {
	// --isl 2000 --isl-range-ratio 0.5: uniform over 1000..3000 (mean 2000);
	// --osl 300 with ratio 0: every output 300.
	w, err := Random(2000, 0.5, 300, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := math.MaxInt, 0
	for _, r := range w.Requests {
		lo, hi = min(lo, r.InputTokens), max(hi, r.InputTokens)
		if r.OutputTokens != 300 {
			t.Fatalf("output %d, want 300", r.OutputTokens)
		}
	}
	// The mean of 10,000 uniform draws over 2,001 values: sd 577/√10,000 ≈ 6.
	if s := w.InputStats(); lo != 1000 || hi != 3000 || math.Abs(s.Mean-2000) > 25 {
		t.Errorf("inputs %d–%d mean %g, want 1000–3000 mean ≈ 2000", lo, hi, s.Mean)
	}
	// ⌊7 × 0.9⌋ = 6, ⌈7 × 1.1⌉ = 8; outputs ⌊0.5⌋ → 1 (at least one) to ⌈1.5⌉ = 2.
	w, _ = Random(7, 0.1, 1, 0.5, 1)
	for _, r := range w.Requests {
		if r.InputTokens < 6 || r.InputTokens > 8 || r.OutputTokens < 1 || r.OutputTokens > 2 {
			t.Fatalf("draw %+v outside [6, 8] × [1, 2]", r)
		}
	}
	if _, err := Random(100, 1, 10, 0, 1); err == nil || !strings.Contains(err.Error(), "--isl-range-ratio 1: want a ratio in [0, 1)") {
		t.Errorf("ratio 1: %v", err)
	}
}

func TestClasses(t *testing.T) {
	w, _ := Read("../testdata/sim/conversation_excerpt.jsonl")
	cs, dropped := w.Classes(nil, 0)
	if dropped != 0 || len(cs) == 0 || len(cs) > 45 {
		t.Fatalf("%d classes, %d dropped", len(cs), dropped)
	}
	p, in, out := 0.0, 0.0, 0.0
	for _, c := range cs {
		p += c.Prob
		in += c.Prob * float64(c.InputTokens)
		out += c.Prob * float64(c.OutputTokens)
	}
	// The classes keep the total mass and, up to each class's rounding to
	// whole tokens, the means.
	if math.Abs(p-1) > 1e-12 || math.Abs(in-13910.895) > 1 || math.Abs(out-356.895) > 1 {
		t.Errorf("mass %g, mean input %g, mean output %g", p, in, out)
	}
	// A context of 32,768 tokens refuses the requests longer than that:
	// 16 of the 200 excerpt lines (counted in Python).
	if _, dropped := w.Classes(nil, 32768); dropped != 16 {
		t.Errorf("dropped %d above 32,768 tokens, want 16", dropped)
	}
}

func TestCachedTokens(t *testing.T) {
	w := &Workload{Requests: []Request{
		{InputTokens: 1500, HashIDs: []uint64{1, 2, 3}},
		{InputTokens: 1100, HashIDs: []uint64{1, 2, 9}}, // two blocks seen: 1,024 tokens
		{InputTokens: 1024, HashIDs: []uint64{1, 2}},    // all seen, less the last token: 1,023
		{InputTokens: 600, HashIDs: []uint64{5, 2}},     // a new first block: nothing
	}}
	got := w.CachedTokens()
	if len(got) != 4 || got[0] != 0 || got[1] != 1024 || got[2] != 1023 || got[3] != 0 {
		t.Errorf("cached %v, want [0 1024 1023 0]", got)
	}
}
