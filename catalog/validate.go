package catalog

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/units"
)

// dtypeBytes is the size of one element of each dtype kvplan knows, in bytes.
// mxfp4 packs 32 four-bit values with one 8-bit scale: 4.25 bits.
// nvfp4 packs 16 four-bit values with one fp8 scale: 4.5 bits.
var dtypeBytes = map[string]float64{
	"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5, "mxfp4": 4.25 / 8, "nvfp4": 4.5 / 8,
}

// WeightDtypes lists the dtypes weights may use.
var WeightDtypes = []string{"fp32", "bf16", "fp16", "fp8", "int8", "int4", "mxfp4", "nvfp4"}

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
		add("weight_dtype", "%q is not one of %s", m.WeightDtype, strings.Join(WeightDtypes, ", "))
	}
	if b, ok := dtypeBytes[m.KVDtype]; !ok || b < 1 {
		add("kv_dtype", "%q is not one of bf16, fp16, fp8, int8, fp32", m.KVDtype)
	}
	if m.Dtype != "" && m.Dtype != "bf16" && m.Dtype != "fp16" && m.Dtype != "fp32" {
		add("dtype", "%q is not one of bf16, fp16, fp32 (or leave it out: the kv_dtype)", m.Dtype)
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
		if m.MLA.FP8EntryBytes < 0 {
			add("mla.fp8_entry_bytes", "must be >= 0 (got %d; 0 = one byte an element)", m.MLA.FP8EntryBytes)
		}
	} else if m.HasAttention() {
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
			sum += g.Count
			errs = append(errs, g.validate(fmt.Sprintf("layout[%d]", i), m.MLA != nil)...)
		}
		if sum != m.Layers {
			add("layout", "layer counts add up to %d, but layers is %d", sum, m.Layers)
		}
	}
	return append(errs, m.limitErrs()...)
}

// A field's range: the smallest value it takes (checked with its own
// message above) and the largest, far beyond any model published today and
// small enough that the planner's products of them stay checkable. Above
// the largest, a field is refused with its range (units.CheckInt), whatever
// MaxInt allows.
type fieldLimit struct {
	field   string
	v       int64
	lo, hi  int64
	unitFor string
}

const (
	maxLayers    = 10_000
	maxHeads     = 16_384
	maxHeadDim   = 16_384
	maxWindow    = 100_000_000 // tokens: a window past any context
	maxStateByte = 1 << 40     // 1 TiB of state per layer and request
)

// limitErrs checks the upper bound of every geometry field of m.
func (m *Model) limitErrs() []fieldErr {
	limits := []fieldLimit{
		{"layers", int64(m.Layers), 1, maxLayers, "layers"},
		{"kv_heads", int64(m.KVHeads), 1, maxHeads, "heads"},
		{"attention_heads", int64(m.AttentionHeads), 1, maxHeads, "heads"},
		{"head_dim", int64(m.HeadDim), 1, maxHeadDim, ""},
		{"hidden_size", int64(m.HiddenSize), 1, 1 << 20, ""},
		{"vocab_size", int64(m.VocabSize), 1, 1 << 24, "tokens"},
		{"max_context", int64(m.MaxContext), 1, 1_000_000_000, "tokens"},
		{"mtp_layers", int64(m.MTPLayers), 0, 100, "layers"},
	}
	if m.MLA != nil {
		limits = append(limits,
			fieldLimit{"mla.kv_lora_rank", int64(m.MLA.KVLoraRank), 1, maxHeadDim, ""},
			fieldLimit{"mla.qk_rope_head_dim", int64(m.MLA.QKRopeHeadDim), 0, maxHeadDim, ""},
			fieldLimit{"mla.fp8_entry_bytes", int64(m.MLA.FP8EntryBytes), 0, 1 << 20, "bytes"})
	}
	for _, g := range m.Layout {
		limits = append(limits,
			fieldLimit{"layout.count", int64(g.Count), 1, maxLayers, "layers"},
			fieldLimit{"layout.kv_heads", int64(g.KVHeads), 0, maxHeads, "heads"},
			fieldLimit{"layout.head_dim", int64(g.HeadDim), 0, maxHeadDim, ""},
			fieldLimit{"layout.window", int64(g.Window), 0, maxWindow, "tokens"},
			fieldLimit{"layout.ratio", int64(g.Ratio), 0, maxWindow, "tokens"},
			fieldLimit{"layout.index_bytes", g.IndexBytes, 0, 1 << 20, "bytes"},
			fieldLimit{"layout.state_bytes", g.StateBytes, 0, maxStateByte, "bytes"},
			fieldLimit{"layout.conv_dim", int64(g.ConvDim), 0, 1 << 24, ""},
			fieldLimit{"layout.conv_kernel", int64(g.ConvKernel), 0, 1 << 10, ""},
			fieldLimit{"layout.ssm_state_elements", g.SSMStateElements, 0, 1 << 36, ""})
	}
	var errs []fieldErr
	for _, l := range limits {
		if l.v > l.hi { // below lo has its own message in validate
			errs = append(errs, fieldErr{l.field, units.CheckInt(l.v, l.lo, l.hi, l.unitFor).Error()})
		}
	}
	return errs
}

// HasAttention reports whether any of m's layers keeps a KV cache (a model
// of Mamba layers only has none, and needs no kv_heads nor head_dim).
func (m *Model) HasAttention() bool {
	if len(m.Layout) == 0 {
		return true
	}
	for _, g := range m.Layout {
		if g.Kind == LayerFull || g.Kind == LayerSliding || g.Kind == LayerCompressed {
			return true
		}
	}
	return false
}

// validate checks one layout group; f names it ("layout[2]") in messages.
func (g *LayerGroup) validate(f string, mla bool) []fieldErr {
	var errs []fieldErr
	add := func(field, format string, a ...any) {
		errs = append(errs, fieldErr{"layout." + field, f + ": " + fmt.Sprintf(format, a...)})
	}
	if g.Count <= 0 {
		add("count", "count must be > 0 (got %d)", g.Count)
	}
	if g.KVHeads < 0 || g.HeadDim < 0 {
		add("kv_heads", "kv_heads and head_dim must be >= 0 (0 inherits the model's)")
	}
	if mla && (g.KVHeads != 0 || g.HeadDim != 0) {
		add(pick(g.KVHeads != 0, "kv_heads", "head_dim"), "an MLA model's layers cache its latent: leave kv_heads and head_dim out")
	}
	if g.Window < 0 || g.Ratio < 0 || g.IndexBytes < 0 || g.StateBytes < 0 || g.ConvDim < 0 || g.ConvKernel < 0 || g.SSMStateElements < 0 {
		add("window", "window, ratio, index_bytes, state_bytes, conv_dim, conv_kernel and ssm_state_elements must be >= 0")
	}
	state := g.ConvDim != 0 || g.ConvKernel != 0 || g.SSMStateElements != 0 || g.SSMDtype != ""
	switch g.Kind {
	case LayerFull, LayerSliding, LayerCompressed:
		if g.Kind == LayerSliding && g.Window <= 0 {
			add("window", "a sliding layer needs window > 0 (got %d)", g.Window)
		}
		if g.Kind == LayerCompressed {
			if g.Ratio < 2 {
				add("ratio", "a compressed layer needs ratio >= 2 tokens per entry (got %d)", g.Ratio)
			}
		} else {
			if g.Ratio != 0 {
				add("ratio", "ratio applies to compressed layers only (this one is %s)", g.Kind)
			}
			if g.StateBytes != 0 {
				add("state_bytes", "state_bytes applies to linear, mamba and compressed layers (this one is %s)", g.Kind)
			}
		}
		if g.Kind == LayerFull && g.Window != 0 {
			add("window", "a full-attention layer has no window (got %d); use kind = \"sliding\"", g.Window)
		}
		if g.Kind == LayerSliding && g.IndexBytes != 0 {
			add("index_bytes", "an indexer indexes the whole request: it goes with full or compressed layers, not sliding ones")
		}
		if state {
			field := "ssm_dtype"
			switch {
			case g.ConvDim != 0:
				field = "conv_dim"
			case g.ConvKernel != 0:
				field = "conv_kernel"
			case g.SSMStateElements != 0:
				field = "ssm_state_elements"
			}
			add(field, "conv_dim, conv_kernel, ssm_state_elements and ssm_dtype apply to linear and mamba layers (this one is %s)", g.Kind)
		}
	case LayerLinear, LayerMamba:
		if g.Window != 0 || g.Ratio != 0 || g.IndexBytes != 0 || g.KVHeads != 0 || g.HeadDim != 0 {
			add("kind", "a %s layer keeps a state, no KV: window, ratio, index_bytes, kv_heads and head_dim do not apply", g.Kind)
		}
		switch {
		case g.StateBytes > 0 && state:
			add("state_bytes", "give state_bytes or the state's dimensions (conv_dim, conv_kernel, ssm_state_elements), not both")
		case g.StateBytes == 0 && g.SSMStateElements <= 0:
			add("state_bytes", "a %s layer needs its state: ssm_state_elements > 0 (with conv_dim and conv_kernel), or state_bytes > 0 per request", g.Kind)
		case state && (g.ConvDim > 0) != (g.ConvKernel > 0):
			add("conv_dim", "conv_dim and conv_kernel go together (got %d and %d)", g.ConvDim, g.ConvKernel)
		}
		if g.SSMDtype != "" {
			if g.SSMDtype != "fp32" && g.SSMDtype != "bf16" && g.SSMDtype != "fp16" {
				add("ssm_dtype", "%q is not one of fp32, bf16, fp16 (or leave it out for the engine's default)", g.SSMDtype)
			}
		}
	default:
		add("kind", "kind %q is not one of %s", g.Kind, strings.Join(LayerKinds, ", "))
	}
	return errs
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
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
	switch l.RatePer {
	case "":
		l.RatePer = RatePerNode // the conservative reading: every rank shares one path
	case RatePerGPU, RatePerNode:
	default:
		add("rate_per", "%q is not accepted: want \"gpu\" (a rail per GPU, rail-optimized RDMA) or \"node\" (one path per host)", l.RatePer)
	}
	switch l.Scope {
	case "", ScopeNVLink:
	default:
		add("scope", "%q is not accepted: want \"nvlink\" (joins GPUs inside one NVLink domain only) or leave it out (a network)", l.Scope)
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
	if g.L2Cache != "" {
		if g.L2CacheBytes, err = units.ParseBytes(g.L2Cache); err != nil {
			add("l2_cache", "%v", err)
		} else if g.L2CacheBytes <= 0 || g.L2CacheBytes >= g.MemoryBytes {
			add("l2_cache", "must be > 0 and below memory %s (the on-chip cache, such as \"50MiB\")", g.Memory)
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
	if g.NVLinkDomainGPUs < 0 || g.NVLinkDomainGPUs > 100_000 {
		add("nvlink_domain_gpus", "must be between 0 (no NVLink) and 100,000 (got %d)", g.NVLinkDomainGPUs)
	}
	if g.InterconnectBandwidth != "" {
		if g.InterconnectBandwidthBytes, err = units.ParseRate(g.InterconnectBandwidth); err != nil {
			add("interconnect_bandwidth", "%v", err)
		} else if !(g.InterconnectBandwidthBytes > 0) {
			add("interconnect_bandwidth", "must be > 0")
		}
	}
	if !(g.USDPerHour >= 0) {
		add("usd_per_hour", "must be >= 0 (got %g; 0 = unknown)", g.USDPerHour)
	}
	if !(g.USDPerHourSpot >= 0) {
		add("usd_per_hour_spot", "must be >= 0 (got %g; 0 = unknown)", g.USDPerHourSpot)
	}
	if !(g.TDPWatts >= 0) || g.TDPWatts > 10_000 {
		add("tdp_watts", "must be between 0 (unknown) and 10000 W (got %g)", g.TDPWatts)
	}
	if g.GPUProduct != "" && !labelValue().MatchString(g.GPUProduct) {
		add("gpu_product", "%s: a Kubernetes label value is at most 63 characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit (GPU feature discovery writes the device name with its spaces as '-': NVIDIA-H100-80GB-HBM3)", safetext.Quote(g.GPUProduct))
	}
	if g.GPUProduct != "" && g.GPUProductSource == "" {
		add("gpu_product_source", "missing: say where the device name was read (a node's labels, an engine's log)")
	}
	return errs
}

// labelValue matches a Kubernetes label value (RFC 1123 rules as the API
// server applies them), non-empty.
var labelValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`)
})
