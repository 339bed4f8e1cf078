package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSimulateTraceFiles: issue 13's trace failures through the command
// line. An empty trace ran and exited 0 with zero requests; a FIFO hung
// forever; /dev/zero grew without bound. Each is now exit 2 at once, naming
// the file.
func TestSimulateTraceFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	blank := filepath.Join(dir, "blank.jsonl")
	for path, data := range map[string]string{empty: "", blank: "\n\n"} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		trace string
		want  string
	}{
		{empty, empty + ": no requests: the file is empty"},
		{blank, blank + ": no requests: its 2 lines are blank"},
		{"/dev/zero", "simulate: --trace: trace /dev/zero is a character device, not a regular file"},
		{dir, "is a directory, not a regular file"},
		{filepath.Join(dir, "missing.jsonl"), "no such file or directory"},
	}
	fifo := filepath.Join(dir, "trace.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err == nil {
		cases = append(cases, struct{ trace, want string }{fifo, "trace " + fifo + " is a named pipe (FIFO), not a regular file"})
	}
	for _, c := range cases {
		_, errOut, code := kvplanWithin(t, 10*time.Second, "simulate", "--trace", c.trace, "--kv-slots", "20000")
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("--trace %s: exit %d, stderr %q; want 2 with %q", c.trace, code, errOut, c.want)
		}
	}
}

// TestSimulateTraceFromStdin: --trace - reads stdin, streamed with the same
// caps: the excerpt gives what the file gives, and endless zeros without a
// newline stop at the 1 MiB line cap.
func TestSimulateTraceFromStdin(t *testing.T) {
	const excerpt = "../../testdata/sim/conversation_excerpt.jsonl"
	args := []string{"simulate", "--kv-slots", "20000", "--workers", "4", "--policy", "kv-aware", "-o", "json"}
	want, errOut, code := kvplan(t, append(args, "--trace", excerpt)...)
	if code != ExitOK {
		t.Fatalf("file: exit %d: %s", code, errOut)
	}
	f, err := os.Open(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out, errb strings.Builder
	code = runIn(append([]string{"kvplan"}, append(args, "--trace", "-")...), f, &out, &errb)
	// Only the workload's name differs: "trace -" against the file's path.
	if code != ExitOK || strings.Replace(out.String(), `"trace -"`, `"trace `+excerpt+`"`, 1) != want {
		t.Errorf("stdin: exit %d, %s\n%s", code, errb.String(), out.String())
	}
	zeros, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer zeros.Close()
	out.Reset()
	errb.Reset()
	done := make(chan int, 1)
	go func() {
		done <- runIn([]string{"kvplan", "simulate", "--trace", "-", "--kv-slots", "20000"}, zeros, &out, &errb)
	}()
	select {
	case code = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("--trace - < /dev/zero still running after 10s")
	}
	if code != ExitUsage || !strings.Contains(errb.String(), "stdin:1: line too long: longer than the 1 MiB line cap") {
		t.Errorf("stdin of zeros: exit %d, %q", code, errb.String())
	}
}

// TestAbsurdCountsAreBounded: `route --repeats 100000000` looped for 8 s,
// --workers 100000000 ran the simulator out of memory (a stack trace), and
// a synthetic workload of 100,000 prefixes × 100,000 tokens × 1,000 sends
// never finished. Each is now exit 2 at once, stating the range.
func TestAbsurdCountsAreBounded(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"route", "--kv-slots", "14816", "--repeats", "100000000"}, "route: --repeats 100000000 is out of range: want 1 to 1,000,000 sends"},
		// The same ranges for the three counts of --synthetic (they were only
		// bounded by the blocks they add up to).
		{[]string{"simulate", "--synthetic", "1000001x10x1", "--workers", "2", "--kv-slots", "14816"}, "simulate: --synthetic 1000001x10x1: 1000001 is out of range: want 1 to 1,000,000 prefixes"},
		{[]string{"simulate", "--synthetic", "1x100000000x1", "--workers", "2", "--kv-slots", "14816"}, "simulate: --synthetic 1x100000000x1: 100000000 is out of range: want 1 to 10,000,000 tokens"},
		{[]string{"simulate", "--synthetic", "1x10x1000001", "--workers", "2", "--kv-slots", "14816"}, "simulate: --synthetic 1x10x1000001: 1000001 is out of range: want 1 to 1,000,000 sends"},
		{[]string{"route", "--kv-slots", "14816", "--prefixes", "1e9"}, "route: --prefixes 1000000000 is out of range: want 1 to 1,000,000 prefixes"},
		{[]string{"route", "--kv-slots", "14816", "--workers", "0"}, "route: --workers 0 is out of range: want 1 to 1,024 workers"},
		{[]string{"route", "--kv-slots", "14816", "--block-size", "-16"}, "route: --block-size -16 is out of range: want 1 to 1,024 tokens"},
		{[]string{"route", "--kv-slots", "-5"}, "route: --kv-slots -5 is out of range: want 1 to 10,000,000,000 tokens"},
		// 100,000 × 1,000 sends × ceil((1500 + 24 + 128) / 16) = 104 blocks = 10.4 billion blocks.
		{[]string{"route", "--kv-slots", "14816", "--prefixes", "100000", "--repeats", "1000", "--simulate"},
			"route --simulate: 100000 prefixes × 1000 sends × 104 blocks a send is more than the 1,000,000,000 blocks"},
		{[]string{"simulate", "--synthetic", "12x1500x6", "--kv-slots", "20000", "--workers", "100000000"}, "simulate: --workers 100000000 is out of range: want 1 to 1,024 workers"},
		{[]string{"simulate", "--synthetic", "12x1500x6", "--kv-slots", "20000", "--concurrency", "1e9"}, "simulate: --concurrency 1000000000 is out of range: want 1 to 100,000 clients"},
		{[]string{"simulate", "--synthetic", "12x1500x6", "--kv-slots", "20000", "--output-tokens", "1e8"}, "simulate: --output-tokens 100000000 is out of range: want 0 to 1,000,000 tokens"},
		// ceil((100,000 + 24 + 128) / 16) = 6,260 blocks a send.
		{[]string{"simulate", "--synthetic", "100000x100000x1000", "--kv-slots", "20000"}, "100000 prefixes × 1000 sends × 6260 blocks a send is more than the 1,000,000,000 blocks"},
		{[]string{"simulate", "--synthetic", "12x1500x6", "--kv-slots", "20000", "--overlap-credit", "-1"}, "simulate: --overlap-credit -1 is out of range: want 0 to 1,000,000"},
		{[]string{"simulate", "--synthetic", "12x1500x6", "--kv-slots", "20000", "--rate", "1e7"}, "at most 1,000,000"},
		// A timed run in which no request fits a worker exited 0 with every
		// figure 0: over a million tokens a request, against the L4's 24 GB.
		{[]string{"simulate", "--synthetic", "4x1500x2", "--model", "qwen3-0.6b", "--gpu", "l4", "--output-tokens", "1e6"}, "simulate: every request was rejected: none fits a worker's"},
		// --gpu-util 0 fell back to the engine's default and reported "at 0".
		{[]string{"simulate", "--synthetic", "4x1500x2", "--model", "qwen3-0.6b", "--gpu", "l4", "--gpu-util", "0"}, "simulate: --gpu-memory-utilization 0 is out of range: want 0.01 to 1"},
	}
	for _, c := range cases {
		_, errOut, code := kvplanWithin(t, 5*time.Second, c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 with %q", c.args, code, errOut, c.want)
		}
	}
	// The top of each range is accepted, and fast.
	if _, errOut, code := kvplanWithin(t, 5*time.Second, "route", "--kv-slots", "14816", "--repeats", "1000000"); code != ExitOK {
		t.Errorf("route --repeats 1000000: exit %d: %s", code, errOut)
	}
}
