package workload

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kvplan/kvplan/internal/safefile"
	"github.com/kvplan/kvplan/sim"
)

// MaxRequests bounds the requests a lengths file may hold: ten times the
// Mooncake conversation trace's 12,031 and a hundred times a long
// benchmark's thousands.
const MaxRequests = 1_000_000

// maxTokens bounds one request's input or output: the plan file's bound.
const maxTokens = 100_000_000

// lengthsFile is a lengths file read whole (a benchmark result or a CSV):
// the largest vLLM per-request result in ../shared is 1.7 MB.
var lengthsFile = safefile.Kind{Name: "lengths file", MaxBytes: 64 << 20}

// The columns Read looks for, named in its errors.
var (
	csvInputNames  = []string{"input_tokens", "input_length", "input_len", "input", "isl", "prompt_tokens", "prompt_len"}
	csvOutputNames = []string{"output_tokens", "output_length", "output_len", "output", "osl", "completion_tokens", "generated_tokens"}
	csvTimeNames   = []string{"timestamp", "arrival_ms"}
)

// Read reads the (input, output) lengths of a file: a Mooncake-style JSONL
// trace (one object a line with timestamp, input_length, output_length and
// hash_ids: arrivals and shared prompt blocks too), a benchmark result, one
// JSON object with per-request arrays input_lens and output_lens (vLLM
// bench --save-result up to 0.8, --save-detailed since; SGLang
// --output-details), or a CSV whose columns are input and output tokens
// (a header row may name them, and a timestamp column in ms). Rows with no
// prompt or no output (failed requests) are skipped and counted. A file
// with no usable row is an error that says which fields were looked for.
func Read(path string) (*Workload, error) {
	head, err := peek(path)
	if err != nil {
		return nil, err
	}
	switch {
	case bytes.HasPrefix(head, []byte("{")) && isJSONL(head, true):
		return readMooncake(path)
	case bytes.HasPrefix(head, []byte("{")) && isJSONL(head, false):
		return readLengthsJSONL(path)
	case bytes.HasPrefix(head, []byte("{")):
		return readBench(path)
	default:
		return readCSV(path)
	}
}

// peek reads the first bytes of path, past leading white space.
func peek(path string) ([]byte, error) {
	f, err := safefile.Open(path, lengthsFile)
	if err != nil {
		return nil, fmt.Errorf("--lengths: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("--lengths %s: %w", path, err)
	}
	b := bytes.TrimLeft(buf[:n], " \t\r\n\ufeff")
	if len(b) == 0 {
		return nil, fmt.Errorf("--lengths %s: the file is empty; want a Mooncake JSONL trace (input_length, output_length), a benchmark result with input_lens and output_lens, or a CSV of input and output tokens", path)
	}
	return b, nil
}

// isJSONL reports whether a file starting with b holds one object a line
// with Mooncake's fields: its first line is a whole object with
// input_length (and, when full, timestamp and hash_ids too).
func isJSONL(b []byte, full bool) bool {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	var probe map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(line), &probe) != nil {
		return false
	}
	_, in := probe["input_length"]
	_, ts := probe["timestamp"]
	_, hs := probe["hash_ids"]
	return in && (!full || ts && hs)
}

// readLengthsJSONL reads a JSONL file of input_length and output_length
// (and timestamp, when every line has one) without hash ids.
func readLengthsJSONL(path string) (*Workload, error) {
	f, err := safefile.Open(path, lengthsFile)
	if err != nil {
		return nil, fmt.Errorf("--lengths: %w", err)
	}
	defer f.Close()
	lr := safefile.NewLineReader(f, sim.MaxTraceLineBytes)
	w := &Workload{Format: FormatMooncake, Timed: true}
	for {
		b, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("--lengths %s: %w", path, err)
		}
		if b = bytes.TrimSpace(b); len(b) == 0 {
			continue
		}
		var rec struct {
			Timestamp    *float64     `json:"timestamp"`
			InputLength  *json.Number `json:"input_length"`
			OutputLength *json.Number `json:"output_length"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("--lengths %s:%d: not a JSON object: %v", path, lr.Line(), err)
		}
		if rec.InputLength == nil || rec.OutputLength == nil {
			return nil, fmt.Errorf("--lengths %s:%d: want input_length and output_length on every line", path, lr.Line())
		}
		in, err1 := tokenCount(rec.InputLength.String())
		out, err2 := tokenCount(rec.OutputLength.String())
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("--lengths %s:%d: %v", path, lr.Line(), err)
		}
		q := Request{InputTokens: in, OutputTokens: out}
		switch {
		case rec.Timestamp == nil:
			w.Timed = false
		case *rec.Timestamp < 0 || len(w.Requests) > 0 && *rec.Timestamp < w.Requests[len(w.Requests)-1].ArrivalMS:
			return nil, fmt.Errorf("--lengths %s:%d: timestamp %g is negative or before the previous line's: the trace must be sorted by time", path, lr.Line(), *rec.Timestamp)
		default:
			q.ArrivalMS = *rec.Timestamp
		}
		if err := w.add(q, path); err != nil {
			return nil, err
		}
	}
	if len(w.Requests) == 0 {
		return nil, fmt.Errorf("--lengths %s: no usable rows: looked for input_length and output_length above 0 on each line", path)
	}
	w.rebase()
	w.Source = fmt.Sprintf("%s (JSONL of input_length and output_length, %d requests)", path, len(w.Requests))
	return w, nil
}

func readMooncake(path string) (*Workload, error) {
	m, err := sim.OpenMooncake(path, sim.MooncakeBlockTokens, false)
	if err != nil {
		return nil, fmt.Errorf("--lengths: %w", err)
	}
	defer m.Close()
	w := &Workload{Format: FormatMooncake, Timed: true}
	var r sim.Request
	for {
		ok, err := m.Next(&r)
		if err != nil {
			return nil, fmt.Errorf("--lengths: %w", err)
		}
		if !ok {
			break
		}
		q := Request{ArrivalMS: r.ArrivalMS, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, HashIDs: slices.Clone(m.HashIDs())}
		if err := w.add(q, path); err != nil {
			return nil, err
		}
	}
	if len(w.Requests) == 0 {
		return nil, fmt.Errorf("--lengths %s: no usable request: every line has input_length or output_length 0", path)
	}
	w.rebase()
	w.Source = fmt.Sprintf("%s (Mooncake JSONL, %d requests)", path, len(w.Requests))
	return w, nil
}

// benchResult is the part of a benchmark result file Read uses.
type benchResult struct {
	InputLens  []json.Number `json:"input_lens"`
	OutputLens []json.Number `json:"output_lens"`
}

func readBench(path string) (*Workload, error) {
	data, err := safefile.ReadFile(path, lengthsFile)
	if err != nil {
		return nil, fmt.Errorf("--lengths: %w", err)
	}
	var br benchResult
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&br); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
			return nil, fmt.Errorf("--lengths %s:%d: not JSON: %v", path, line, err)
		}
		return nil, fmt.Errorf("--lengths %s: %v (want input_lens and output_lens arrays of token counts)", path, err)
	}
	if len(br.InputLens) == 0 || len(br.OutputLens) == 0 {
		return nil, fmt.Errorf("--lengths %s: no usable rows: a benchmark result needs per-request arrays input_lens and output_lens (vLLM bench writes them with --save-detailed, or on every --save-result up to 0.8); found %s",
			path, presentKeys(data))
	}
	if len(br.InputLens) != len(br.OutputLens) {
		return nil, fmt.Errorf("--lengths %s: input_lens has %d entries but output_lens %d: want one of each per request", path, len(br.InputLens), len(br.OutputLens))
	}
	if len(br.InputLens) > MaxRequests {
		return nil, fmt.Errorf("--lengths %s: more than %d requests; take an excerpt", path, MaxRequests)
	}
	w := &Workload{Format: FormatVLLMBench}
	for i := range br.InputLens {
		in, err1 := tokenCount(br.InputLens[i].String())
		out, err2 := tokenCount(br.OutputLens[i].String())
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("--lengths %s: request %d: %v", path, i+1, err)
		}
		if err := w.add(Request{InputTokens: in, OutputTokens: out}, path); err != nil {
			return nil, err
		}
	}
	if len(w.Requests) == 0 {
		return nil, fmt.Errorf("--lengths %s: no usable rows: every request of input_lens and output_lens has 0 tokens in or out (failed requests)", path)
	}
	w.Source = fmt.Sprintf("%s (benchmark result, %d requests)", path, len(w.Requests))
	return w, nil
}

// presentKeys lists a JSON object's top-level keys, for an error.
func presentKeys(data []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil || len(m) == 0 {
		return "no top-level object"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 12 {
		keys = append(keys[:12], "...")
	}
	return "keys " + strings.Join(keys, ", ")
}

// tokenCount reads a whole, non-negative token count.
func tokenCount(s string) (int, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v != float64(int64(v)) || v < 0 || v > maxTokens {
		return 0, fmt.Errorf("%q is not a token count (a whole number from 0 to %d)", s, maxTokens)
	}
	return int(v), nil
}

func readCSV(path string) (*Workload, error) {
	data, err := safefile.ReadFile(path, lengthsFile)
	if err != nil {
		return nil, fmt.Errorf("--lengths: %w", err)
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	r.Comment = '#'
	w := &Workload{Format: FormatCSV}
	in, out, ts := 0, 1, -1
	header := false
	for row := 0; ; row++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("--lengths %s:%d: %v", path, line, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if row == 0 && !numeric(rec[0]) {
			header = true
			in, out, ts = column(rec, csvInputNames), column(rec, csvOutputNames), column(rec, csvTimeNames)
			if in < 0 || out < 0 {
				return nil, fmt.Errorf("--lengths %s:%d: no usable columns: the header %q names no input column (%s) or no output column (%s)",
					path, line, strings.Join(rec, ","), strings.Join(csvInputNames, ", "), strings.Join(csvOutputNames, ", "))
			}
			continue
		}
		if len(rec) < 2 || len(rec) <= max(in, out, ts) {
			return nil, fmt.Errorf("--lengths %s:%d: %d columns, want input and output tokens (e.g. 2000,300)", path, line, len(rec))
		}
		a, err := tokenCount(rec[in])
		if err != nil {
			return nil, fmt.Errorf("--lengths %s:%d: input: %v", path, line, err)
		}
		b, err := tokenCount(rec[out])
		if err != nil {
			return nil, fmt.Errorf("--lengths %s:%d: output: %v", path, line, err)
		}
		q := Request{InputTokens: a, OutputTokens: b}
		if ts >= 0 {
			t, err := strconv.ParseFloat(strings.TrimSpace(rec[ts]), 64)
			switch {
			case err != nil || t < 0 || t != t || t > 1e15:
				return nil, fmt.Errorf("--lengths %s:%d: timestamp %q: want milliseconds ≥ 0", path, line, rec[ts])
			case len(w.Requests) > 0 && t < w.Requests[len(w.Requests)-1].ArrivalMS:
				return nil, fmt.Errorf("--lengths %s:%d: timestamp %g is before the previous row's: sort the rows by time", path, line, t)
			}
			q.ArrivalMS = t
		}
		if err := w.add(q, path); err != nil {
			return nil, err
		}
	}
	if len(w.Requests) == 0 {
		what := "rows of two numbers, input and output tokens (e.g. 2000,300)"
		if header {
			what = fmt.Sprintf("rows under the header's %s and %s columns with both above 0", csvInputNames[0], csvOutputNames[0])
		}
		return nil, fmt.Errorf("--lengths %s: no usable rows: looked for %s, as a CSV (or a Mooncake JSONL trace with input_length and output_length, or a benchmark result with input_lens and output_lens)", path, what)
	}
	w.Timed = ts >= 0
	w.rebase()
	w.Source = fmt.Sprintf("%s (CSV, %d requests)", path, len(w.Requests))
	return w, nil
}

func numeric(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}

// column finds the first header cell named one of names, in any case.
func column(header []string, names []string) int {
	for i, h := range header {
		if slices.Contains(names, strings.ToLower(strings.TrimSpace(h))) {
			return i
		}
	}
	return -1
}

// add keeps a request with a prompt and an output, and counts one without
// (a failed request) as skipped.
func (w *Workload) add(q Request, path string) error {
	if q.InputTokens < 1 || q.OutputTokens < 1 {
		w.Skipped++
		return nil
	}
	if len(w.Requests) >= MaxRequests {
		return fmt.Errorf("--lengths %s: more than %d requests; take an excerpt", path, MaxRequests)
	}
	w.Requests = append(w.Requests, q)
	return nil
}

// rebase starts a timed workload's arrivals at 0.
func (w *Workload) rebase() {
	if !w.Timed || len(w.Requests) == 0 {
		return
	}
	t0 := w.Requests[0].ArrivalMS
	for i := range w.Requests {
		w.Requests[i].ArrivalMS -= t0
	}
}
