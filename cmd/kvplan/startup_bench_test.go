package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// releaseTags are the build tags of a release build (README: Install).
// They change start-up time, not output: urfave_cli_no_docs drops
// urfave/cli's man-page and markdown generator (its markdown package's init
// ran on every start); osusergo makes os/user (imported by the shell
// expander that reads manifests' command lines) pure Go, so the binary is
// linked statically and skips the dynamic loader; minimal leaves out the
// image formats gonum/plot registers beside SVG (report/plot.go writes SVG
// through vgsvg itself).
const releaseTags = releaseBuildTags

// startupCommands are the one-shot commands timed against hello world:
// disagg is the one the start-up goal is stated for.
var startupCommands = []struct {
	name string
	args []string
}{
	{"disagg", []string{"disagg", "--model", "qwen3-0.6b", "--link", "1gbe"}},
	{"check", []string{"check", "../../examples/clean.toml"}},
}

// BenchmarkStartup builds kvplan (with releaseTags) and a hello-world Go
// binary, then, for each of startupCommands, runs them in turn, hello then
// kvplan, b.N times each, and
// reports the median wall time of each process (start to exit, as a shell
// sees it) and the median of the pairwise ratios kvplan / hello, so that a
// machine whose speed drifts during the run still gives a fair ratio.
//
//	go test ./cmd/kvplan -run '^$' -bench Startup -benchtime 400x
func BenchmarkStartup(b *testing.B) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command to build the binaries with")
	}
	dir := b.TempDir()
	hello, kvplanBin := filepath.Join(dir, "hello"), filepath.Join(dir, "kvplan")
	for _, build := range [][]string{
		{"build", "-o", hello, "./testdata/hello"},
		{"build", "-tags", releaseTags, "-o", kvplanBin, "."},
	} {
		cmd := exec.Command(goTool, build...)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("go %v: %v", build, err)
		}
	}
	runOnce := func(bin string, args ...string) time.Duration {
		cmd := exec.Command(bin, args...)
		start := time.Now()
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == ExitFindings {
			err = nil // check found something: still a full run
		}
		if err != nil {
			b.Fatalf("%s %v: %v", bin, args, err)
		}
		return time.Since(start)
	}
	for _, sc := range startupCommands {
		b.Run(sc.name, func(b *testing.B) {
			for range 3 { // warm the page cache
				runOnce(hello)
				runOnce(kvplanBin, sc.args...)
			}
			var hs, ks, ratios []float64
			b.ResetTimer()
			for b.Loop() {
				h := runOnce(hello)
				k := runOnce(kvplanBin, sc.args...)
				hs, ks = append(hs, ms(h)), append(ks, ms(k))
				ratios = append(ratios, float64(k)/float64(h))
			}
			b.ReportMetric(median(hs), "hello-ms")
			b.ReportMetric(median(ks), "kvplan-ms")
			b.ReportMetric(median(ratios), "ratio")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
