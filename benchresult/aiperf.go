package benchresult

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kvplan/kvplan/internal/tomlpos"
)

// aiperfMetric is one AIPerf metric: its tag in the JSON (and the older
// tag), its header in the CSV, and where it goes.
type aiperfMetric struct {
	tags   []string
	header string
	dist   func(*Metrics) *Dist
	scalar func(*Run) **float64
}

// aiperfMetrics are the metrics taken from AIPerf (and genai-perf, same
// family of names). inter_token_latency is per request (latency − TTFT) /
// (OSL − 1), vLLM's TPOT; inter_chunk_latency is the gaps between streamed
// chunks, closest to vLLM's ITL.
var aiperfMetrics = []aiperfMetric{
	{tags: []string{"time_to_first_token", "ttft"}, header: "Time to First Token", dist: func(m *Metrics) *Dist { return &m.TTFT }},
	{tags: []string{"inter_token_latency"}, header: "Inter Token Latency", dist: func(m *Metrics) *Dist { return &m.TPOT }},
	{tags: []string{"inter_chunk_latency"}, header: "Inter Chunk Latency", dist: func(m *Metrics) *Dist { return &m.ITL }},
	{tags: []string{"request_latency"}, header: "Request Latency", dist: func(m *Metrics) *Dist { return &m.E2E }},
	{tags: []string{"request_throughput"}, header: "Request Throughput", scalar: func(r *Run) **float64 { return &r.Measured.RequestsPerS }},
	{tags: []string{"output_token_throughput"}, header: "Output Token Throughput", scalar: func(r *Run) **float64 { return &r.Measured.OutputTokensPerS }},
}

// readAIPerfJSON reads profile_export_aiperf.json in either layout: the
// older one keeps the metrics under "records" by tag, the newer one at the
// top level.
func readAIPerfJSON(f *fields, m map[string]any) Run {
	var r Run
	recs := f.obj(m, "", "records")
	base := ""
	if recs == nil {
		recs = m
	} else {
		base = "records"
	}
	metric := func(tags ...string) (map[string]any, string) {
		for _, t := range tags {
			if o := f.obj(recs, base, t); o != nil {
				return o, join(base, t)
			}
		}
		return nil, ""
	}
	for _, am := range aiperfMetrics {
		o, path := metric(am.tags...)
		if o == nil {
			continue
		}
		scale := aiperfScale(f, o, path, am.dist != nil)
		if am.dist != nil {
			*am.dist(&r.Measured) = aiperfDist(f, o, path, scale)
		} else {
			*am.scalar(&r) = scaled(f.num(o, path, "avg"), scale)
		}
	}
	w := &r.Workload
	if o, path := metric("input_sequence_length"); o != nil {
		w.InputTokensMean = f.numOr(o, path, "avg", 0)
	}
	if o, path := metric("output_sequence_length"); o != nil {
		w.OutputTokensMean = f.numOr(o, path, "avg", 0)
	}
	w.Completed = -1
	if o, path := metric("request_count"); o != nil {
		w.Completed = int(f.numOr(o, path, "avg", -1))
	}
	if o, path := metric("error_request_count"); o != nil {
		w.Failed = int(f.numOr(o, path, "avg", 0))
	}
	if o, path := metric("benchmark_duration"); o != nil {
		w.DurationS = f.numOr(o, path, "avg", 0)
	}
	if ic := f.obj(m, "", "input_config"); ic != nil {
		if ep := f.obj(ic, "input_config", "endpoint"); ep != nil {
			if names := f.arr(ep, "input_config.endpoint", "model_names"); len(names) > 0 {
				r.Setup.Model, _ = names[0].(string)
			}
		}
		if lg := f.obj(ic, "input_config", "loadgen"); lg != nil {
			const p = "input_config.loadgen"
			w.Prompts = f.count(lg, p, "request_count", 0)
			if c := f.count(lg, p, "concurrency", 0); c > 0 {
				w.Kind, w.Concurrency = LoadConcurrency, c
			}
			if rate := f.rate(lg, p, "request_rate"); rate > 0 {
				w.Kind, w.RatePerS = LoadRate, rate
				if c := f.count(lg, p, "concurrency", 0); c > 0 {
					w.Concurrency = c
				}
			}
			if c := f.numOr(lg, p, "request_cancellation_rate", 0); c > 0 {
				r.Notes = append(r.Notes, fmt.Sprintf("%g%% of requests were cancelled by the benchmark (request_cancellation_rate)", c))
			}
		}
	}
	if w.Prompts == 0 && w.Completed >= 0 {
		w.Prompts = w.Completed + w.Failed
	}
	r.Label = runLabel(w)
	return r
}

func aiperfLayout(m map[string]any) string {
	if _, ok := m["records"]; ok {
		return "older layout (records)"
	}
	return "newer layout (top-level metrics)"
}

// aiperfScale converts the metric's unit to kvplan's: ms for times, per
// second for rates.
func aiperfScale(f *fields, o map[string]any, path string, time bool) float64 {
	u := strings.ToLower(f.str(o, path, "unit"))
	if !time {
		return 1
	}
	switch u {
	case "", "ms":
		return 1
	case "s", "sec", "seconds":
		return 1000
	case "us", "µs":
		return 1e-3
	case "ns":
		return 1e-6
	}
	f.fail(join(path, "unit"), "unit %q is not a time unit kvplan reads (ms, s, us, ns)", u)
	return 1
}

func aiperfDist(f *fields, o map[string]any, path string, scale float64) Dist {
	return Dist{Mean: scaled(f.num(o, path, "avg"), scale), P50: scaled(f.num(o, path, "p50"), scale),
		P90: scaled(f.num(o, path, "p90"), scale), P95: scaled(f.num(o, path, "p95"), scale), P99: scaled(f.num(o, path, "p99"), scale)}
}

func scaled(p *float64, s float64) *float64 {
	if p == nil || s == 1 {
		return p
	}
	v := *p * s
	return &v
}

// parseAIPerfCSV reads profile_export_aiperf.csv: a block of one row per
// metric (Metric,avg,min,max,p1,…), a blank line, a Metric,Value block of
// scalars, and a GPU-telemetry block. The CSV names no model and no load:
// those come from flags.
func parseAIPerfCSV(file string, data []byte) (*File, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	var r Run
	r.Workload.Completed = -1
	var header []string
	f := &fields{file: file}
	seen := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, &tomlpos.Error{File: file, Line: pe.Line, Col: pe.Column, Msg: "malformed CSV: " + pe.Err.Error()}
			}
			return nil, &tomlpos.Error{File: file, Msg: "malformed CSV: " + err.Error()}
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 0 || len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if rec[0] == "Metric" || rec[0] == "Endpoint" {
			header = rec
			continue
		}
		if header == nil {
			return nil, &tomlpos.Error{File: file, Line: line, Msg: "a row before any Metric,… header"}
		}
		if header[0] == "Endpoint" {
			continue // GPU telemetry
		}
		if len(rec) != len(header) {
			return nil, &tomlpos.Error{File: file, Line: line, Field: rec[0],
				Msg: fmt.Sprintf("%d values, but the header on its block has %d columns (the file was cut short?)", len(rec), len(header))}
		}
		name, unit := splitUnit(rec[0])
		row := map[string]any{}
		for i, h := range header[1:] {
			row[strings.ToLower(h)] = rec[i+1]
		}
		f.line = line
		seen++
		if header[1] == "Value" {
			csvScalar(f, &r, name, unit, row)
		} else {
			csvDist(f, &r, name, unit, row)
		}
		if f.err != nil {
			return nil, f.err
		}
	}
	if seen == 0 {
		return nil, &tomlpos.Error{File: file, Msg: "an AIPerf CSV header with no metric rows (the file was cut short?)"}
	}
	w := &r.Workload
	if w.Completed >= 0 {
		w.Prompts = w.Completed + w.Failed
	}
	r.Label = runLabel(w)
	r.Notes = append(r.Notes, "AIPerf's CSV does not record the model or the load (concurrency or rate): they come from flags")
	return &File{Format: FormatAIPerfCSV, Layout: "CSV export", Runs: []Run{r}}, nil
}

// splitUnit reads "Time to First Token (ms)" as the name and "ms".
func splitUnit(s string) (name, unit string) {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		return s[:i], s[i+2 : len(s)-1]
	}
	return s, ""
}

func csvDist(f *fields, r *Run, name, unit string, row map[string]any) {
	for _, am := range aiperfMetrics {
		if am.header == name && am.dist != nil {
			scale := aiperfScale(f, map[string]any{"unit": unit}, name, true)
			*am.dist(&r.Measured) = aiperfDist(f, row, name, scale)
			return
		}
	}
	switch name {
	case "Input Sequence Length":
		r.Workload.InputTokensMean = f.numOr(row, name, "avg", 0)
	case "Output Sequence Length":
		r.Workload.OutputTokensMean = f.numOr(row, name, "avg", 0)
	}
}

func csvScalar(f *fields, r *Run, name, unit string, row map[string]any) {
	for _, am := range aiperfMetrics {
		if am.header == name && am.scalar != nil {
			*am.scalar(r) = f.num(row, name, "value")
			return
		}
	}
	switch name {
	case "Request Count":
		r.Workload.Completed = f.count(row, name, "value", -1)
	case "Error Request Count":
		r.Workload.Failed = f.count(row, name, "value", 0)
	case "Benchmark Duration":
		r.Workload.DurationS = f.numOr(row, name, "value", 0)
	}
}
