package fit

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Line is the accuracy of one group of predictions: |predicted / measured − 1|.
type Line struct {
	Key                    string
	N, Failed              int
	TTFTMedian, TTFTWorst  float64
	TPOTMedian, TPOTWorst  float64
	TTFTWithin20, TPOTIn10 float64 // share of rows within 20% (TTFT) and 10% (TPOT)
}

// Summarize groups predictions by key and returns a line per group, sorted
// by key, and a last line "all".
func Summarize(preds []Prediction, key func(*Case) string) []Line {
	groups := map[string][]Prediction{}
	for _, p := range preds {
		k := key(p.Case)
		groups[k] = append(groups[k], p)
	}
	var keys []string
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Line
	for _, k := range keys {
		out = append(out, summarize(k, groups[k]))
	}
	if len(keys) > 1 {
		out = append(out, summarize("all", preds))
	}
	return out
}

func summarize(key string, preds []Prediction) Line {
	l := Line{Key: key}
	var ttft, tpot []float64
	for _, p := range preds {
		if p.Err != nil || !(p.TTFTMS > 0) || !(p.TPOTMS > 0) {
			l.Failed++
			continue
		}
		ttft = append(ttft, math.Abs(p.TTFTMS/p.Case.TTFTMS-1))
		tpot = append(tpot, math.Abs(p.TPOTMS/p.Case.TPOTMS-1))
	}
	l.N = len(ttft)
	l.TTFTMedian, l.TTFTWorst, l.TTFTWithin20 = stats(ttft, 0.2)
	l.TPOTMedian, l.TPOTWorst, l.TPOTIn10 = stats(tpot, 0.1)
	return l
}

func stats(x []float64, within float64) (median, worst, share float64) {
	if len(x) == 0 {
		return 0, 0, 0
	}
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	n := len(y)
	median = y[n/2]
	if n%2 == 0 {
		median = (y[n/2-1] + y[n/2]) / 2
	}
	var in int
	for _, v := range y {
		if v <= within {
			in++
		}
	}
	return median, y[n-1], float64(in) / float64(n)
}

// Format writes lines as a Markdown table.
func Format(w io.Writer, title string, lines []Line) {
	fmt.Fprintf(w, "\n%s\n\n", title)
	fmt.Fprintln(w, "| group | rows | TTFT median | TTFT worst | TTFT ≤ 20% | TPOT median | TPOT worst | TPOT ≤ 10% |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, l := range lines {
		rows := fmt.Sprint(l.N)
		if l.Failed > 0 {
			rows += fmt.Sprintf(" (+%d failed)", l.Failed)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", l.Key, rows,
			pct(l.TTFTMedian), pct(l.TTFTWorst), pct(l.TTFTWithin20), pct(l.TPOTMedian), pct(l.TPOTWorst), pct(l.TPOTIn10))
	}
}

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

// Keys to group by.
var (
	ByEngine = func(c *Case) string { return c.Engine }
	ByGPU    = func(c *Case) string { return c.GPU.Name }
	ByModel  = func(c *Case) string { return c.Group }
	ByKind   = func(c *Case) string {
		kind := "dense"
		if c.MoE {
			kind = "moe"
		}
		return c.Engine + " " + kind
	}
)

// FormatExclusions writes why rows were left out.
func FormatExclusions(w io.Writer, total int, used int, ex Exclusion) {
	fmt.Fprintf(w, "\n%d of %d rows used; left out: %s\n", used, total, ex.String())
}

// String lists the reasons and their counts, sorted by reason.
func (ex Exclusion) String() string {
	var reasons []string
	for r := range ex {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	var parts []string
	for _, r := range reasons {
		parts = append(parts, fmt.Sprintf("%s %d", r, ex[r]))
	}
	return strings.Join(parts, ", ")
}

// FormatBias writes, per group, the median signed error (predicted /
// measured − 1) of TTFT and TPOT: the bias the median |error| hides.
func FormatBias(w io.Writer, title string, preds []Prediction, key func(*Case) string) {
	groups := map[string][][2]float64{}
	for _, p := range preds {
		if p.Err != nil || !(p.TTFTMS > 0) || !(p.TPOTMS > 0) {
			continue
		}
		k := key(p.Case)
		groups[k] = append(groups[k], [2]float64{p.TTFTMS/p.Case.TTFTMS - 1, p.TPOTMS/p.Case.TPOTMS - 1})
	}
	var keys []string
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(w, "\n%s\n\n| group | rows | TTFT bias (median signed) | TPOT bias |\n|---|---:|---:|---:|\n", title)
	for _, k := range keys {
		var a, b []float64
		for _, v := range groups[k] {
			a, b = append(a, v[0]), append(b, v[1])
		}
		ma, _, _ := stats(a, 0)
		mb, _, _ := stats(b, 0)
		fmt.Fprintf(w, "| %s | %d | %+.1f%% | %+.1f%% |\n", k, len(a), 100*ma, 100*mb)
	}
}

// ByModelEngine groups by model and engine.
var ByModelEngine = func(c *Case) string { return c.Group + " " + c.Engine }
