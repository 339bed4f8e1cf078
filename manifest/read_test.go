package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/planfile"
)

const dir = "../testdata/manifests"

func read(t *testing.T, name string) *Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Read(name, data)
	if err != nil {
		t.Fatalf("Read(%s): %v", name, err)
	}
	return m
}

// want is one expected value of a plan read from a manifest, and the
// line:col it must come from ("" when no place is expected). Every value
// and place below was read off the manifest by hand (cat -n), not from the
// reader's output.
type want struct {
	field string
	value any
	at    string
}

func planValue(p *planfile.Plan, field string) any {
	for _, fv := range p.Values(func(string) bool { return true }) {
		if fv.Field == field {
			return fv.Value
		}
	}
	return nil
}

func TestReadSharedManifests(t *testing.T) {
	cases := []struct {
		file  string
		kinds string
		want  []want
	}{
		{"dynamo/vllm_agg_router.yaml", "DynamoGraphDeployment vllm-agg-router", []want{
			{"model.name", "Qwen/Qwen3-0.6B", "36:15"},
			{"runtime.engine", "vllm", "31:13"},
			{"pools.VllmDecodeWorker.role", "aggregated", ""}, // no flag: aggregated
			{"pools.VllmDecodeWorker.workers", 2, "22:17"},
			{"router.mode", "kv", "18:18"}, // DYN_ROUTER_MODE on the Frontend
			// no --kv-events-config: the worker publishes nothing; the place is its args
			{"router.kv_events", false, "35:13"},
		}},
		{"dynamo/vllm_disagg_router.yaml", "DynamoGraphDeployment vllm-v1-disagg-router", []want{
			{"pools.VllmDecodeWorker.role", "decode", "37:15"},   // --is-decode-worker
			{"pools.VllmPrefillWorker.role", "prefill", "56:15"}, // --is-prefill-worker
			{"pools.VllmPrefillWorker.workers", 2, "41:17"},
			{"router.kv_events", false, "54:13"}, // the prefill worker's args
		}},
		{"dynamo/vllm_disagg_multinode.yaml", "DynamoGraphDeployment vllm-disagg", []want{
			{"pools.decode.role", "decode", "24:5"}, // no flag, but the graph has a prefill worker: the service
			{"pools.decode.tp", 2, "45:16"},         // "2": the text after the quote
			{"pools.prefill.role", "prefill", "66:15"},
			{"pools.prefill.tp", 2, "68:16"},
			{"router.mode", "round-robin", "10:5"}, // the Frontend sets none: Dynamo's default, at the Frontend
		}},
		{"dynamo/sglang_agg_router.yaml", "DynamoGraphDeployment sglang-agg-router", []want{
			{"model.name", "Qwen/Qwen3-0.6B", "40:15"}, // --model-path
			{"runtime.engine", "sglang", "35:13"},
			{"pools.decode.role", "aggregated", ""}, // no --disaggregation-mode
			{"pools.decode.tp", 1, "46:16"},         // --tp "1"
			{"router.block_size", 16, "44:16"},      // --page-size "16"
			{"router.kv_events", true, "50:16"},     // --kv-events-config with a zmq publisher
		}},
		{"dynamo/trtllm_disagg_router.yaml", "DynamoGraphDeployment trtllm-v1-disagg-router", []want{
			{"runtime.engine", "trtllm", "56:13"},                  // the first pool by name, TRTLLMDecodeWorker
			{"pools.TRTLLMPrefillWorker.role", "prefill", "42:15"}, // --disaggregation-mode prefill
			{"pools.TRTLLMDecodeWorker.role", "decode", "67:15"},
			{"router.kv_events", true, "43:15"}, // --publish-events-and-metrics
			{"router.block_size", 32, "60:13"},  // dynamo.trtllm's --kv-block-size default, at its args
		}},
		// Dynamo's DeepSeek-R1 recipe on two H100 nodes per worker: vLLM
		// --tensor-parallel-size 1 --data-parallel-size 16
		// --enable-expert-parallel is one worker of 16 GPUs, EP = tp × dp.
		{"dynamo/vllm_dsr1_dep16_hopper.yaml", "DynamoGraphDeployment vllm-dsr1", []want{
			{"pools.decode.role", "decode", "29:25"}, // subComponentType
			{"pools.decode.workers", 1, "30:17"},
			{"pools.decode.tp", 1, "77:40"},
			{"pools.decode.data_parallel_size", 16, "78:38"},
			{"pools.decode.expert_parallel_size", 16, "79:17"}, // --enable-expert-parallel
			{"pools.decode.redundant_experts", 32, "85:31"},    // --eplb-config's "32"
			{"pools.prefill.data_parallel_size", 16, "138:38"},
			{"pools.prefill.expert_parallel_size", 16, "139:17"},
		}},
		// Dynamo's SGLang DeepSeek-R1 16-GPU recipe: the decode worker's --tp 8
		// --dp 8 --enable-dp-attention is 8 attention ranks of tp 1 on the
		// pod's 8 GPUs (not 64: SGLang's tp-size counts every GPU), --ep-size 8.
		{"dynamo/sglang_dsr1_16gpu.yaml", "DynamoGraphDeployment sgl-dsr1-16gpu", []want{
			{"pools.decode.workers", 1, "30:17"},
			{"pools.decode.tp", 1, "60:16"},
			{"pools.decode.data_parallel_size", 8, "63:15"}, // --enable-dp-attention
			{"pools.decode.expert_parallel_size", 8, "65:16"},
			{"pools.prefill.tp", 8, "110:16"},
			{"pools.prefill.data_parallel_size", nil, ""},
			{"pools.prefill.expert_parallel_size", 8, "112:16"},
		}},
		// Written for these tests: KServe's spec.parallelism {tensor 1,
		// data 8, expert true} on one 8-GPU pod.
		{"bad/kserve-expert-parallel.yaml", "LLMInferenceService dsv3-dep8", []want{
			{"pools.main.tp", 1, "13:13"},
			{"pools.main.data_parallel_size", 8, "14:11"},
			{"pools.main.expert_parallel_size", 8, "15:13"}, // expert: true is EP = tp × data
		}},
		{"kserve/llmisvc_pd_qwen2-7b-gpu.yaml", "LLMInferenceService qwen2-7b-instruct-pd", []want{
			{"model.name", "Qwen/Qwen2.5-7B-Instruct", "12:10"}, // spec.model.uri without hf://
			{"pools.decode.role", "decode", "8:1"},              // the top level: spec
			{"pools.decode.workers", 1, "10:13"},
			{"pools.decode.memory_limit", "32Gi", "55:21"},
			{"pools.prefill.role", "prefill", "72:3"}, // spec.prefill
			{"pools.prefill.workers", 2, "74:15"},
			{"pools.prefill.memory_limit", "32Gi", "108:23"},
			{"transport.ucx_tls", []string{"rc", "sm", "self", "cuda_copy", "cuda_ipc"}, "51:21"},
			{"router.mode", "kv", "17:5"}, // spec.router.scheduler
		}},
		{"llm-d/llm-d_guides_pd-disaggregation_gpu_vllm_disaggregatedset.yaml", "DisaggregatedSet pd-disagg-vllm", []want{
			{"model.name", "openai/gpt-oss-120b", "196:24"},
			{"pools.prefill.role", "prefill", "32:13"},
			{"pools.prefill.workers", 8, "34:19"}, // slices 2 × replicas 4
			{"pools.prefill.tp", 1, "61:47"},      // --tensor-parallel-size=1
			{"pools.prefill.memory_limit", "16Gi", "99:31"},
			{"pools.prefill.kv_buffer_device", "gpu", "67:24"}, // kv_buffer_device cuda
			{"pools.decode.workers", 2, "150:19"},              // slices 2 × replicas 1
			{"pools.decode.tp", 4, "198:47"},
			{"pools.decode.memory_limit", "64Gi", "232:31"},
			{"router.block_size", 128, "199:37"}, // --block-size=128 (decode sorts first)
			{"router.mode", "round-robin", ""},   // the EPP is not in this manifest
		}},
		// llm-d's wide-EP guide: a leader/worker group of 2 pods of 8 GPUs a
		// worker, the script's --data-parallel-size $((LWS_GROUP_SIZE *
		// DP_SIZE_LOCAL)) from the variables LeaderWorkerSet sets in every pod.
		{"llm-d/llm-d_wide-ep-lws_vllm-deepseek-r1-0528_excerpt.yaml", "DisaggregatedSet wide-ep-lws-nvidia-gpu-vllm", []want{
			{"model.name", "deepseek-ai/DeepSeek-R1-0528", "108:19"}, // decode sorts first
			{"pools.prefill.role", "prefill", "11:11"},
			{"pools.prefill.workers", 1, "13:17"},
			{"pools.prefill.tp", 1, "48:42"},                    // $TP_SIZE
			{"pools.prefill.data_parallel_size", 16, "49:40"},   // 2 × 8
			{"pools.prefill.expert_parallel_size", 16, "47:19"}, // --enable-expert-parallel: tp × dp
			{"pools.prefill.gpu_memory_utilization", 0.8, "43:44"},
			{"pools.decode.data_parallel_size", 16, "117:40"},
			{"pools.decode.max_num_seqs", 256, "116:34"},       // ${MAX_TOKENS}
			{"pools.decode.two_batch_overlap", true, "125:19"}, // --enable-dbo
		}},
		{"vllm-production-stack/values-16-disagg-prefill.yaml", "vLLM production-stack values", []want{
			{"model.name", "meta-llama/Llama-3.1-8B-Instruct", "40:18"},
			{"pools.llama-prefill.role", "prefill", "23:18"}, // kvRole kv_producer
			{"pools.llama-decode.role", "decode", "52:18"},   // kvRole kv_consumer
			{"pools.llama-prefill.max_model_len", 32000, "19:22"},
			{"pools.llama-prefill.kv_buffer_device", "gpu", "29:28"},                 // nixlBufferDevice "cuda": the text after the quote
			{"pools.llama-prefill.cpu_offload_cache", nil, ""},                       // cpuOffloadingBufferSize 0
			{"pools.llama-prefill.memory_limit", nil, ""},                            // requestMemory only
			{"transport.ucx_tls", []string{"cuda_ipc", "cuda_copy", "tcp"}, "60:19"}, // the chart's for enablePD; llama-decode sorts first
			{"router.mode", "round-robin", "75:18"},                                  // disaggregated_prefill
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m := read(t, c.file)
			if got := strings.Join(m.Kinds, ", "); got != c.kinds {
				t.Errorf("kinds %q, want %q", got, c.kinds)
			}
			for _, w := range c.want {
				got := planValue(m.Plan, w.field)
				if w.value == nil {
					if got != nil && got != "" && got != 0 {
						t.Errorf("%s = %v, want unset", w.field, got)
					}
					continue
				}
				if !equal(got, w.value) {
					t.Errorf("%s = %#v, want %#v", w.field, got, w.value)
				}
				at := ""
				if m.Plan.Has(w.field) {
					at = m.Plan.Pos(w.field).String()
				}
				wantAt := ""
				if w.at != "" {
					wantAt = c.file + ":" + w.at
				}
				if at != wantAt {
					t.Errorf("%s at %q, want %q", w.field, at, wantAt)
				}
			}
			for _, f := range m.Findings {
				if f.Severity == Deny {
					t.Errorf("unexpected deny finding in a published manifest: %s %s", f.At, f.Message)
				}
			}
		})
	}
}

func equal(a, b any) bool {
	as, aok := a.([]string)
	bs, bok := b.([]string)
	if aok || bok {
		return aok && bok && strings.Join(as, ",") == strings.Join(bs, ",")
	}
	return a == b
}

// TestArgumentForms: argparse's forms and the places of their values: a
// `sh -c` literal block with $VAR from env, --flag=value, --flag value,
// JSON values, a dotted JSON key, vLLM's underscores, -tp, a value that
// does not parse, an argument kvplan does not know, and a GPU named by a
// node selector and by node affinity.
func TestArgumentForms(t *testing.T) {
	cases := []struct {
		file string
		want []want
	}{
		{"forms/shell.yaml", []want{
			{"model.name", "Qwen/Qwen3-8B", "28:31"},                   // $MODEL from env, at the $ in the script
			{"pools.vllm-shell.tp", 2, "29:40"},                        // --tensor-parallel-size=2: 16 spaces + 23 characters
			{"pools.vllm-shell.gpu_memory_utilization", 0.85, "30:42"}, // 16 spaces, 24-character flag, space
			{"pools.vllm-shell.max_model_len", 32000, "30:63"},         // 32k = 32 × 1000
			{"pools.vllm-shell.kv_buffer_device", "cpu", "31:38"},      // the dotted key sets it; the place is the JSON's
			{"pools.vllm-shell.workers", 3, "16:13"},
			{"pools.vllm-shell.gpu", "NVIDIA-H100-80GB-HBM3", "20:33"},
			{"pools.vllm-shell.memory_limit", "48Gi", "39:23"},
			{"runtime.engine_version", "0.19.0", "23:18"},
		}},
		{"forms/args.yaml", []want{
			{"model.name", "Qwen/Qwen3-0.6B", "18:15"},
			{"pools.vllm-pod.max_model_len", 4096, "18:50"}, // --max_model_len=4096
			{"pools.vllm-pod.tp", 1, "18:65"},               // -tp 1
			{"pools.vllm-pod.enforce_eager", true, "18:70"},
			{"pools.vllm-pod.max_num_seqs", nil, ""},     // two: a finding, left to the engine's default
			{"pools.vllm-pod.gpu", "nvidia-l4", "14:26"}, // node affinity values
		}},
		{"forms/kvbm.yaml", []want{
			{"pools.prefill.cpu_offload_cache", "100G", "24:19"}, // DYN_KVBM_CPU_CACHE_GB with a KVBM connector
			{"pools.prefill.gpu_memory_utilization", 0.23, "35:16"},
			{"pools.prefill.memory_limit", "64Gi", "21:19"},
			{"router.kv_events", true, "41:16"},
			{"pools.decode.role", "decode", "51:42"},
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m := read(t, c.file)
			for _, w := range c.want {
				got := planValue(m.Plan, w.field)
				if w.value == nil {
					if m.Plan.Has(w.field) {
						t.Errorf("%s = %v, want unset", w.field, got)
					}
					continue
				}
				if !equal(got, w.value) {
					t.Errorf("%s = %#v, want %#v", w.field, got, w.value)
				}
				if at := m.Plan.Pos(w.field).String(); at != c.file+":"+w.at {
					t.Errorf("%s at %q, want %s:%s", w.field, at, c.file, w.at)
				}
			}
		})
	}

	args := read(t, "forms/args.yaml")
	checkFindings(t, args.Findings, []wantFinding{
		{IDNotUnderstood, Info, "forms/args.yaml:19:15", `"--frobnicate 3"`},
		{IDBadValue, Deny, "forms/args.yaml:19:54", "--max-num-seqs two"},
	})
	kvbm := read(t, "forms/kvbm.yaml")
	// decode: --tensor-parallel-size 2 with gpu "1" per pod.
	checkFindings(t, kvbm.Findings, []wantFinding{{IDGPUCount, Deny, "forms/kvbm.yaml:47:17", "needs 2 GPUs per worker but a worker gets 1"}})
	shell := read(t, "forms/shell.yaml")
	if len(shell.Findings) != 0 {
		t.Errorf("shell.yaml findings: %v", shell.Findings)
	}
	if !hasNote(shell.Notes, "skipped Service vllm") {
		t.Errorf("the Service is not listed as skipped: %v", shell.Notes)
	}
}

type wantFinding struct {
	id, severity, at, text string
}

func checkFindings(t *testing.T, got []Finding, want []wantFinding) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d findings, want %d: %v", len(got), len(want), got)
	}
	for i := 0; i < min(len(got), len(want)); i++ {
		g, w := got[i], want[i]
		if g.ID != w.id || g.Severity != w.severity || g.At.String() != w.at || !strings.Contains(g.Message, w.text) {
			t.Errorf("finding %d: %s %s %s %q\nwant %s %s %s containing %q", i, g.ID, g.Severity, g.At, g.Message, w.id, w.severity, w.at, w.text)
		}
	}
}

func hasNote(notes []Note, text string) bool {
	for _, n := range notes {
		if strings.Contains(n.Text, text) {
			return true
		}
	}
	return false
}

// TestBadInput: what leaves nothing to review is an error with file and
// line; a bad value or a worker without a model is a finding, and the rest
// is read.
func TestBadInput(t *testing.T) {
	errs := []struct{ file, want string }{
		{"bad/not-yaml.yaml", "bad/not-yaml.yaml:1: not valid YAML"},
		{"bad/list.yaml", "bad/list.yaml:1:1: document 1 is not a mapping"},
		{"bad/no-workers.yaml", "no serving workers found (documents: Service frontend, ConfigMap settings)"},
		{"bad/two-models.yaml", "a serves Qwen/Qwen3-0.6B (bad/two-models.yaml:8:30), b serves Qwen/Qwen3-8B (bad/two-models.yaml:17:30)"},
	}
	for _, c := range errs {
		data, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Read(c.file, data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Read(%s) error %v, want it to contain %q", c.file, err, c.want)
		}
	}
	m := read(t, "bad/no-model.yaml")
	checkFindings(t, m.Findings, []wantFinding{
		{IDBadValue, Deny, "bad/no-model.yaml:17:68", "--tensor-parallel-size two"},
		{IDNoModel, Deny, "bad/no-model.yaml:26:17", "loads its default, Qwen/Qwen3-0.6B"},
	})
	if m.Plan.Model.Name != "Qwen/Qwen3-0.6B" || m.Plan.Pools["good"].TP != 0 {
		t.Errorf("model %q, good tp %d: want the good worker's model and tp left to the default", m.Plan.Model.Name, m.Plan.Pools["good"].TP)
	}
}

// TestLeaderWorkerSetVariables: LeaderWorkerSet sets LWS_GROUP_SIZE,
// LWS_WORKER_INDEX and LWS_LEADER_ADDRESS in every pod of a group; llm-d's
// wide-EP scripts build their data-parallel flags from them. Before the
// reader knew them, --data-parallel-size $((LWS_GROUP_SIZE * DP_SIZE_LOCAL))
// read 0 (a deny), the empty ${LWS_LEADER_ADDRESS} took "--data-parallel-rpc-port"
// as its value, and 16 GPUs a worker were "15 idle". Read as the leader's pod,
// nothing in the excerpt is a finding but the vLLM flags kvplan does not model.
func TestLeaderWorkerSetVariables(t *testing.T) {
	m := read(t, "llm-d/llm-d_wide-ep-lws_vllm-deepseek-r1-0528_excerpt.yaml")
	for _, f := range m.Findings {
		t.Errorf("finding %s %s: %s", f.ID, f.At, f.Message)
	}
	multinode := 0
	for _, n := range m.Notes {
		if strings.Contains(n.Text, "tp1 dp16 ep16: 16 GPUs over 2 pods (multinode)") {
			multinode++
		}
	}
	if multinode != 2 {
		t.Errorf("%d notes of a 2-pod tp1 dp16 ep16 worker, want 2 (prefill and decode): %v", multinode, m.Notes)
	}
}
