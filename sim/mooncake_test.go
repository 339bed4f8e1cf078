package sim

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const excerptPath = "../testdata/sim/conversation_excerpt.jsonl"

func readAll(t *testing.T, src Source) []Request {
	t.Helper()
	var out []Request
	for {
		var r Request
		ok, err := src.Next(&r)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, r)
	}
}

func TestMooncakeBlocks(t *testing.T) {
	// Request 1: 1,100 tokens, ids [7, 8, 9]: blocks of 512, 512 and 76.
	// Request 2: 1,024 tokens, ids [7, 8]: both full.
	// Request 3: 520 tokens, ids [7, 5]: 512 + 8.
	trace := `{"timestamp": 0, "input_length": 1100, "output_length": 5, "hash_ids": [7, 8, 9]}
{"timestamp": 3, "input_length": 1024, "output_length": 0, "hash_ids": [7, 8]}
{"timestamp": 3, "input_length": 520, "output_length": 1, "hash_ids": [7, 5]}
`
	cases := []struct {
		bs     int
		blocks []int // full blocks per request
	}{
		// 1100/512 = 2 full (the 76-token block is partial); 2; 1.
		{0, []int{2, 2, 1}},
		{512, []int{2, 2, 1}},
		// 16-token blocks: 1100/16 = 68 full (68 × 16 = 1,088; 12 left);
		// 1024/16 = 64; 520/16 = 32 full (and 8 tokens partial).
		{16, []int{68, 64, 32}},
		// 256: 4 full + 76 partial; 4; 2 full + 8 partial.
		{256, []int{4, 4, 2}},
	}
	for _, tc := range cases {
		src := NewMooncakeReader(strings.NewReader(trace), "t.jsonl", tc.bs, false)
		reqs := readAll(t, src)
		if len(reqs) != 3 {
			t.Fatalf("bs %d: %d requests, want 3", tc.bs, len(reqs))
		}
		for i, r := range reqs {
			if len(r.Blocks) != tc.blocks[i] {
				t.Errorf("bs %d request %d: %d blocks, want %d", tc.bs, i+1, len(r.Blocks), tc.blocks[i])
			}
		}
		if reqs[1].ArrivalMS != 3 || reqs[0].OutputTokens != 5 || reqs[2].InputTokens != 520 {
			t.Errorf("bs %d: fields %+v", tc.bs, reqs)
		}
		// All three share hash id 7, i.e. the first 512 tokens; 1 and 2 also
		// share id 8. So block prefixes agree up to 512 (or 1,024) tokens.
		per := 512 / src.BlockSize()
		for i := range per {
			if reqs[0].Blocks[i] != reqs[2].Blocks[i] {
				t.Errorf("bs %d: block %d of requests 1 and 3 differ", tc.bs, i)
			}
		}
		for i := range 2 * per {
			if reqs[0].Blocks[i] != reqs[1].Blocks[i] {
				t.Errorf("bs %d: block %d of requests 1 and 2 differ", tc.bs, i)
			}
		}
		if len(reqs[2].Blocks) > per && reqs[2].Blocks[per] == reqs[0].Blocks[per] {
			t.Errorf("bs %d: requests 1 and 3 share a block after their prefix", tc.bs)
		}
	}
}

func TestMooncakeBadLines(t *testing.T) {
	// bad_lines.jsonl: line 2 has 3 ids for 600 tokens, line 4 a string id,
	// line 5 is not JSON, line 6 is blank, line 8 has no output_length.
	// Lines 1, 3 and 7 are good (7 has a fractional timestamp and an extra
	// key, which the reader accepts).
	src, err := OpenMooncake("../testdata/sim/bad_lines.jsonl", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var r Request
	if ok, err := src.Next(&r); !ok || err != nil {
		t.Fatalf("line 1: %v %v", ok, err)
	}
	_, err = src.Next(&r)
	want := "../testdata/sim/bad_lines.jsonl:2: hash_ids: 3 ids for input_length 600, want ceil(600/512) = 2"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant  %s", err, want)
	}

	src, err = OpenMooncake("../testdata/sim/bad_lines.jsonl", 0, true)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	reqs := readAll(t, src)
	if len(reqs) != 3 || src.Skipped() != 4 {
		t.Fatalf("skip mode: %d requests, %d skipped; want 3 and 4", len(reqs), src.Skipped())
	}
	if reqs[2].ArrivalMS != 9.5 || reqs[2].InputTokens != 513 || len(reqs[2].Blocks) != 1 {
		t.Fatalf("line 7 read as %+v", reqs[2])
	}
	// Run copies the count into the result.
	src2, _ := OpenMooncake("../testdata/sim/bad_lines.jsonl", 0, true)
	defer src2.Close()
	res, err := Run(src2, Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.SkippedLines != 4 || res.Requests != 3 {
		t.Fatalf("result skipped %d requests %d, want 4 3", res.SkippedLines, res.Requests)
	}
}

func TestMooncakeErrors(t *testing.T) {
	cases := []struct {
		line string
		want string
	}{
		{`{"timestamp": 1, "input_length": 512, "output_length": 1, "hash_ids": ["a"]}`, "x.jsonl:2: hash_ids: got a JSON string, want an array of non-negative integers"},
		{`{"timestamp": 1, "input_length": 512, "output_length": 1, "hash_ids": [-4]}`, "x.jsonl:2: hash_ids[0]: -4, want a non-negative integer"},
		{`{"timestamp": 1, "input_length": -5, "output_length": 1, "hash_ids": []}`, "x.jsonl:2: input_length: -5"},
		{`{"timestamp": 1, "output_length": 1, "hash_ids": []}`, "x.jsonl:2: input_length: missing"},
		{`{"timestamp": "soon", "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "x.jsonl:2: timestamp: got a JSON string, want a number of milliseconds"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "x.jsonl:2: timestamp: 0 is before the previous request's 5"},
		{`{"timestamp": 7, "input_length": 1,`, "x.jsonl:2: invalid JSON"},
		{`[1, 2]`, "x.jsonl:2: invalid JSON"},
	}
	first := `{"timestamp": 5, "input_length": 10, "output_length": 1, "hash_ids": [1]}` + "\n"
	for _, tc := range cases {
		src := NewMooncakeReader(strings.NewReader(first+tc.line+"\n"), "x.jsonl", 0, false)
		var r Request
		if ok, err := src.Next(&r); !ok || err != nil {
			t.Fatalf("first line: %v %v", ok, err)
		}
		_, err := src.Next(&r)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s\n  error %v\n  want  %s...", tc.line, err, tc.want)
		}
	}
	src := NewMooncakeReader(strings.NewReader(first), "x.jsonl", 48, false)
	if _, err := src.Next(&Request{}); err == nil || !strings.Contains(err.Error(), "does not divide") {
		t.Errorf("block size 48: %v", err)
	}
}

// TestMooncakeLongLine reads a line longer than the reader's buffer.
func TestMooncakeLongLine(t *testing.T) {
	var b strings.Builder
	n := 20000 // ids 0 to 19,999 and separators: over 100 KB, well over 64 KiB
	b.WriteString(`{"timestamp": 0, "input_length": 10240000, "output_length": 1, "hash_ids": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString("]}\n")
	reqs := readAll(t, NewMooncakeReader(strings.NewReader(b.String()), "long", 0, false))
	if len(reqs) != 1 || len(reqs[0].Blocks) != n {
		t.Fatalf("%d requests, blocks %d; want 1 and %d", len(reqs), len(reqs[0].Blocks), n)
	}
}

// TestMooncakeNoRequests: a trace that yields no request is an error naming
// the file (an empty trace used to run and report zero requests, exit 0).
func TestMooncakeNoRequests(t *testing.T) {
	cases := []struct {
		in   string
		skip bool
		want string
	}{
		{"", false, "empty.jsonl: no requests: the file is empty"},
		{"\n  \n\t\n", false, "empty.jsonl: no requests: its 3 lines are blank"},
		{"{}\nnot json\n\n", true, "empty.jsonl: no requests: all 2 non-blank lines are malformed and were skipped"},
	}
	for _, c := range cases {
		src := NewMooncakeReader(strings.NewReader(c.in), "empty.jsonl", 0, c.skip)
		ok, err := src.Next(&Request{})
		if ok || err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: ok %v, err %v; want %q", c.in, ok, err, c.want)
		}
		if _, err := Run(NewMooncakeReader(strings.NewReader(c.in), "empty.jsonl", 0, c.skip), Config{Workers: 2, CapacityBlocks: 8}); err == nil {
			t.Errorf("%q: Run gave no error", c.in)
		}
	}
	// A trace with requests ends with (false, nil), as before.
	src := NewMooncakeReader(strings.NewReader(`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [3]}`), "one.jsonl", 0, false)
	if got := readAll(t, src); len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
}

// TestMooncakeIDCap: a line with more hash ids than MaxHashIDsPerLine is
// malformed, with the cap in the error, on the fast path and the slow one
// (a fractional timestamp sends a line to encoding/json); one at the cap is
// read. A million ids on one line used to take 1.4 GB.
func TestMooncakeIDCap(t *testing.T) {
	line := func(ts string, n int) string {
		var b strings.Builder
		fmt.Fprintf(&b, `{"timestamp": %s, "input_length": %d, "output_length": 1, "hash_ids": [`, ts, n*512)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(i % 10))
		}
		b.WriteString("]}\n")
		return b.String()
	}
	// The cap, written out: 65,536 ids, a prompt of 65,536 × 512 = 33,554,432 tokens.
	want := "big.jsonl:1: hash_ids: more than 65536 ids on one line; the cap is 65536 ids a request (a prompt of 33554432 tokens)"
	for _, ts := range []string{"0", "0.5"} {
		reqs := readAll(t, NewMooncakeReader(strings.NewReader(line(ts, 65_536)), "big.jsonl", 0, false))
		if len(reqs) != 1 || len(reqs[0].Blocks) != 65_536 {
			t.Fatalf("timestamp %s: a line at the cap: %d requests", ts, len(reqs))
		}
		_, err := NewMooncakeReader(strings.NewReader(line(ts, 65_537)), "big.jsonl", 0, false).Next(&Request{})
		if err == nil || err.Error() != want {
			t.Errorf("timestamp %s: error %v\nwant  %s", ts, err, want)
		}
	}
	// With --skip-bad-lines it is skipped like any malformed line.
	src := NewMooncakeReader(strings.NewReader(line("0", 65_537)+line("1", 2)), "big.jsonl", 0, true)
	if reqs := readAll(t, src); len(reqs) != 1 || src.Skipped() != 1 {
		t.Errorf("skip mode: %d requests, %d skipped; want 1 and 1", len(reqs), src.Skipped())
	}
}

// TestMooncakeLineCap: a line over 1 MiB (here endless, as /dev/zero or a
// file without newlines piped in would be) stops the read with the cap in
// the error, even with skipBad, after buffering about the cap.
func TestMooncakeLineCap(t *testing.T) {
	for _, skip := range []bool{false, true} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		src := NewMooncakeReader(io.LimitReader(endless{}, 1<<30), "stdin", 0, skip)
		_, err := src.Next(&Request{})
		runtime.ReadMemStats(&after)
		if want := "stdin:1: line too long: longer than the 1 MiB line cap"; err == nil || err.Error() != want {
			t.Errorf("skip %v: error %v\nwant  %s", skip, err, want)
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > 3<<20 {
			t.Errorf("skip %v: allocated %d bytes to refuse the line", skip, a)
		}
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '7'
	}
	return len(p), nil
}

// TestOpenMooncakeRefusesNonRegular: a FIFO used to hang forever and
// /dev/zero to grow without bound; both are refused before a byte is read.
func TestOpenMooncakeRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "trace.fifo")
	paths := map[string]string{"/dev/zero": "trace /dev/zero is a character device, not a regular file", dir: "is a directory, not a regular file"}
	if err := syscall.Mkfifo(fifo, 0o600); err == nil {
		paths[fifo] = "trace " + fifo + " is a named pipe (FIFO), not a regular file"
	}
	for path, want := range paths {
		done := make(chan error, 1)
		go func() {
			src, err := OpenMooncake(path, 0, false)
			if err == nil {
				src.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("OpenMooncake(%s) = %v; want %q", path, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("OpenMooncake(%s) hangs", path)
		}
	}
}
