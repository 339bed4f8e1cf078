package manifest

import (
	"encoding/json"
	"strconv"

	"github.com/kvplan/kvplan/planfile"
)

// entryFlags names, for one engine entry point, the argument that carries
// each plan setting, as the reader's grammars (engines.go) read them back.
// "" means the entry point has no argument for it: a plan that needs one
// is an EmitError, never a silent drop. Data and expert parallelism (issue
// 27) are two more names here and two more lines in engineArgs.
type entryFlags struct {
	entry         string // the reader's name for the entry point
	model         string // "" = the first positional argument
	tp            string
	maxModelLen   string
	batchedTokens string
	maxSeqs       string
	memFraction   string
	kvDtype       string
	quantization  string
	blockSize     string
	eager         string
	disaggMode    string // --disaggregation-mode prefill|decode
	port          string // scripts: the HTTP port
	host          string // scripts: the address to listen on, when the default is loopback
	// kvDtypes maps the plan's kv_dtype to the engine's value for kvDtype.
	kvDtypes map[string]string
	// quantizations maps the plan's weight_dtype to the engine's --quantization.
	quantizations map[string]string
	// cpuBuffer: the entry point can stage KV in host memory for transfer
	// (vLLM's kv_buffer_device "cpu").
	cpuBuffer bool
	// fixed are arguments the entry point always gets (Dynamo's SGLang
	// worker leaves tokenizing to the frontend).
	fixed []string
}

// Flag names from the engines' argument parsers: vLLM
// vllm/engine/arg_utils.py, SGLang python/sglang/srt/server_args.py,
// Dynamo components/src/dynamo/{vllm,sglang,trtllm}/backend_args.py,
// TensorRT-LLM tensorrt_llm/commands/serve.py; the reader (engines.go)
// reads each back.
var (
	vllmKVDtypes   = map[string]string{"fp8": "fp8", "bf16": "bfloat16"}
	vllmQuant      = map[string]string{"fp8": "fp8", "mxfp4": "mxfp4", "nvfp4": "modelopt_fp4"}
	sglangKVDtypes = map[string]string{"fp8": "fp8_e4m3", "bf16": "bfloat16"}

	flagsDynamoVLLM = entryFlags{entry: "dynamo.vllm", model: "--model", tp: "--tensor-parallel-size", maxModelLen: "--max-model-len",
		batchedTokens: "--max-num-batched-tokens", maxSeqs: "--max-num-seqs", memFraction: "--gpu-memory-utilization",
		kvDtype: "--kv-cache-dtype", quantization: "--quantization", blockSize: "--block-size", eager: "--enforce-eager",
		disaggMode: "--disaggregation-mode", kvDtypes: vllmKVDtypes, quantizations: vllmQuant, cpuBuffer: true}
	flagsVLLMServe = entryFlags{entry: "vllm serve", tp: "--tensor-parallel-size", maxModelLen: "--max-model-len",
		batchedTokens: "--max-num-batched-tokens", maxSeqs: "--max-num-seqs", memFraction: "--gpu-memory-utilization",
		kvDtype: "--kv-cache-dtype", quantization: "--quantization", blockSize: "--block-size", eager: "--enforce-eager",
		port: "--port", kvDtypes: vllmKVDtypes, quantizations: vllmQuant, cpuBuffer: true}
	flagsSGLang = entryFlags{entry: "sglang.launch_server", model: "--model-path", tp: "--tp-size", maxModelLen: "--context-length",
		batchedTokens: "--chunked-prefill-size", maxSeqs: "--max-running-requests", memFraction: "--mem-fraction-static",
		kvDtype: "--kv-cache-dtype", quantization: "--quantization", blockSize: "--page-size", eager: "--disable-cuda-graph",
		disaggMode: "--disaggregation-mode", port: "--port", host: "--host", kvDtypes: sglangKVDtypes, quantizations: vllmQuant}
	flagsDynamoTRTLLM = entryFlags{entry: "dynamo.trtllm", model: "--model-path", tp: "--tensor-parallel-size", maxModelLen: "--max-seq-len",
		batchedTokens: "--max-num-tokens", maxSeqs: "--max-batch-size", memFraction: "--free-gpu-memory-fraction",
		blockSize: "--kv-block-size", disaggMode: "--disaggregation-mode"}
	flagsTRTLLMServe = entryFlags{entry: "trtllm-serve", tp: "--tp_size", maxModelLen: "--max_seq_len",
		batchedTokens: "--max_num_tokens", maxSeqs: "--max_batch_size", memFraction: "--kv_cache_free_gpu_memory_fraction", port: "--port", host: "--host"}
)

// dynamoSGLangFlags is SGLang's grammar under Dynamo: the frontend
// tokenizes (Dynamo's SGLang examples pass --skip-tokenizer-init).
func dynamoSGLangFlags() entryFlags {
	f := flagsSGLang
	f.entry, f.port, f.host, f.fixed = "dynamo.sglang", "", "", []string{"--skip-tokenizer-init"}
	return f
}

// Events configurations the workers publish KV events with (FACTS §5: a
// KV router without them degrades to load balancing). vLLM publishes only
// with "enable_kv_cache_events": true; SGLang with a zmq publisher.
const (
	vllmKVEvents   = `{"enable_kv_cache_events":true,"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:5557"}`
	sglangKVEvents = `{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:5557"}`
)

// engineArgs is the argument list after the entry point that starts one
// worker of ep: the model, then every plan setting the engine takes.
// dynamo says whether the worker runs under Dynamo (which adds the KV
// events a KV router needs and its own disaggregation mode).
func (d *deployment) engineArgs(ep *emitPool, f entryFlags, port int) ([]string, error) {
	pl := ep.pl
	var a []string
	add := func(what, flag string, v string) error {
		if flag == "" {
			return emitErrorf("pool %s: %s has no argument for %s (%s): kvplan cannot write this plan for it", ep.name, f.entry, what, v)
		}
		a = append(a, flag, v)
		return nil
	}
	if f.model == "" {
		a = append(a, d.model)
	} else {
		a = append(a, f.model, d.model)
	}
	a = append(a, f.fixed...)
	if port > 0 && f.host != "" {
		a = append(a, f.host, "0.0.0.0")
	}
	if port > 0 && f.port != "" {
		a = append(a, f.port, strconv.Itoa(port))
	}
	tpValue, layout, err := d.layoutArgs(ep, f)
	if err != nil {
		return nil, err
	}
	if err := add("tensor parallelism", f.tp, strconv.Itoa(tpValue)); err != nil {
		return nil, err
	}
	a = append(a, layout...)
	for _, s := range []struct {
		what, flag string
		v          int
	}{
		{"max_model_len", f.maxModelLen, pl.MaxModelLen},
		{"max_num_batched_tokens", f.batchedTokens, pl.MaxNumBatchedTokens},
		{"max_num_seqs", f.maxSeqs, pl.MaxNumSeqs},
	} {
		if s.v > 0 {
			if err := add(s.what, s.flag, strconv.Itoa(s.v)); err != nil {
				return nil, err
			}
		}
	}
	if pl.GPUMemoryUtilization > 0 {
		if err := add("gpu_memory_utilization", f.memFraction, strconv.FormatFloat(pl.GPUMemoryUtilization, 'g', -1, 64)); err != nil {
			return nil, err
		}
	}
	if kd := d.p.Model.KVDtype; kd != "" && kd != d.o.DefaultKVDtype {
		v, ok := f.kvDtypes[kd]
		if !ok || f.kvDtype == "" {
			return nil, emitErrorf("pool %s: %s has no argument that sets the KV cache to %s (the model's is %s): kvplan cannot write this plan for it", ep.name, f.entry, kd, d.o.DefaultKVDtype)
		}
		a = append(a, f.kvDtype, v)
	}
	if wd := d.p.Model.WeightDtype; wd != "" {
		v, ok := f.quantizations[wd]
		if !ok || f.quantization == "" {
			return nil, emitErrorf("pool %s: %s has no --quantization for %s weights: serve a checkpoint quantized to %s and plan it as its own model", ep.name, f.entry, wd, wd)
		}
		a = append(a, f.quantization, v)
	}
	// A plan file that writes no block_size gets planfile's default (vLLM's
	// 16) whatever its engine; only a block size the plan states is one.
	if b := d.p.Router.BlockSize; d.p.Has("router.block_size") && b > 0 && b != d.o.DefaultBlockSize {
		if err := add("block_size", f.blockSize, strconv.Itoa(b)); err != nil {
			return nil, err
		}
	}
	if pl.KVBufferDevice == planfile.BufferCPU && !f.cpuBuffer {
		return nil, emitErrorf("pool %s: %s cannot stage KV in host memory for transfer (kv_buffer_device = \"cpu\" is vLLM's)", ep.name, f.entry)
	}
	if pl.EnforceEager {
		if f.eager == "" {
			return nil, emitErrorf("pool %s: %s has no argument that turns CUDA graphs off (enforce_eager)", ep.name, f.entry)
		}
		a = append(a, f.eager)
	}
	return a, nil
}

// vllmTransfer is vLLM's --kv-transfer-config for a disaggregated worker:
// the NIXL connector, with the role (kv_producer on prefill, kv_consumer on
// decode: the reader reads the pool's role back from it when nothing else
// says it) and the buffer device when KV is staged in host memory.
func vllmTransfer(pl *planfile.Pool, role string) string {
	type cfg struct {
		Connector string `json:"kv_connector"`
		Role      string `json:"kv_role"`
		Buffer    string `json:"kv_buffer_device,omitempty"`
	}
	c := cfg{Connector: "NixlConnector", Role: role}
	if pl.KVBufferDevice == planfile.BufferCPU {
		c.Buffer = "cpu"
	}
	b, _ := json.Marshal(c) // a struct of strings always marshals
	return string(b)
}

// kvRole is vLLM's kv_role for a pool of role.
func kvRole(role string) string {
	switch role {
	case planfile.RolePrefill:
		return "kv_producer"
	case planfile.RoleDecode:
		return "kv_consumer"
	}
	return "kv_both"
}

// prefills reports whether a pool's workers prefill (and so hold the
// prefixes a KV router places requests by).
func prefills(pl *planfile.Pool) bool { return pl.Role != planfile.RoleDecode }
