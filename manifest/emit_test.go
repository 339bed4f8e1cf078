package manifest

import (
	goflag "flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/kvplan/kvplan/internal/goldenfile"
	"github.com/kvplan/kvplan/planfile"
)

var update = goflag.Bool("update", false, "rewrite golden files")

// emitPlans are the plans the emitters are tested on (testdata/emit), with
// the formats each engine's plan is written in.
var emitPlans = []struct {
	file    string
	formats []string
}{
	{"agg-vllm.toml", []string{EmitDynamo, EmitLLMD, EmitKServe, EmitVLLM}},
	{"disagg-vllm.toml", []string{EmitDynamo, EmitLLMD, EmitKServe, EmitVLLM}},
	{"agg-sglang.toml", []string{EmitDynamo, EmitSGLang}},
	{"disagg-sglang.toml", []string{EmitDynamo, EmitSGLang}},
	{"agg-trtllm.toml", []string{EmitDynamo, EmitTRTLLM}},
	{"disagg-trtllm.toml", []string{EmitDynamo, EmitTRTLLM}},
	// DeepSeek-style wide expert parallelism: workers of tp 1 × dp 16 with
	// the experts over all 16 ranks, two 8-GPU nodes each (Dynamo
	// multinode), EPLB's redundant experts and MTP.
	{"disagg-dep16-vllm.toml", []string{EmitDynamo, EmitLLMD}},
	{"agg-dep16-vllm.toml", []string{EmitDynamo, EmitLLMD}}, // llm-d: a LeaderWorkerSet
	{"disagg-dep16-sglang.toml", []string{EmitDynamo}},
}

func loadEmitPlan(t *testing.T, name string) *planfile.Plan {
	t.Helper()
	p, err := planfile.Load(filepath.Join("testdata", "emit", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// emitOpts are the options the tests emit with: the model's Hugging Face
// id and the catalog's defaults for Llama-3.1-70B (bf16 KV) and vLLM
// (block 16), and the engine version tagged on vLLM's image.
func emitOpts() EmitOptions {
	return EmitOptions{Model: "meta-llama/Llama-3.1-70B-Instruct", EngineVersion: "0.19.0", DefaultKVDtype: "bf16", DefaultBlockSize: 16,
		Header: []string{"Written by kvplan's tests."}, GPUProducts: map[string]string{"h100-sxm": testH100Label}}
}

// testH100Label is the label GPU feature discovery writes on an H100 SXM
// node: its NVML name NVIDIA H100 80GB HBM3 (vLLM's start-up logs print it
// as device_name=NVIDIA_H100_80GB_HBM3) with spaces as '-'.
const testH100Label = "NVIDIA-H100-80GB-HBM3"

func init() { // keep the fixture honest: the label is the device name GFD's way
	if strings.ReplaceAll("NVIDIA H100 80GB HBM3", " ", "-") != testH100Label {
		panic("testH100Label")
	}
}

func emitFile(t *testing.T, plan, format string) []byte {
	t.Helper()
	out, err := Emit(format, loadEmitPlan(t, plan), emitOpts())
	if err != nil {
		t.Fatalf("%s as %s: %v", plan, format, err)
	}
	return out
}

// goldenName is the golden file of a plan in a format.
func goldenName(plan, format string) string {
	ext := ".yaml"
	if format == EmitVLLM || format == EmitSGLang || format == EmitTRTLLM {
		ext = ".sh"
	}
	return strings.TrimSuffix(plan, ".toml") + "." + format + ext
}

// TestEmitGolden: every emitted file is byte-for-byte its golden (go test
// ./manifest -update rewrites them; read the diff), and emitting twice
// gives the same bytes.
func TestEmitGolden(t *testing.T) {
	for _, c := range emitPlans {
		for _, f := range c.formats {
			out := emitFile(t, c.file, f)
			if again := emitFile(t, c.file, f); string(again) != string(out) {
				t.Errorf("%s as %s: two runs differ", c.file, f)
			}
			if strings.HasSuffix(goldenName(c.file, f), ".sh") {
				if _, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(string(out)), goldenName(c.file, f)); err != nil {
					t.Errorf("%s as %s: not a POSIX shell script: %v", c.file, f, err)
				}
			}
			goldenfile.Check(t, filepath.Join("testdata", "emit", "golden", goldenName(c.file, f)), out, *update, "go test ./manifest -run EmitGolden -update", false)
		}
	}
}

// poolWant is what a pool of the plan file says, read from its TOML (the
// independent side of the round trip).
type poolWant struct {
	role                        string
	workers, tp                 int
	maxLen, batched, seqs       int
	util                        float64
	memory, buffer              string
	kvDtype, routerMode, model  string
	dp, ep, pp, redundant, spec int
	draft                       string
}

func wantPools(p *planfile.Plan) map[string]poolWant {
	out := map[string]poolWant{}
	for _, pl := range p.Pools {
		buf := pl.KVBufferDevice
		if buf == planfile.BufferGPU {
			buf = ""
		}
		out[pl.Role] = poolWant{role: pl.Role, workers: pl.Workers, tp: p.PoolTP(pl), maxLen: pl.MaxModelLen, batched: pl.MaxNumBatchedTokens,
			seqs: pl.MaxNumSeqs, util: pl.GPUMemoryUtilization, memory: pl.MemoryLimit, buffer: buf,
			dp: pl.DataParallelSize, ep: pl.ExpertParallelSize, pp: pl.PipelineParallelSize, redundant: pl.RedundantExperts,
			spec: pl.SpeculativeTokens, draft: pl.SpeculativeModel}
	}
	return out
}

func gotPool(m *Manifest, pl *planfile.Pool) poolWant {
	return poolWant{role: pl.Role, workers: pl.Workers, tp: pl.TP, maxLen: pl.MaxModelLen, batched: pl.MaxNumBatchedTokens,
		seqs: pl.MaxNumSeqs, util: pl.GPUMemoryUtilization, memory: pl.MemoryLimit, buffer: pl.KVBufferDevice,
		dp: pl.DataParallelSize, ep: pl.ExpertParallelSize, pp: pl.PipelineParallelSize, redundant: pl.RedundantExperts,
		spec: pl.SpeculativeTokens, draft: pl.SpeculativeModel}
}

// TestEmitRoundTrip: the reader reads every emitted manifest back into the
// plan's pools (role, workers, tp, the engine limits, the memory limit,
// the KV buffer), the model, the KV dtype, the router and the engine, with
// no finding at all: no argument it does not understand, no value that does
// not parse, no GPU count that does not match the parallelism.
func TestEmitRoundTrip(t *testing.T) {
	for _, c := range emitPlans {
		plan := loadEmitPlan(t, c.file)
		for _, f := range c.formats {
			if f == EmitVLLM || f == EmitSGLang || f == EmitTRTLLM {
				continue // TestEmitScriptRoundTrip
			}
			out := emitFile(t, c.file, f)
			name := goldenName(c.file, f)
			m, err := Read(name, out)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, fd := range m.Findings {
				t.Errorf("%s: finding %s at %s: %s", name, fd.ID, fd.At, fd.Message)
			}
			want := wantPools(plan)
			if len(m.Plan.Pools) != len(want) {
				t.Errorf("%s: %d pools read back, want %d", name, len(m.Plan.Pools), len(want))
			}
			for _, pl := range m.Plan.Pools {
				w, ok := want[pl.Role]
				if !ok {
					t.Errorf("%s: pool %s of role %s is not in the plan", name, pl.Name, pl.Role)
					continue
				}
				if g := gotPool(m, pl); g != w {
					t.Errorf("%s: pool %s read back as\n %+v\nwant\n %+v", name, pl.Name, g, w)
				}
				if pl.GPU != testH100Label {
					t.Errorf("%s: pool %s reads its GPU as %q from the node selector, want %s", name, pl.Name, pl.GPU, testH100Label)
				}
			}
			if got := m.Plan.Model.Name; got != "meta-llama/Llama-3.1-70B-Instruct" {
				t.Errorf("%s: model %q", name, got)
			}
			wantKV := plan.Model.KVDtype
			if wantKV == "bf16" {
				wantKV = "" // the model's own: no argument, so the reader reads none
			}
			if got := m.Plan.Model.KVDtype; got != wantKV {
				t.Errorf("%s: kv_dtype %q, want %q", name, got, wantKV)
			}
			if got, want := m.Plan.Runtime.Engine, plan.Runtime.Engine; got != want {
				t.Errorf("%s: engine %q, want %q", name, got, want)
			}
			wantMode := plan.Router.Mode
			if f == EmitLLMD {
				wantMode = planfile.RouterRoundRobin // llm-d's EPP is deployed apart: the reader says so and plans round-robin
			}
			if got := m.Plan.Router.Mode; got != wantMode {
				t.Errorf("%s: router %q, want %q", name, got, wantMode)
			}
			if f == EmitDynamo && plan.Router.Mode == planfile.RouterKV {
				if ev := m.Plan.Router.KVEvents; ev == nil || !*ev {
					t.Errorf("%s: a KV router whose workers publish no KV events", name)
				}
			}
			if f == EmitDynamo || f == EmitKServe || f == EmitLLMD {
				if got, want := strings.Join(m.Plan.Transport.UCXTLS, ","), strings.Join(plan.Transport.UCXTLS, ","); got != want {
					t.Errorf("%s: ucx_tls %q, want %q", name, got, want)
				}
			}
			if (f == EmitLLMD) && m.Plan.Runtime.EngineVersion != "0.19" && m.Plan.Runtime.EngineVersion != "0.19.0" {
				t.Errorf("%s: engine version %q read back from the image, want 0.19.0", name, m.Plan.Runtime.EngineVersion)
			}
		}
	}
}

var engineLine = regexp.MustCompile(`(?m)^  # \S+ worker \d+ of \d+ \((\w+), tp \d+\)\n  (CUDA_VISIBLE_DEVICES=.*) &$`)

// scriptLines are the engine command lines of an emitted script.
func scriptLines(script []byte) []string {
	var out []string
	for _, m := range engineLine.FindAllStringSubmatch(string(script), -1) {
		out = append(out, m[2])
	}
	return out
}

// scriptRoles are the roles the script's comments give its lines.
func scriptRoles(script []byte) []string {
	var out []string
	for _, m := range engineLine.FindAllStringSubmatch(string(script), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestEmitScriptRoundTrip: every engine line of an emitted script is read
// by the reader's grammar of its entry point (vllm serve,
// sglang.launch_server, trtllm-serve) with no finding, and the lines of
// each role are the pool's workers, each with the pool's tp and limits.
func TestEmitScriptRoundTrip(t *testing.T) {
	for _, c := range emitPlans {
		plan := loadEmitPlan(t, c.file)
		for _, f := range c.formats {
			if f != EmitVLLM && f != EmitSGLang && f != EmitTRTLLM {
				continue
			}
			out := emitFile(t, c.file, f)
			name := goldenName(c.file, f)
			lines, roles := scriptLines(out), scriptRoles(out)
			want := wantPools(plan)
			count := map[string]int{}
			for i, line := range lines {
				m, err := ReadCommandString(name, line)
				if err != nil {
					t.Fatalf("%s line %d: %v", name, i+1, err)
				}
				for _, fd := range m.Findings {
					t.Errorf("%s line %d: finding %s: %s", name, i+1, fd.ID, fd.Message)
				}
				pl := m.Plan.Pools["worker"]
				if pl == nil {
					t.Fatalf("%s line %d: no worker read", name, i+1)
				}
				g := gotPool(m, pl)
				g.workers = 0
				g.memory = "" // a script sets no container limit
				if f == EmitTRTLLM && g.role == planfile.RoleAggregated {
					// trtllm-serve has no role argument: trtllm-serve
					// disaggregated makes a worker a context (prefill) or
					// generation (decode) server from its configuration.
					g.role = roles[i]
				}
				if g.role != roles[i] {
					t.Errorf("%s line %d: role %s, the script says %s", name, i+1, g.role, roles[i])
				}
				w := want[g.role]
				w.workers, w.memory = 0, ""
				if g != w {
					t.Errorf("%s line %d read back as\n %+v\nwant\n %+v", name, i+1, g, w)
				}
				count[g.role]++
			}
			for role, w := range want {
				if count[role] != w.workers {
					t.Errorf("%s: %d %s lines, want %d workers", name, count[role], role, w.workers)
				}
			}
		}
	}
}

// TestEmitRefuses: a plan an emitter cannot carry is an EmitError naming
// what it cannot write, never a file without the setting.
func TestEmitRefuses(t *testing.T) {
	cases := []struct {
		plan, format, edit, want string
	}{
		{"agg-trtllm.toml", EmitDynamo, `kv_dtype = "fp8"`, "has no argument that sets the KV cache to fp8"},
		{"disagg-vllm.toml", EmitSGLang, "", "writes sglang command lines, but the plan runs vllm"},
		{"agg-sglang.toml", EmitKServe, "", "runs vllm serve, but the plan runs sglang"},
		{"agg-sglang.toml", EmitLLMD, "", "runs vllm serve, but the plan runs sglang"},
		{"agg-vllm.toml", "helm", "", `unknown format "helm"`},
		{"agg-vllm.toml", "dynamoo", "", "did you mean dynamo?"},
	}
	for _, c := range cases {
		p := loadEmitPlan(t, c.plan)
		if c.edit != "" {
			data, err := os.ReadFile(filepath.Join("testdata", "emit", c.plan))
			if err != nil {
				t.Fatal(err)
			}
			s := strings.Replace(string(data), `kv_dtype = "bf16"`, c.edit, 1)
			if p, err = planfile.Parse(c.plan, []byte(s)); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Emit(c.format, p, emitOpts())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s as %s: error %v, want it to say %q", c.plan, c.format, err, c.want)
		}
		if _, ok := err.(*EmitError); err != nil && !ok {
			t.Errorf("%s as %s: %T is not an EmitError", c.plan, c.format, err)
		}
	}
}

// TestEmitPlacesWorkersOnNodes: a script puts workers on nodes of 8 GPUs,
// a worker's ranks on one node: 10 workers of tp 4 on 5 nodes, two each.
func TestEmitPlacesWorkersOnNodes(t *testing.T) {
	out := string(emitFile(t, "agg-vllm.toml", EmitVLLM))
	for n := 0; n < 5; n++ {
		block := out[strings.Index(out, "\n"+string(rune('0'+n))+")\n"):]
		block = block[:strings.Index(block, ";;")]
		got := scriptLines([]byte(block))
		sort.Strings(got)
		if len(got) != 2 || !strings.HasPrefix(got[0], "CUDA_VISIBLE_DEVICES=0,1,2,3 ") || !strings.HasPrefix(got[1], "CUDA_VISIBLE_DEVICES=4,5,6,7 ") {
			t.Errorf("node %d runs %q, want GPUs 0-3 and 4-7", n, got)
		}
	}
	if strings.Contains(out, "\n5)\n") {
		t.Errorf("a sixth node for 40 GPUs on nodes of 8")
	}
}

// TestEmitWithoutGPULabel: a GPU kvplan knows no node label for gets no
// node selector, and the header says how to place the pods.
func TestEmitWithoutGPULabel(t *testing.T) {
	o := emitOpts()
	o.GPUProducts = nil
	for _, f := range []string{EmitDynamo, EmitLLMD, EmitKServe} {
		out, err := Emit(f, loadEmitPlan(t, "disagg-vllm.toml"), o)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "nodeSelector") {
			t.Errorf("%s: a node selector with no label known", f)
		}
		if !strings.Contains(string(out), "# No node selector for h100-sxm: kvplan knows no nvidia.com/gpu.product value for it") {
			t.Errorf("%s: the header does not say the pods have no node selector:\n%s", f, out)
		}
		m, err := Read("x.yaml", out)
		if err != nil {
			t.Fatal(err)
		}
		for _, pl := range m.Plan.Pools {
			if pl.GPU != "" {
				t.Errorf("%s: pool %s reads GPU %q", f, pl.Name, pl.GPU)
			}
		}
	}
}
