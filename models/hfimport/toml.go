package hfimport

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kvplan/kvplan/catalog"
)

// EncodeTOML writes m as one [[model]] block of a catalog file, ready to
// append to a user catalog: keys in the catalog's order, zero optional
// values left out, large integers with digit separators. The block parses
// back with catalog.Parse to the same entry.
func EncodeTOML(m *catalog.Model) ([]byte, error) {
	if m == nil {
		return nil, fmt.Errorf("encode model: nil model")
	}
	if m.Name == "" {
		return nil, fmt.Errorf("encode model: the entry has no name")
	}
	var b strings.Builder
	str := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s = %s\n", k, tomlString(v))
		}
	}
	num := func(k string, v int64, always bool) {
		if v != 0 || always {
			fmt.Fprintf(&b, "%s = %s\n", k, tomlInt(v))
		}
	}
	b.WriteString("[[model]]\n")
	str("name", m.Name)
	if len(m.Aliases) > 0 {
		q := make([]string, len(m.Aliases))
		for i, a := range m.Aliases {
			q[i] = tomlString(a)
		}
		fmt.Fprintf(&b, "aliases = [%s]\n", strings.Join(q, ", "))
	}
	str("hf_id", m.HFID)
	num("params_total", m.ParamsTotal, true)
	num("params_active", m.ParamsActive, false)
	str("weight_dtype", m.WeightDtype)
	num("weights_bytes", m.WeightsBytes, false)
	fmt.Fprintf(&b, "tied_embeddings = %t\n", m.TiedEmbeddings)
	num("vocab_size", int64(m.VocabSize), false)
	num("hidden_size", int64(m.HiddenSize), false)
	num("attention_heads", int64(m.AttentionHeads), false)
	num("max_context", int64(m.MaxContext), false)
	num("layers", int64(m.Layers), true)
	num("kv_heads", int64(m.KVHeads), false)
	num("head_dim", int64(m.HeadDim), false)
	str("kv_dtype", m.KVDtype)
	str("dtype", m.Dtype)
	num("mtp_layers", int64(m.MTPLayers), false)
	str("source", m.Source)
	if m.MLA != nil {
		b.WriteString("\n[model.mla]\n")
		num("kv_lora_rank", int64(m.MLA.KVLoraRank), true)
		num("qk_rope_head_dim", int64(m.MLA.QKRopeHeadDim), true)
		num("fp8_entry_bytes", int64(m.MLA.FP8EntryBytes), false)
	}
	for _, g := range m.Layout {
		b.WriteString("\n[[model.layout]]\n")
		str("kind", g.Kind)
		num("count", int64(g.Count), true)
		num("window", int64(g.Window), false)
		num("ratio", int64(g.Ratio), false)
		num("kv_heads", int64(g.KVHeads), false)
		num("head_dim", int64(g.HeadDim), false)
		num("index_bytes", g.IndexBytes, false)
		num("state_bytes", g.StateBytes, false)
		num("conv_dim", int64(g.ConvDim), false)
		num("conv_kernel", int64(g.ConvKernel), false)
		num("ssm_state_elements", g.SSMStateElements, false)
		str("ssm_dtype", g.SSMDtype)
	}
	return []byte(b.String()), nil
}

// tomlInt writes n with "_" between groups of three digits from 100,000 up.
func tomlInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if len(s) > 5 {
		var out []byte
		for i := range len(s) {
			if i > 0 && (len(s)-i)%3 == 0 {
				out = append(out, '_')
			}
			out = append(out, s[i])
		}
		s = string(out)
	}
	if neg {
		s = "-" + s
	}
	return s
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
