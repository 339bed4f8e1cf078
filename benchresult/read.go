package benchresult

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/internal/safefile"
	"github.com/kvplan/kvplan/internal/tomlpos"
)

// Read reads the benchmark result file at path ("-" is stdin), whatever
// tool wrote it: the format is told from the content, not the name.
func Read(path string) (*File, error) {
	data, err := safefile.ReadFile(path, safefile.BenchResult)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads a result file's bytes; file names it in errors. A run whose
// requests all failed, or which measured zero throughput, is left out
// (File.Skipped says why); a file with no run left is refused with that
// reason.
func Parse(file string, data []byte) (*File, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &tomlpos.Error{File: file, Msg: "empty file"}
	}
	var f *File
	var err error
	switch {
	case trimmed[0] == '{':
		f, err = parseJSON(file, data)
	case bytes.Contains(data, []byte("= PERFORMANCE OVERVIEW")):
		f, err = parseTRTLLM(file, data)
	case trimmed[0] == '[':
		f, err = parseJSON(file, data)
	case bytes.HasPrefix(trimmed, []byte("Metric,")):
		f, err = parseAIPerfCSV(file, data)
	case looksLikeYAML(trimmed):
		f, err = parseYAML(file, data)
	default:
		return nil, unknownFormat(file, "")
	}
	if err != nil {
		return nil, err
	}
	f.Path = file
	return f.keepMeasured()
}

// unknownFormat names the formats kvplan reads.
func unknownFormat(file, what string) error {
	msg := "not a benchmark result file kvplan reads"
	if what != "" {
		msg += " (" + what + ")"
	}
	return &tomlpos.Error{File: file, Msg: msg + "; kvplan reads: " + strings.Join(Formats(), "; ")}
}

// keepMeasured drops the runs that measured nothing usable and refuses
// the file when none is left.
func (f *File) keepMeasured() (*File, error) {
	var keep []Run
	var reasons []string
	for _, r := range f.Runs {
		if why := unusable(&r); why != "" {
			where := fmt.Sprintf("run %d", r.Index+1)
			if r.Line > 0 {
				where += fmt.Sprintf(" (line %d)", r.Line)
			}
			reasons = append(reasons, where+": "+why)
			continue
		}
		keep = append(keep, r)
	}
	if len(keep) == 0 {
		if len(reasons) == 0 {
			return nil, &tomlpos.Error{File: f.Path, Msg: "no benchmark run in the file"}
		}
		return nil, &tomlpos.Error{File: f.Path, Msg: "refused: " + strings.Join(reasons, "; ")}
	}
	f.Skipped = reasons
	f.Runs = keep
	return f, nil
}

// unusable says why a run cannot be compared with a prediction, or "".
func unusable(r *Run) string {
	w, m := &r.Workload, &r.Measured
	switch {
	case w.Completed == 0 && w.Failed > 0:
		return fmt.Sprintf("every request failed (0 completed, %d failed): nothing was measured", w.Failed)
	case w.Completed == 0:
		return "no request completed: nothing was measured"
	case m.OutputTokensPerS != nil && *m.OutputTokensPerS == 0:
		return "zero throughput (0 output tokens/s): nothing was served"
	case m.RequestsPerS != nil && *m.RequestsPerS == 0:
		return "zero throughput (0 requests/s): nothing was served"
	case m.Empty():
		return "no figure measured (every metric absent or not a finite number)"
	}
	return ""
}

// parseJSON reads a JSON file or JSON lines, and tells the tool from the
// first value's keys.
func parseJSON(file string, data []byte) (*File, error) {
	vals, err := decodeJSON(file, data)
	if err != nil {
		return nil, err
	}
	first, ok := vals[0].v.(map[string]any)
	if !ok {
		return nil, unknownFormat(file, "its top level is not a JSON object")
	}
	format, why := jsonFormat(first)
	if format == "" {
		return nil, unknownFormat(file, why)
	}
	if len(vals) > 1 && format != FormatVLLM && format != FormatSGLang {
		return nil, &tomlpos.Error{File: file, Line: vals[1].line, Msg: fmt.Sprintf("a %s file holds one JSON object, but another starts here", format)}
	}
	f := &File{Format: format}
	for i, v := range vals {
		m, ok := v.v.(map[string]any)
		line := v.line
		if len(vals) == 1 {
			line = 0
		}
		if !ok {
			return nil, &tomlpos.Error{File: file, Line: v.line, Msg: "want a JSON object (one run per line), got " + describe(v.v)}
		}
		fs := &fields{file: file, line: line}
		if i > 0 {
			if fm, _ := jsonFormat(m); fm != format {
				return nil, &tomlpos.Error{File: file, Line: v.line, Msg: fmt.Sprintf("this line is not a %s run like line %d", format, vals[0].line)}
			}
		}
		var runs []Run
		switch format {
		case FormatVLLM:
			runs = []Run{readVLLM(fs, m)}
			f.Layout = vllmLayout(m)
		case FormatSGLang:
			runs = []Run{readSGLang(fs, m)}
			f.Layout = sglangLayout(m)
		case FormatAIPerfJSON:
			runs = []Run{readAIPerfJSON(fs, m)}
			f.Layout = aiperfLayout(m)
		case FormatGuideLLM:
			runs = readGuideLLM(fs, m)
			f.Layout = guidellmLayout(m)
		case FormatInferencePerf:
			runs = []Run{readInferencePerf(fs, m)}
			f.Layout = "lifecycle metrics"
		case FormatInferencePerfSrv:
			runs = []Run{readInferencePerfProm(fs, m)}
			f.Layout = "Prometheus metrics (the server's view)"
		}
		if fs.err != nil {
			return nil, fs.err
		}
		for _, r := range runs {
			r.Index, r.Line = len(f.Runs), line
			f.Runs = append(f.Runs, r)
		}
	}
	return f, nil
}

// jsonFormat tells the tool that wrote a JSON object from its keys, or
// says why it cannot.
func jsonFormat(m map[string]any) (format, why string) {
	has := func(k string) bool { _, ok := m[k]; return ok }
	isObj := func(k string) bool { _, ok := m[k].(map[string]any); return ok }
	switch {
	case has("benchmarks"):
		return FormatGuideLLM, ""
	case isObj("load_summary") && isObj("successes"):
		s := m["successes"].(map[string]any)
		if _, ok := s["latency"]; ok {
			return FormatInferencePerf, ""
		}
		if _, ok := s["rate"]; ok {
			return FormatInferencePerfSrv, ""
		}
		if _, ok := s["time_to_first_token"]; ok {
			return FormatInferencePerfSrv, ""
		}
		return FormatInferencePerf, ""
	case isObj("records"):
		return FormatAIPerfJSON, ""
	case isObj("time_to_first_token") || isObj("request_throughput") || isObj("request_latency") || isObj("inter_token_latency"):
		return FormatAIPerfJSON, ""
	}
	e2e := false
	for k := range m {
		if strings.HasSuffix(k, "_e2e_latency_ms") {
			e2e = true
			break
		}
	}
	switch {
	case (has("dataset_name") || has("server_info") || e2e) && !has("model_id"):
		return FormatSGLang, ""
	case has("model_id") || has("num_prompts") || has("mean_ttft_ms") || has("request_throughput") || has("output_throughput"):
		return FormatVLLM, ""
	}
	keys := keysOf(m)
	if len(keys) > 8 {
		keys = append(keys[:8], "…")
	}
	return "", "a JSON object with keys " + strings.Join(keys, ", ")
}

func looksLikeYAML(b []byte) bool {
	if bytes.HasPrefix(b, []byte("---")) {
		return true
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	k, _, ok := bytes.Cut(line, []byte(":"))
	return ok && len(k) > 0 && bytes.IndexFunc(k, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0
}

// parseYAML reads a YAML result file (guidellm's --output-path x.yaml):
// the same document as its JSON, so the JSON readers read it.
func parseYAML(file string, data []byte) (*File, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 0
		if _, err := fmt.Sscanf(msg, "line %d:", &line); err == nil {
			_, msg, _ = strings.Cut(msg, ": ")
		}
		return nil, &tomlpos.Error{File: file, Line: line, Msg: "malformed YAML: " + msg}
	}
	m, ok := normalizeYAML(v).(map[string]any)
	if !ok {
		return nil, unknownFormat(file, "its top level is not a mapping")
	}
	format, why := jsonFormat(m)
	if format != FormatGuideLLM {
		if format == "" {
			return nil, unknownFormat(file, strings.Replace(why, "JSON object", "YAML mapping", 1))
		}
		return nil, unknownFormat(file, "a YAML "+format+" file; kvplan reads that format as JSON")
	}
	fs := &fields{file: file}
	runs := readGuideLLM(fs, m)
	if fs.err != nil {
		return nil, fs.err
	}
	f := &File{Format: FormatGuideLLM, Layout: guidellmLayout(m) + ", YAML"}
	for i := range runs {
		runs[i].Index = i
	}
	f.Runs = runs
	return f, nil
}

// normalizeYAML makes a decoded YAML value look like decoded JSON:
// mappings with string keys, numbers as float64.
func normalizeYAML(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = normalizeYAML(x)
		}
		return v
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[fmt.Sprint(k)] = normalizeYAML(x)
		}
		return out
	case []any:
		for i, x := range v {
			v[i] = normalizeYAML(x)
		}
		return v
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	}
	return v
}
