package planfile

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestLoadExample(t *testing.T) {
	p, err := Load(filepath.Join("..", "examples", "disagg-1gbe-no-events.toml"))
	if err != nil {
		t.Fatal(err)
	}
	pre, dec := p.Pools["prefill"], p.Pools["decode"]
	checks := []struct {
		name      string
		got, want any
	}{
		{"model", p.Model.Name, "qwen3-0.6b"},
		{"tp", p.Model.TP, 1},
		{"input", p.Workload.InputTokens, 2371},
		{"concurrency", p.Workload.Concurrency, 16},
		{"prefill role", pre.Role, RolePrefill},
		{"pool name", pre.Name, "prefill"},
		{"memory limit", pre.MemoryLimitBytes, int64(3584 << 20)},
		{"buffer", pre.KVBufferDevice, BufferCPU},
		{"util", pre.GPUMemoryUtilization, 0.38},
		{"decode no limit", dec.MemoryLimitBytes, int64(0)},
		{"link", p.Link.Name, "1gbe"},
		{"router", p.Router.Mode, RouterKV},
		{"events", p.Router.KVEventsEnabled(), false},
		{"block", p.Router.BlockSize, 16},
		{"tls", strings.Join(p.Transport.UCXTLS, ","), "tcp,self"},
		{"cuda", p.Runtime.CUDA, "12.9"},
		{"slo", p.SLO.TTFTMS, 500.0},
		{"disagg", p.Disaggregated(), true},
		{"pools sorted", strings.Join(p.PoolNames(), ","), "decode,prefill"},
		{"path", p.Path, filepath.Join("..", "examples", "disagg-1gbe-no-events.toml")},
		// lines of fields, for SARIF and GitHub annotations
		{"line memory_limit", p.Line("pools.prefill.memory_limit"), 36},
		{"line kv_events", p.Line("router.kv_events"), 52},
		{"line ucx_tls", p.Line("transport.ucx_tls"), 56},
		{"line absent key falls back to its table", p.Line("pools.decode.memory_limit"), 39},
		{"line absent table", p.Line("nothing.here"), 0},
		{"line table", p.Line("link"), 47},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	p, err := Parse("mem.toml", []byte(`
[model]
config = "models/config.json"
[workload]
input_tokens = 10
[pools.a]
role = "aggregated"
gpu = "l4"
`))
	if err != nil {
		t.Fatal(err)
	}
	a := p.Pools["a"]
	if p.Model.TP != 1 || p.Workload.Concurrency != 1 || a.Workers != 1 || a.GPUMemoryUtilization != 0 ||
		a.KVBufferDevice != BufferGPU || p.Router.Mode != RouterRoundRobin || !p.Router.KVEventsEnabled() || p.Router.BlockSize != 16 {
		// gpu_memory_utilization stays 0: the engine's default for its version applies in the planner.
		t.Errorf("defaults not applied: %+v %+v %+v", p, a, p.Router)
	}
	if p.ConfigPath() != filepath.Join("models", "config.json") {
		t.Errorf("config path %s", p.ConfigPath())
	}
	// dotted keys without a table header still locate
	p, err = Parse("dotted.toml", []byte("model.name = \"x\"\nworkload.input_tokens = 5\npools.a.role = \"aggregated\"\npools.a.gpu = \"l4\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l := p.Line("pools.a.gpu"); l != 4 {
		t.Errorf("dotted line %d", l)
	}
	if l := p.Line("pools.a.workers"); l != 3 {
		t.Errorf("dotted fallback line %d", l)
	}
}

func TestExamplesAndFixturesLoad(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "examples", "*.toml"))
	more, _ := filepath.Glob(filepath.Join("..", "testdata", "plans", "*.toml"))
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, ".expect.toml") {
			continue
		}
		if _, err := Load(f); err != nil {
			t.Errorf("%v", err)
		}
	}
	if len(files) < 2 || len(more) < 3 {
		t.Errorf("found %d examples and %d fixtures", len(files), len(more))
	}
}

// TestInvalid golden-tests the errors of invalid plans: file:line: field:
// message, with what would be accepted.
func TestInvalid(t *testing.T) {
	dir := filepath.Join("..", "testdata", "plans", "invalid")
	files, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".toml")
		t.Run(name, func(t *testing.T) {
			_, err := Load(f)
			if err == nil {
				t.Fatal("loaded an invalid plan")
			}
			got := strings.ReplaceAll(err.Error(), "../", "") + "\n"
			path := filepath.Join(dir, name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./planfile -update)", err)
			}
			if got != string(want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}
