package manifest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/planfile"
)

// TestEverySpellingOfEveryFlag: each spelling of each engine flag kvplan
// reads (vLLM, SGLang and TensorRT-LLM, behind every entry point) changes
// what it should, checked against a value written here by hand. A mutation
// run left one survivor, SGLang's --tensor-parallel-size dropped, because
// only --tp was tested; TestSpellingsAllCovered keeps the table complete.

// spelling is one flag spelling given value (none for a switch), and what
// the plan must then say.
type spelling struct {
	flag, value string
	check       func(m *Manifest, p *planfile.Pool) string // "" when right, else what is wrong
}

func poolIs[T comparable](what string, got func(p *planfile.Pool) T, want T) func(*Manifest, *planfile.Pool) string {
	return func(_ *Manifest, p *planfile.Pool) string {
		if g := got(p); g != want {
			return fmt.Sprintf("%s %v, want %v", what, g, want)
		}
		return ""
	}
}

func planIs[T comparable](what string, got func(pl *planfile.Plan) T, want T) func(*Manifest, *planfile.Pool) string {
	return func(m *Manifest, _ *planfile.Pool) string {
		if g := got(m.Plan); g != want {
			return fmt.Sprintf("%s %v, want %v", what, g, want)
		}
		return ""
	}
}

func noted(text string) func(*Manifest, *planfile.Pool) string {
	return func(m *Manifest, _ *planfile.Pool) string {
		for _, n := range m.Notes {
			if strings.Contains(n.Text, text) {
				return ""
			}
		}
		return fmt.Sprintf("no note with %q", text)
	}
}

func argIs(flag, value string) func(*Manifest, *planfile.Pool) string {
	return func(m *Manifest, _ *planfile.Pool) string {
		for _, a := range m.Args["p"] {
			if a.Flag == flag && a.Value == value {
				return ""
			}
		}
		return fmt.Sprintf("Args %v lack %s %s", m.Args["p"], flag, value)
	}
}

func both(a, b func(*Manifest, *planfile.Pool) string) func(*Manifest, *planfile.Pool) string {
	return func(m *Manifest, p *planfile.Pool) string { return a(m, p) + b(m, p) }
}

var (
	tpIs2       = poolIs("tp", func(p *planfile.Pool) int { return p.TP }, 2)
	workersAre2 = poolIs("workers", func(p *planfile.Pool) int { return p.Workers }, 2)
	utilIs08    = poolIs("gpu_memory_utilization", func(p *planfile.Pool) float64 { return p.GPUMemoryUtilization }, 0.8)
	lenIs4096   = poolIs("max_model_len", func(p *planfile.Pool) int { return p.MaxModelLen }, 4096)
	eager       = poolIs("enforce_eager", func(p *planfile.Pool) bool { return p.EnforceEager }, true)
	seqsAre64   = poolIs("max_num_seqs", func(p *planfile.Pool) int { return p.MaxNumSeqs }, 64)
	batchIs2048 = poolIs("max_num_batched_tokens", func(p *planfile.Pool) int { return p.MaxNumBatchedTokens }, 2048)
	prefill     = poolIs("role", func(p *planfile.Pool) string { return p.Role }, planfile.RolePrefill)
	decode      = poolIs("role", func(p *planfile.Pool) string { return p.Role }, planfile.RoleDecode)
	blockIs32   = planIs("block size", func(pl *planfile.Plan) int { return pl.Router.BlockSize }, 32)
	kvFP8       = planIs("kv_dtype", func(pl *planfile.Plan) string { return pl.Model.KVDtype }, "fp8")
	weightsFP8  = planIs("weight_dtype", func(pl *planfile.Plan) string { return pl.Model.WeightDtype }, "fp8")
	weightsFP32 = planIs("weight_dtype", func(pl *planfile.Plan) string { return pl.Model.WeightDtype }, "fp32")
	modelIsM2   = planIs("model", func(pl *planfile.Plan) string { return pl.Model.Name }, "org/m2")
	pp2         = poolIs("pipeline_parallel_size", func(p *planfile.Pool) int { return p.PipelineParallelSize }, 2)
	ep2         = poolIs("expert_parallel_size", func(p *planfile.Pool) int { return p.ExpertParallelSize }, 2)
	dp2         = both(poolIs("data_parallel_size", func(p *planfile.Pool) int { return p.DataParallelSize }, 2),
		poolIs("workers", func(p *planfile.Pool) int { return p.Workers }, 1))
	redundant32 = poolIs("redundant_experts", func(p *planfile.Pool) int { return p.RedundantExperts }, 32)
	spec3       = both(poolIs("speculative_tokens", func(p *planfile.Pool) int { return p.SpeculativeTokens }, 3),
		both(poolIs("acceptance_length", func(p *planfile.Pool) float64 { return p.AcceptanceLength }, 1), noted("planned at an acceptance length of 1")))
	draftD    = poolIs("speculative_model", func(p *planfile.Pool) string { return p.SpeculativeModel }, "org/d")
	eplbOn    = poolIs("eplb", func(p *planfile.Pool) bool { return p.EPLB }, true)
	tboOn     = poolIs("two_batch_overlap", func(p *planfile.Pool) bool { return p.TwoBatchOverlap }, true)
	imageFile = noted("is a file inside the image, not read")
)

// The flags of vLLM's engine arguments, behind vllm serve and dynamo.vllm.
var vllmSpellings = []spelling{
	{"--model", "org/m2", modelIsM2},
	{"--tensor-parallel-size", "2", tpIs2}, {"-tp", "2", tpIs2},
	{"--pipeline-parallel-size", "2", both(pp2, argIs("--pipeline-parallel-size", "2"))}, {"-pp", "2", both(pp2, argIs("--pipeline-parallel-size", "2"))},
	// vLLM's data parallelism is one engine of tp × dp GPUs: one worker.
	{"--data-parallel-size", "2", dp2}, {"-dp", "2", dp2},
	// Alone (tp 1 × dp 1) it spreads the experts over 1 rank: the flag is
	// read, the layout unchanged.
	{"--enable-expert-parallel", "", argIs("--enable-expert-parallel", "true")}, {"-ep", "", argIs("--enable-expert-parallel", "true")},
	{"--num-redundant-experts", "32", redundant32},
	{"--eplb-config", `{"window_size":"1000","num_redundant_experts":"32"}`, redundant32},
	{"--enable-eplb", "", eplbOn},
	{"--enable-dbo", "", tboOn}, // vLLM's dual-batch overlap
	{"--gpu-memory-utilization", "0.8", utilIs08},
	{"--max-model-len", "4k", poolIs("max_model_len", func(p *planfile.Pool) int { return p.MaxModelLen }, 4000)},
	{"--enforce-eager", "", eager},
	{"--block-size", "32", blockIs32},
	{"--max-num-seqs", "64", seqsAre64},
	{"--max-num-batched-tokens", "2048", batchIs2048},
	{"--kv-cache-dtype", "fp8_e4m3", kvFP8},
	{"--quantization", "fp8", weightsFP8}, {"-q", "fp8", weightsFP8},
	{"--dtype", "float32", weightsFP32},
	// Prefix caching off silences the KV events the config turns on.
	{"--enable-prefix-caching", "", argIs("--enable-prefix-caching", "true")},
	{"--kv-transfer-config", `{"kv_connector":"NixlConnector","kv_role":"kv_producer","kv_buffer_device":"cpu"}`,
		both(prefill, poolIs("kv_buffer_device", func(p *planfile.Pool) string { return p.KVBufferDevice }, planfile.BufferCPU))},
	{"--kv-events-config", `{"publisher":"zmq"}`, noted(`--kv-events-config without "enable_kv_cache_events": true publishes nothing`)},
	{"--kv-offloading-size", "8", poolIs("cpu_offload_cache", func(p *planfile.Pool) string { return p.CPUOffloadCache }, "8Gi")},
	{"--config", "/etc/engine.yaml", imageFile},
	{"--disable-hybrid-kv-cache-manager", "", noted("keeps every layer's KV for the whole context")},
	{"--speculative-config", `{"method":"eagle","model":"org/d","num_speculative_tokens":3}`, both(spec3, draftD)},
	{"--kv-cache-memory-bytes", "8000000000", noted("--kv-cache-memory-bytes 8000000000 is not modelled")},
	{"--cpu-offload-gb", "4", noted("--cpu-offload-gb 4 is not modelled")},
	{"--swap-space", "4", noted("--swap-space 4 is not modelled")},
}

// Dynamo's worker flags, behind every python -m dynamo.* entry point.
var dynamoSpellings = []spelling{
	{"--connector", "kvbm", poolIs("cpu_offload_cache", func(p *planfile.Pool) string { return p.CPUOffloadCache }, "100G")}, // DYN_KVBM_CPU_CACHE_GB=100 in the env
}

var dynamoVLLMSpellings = []spelling{
	{"--is-prefill-worker", "", prefill},
	{"--is-decode-worker", "", decode},
	{"--disaggregation-mode", "prefill", prefill},
}

// SGLang's server arguments (python/sglang/srt/server_args.py), behind
// sglang.launch_server and dynamo.sglang.
var sglangSpellings = []spelling{
	{"--model-path", "org/m2", modelIsM2}, {"--model", "org/m2", modelIsM2},
	{"--tp-size", "2", tpIs2}, {"--tp", "2", tpIs2}, {"--tensor-parallel-size", "2", tpIs2},
	{"--dp-size", "2", workersAre2}, {"--dp", "2", workersAre2}, {"--data-parallel-size", "2", workersAre2},
	{"--pp-size", "2", pp2}, {"--pp", "2", pp2}, {"--pipeline-parallel-size", "2", pp2},
	{"--ep-size", "2", ep2}, {"--ep", "2", ep2}, {"--expert-parallel-size", "2", ep2},
	{"--enable-dp-attention", "", argIs("--enable-dp-attention", "true")},
	{"--moe-a2a-backend", "deepep", noted("--moe-a2a-backend deepep: SGLang spreads the experts over all 1 ranks")},
	{"--ep-num-redundant-experts", "32", redundant32},
	{"--enable-eplb", "", eplbOn},
	{"--enable-two-batch-overlap", "", tboOn},
	{"--speculative-algorithm", "NEXTN", both(poolIs("speculative_tokens", func(p *planfile.Pool) int { return p.SpeculativeTokens }, 1), noted("--speculative-algorithm NEXTN without --speculative-num-steps"))},
	{"--speculative-num-steps", "3", spec3},
	{"--speculative-num-draft-tokens", "4", spec3}, // a chain of 3 drafted + the bonus position
	{"--speculative-draft-model-path", "org/d", draftD},
	{"--mem-fraction-static", "0.8", both(utilIs08, noted("SGLang's --mem-fraction-static is the fraction of GPU memory"))},
	{"--context-length", "4096", lenIs4096},
	{"--page-size", "32", blockIs32},
	{"--max-running-requests", "64", seqsAre64},
	{"--chunked-prefill-size", "2048", batchIs2048},
	{"--disable-cuda-graph", "", eager},
	{"--kv-cache-dtype", "fp8_e5m2", kvFP8},
	{"--quantization", "fp8", weightsFP8},
	{"--dtype", "float32", weightsFP32},
	{"--disaggregation-mode", "decode", decode},
	{"--kv-events-config", `{"enable_kv_cache_events":true}`, noted(`--kv-events-config without "publisher": "zmq" publishes nothing`)},
	{"--disable-radix-cache", "", argIs("--disable-radix-cache", "true")},
	{"--enable-hierarchical-cache", "", noted("--enable-hierarchical-cache")},
	{"--hicache-size", "64", noted("--hicache-size 64 is not modelled")},
	{"--hicache-ratio", "2", noted("--hicache-ratio 2 is not modelled")},
	{"--max-total-tokens", "100000", noted("--max-total-tokens 100000 is not modelled")},
}

// Dynamo's TensorRT-LLM worker (components/src/dynamo/trtllm/backend_args.py).
var dynamoTRTLLMSpellings = []spelling{
	{"--model", "org/m2", modelIsM2}, {"--model-path", "org/m2", modelIsM2},
	{"--tensor-parallel-size", "2", tpIs2},
	{"--pipeline-parallel-size", "2", pp2},
	{"--expert-parallel-size", "2", ep2},
	{"--enable-attention-dp", "", argIs("--enable-attention-dp", "true")},
	{"--kv-block-size", "32", blockIs32},
	{"--max-batch-size", "64", seqsAre64},
	{"--max-num-tokens", "2048", batchIs2048},
	{"--max-seq-len", "4096", lenIs4096},
	{"--free-gpu-memory-fraction", "0.8", both(utilIs08, noted("TensorRT-LLM's --free-gpu-memory-fraction"))},
	{"--extra-engine-args", "/etc/engine.yaml", imageFile},
	{"--override-engine-args", "{}", noted("--override-engine-args is not read")},
	{"--publish-kv-events", "", argIs("--publish-kv-events", "true")}, {"--publish-events-and-metrics", "", argIs("--publish-kv-events", "true")},
	{"--disaggregation-mode", "prefill", prefill},
}

// trtllm-serve's click options: snake_case and kebab-case.
var trtllmServeSpellings = []spelling{
	{"--tp_size", "2", tpIs2}, {"--tp-size", "2", tpIs2},
	{"--pp_size", "2", pp2}, {"--pp-size", "2", pp2},
	{"--ep_size", "2", ep2}, {"--ep-size", "2", ep2},
	{"--max_batch_size", "64", seqsAre64}, {"--max-batch-size", "64", seqsAre64},
	{"--max_num_tokens", "2048", batchIs2048}, {"--max-num-tokens", "2048", batchIs2048},
	{"--max_seq_len", "4096", lenIs4096}, {"--max-seq-len", "4096", lenIs4096},
	{"--kv_cache_free_gpu_memory_fraction", "0.8", utilIs08}, {"--kv-cache-free-gpu-memory-fraction", "0.8", utilIs08},
	{"--extra_llm_api_options", "/etc/x.yaml", imageFile}, {"--extra-llm-api-options", "/etc/x.yaml", imageFile}, {"--config", "/etc/x.yaml", imageFile},
}

// entryPoints: each grammar, how a command line starts it, and its table.
var entryPoints = []struct {
	grammar   func() *engineArgs
	start     []string
	spellings [][]spelling
}{
	{vllmServe, []string{"vllm", "serve", "org/m"}, [][]spelling{vllmSpellings}},
	{dynamoVLLM, []string{"python3", "-m", "dynamo.vllm", "--model", "org/m"}, [][]spelling{vllmSpellings, dynamoSpellings, dynamoVLLMSpellings}},
	{sglangLaunch, []string{"python3", "-m", "sglang.launch_server", "--model-path", "org/m"}, [][]spelling{sglangSpellings}},
	{dynamoSGLang, []string{"python3", "-m", "dynamo.sglang", "--model-path", "org/m"}, [][]spelling{sglangSpellings, dynamoSpellings}},
	{dynamoTRTLLM, []string{"python3", "-m", "dynamo.trtllm", "--model-path", "org/m"}, [][]spelling{dynamoTRTLLMSpellings, dynamoSpellings}},
	{trtllmServe, []string{"trtllm-serve", "org/m"}, [][]spelling{trtllmServeSpellings}},
}

func TestEverySpellingOfEveryFlag(t *testing.T) {
	for _, ep := range entryPoints {
		for _, table := range ep.spellings {
			for _, sp := range table {
				argv := append(append([]string{}, ep.start...), sp.flag)
				if sp.value != "" {
					argv = append(argv, sp.value)
				}
				cmd, _ := json.Marshal(argv)
				data := "kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - command: " + string(cmd) +
					"\n      env:\n        - name: DYN_KVBM_CPU_CACHE_GB\n          value: \"100\"\n"
				m, err := Read("p.yaml", []byte(data))
				if err != nil {
					t.Errorf("%s %s: %v", ep.grammar().name, sp.flag, err)
					continue
				}
				for _, f := range m.Findings {
					if f.ID == IDNotUnderstood || f.ID == IDBadValue {
						t.Errorf("%s %s %s: %s", ep.grammar().name, sp.flag, sp.value, f.Message)
					}
				}
				if msg := sp.check(m, m.Plan.Pools["p"]); msg != "" {
					t.Errorf("%s %s %s: %s", ep.grammar().name, sp.flag, sp.value, msg)
				}
			}
		}
	}
}

// TestSpellingsAllCovered: every spelling of every flag a grammar applies
// (or notes) has a case in its entry point's table, so a spelling added
// without a test, or a table that loses one, fails here.
func TestSpellingsAllCovered(t *testing.T) {
	for _, ep := range entryPoints {
		g := ep.grammar()
		tested := map[string]bool{}
		for _, table := range ep.spellings {
			for _, sp := range table {
				tested[sp.flag] = true
			}
		}
		for _, f := range g.flags {
			if f.apply == nil && f.sub == nil {
				continue // understood, changes nothing kvplan plans
			}
			for _, n := range f.names {
				if !tested[n] {
					t.Errorf("%s: no case for %s", g.name, n)
				}
			}
		}
	}
}
