package sim

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// FuzzMooncakeReader: any trace bytes stream as requests or stop with an
// error, never a panic, and a run over what parses completes. skip picks
// the reader's mode (stop at the first bad line, or skip bad lines), and
// fine its block size: 128 tokens, four blocks per hash id, or the trace's
// own 512. One run per input keeps the rate high enough for a long
// campaign; both modes and both block sizes are fuzzed input bits.
func FuzzMooncakeReader(f *testing.F) {
	for _, p := range []string{"../testdata/sim/bad_lines.jsonl", "../testdata/sim/conversation_excerpt.jsonl"} {
		if data, err := os.ReadFile(p); err == nil {
			for _, skip := range []bool{false, true} {
				f.Add(data[:min(len(data), 2048)], skip, skip)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, skip, fine bool) {
		bs := 0
		if fine {
			bs = 128
		}
		src := NewMooncakeReader(bytes.NewReader(data), "fuzz.jsonl", bs, skip)
		_, _ = Run(src, Config{Workers: 2, CapacityBlocks: 64, Policy: KVAware})
	})
}

// FuzzSyntheticSpec: any --synthetic text parses to three positive counts
// that print back to a spec giving the same counts, or is refused; a small
// workload it names simulates to completion with one request per send.
func FuzzSyntheticSpec(f *testing.F) {
	for _, s := range []string{"12x1500x6", "1×1×1", " 3X40x2 ", "0x1x1", "1x1", "9223372036854775807x1x1", "-1x2x3", "1x1x1x1", ""} {
		f.Add(s, uint8(0), uint8(16))
	}
	f.Fuzz(func(t *testing.T, spec string, tail, block uint8) {
		p, l, r, err := ParseSyntheticSpec(spec)
		if err != nil {
			if !strings.Contains(err.Error(), "want PREFIXESxTOKENSxREPEATS") {
				t.Fatalf("%q: error %q does not say the form", spec, err)
			}
			return
		}
		if p < 1 || l < 1 || r < 1 {
			t.Fatalf("%q parsed to %d, %d, %d", spec, p, l, r)
		}
		if p2, l2, r2, err := ParseSyntheticSpec(fmt.Sprintf("%dx%dx%d", p, l, r)); err != nil || p2 != p || l2 != l || r2 != r {
			t.Fatalf("%q: %dx%dx%d does not parse back (%d, %d, %d, %v)", spec, p, l, r, p2, l2, r2, err)
		}
		if p > 64/r || l > 4096 {
			return // the CLI bounds the size (syntheticBlocks); a fuzz run stays small
		}
		syn := Synthetic{Prefixes: p, PrefixTokens: l, Repeats: r, TailTokens: int(tail), BlockSize: int(block)}
		src, err := syn.Open()
		if err != nil {
			if syn.TailTokens > l {
				return // a tail longer than the prefix is refused, as Open says
			}
			t.Fatalf("%q (tail %d, block %d): %v", spec, tail, block, err)
		}
		res, err := Run(src, Config{Workers: 2, CapacityBlocks: 64, Policy: KVAware})
		if err != nil {
			t.Fatalf("%q (tail %d, block %d): %v", spec, tail, block, err)
		}
		if res.Requests != p*r {
			t.Fatalf("%q: %d requests simulated, want %d", spec, res.Requests, p*r)
		}
	})
}
