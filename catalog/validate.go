package catalog

import (
	"fmt"

	"github.com/kvplan/kvplan/units"
)

// dtypeBytes is the size of one element of each dtype kvplan knows, in bytes.
// mxfp4 packs 32 four-bit values with one 8-bit scale: 4.25 bits; nvfp4
// (NVIDIA's fp4, also written fp4) 16 four-bit values with one fp8 scale:
// 4.5 bits.
var dtypeBytes = map[string]float64{
	"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5, "mxfp4": 4.25 / 8,
	"nvfp4": 4.5 / 8, "fp4": 4.5 / 8,
}

// KVDtypes lists the dtypes a KV cache may use.
var KVDtypes = []string{"bf16", "fp16", "fp8", "int8", "fp32"}

// DtypeBytes returns the bytes of one element of dtype, or false if unknown.
func DtypeBytes(dtype string) (float64, bool) {
	b, ok := dtypeBytes[dtype]
	return b, ok
}

func (m *Model) validate() []fieldErr {
	var errs []fieldErr
	add := func(field, format string, a ...any) { errs = append(errs, fieldErr{field, fmt.Sprintf(format, a...)}) }
	if m.Source == "" {
		add("source", "missing: say where the figures come from")
	}
	if m.Layers <= 0 {
		add("layers", "must be > 0 (got %d)", m.Layers)
	}
	if m.ParamsTotal <= 0 {
		add("params_total", "must be > 0 (got %d)", m.ParamsTotal)
	}
	if m.ParamsActive < 0 || m.ParamsActive > m.ParamsTotal {
		add("params_active", "must be between 0 (= params_total) and params_total %d (got %d)", m.ParamsTotal, m.ParamsActive)
	}
	if _, ok := dtypeBytes[m.WeightDtype]; !ok {
		add("weight_dtype", "%q is not one of fp32, bf16, fp16, fp8, int8, int4, mxfp4, nvfp4, fp4", m.WeightDtype)
	}
	if b, ok := dtypeBytes[m.KVDtype]; !ok || b < 1 {
		add("kv_dtype", "%q is not one of bf16, fp16, fp8, int8, fp32", m.KVDtype)
	}
	if m.WeightsBytes < 0 {
		add("weights_bytes", "must be >= 0 (got %d)", m.WeightsBytes)
	}
	if m.MTPLayers < 0 {
		add("mtp_layers", "must be >= 0 (got %d)", m.MTPLayers)
	}
	if m.HiddenSize < 0 || m.AttentionHeads < 0 || m.VocabSize < 0 || m.MaxContext < 0 {
		add("hidden_size", "hidden_size, attention_heads, vocab_size and max_context must be >= 0")
	}
	if m.MLA != nil {
		if m.MLA.KVLoraRank <= 0 {
			add("mla.kv_lora_rank", "must be > 0 (got %d)", m.MLA.KVLoraRank)
		}
		if m.MLA.QKRopeHeadDim < 0 {
			add("mla.qk_rope_head_dim", "must be >= 0 (got %d)", m.MLA.QKRopeHeadDim)
		}
	} else {
		if m.KVHeads <= 0 {
			add("kv_heads", "must be > 0 (got %d)", m.KVHeads)
		}
		if m.HeadDim <= 0 {
			add("head_dim", "must be > 0 (got %d)", m.HeadDim)
		}
	}
	if m.MoE != nil {
		switch {
		case m.MoE.Experts <= 0:
			add("moe.experts", "must be > 0 (got %d)", m.MoE.Experts)
		case m.MoE.ExpertsPerToken <= 0 || m.MoE.ExpertsPerToken > m.MoE.Experts:
			add("moe.experts_per_token", "must be between 1 and experts %d (got %d)", m.MoE.Experts, m.MoE.ExpertsPerToken)
		case m.ParamsActive == 0:
			add("moe", "a mixture of experts needs params_active (the parameters one token uses)")
		}
	}
	if len(m.Layout) > 0 {
		sum := 0
		for i, g := range m.Layout {
			f := fmt.Sprintf("layout[%d]", i)
			sum += g.Count
			if g.Count <= 0 {
				add("layout.count", "%s: count must be > 0 (got %d)", f, g.Count)
			}
			if g.KVHeads < 0 || g.HeadDim < 0 {
				add("layout.kv_heads", "%s: kv_heads and head_dim must be >= 0 (0 inherits the model's)", f)
			}
			switch g.Kind {
			case LayerFull:
			case LayerSliding:
				if g.Window <= 0 {
					add("layout.window", "%s: a sliding layer needs window > 0 (got %d)", f, g.Window)
				}
			case LayerLinear:
				if g.StateBytes <= 0 {
					add("layout.state_bytes", "%s: a linear layer needs state_bytes > 0 per request (got %d)", f, g.StateBytes)
				}
			default:
				add("layout.kind", "%s: kind %q is not one of full, sliding, linear", f, g.Kind)
			}
		}
		if sum != m.Layers {
			add("layout", "layer counts add up to %d, but layers is %d", sum, m.Layers)
		}
	}
	return errs
}

func (l *Link) validate() []fieldErr {
	var errs []fieldErr
	add := func(field, format string, a ...any) { errs = append(errs, fieldErr{field, fmt.Sprintf(format, a...)}) }
	if l.Source == "" {
		add("source", "missing: say where the figures come from")
	}
	var err error
	if l.NominalBytesPerS, err = units.ParseRate(l.Nominal); err != nil {
		add("nominal", "%v", err)
	} else if l.NominalBytesPerS <= 0 {
		add("nominal", "must be > 0")
	}
	switch {
	case l.Effective != "" && l.Efficiency != 0:
		add("efficiency", "give effective or efficiency, not both")
	case l.Effective != "":
		if l.EffectiveBytesPerS, err = units.ParseRate(l.Effective); err != nil {
			add("effective", "%v", err)
		} else if l.EffectiveBytesPerS <= 0 {
			add("effective", "must be > 0")
		} else if l.NominalBytesPerS > 0 && l.EffectiveBytesPerS > l.NominalBytesPerS*1.0001 {
			add("effective", "%s is above the nominal %s", l.Effective, l.Nominal)
		}
	case l.Efficiency > 0 && l.Efficiency <= 1:
		l.EffectiveBytesPerS = l.NominalBytesPerS * l.Efficiency
	default:
		add("efficiency", "must be in (0, 1] (got %g), or give effective = \"104MB/s\"", l.Efficiency)
	}
	if l.Latency == "" {
		add("latency", "missing: per-transfer latency such as \"0.5ms\"")
	} else if l.LatencyMS, err = units.ParseMS(l.Latency); err != nil {
		add("latency", "%v", err)
	}
	return errs
}

func (g *GPU) validate() []fieldErr {
	var errs []fieldErr
	add := func(field, format string, a ...any) { errs = append(errs, fieldErr{field, fmt.Sprintf(format, a...)}) }
	if g.Source == "" {
		add("source", "missing: say where the figures come from")
	}
	var err error
	if g.MemoryBytes, err = units.ParseBytes(g.Memory); err != nil {
		add("memory", "%v", err)
	} else if g.MemoryBytes <= 0 {
		add("memory", "must be > 0")
	}
	g.CUDAMemoryBytes = g.MemoryBytes
	if g.CUDAMemory != "" {
		if g.CUDAMemoryBytes, err = units.ParseBytes(g.CUDAMemory); err != nil {
			add("cuda_memory", "%v", err)
		} else if g.CUDAMemoryBytes <= 0 || g.CUDAMemoryBytes > g.MemoryBytes {
			add("cuda_memory", "must be > 0 and at most memory %s (CUDA sees a little less than nvidia-smi)", g.Memory)
		}
	}
	if !(g.BF16TFLOPS > 0) {
		add("bf16_tflops", "must be > 0 (got %g)", g.BF16TFLOPS)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"fp16_tflops", g.FP16TFLOPS}, {"fp8_tflops", g.FP8TFLOPS}, {"fp4_tflops", g.FP4TFLOPS}, {"int8_tops", g.INT8TOPS}} {
		if !(f.v >= 0) {
			add(f.name, "must be >= 0 (got %g; 0 = none)", f.v)
		}
	}
	if g.MemoryBandwidthBytes, err = units.ParseRate(g.MemoryBandwidth); err != nil {
		add("memory_bandwidth", "%v", err)
	} else if !(g.MemoryBandwidthBytes > 0) {
		add("memory_bandwidth", "must be > 0")
	}
	if g.InterconnectBandwidth != "" {
		if g.InterconnectBandwidthBytes, err = units.ParseRate(g.InterconnectBandwidth); err != nil {
			add("interconnect_bandwidth", "%v", err)
		} else if !(g.InterconnectBandwidthBytes > 0) {
			add("interconnect_bandwidth", "must be > 0")
		}
	}
	if g.PrefillMFU != 0 && !(g.PrefillMFU > 0 && g.PrefillMFU <= 1) {
		add("prefill_mfu", "must be in (0, 1] (got %g)", g.PrefillMFU)
	}
	if !(g.USDPerHour >= 0) {
		add("usd_per_hour", "must be >= 0 (got %g; 0 = unknown)", g.USDPerHour)
	}
	if !(g.USDPerHourSpot >= 0) {
		add("usd_per_hour_spot", "must be >= 0 (got %g; 0 = unknown)", g.USDPerHourSpot)
	}
	return errs
}
