package manifest

import (
	"strings"
	"testing"
)

// TestReadCommandLine reads pasted engine command lines; the expected
// values are the flags' values as written.
func TestReadCommandLine(t *testing.T) {
	cases := []struct {
		name      string
		argv      []string
		line      string // ReadCommandString instead when set
		model     string
		tp        int
		util      float64
		maxLen    int
		eager     bool
		kvDtype   string
		atFlag    string // a finding's text that must appear
		wantError string
	}{
		{name: "split", argv: strings.Fields("vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 --gpu-memory-utilization 0.85 --max-model-len 8192 --enforce-eager --kv-cache-dtype fp8"),
			model: "Qwen/Qwen3-8B", tp: 2, util: 0.85, maxLen: 8192, eager: true, kvDtype: "fp8"},
		{name: "short tp and underscores", argv: strings.Fields("vllm serve Qwen/Qwen3-8B -tp 4 --max_model_len 4096"), model: "Qwen/Qwen3-8B", tp: 4, maxLen: 4096},
		{name: "quoted string", line: `vllm serve "Qwen/Qwen3-8B" --gpu-memory-utilization=0.5 --max-model-len 2048`, model: "Qwen/Qwen3-8B", util: 0.5, maxLen: 2048},
		{name: "bare arguments", line: `--model Qwen/Qwen3-0.6B --max-model-len 1024`, model: "Qwen/Qwen3-0.6B", maxLen: 1024},
		{name: "python module", argv: strings.Fields("python3 -m vllm.entrypoints.openai.api_server --model m -tp 2"), model: "m", tp: 2},
		{name: "unknown flag", argv: strings.Fields("vllm serve m --tp 2"), model: "m", atFlag: `"--tp 2" is not understood`},
		{name: "not an engine", argv: strings.Fields("nginx -g daemon"), wantError: "does not start an engine"},
		{name: "empty", line: " ", wantError: "empty command line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var m *Manifest
			var err error
			if c.line != "" || c.argv == nil {
				m, err = ReadCommandString("cmdline", c.line)
			} else {
				m, err = ReadCommandLine("cmdline", c.argv)
			}
			if c.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantError) {
					t.Fatalf("error %v, want one containing %q", err, c.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := m.Plan.Pools["worker"]
			if p == nil {
				t.Fatalf("no pool named worker: %v", m.Plan.PoolNames())
			}
			if m.Plan.Model.Name != c.model || p.TP != c.tp || p.GPUMemoryUtilization != c.util || p.MaxModelLen != c.maxLen ||
				p.EnforceEager != c.eager || m.Plan.Model.KVDtype != c.kvDtype {
				t.Errorf("got model %q tp %d util %g max len %d eager %v kv %q", m.Plan.Model.Name, p.TP, p.GPUMemoryUtilization, p.MaxModelLen, p.EnforceEager, m.Plan.Model.KVDtype)
			}
			if c.atFlag != "" {
				found := false
				for _, f := range m.Findings {
					found = found || strings.Contains(f.Message, c.atFlag)
				}
				if !found {
					t.Errorf("no finding with %q: %+v", c.atFlag, m.Findings)
				}
			}
		})
	}
}

// TestCommandLineArgs checks the understood arguments under their
// canonical names, as written on the line.
func TestCommandLineArgs(t *testing.T) {
	m, err := ReadCommandLine("cmdline", strings.Fields("vllm serve m -tp 2 --pipeline_parallel_size 2 --quantization awq --no-enforce-eager --host 0.0.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range m.Args["worker"] {
		got[a.Flag] = a.Value
	}
	want := map[string]string{"--tensor-parallel-size": "2", "--pipeline-parallel-size": "2", "--quantization": "awq", "--enforce-eager": "false", "--host": "0.0.0.0"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}
