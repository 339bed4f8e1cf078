package models

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/catalog"
)

// StateConvention is how an engine stores the constant per-request state of
// a linear-attention or Mamba layer: the causal conv's last columns and the
// recurrent (SSM) state.
//
// Per layer and request, with the catalog's conv_dim, conv_kernel and
// ssm_state_elements:
//
//	conv  = ConvColumns(conv_kernel) × conv_dim × bytes of the conv dtype
//	ssm   = ssm_state_elements × bytes of the SSM dtype
//
// Both are split across tensor-parallel ranks with the heads (rounded up).
// The SSM dtype is the one the config pins for the layer (ssm_dtype),
// else the convention's default; the conv dtype is the convention's, else
// the model's dtype (ModelDtype: not the KV cache's, which may be fp8).
type StateConvention struct {
	Engine          string // vllm or sglang
	ConvKernelLess  int    // the conv state keeps conv_kernel − ConvKernelLess columns
	ConvDtype       string // "" = the model's dtype
	DefaultSSMDtype string // when the config pins none; "" = the model's dtype
	Source          string // where the convention is read from
	Note            string // set when the engine asked for has no convention of its own
}

// Describe says in one line how the state is counted.
func (s StateConvention) Describe() string {
	conv, ssm := "the model dtype", "the model dtype"
	if s.ConvDtype != "" {
		conv = s.ConvDtype
	}
	if s.DefaultSSMDtype != "" {
		ssm = s.DefaultSSMDtype
	}
	d := fmt.Sprintf("%s state convention: the conv state keeps conv_kernel − %d columns in %s; the recurrent state is in the dtype the config pins, else %s (%s)",
		s.Engine, s.ConvKernelLess, conv, ssm, s.Source)
	if s.Note != "" {
		d += "; " + s.Note
	}
	return d
}

// Brief says the convention in a few words.
func (s StateConvention) Brief() string {
	conv, ssm := "the model dtype", "the model dtype"
	if s.ConvDtype != "" {
		conv = s.ConvDtype
	}
	if s.DefaultSSMDtype != "" {
		ssm = s.DefaultSSMDtype
	}
	return fmt.Sprintf("conv keeps conv_kernel − %d columns in %s, the recurrent state is in the config's dtype, else %s", s.ConvKernelLess, conv, ssm)
}

// ConvColumns is the number of conv columns a request keeps.
func (s StateConvention) ConvColumns(kernel int) int { return max(0, kernel-s.ConvKernelLess) }

var stateConventions = map[string]StateConvention{
	"vllm": {Engine: "vllm", ConvKernelLess: 1,
		Source: "vllm model_executor/layers/mamba/mamba_utils.py: conv (kernel − 1, conv_dim), temporal state in mamba_ssm_cache_dtype, " +
			"'auto' = the model dtype; models/config.py pins float32 for NemotronH and the config's mamba_ssm_dtype for Qwen3.5"},
	"sglang": {Engine: "sglang", ConvKernelLess: 1, ConvDtype: "bf16", DefaultSSMDtype: "fp32",
		Source: "sglang srt/configs/mamba_utils.py (sgl-project/sglang@02e208d): conv (conv_dim, kernel − 1) in SGLANG_MAMBA_CONV_DTYPE " +
			"(bfloat16), temporal state in the config's mamba_ssm_dtype, else float32"},
}

// StateConventions lists the engines with a state convention of their own.
var StateConventions = []string{"vllm", "sglang"}

// StateConventionFor returns the convention of engine ("" = vllm). An engine
// named with a version ("vllm-0.19") uses its family's; any other engine
// uses vLLM's, and the convention's Note says so.
func StateConventionFor(engine string) StateConvention {
	e := strings.ToLower(strings.TrimSpace(engine))
	if e == "" {
		return stateConventions["vllm"]
	}
	for _, name := range StateConventions {
		if e == name || strings.HasPrefix(e, name+"-") || strings.HasPrefix(e, name+"@") {
			return stateConventions[name]
		}
	}
	s := stateConventions["vllm"]
	s.Note = fmt.Sprintf("engine %q has no state convention in kvplan; vLLM's is used", engine)
	return s
}

// KnownStateConvention reports whether engine has a convention of its own.
func KnownStateConvention(engine string) bool { return StateConventionFor(engine).Note == "" }

// layerState is one layer's state per request and rank, and its conv and
// SSM parts: the catalog's state_bytes split across ranks when it gives one,
// else the convention applied to its dimensions.
func (s StateConvention) layerState(m *catalog.Model, lg catalog.LayerGroup, tp int) (total, conv, ssm int64) {
	t := int64(tp)
	if lg.SSMStateElements == 0 {
		return ceilDiv(lg.StateBytes, t), 0, 0
	}
	model, _ := catalog.DtypeBytes(ModelDtype(m))
	convB, ssmB := model, model
	if s.ConvDtype != "" {
		convB, _ = catalog.DtypeBytes(s.ConvDtype)
	}
	switch {
	case lg.SSMDtype != "":
		ssmB, _ = catalog.DtypeBytes(lg.SSMDtype)
	case s.DefaultSSMDtype != "":
		ssmB, _ = catalog.DtypeBytes(s.DefaultSSMDtype)
	}
	conv = int64(s.ConvColumns(lg.ConvKernel)) * ceilDiv(int64(lg.ConvDim), t) * int64(convB)
	ssm = ceilDiv(lg.SSMStateElements, t) * int64(ssmB)
	return conv + ssm, conv, ssm
}

// ModelDtype is the dtype a model is served in: its dtype, else its KV dtype.
func ModelDtype(m *catalog.Model) string {
	if m.Dtype != "" {
		return m.Dtype
	}
	return m.KVDtype
}
