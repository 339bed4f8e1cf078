package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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

// floorRuns are the floors timed against hello world the same way
// (testdata/floor): the design card's four libraries linked and nothing
// run; the same with disagg's three tables printed through tablewriter as
// kvplan prints them; and that with every other library kvplan links
// (testdata/floor/libs.go, tag floorlibs). What kvplan disagg takes beyond
// floor-all-libraries is kvplan's own.
var floorRuns = []struct {
	name string
	all  bool // the floor built with floorlibs
	args []string
}{
	{"floor-libraries", false, nil},
	{"floor-tables", false, []string{"tables"}},
	{"floor-all-libraries", true, []string{"tables"}},
}

// BenchmarkStartup builds kvplan and the floor (with releaseTags, the floor
// once more with floorlibs) and a hello-world Go binary, then, for each of
// startupCommands and floorRuns, runs them in turn, hello then the other, b.N
// times each, and reports the median wall time of each process (start to
// exit, as a shell sees it) and the median of the pairwise ratios to hello,
// so that a machine whose speed drifts during the run still gives a fair
// ratio.
//
//	go test ./cmd/kvplan -run '^$' -bench Startup -benchtime 400x -count 3
func BenchmarkStartup(b *testing.B) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command to build the binaries with")
	}
	dir := b.TempDir()
	hello, kvplanBin, floor, floorAll := filepath.Join(dir, "hello"), filepath.Join(dir, "kvplan"), filepath.Join(dir, "floor"), filepath.Join(dir, "floor-all")
	for _, build := range [][]string{
		{"build", "-o", hello, "./testdata/hello"},
		{"build", "-tags", releaseTags, "-o", kvplanBin, "."},
		{"build", "-tags", releaseTags, "-o", floor, "./testdata/floor"},
		{"build", "-tags", releaseTags + ",floorlibs", "-o", floorAll, "./testdata/floor"},
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
	tablesOf := func(bin string, args ...string) string {
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			b.Fatalf("%s %v: %v", bin, args, err)
		}
		var lines []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "┌") || strings.HasPrefix(l, "│") || strings.HasPrefix(l, "├") || strings.HasPrefix(l, "└") {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, "\n")
	}
	for _, f := range []string{floor, floorAll} {
		if tablesOf(f, "tables") != tablesOf(kvplanBin, startupCommands[0].args...) {
			b.Fatal("testdata/floor prints other tables than kvplan disagg: copy disagg's cells into its tables")
		}
	}
	type timed struct {
		name string
		bin  string
		args []string
	}
	var runs []timed
	for _, sc := range startupCommands {
		runs = append(runs, timed{sc.name, kvplanBin, sc.args})
	}
	for _, f := range floorRuns {
		bin := floor
		if f.all {
			bin = floorAll
		}
		runs = append(runs, timed{f.name, bin, f.args})
	}
	for _, r := range runs {
		b.Run(r.name, func(b *testing.B) {
			for range 3 { // warm the page cache
				runOnce(hello)
				runOnce(r.bin, r.args...)
			}
			var hs, ks, ratios []float64
			b.ResetTimer()
			for b.Loop() {
				h := runOnce(hello)
				k := runOnce(r.bin, r.args...)
				hs, ks = append(hs, ms(h)), append(ks, ms(k))
				ratios = append(ratios, float64(k)/float64(h))
			}
			b.ReportMetric(median(hs), "hello-ms")
			b.ReportMetric(median(ks), "run-ms")
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
