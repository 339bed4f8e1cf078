package main

import (
	"fmt"
	"io"
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
	{"version", []string{"--version"}},
}

// startupInstances is how many copies of each binary BenchmarkStartup
// times, round after round in turn. The same bytes run at different speeds
// from different files: three builds of one commit, byte for byte the
// same, took 2.37, 2.42 and 2.62 ms for disagg in one interleaved run (the
// page cache holds each file in other pages). Copies made as cp makes them
// vary less (2.35–2.37 ms over three), and run faster, hello world's too,
// so the ratio moves less than the times: one commit measured 2.55–2.76×
// from the files go build wrote (five runs) and 2.49–2.58× from copies
// (two). One file per binary made the ratio a draw from the spread,
// 2.42–2.76× for one commit over six invocations; the median over copies
// is not.
const startupInstances = 4

// floorRuns are the floors timed against hello world the same way
// (testdata/floor): the design card's four libraries linked and nothing
// run; the same with disagg's three tables printed through tablewriter as
// kvplan prints them; and that with every other library kvplan links, as
// kvplan links them (testdata/floor/libs.go, tag floorlibs: with
// internal/plotfonts, which defers gonum/plot's font parsing). What kvplan
// disagg takes beyond floor-all-libraries is kvplan's own.
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
// once more with floorlibs) and a hello-world Go binary, copies each to
// startupInstances files, then, for each of startupCommands and floorRuns,
// runs them in turn, hello then the other, b.N times each (round i runs
// copy i mod startupInstances of both), and reports the median wall time
// of each process (start to exit, as a shell sees it) and the median of
// the pairwise ratios to hello, so that a machine whose speed drifts
// during the run still gives a fair ratio.
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
	copies := func(bin string) []string {
		var out []string
		for i := range startupInstances {
			dst := fmt.Sprintf("%s.%d", bin, i)
			if err := copyExecutable(bin, dst); err != nil {
				b.Fatal(err)
			}
			out = append(out, dst)
		}
		return out
	}
	hellos := copies(hello)
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
		bins []string
		args []string
	}
	var runs []timed
	kvplans, floors, floorAlls := copies(kvplanBin), copies(floor), copies(floorAll)
	for _, sc := range startupCommands {
		runs = append(runs, timed{sc.name, kvplans, sc.args})
	}
	for _, f := range floorRuns {
		bins := floors
		if f.all {
			bins = floorAlls
		}
		runs = append(runs, timed{f.name, bins, f.args})
	}
	for _, r := range runs {
		b.Run(r.name, func(b *testing.B) {
			for i := range startupInstances { // warm the page cache
				runOnce(hellos[i])
				runOnce(r.bins[i], r.args...)
			}
			var hs, ks, ratios []float64
			b.ResetTimer()
			i := 0
			for b.Loop() {
				h := runOnce(hellos[i%startupInstances])
				k := runOnce(r.bins[i%startupInstances], r.args...)
				i++
				hs, ks = append(hs, ms(h)), append(ks, ms(k))
				ratios = append(ratios, float64(k)/float64(h))
			}
			b.ReportMetric(median(hs), "hello-ms")
			b.ReportMetric(median(ks), "run-ms")
			b.ReportMetric(median(ratios), "ratio")
		})
	}
}

// copyExecutable copies the executable src to dst through the page cache,
// as cp or an installer does.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
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
