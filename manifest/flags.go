package manifest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Builders of flag specs shared by the engines' grammars.

// known lists flags that change nothing kvplan plans (--served-model-name,
// --port): understood, so not reported.
func known(kind argKind, names ...string) []*flagSpec {
	out := make([]*flagSpec, len(names))
	for i, n := range names {
		out[i] = &flagSpec{names: []string{n}, kind: kind}
	}
	return out
}

// knownBool is known(isBool, ...) with --no-<name> accepted too.
func knownBool(names ...string) []*flagSpec {
	out := known(isBool, names...)
	for _, f := range out {
		f.negatable = true
	}
	return out
}

// notModelled lists flags kvplan understands but does not model; each use
// becomes a note at the flag, saying what the figures leave out.
func notModelled(kind argKind, what string, names ...string) []*flagSpec {
	out := make([]*flagSpec, len(names))
	for i, n := range names {
		out[i] = &flagSpec{names: []string{n}, kind: kind, negatable: kind == isBool, apply: func(w *worker, v value) error {
			w.note(v.at, "%s: %s %s is not modelled: %s", w.name, v.flag, v.text, what)
			return nil
		}}
	}
	return out
}

func flag(kind argKind, apply func(w *worker, v value) error, names ...string) *flagSpec {
	return &flagSpec{names: names, kind: kind, apply: apply}
}

// positiveInt parses a count such as a parallel size.
func positiveInt(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("want a whole number of 1 or more")
	}
	return n, nil
}

// humanInt parses vLLM's human-readable integers: 32768, 32k (×1000),
// 32K (×1024), 1m, 1M, 25.6k (vllm/engine/arg_utils.py human_readable_int).
func humanInt(s string) (int, error) {
	s = strings.TrimSpace(s)
	mult := 1.0
	if s != "" {
		switch s[len(s)-1] {
		case 'k':
			mult = 1e3
		case 'm':
			mult = 1e6
		case 'g':
			mult = 1e9
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
		if mult != 1 {
			s = s[:len(s)-1]
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 1 || math.IsInf(f, 0) || f*mult > 1e12 {
		return 0, fmt.Errorf("want a token count such as 32768 or 32k")
	}
	return int(math.Round(f * mult)), nil
}

// fraction parses a memory fraction in (0, 1].
func fraction(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(f > 0 && f <= 1) {
		return 0, fmt.Errorf("want a fraction in (0, 1], e.g. 0.9")
	}
	return f, nil
}

// Appliers for pool fields.

func setTP(w *worker, v value) error {
	n, err := positiveInt(v.text)
	if err != nil {
		return err
	}
	w.tp = n
	w.set("tp", v.at)
	return nil
}

func setPP(w *worker, v value) error {
	n, err := positiveInt(v.text)
	if err != nil {
		return err
	}
	w.pp = n
	w.set("pp", v.at)
	return nil
}

func setDP(w *worker, v value) error {
	n, err := positiveInt(v.text)
	if err != nil {
		return err
	}
	w.dp = n
	w.set("dp", v.at)
	return nil
}

func setUtil(w *worker, v value) error {
	f, err := fraction(v.text)
	if err != nil {
		return err
	}
	w.p.GPUMemoryUtilization = f
	w.set("gpu_memory_utilization", v.at)
	return nil
}

func setMaxModelLen(w *worker, v value) error {
	if t := strings.TrimSpace(v.text); t == "-1" || strings.EqualFold(t, "auto") {
		w.note(v.at, "%s: %s %s lets the engine pick the longest length that fits; kvplan plans the model's full context", w.name, v.flag, t)
		return nil
	}
	n, err := humanInt(v.text)
	if err != nil {
		return err
	}
	w.p.MaxModelLen = n
	w.set("max_model_len", v.at)
	return nil
}

func setEager(w *worker, v value) error {
	w.p.EnforceEager = v.on
	w.set("enforce_eager", v.at)
	return nil
}

func setBlockSize(w *worker, v value) error {
	n, err := positiveInt(v.text)
	if err != nil {
		return err
	}
	w.blockSize, w.blockAt = n, v.at
	return nil
}

func intField(field string, dst func(w *worker) *int) func(w *worker, v value) error {
	return func(w *worker, v value) error {
		n, err := humanInt(v.text)
		if err != nil {
			return fmt.Errorf("want a whole number of 1 or more")
		}
		*dst(w) = n
		w.set(field, v.at)
		return nil
	}
}

var (
	setMaxNumSeqs          = intField("max_num_seqs", func(w *worker) *int { return &w.p.MaxNumSeqs })
	setMaxNumBatchedTokens = intField("max_num_batched_tokens", func(w *worker) *int { return &w.p.MaxNumBatchedTokens })
)

func setModel(w *worker, v value) error {
	if strings.TrimSpace(v.text) == "" {
		return fmt.Errorf("want a model name or path")
	}
	w.model, w.modelAt = v.text, v.at
	return nil
}

// setKVDtype maps an engine's --kv-cache-dtype to the plan's kv_dtype.
func setKVDtype(w *worker, v value) error {
	t := strings.ToLower(strings.TrimSpace(v.text))
	switch {
	case t == "auto":
		return nil
	case strings.HasPrefix(t, "fp8"):
		w.kvDtype = "fp8"
	case t == "bfloat16" || t == "bf16":
		w.kvDtype = "bf16"
	case t == "float16" || t == "fp16" || t == "half":
		w.kvDtype = "fp16"
	case t == "int8":
		w.kvDtype = "int8"
	default:
		return fmt.Errorf("not a KV cache dtype kvplan knows: want auto, bfloat16, float16 or an fp8 variant")
	}
	w.kvDtypeAt = v.at
	return nil
}

// setQuantization maps --quantization to the plan's weight_dtype where the
// checkpoint's bytes per weight follow from it.
func setQuantization(w *worker, v value) error {
	t := strings.ToLower(strings.TrimSpace(v.text))
	switch t {
	case "fp8", "fbgemm_fp8", "ptpc_fp8":
		w.weightDtype = "fp8"
	case "mxfp4":
		w.weightDtype = "mxfp4"
	case "modelopt_fp4", "nvfp4":
		w.weightDtype = "nvfp4"
	case "none", "":
		return nil
	default:
		w.note(v.at, "%s: %s %s is not modelled: the weights are planned at the model's catalog dtype", w.name, v.flag, v.text)
		return nil
	}
	w.weightDtypeAt = v.at
	return nil
}

// setDtype maps --dtype: float32 doubles the weights of a bf16 checkpoint.
func setDtype(w *worker, v value) error {
	switch strings.ToLower(strings.TrimSpace(v.text)) {
	case "auto", "bfloat16", "bf16":
	case "float16", "half", "fp16":
		w.weightDtype, w.weightDtypeAt = "fp16", v.at
	case "float32", "float", "fp32":
		w.weightDtype, w.weightDtypeAt = "fp32", v.at
	default:
		return fmt.Errorf("want auto, bfloat16, float16 or float32")
	}
	return nil
}

func setPrefixCaching(w *worker, v value) error {
	on := v.on
	w.prefixCaching = &on
	return nil
}

// setKVEvents reads an engine's --kv-events-config JSON.
func setKVEvents(w *worker, v value) error {
	m, err := jsonObject(v.text)
	if err != nil {
		return err
	}
	w.kvEvents, w.publishesAt = m, v.at
	return nil
}

func subKVEvents(w *worker, k string, v value) error {
	if w.kvEvents == nil {
		w.kvEvents = map[string]any{}
	}
	w.kvEvents[k] = jsonScalar(v.text)
	w.publishesAt = v.at
	return nil
}

// setKVTransfer reads vLLM's --kv-transfer-config JSON.
func setKVTransfer(w *worker, v value) error {
	m, err := jsonObject(v.text)
	if err != nil {
		return err
	}
	w.kvTransfer, w.kvTransferAt = m, v.at
	return nil
}

func subKVTransfer(w *worker, k string, v value) error {
	if w.kvTransfer == nil {
		w.kvTransfer, w.kvTransferAt = map[string]any{}, v.at
	}
	w.kvTransfer[k] = jsonScalar(v.text)
	return nil
}

// jsonScalar reads a dotted argument's value as vLLM does: JSON when it
// parses, a string otherwise.
func jsonScalar(s string) any {
	if m, err := jsonObject(s); err == nil {
		return m
	}
	switch s {
	case "true":
		return true
	case "false":
		return false
	}
	return s
}

// setPublishes reads a flag that turns KV event publishing on or off
// (TensorRT-LLM's --publish-kv-events).
func setPublishes(w *worker, v value) error {
	on := v.on
	w.publishes, w.publishesAt = &on, v.at
	return nil
}

// engineFile notes an engine configuration file inside the container image.
func engineFile(w *worker, v value) error {
	w.extraEngineFiles = append(w.extraEngineFiles, v)
	w.note(v.at, "%s: %s %s is a file inside the image, not read: the engine settings it holds (parallelism, batch limits, memory fraction) are the entry point's defaults here; say them in a plan file if they differ", w.name, v.flag, v.text)
	return nil
}
