package hfimport

import (
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/units"
)

// Weight bytes of a checkpoint, module by module.
//
// A quantization_config says which weights a checkpoint stores in which
// format; every other weight stays in the model dtype (torch_dtype). kvplan
// counts each module of the parameter inventory (params.go) at the bytes per
// weight of its format, scales included:
//
//	fp8, int8     1 (per-tensor or 128 × 128 block scales: under 0.03%, left out)
//	mxfp8         1 + 1/32: one e8m0 scale per 32 weights
//	nvfp4         0.5 + 1/16: one fp8 scale per 16 weights (4.5 bits)
//	mxfp4         0.5 + 1/32: one e8m0 scale per 32 weights (4.25 bits)
//	int4 (GPTQ, AWQ, compressed-tensors int)
//	              0.5 + 2/group_size fp16 scales, + 0.5/group_size zero points when asymmetric
//	bitsandbytes  nf4 0.5 + 4/64 (an fp32 absmax per 64), with double quantization 0.5 + (1 + 4/256)/64
//
// Which modules a scheme converts:
//
//	fp8, gptq, awq, auto-round, bitsandbytes
//	              every Linear of the decoder (attention, MLP, experts),
//	              not the lm_head, the embeddings, routers and norms, less
//	              modules_to_not_convert / ignored_layers
//	mxfp4         the routed experts (gpt-oss)
//	compressed-tensors
//	              the Linear modules each config group targets, less ignore
//	modelopt      FP8 and NVFP4: every Linear but the lm_head, less
//	              ignore / exclude_modules; MIXED_PRECISION: the modules
//	              quantized_layers lists, each in its own format
//
// DeepSeek-V4's "fp8" checkpoints keep their routed experts in mxfp4
// (expert_dtype "fp4", vLLM's DeepseekV4FP8Config). A quantization_config
// kvplan cannot read leaves every weight in the model dtype, with a note to
// give the checkpoint size (--weights-bytes); it never refuses the config,
// since the KV cache does not depend on it.

// weightFormat is how one module's weights are stored.
type weightFormat struct {
	dtype string  // catalog dtype: fp8, int8, int4, mxfp4, nvfp4, or the model dtype
	bpp   float64 // bytes per weight, scales included
}

// quantScheme assigns each module its format.
type quantScheme struct {
	method string
	format func(m module) (weightFormat, bool) // false: the module stays in the model dtype
}

func fmtFP8() weightFormat   { return weightFormat{"fp8", 1} }
func fmtINT8() weightFormat  { return weightFormat{"int8", 1} }
func fmtNVFP4() weightFormat { return weightFormat{"nvfp4", 0.5 + 1.0/16} }
func fmtMXFP4() weightFormat { return weightFormat{"mxfp4", 0.5 + 1.0/32} }
func fmtINT4(group int, asym bool) weightFormat {
	f := weightFormat{"int4", 0.5}
	if group > 0 {
		f.bpp += 2 / float64(group)
		if asym {
			f.bpp += 0.5 / float64(group)
		}
	}
	return f
}

// decoderLinear reports whether a scheme that converts "every Linear of the
// decoder" converts m.
func decoderLinear(m module) bool { return m.linear && m.part != partLMHead }

// weights sets the model's weight dtype and weight bytes from its
// quantization_config (or the --weights-bytes the user gave), and its KV
// dtype when the block declares an fp8 KV cache.
func (imp *importer) weights(m *catalog.Model, p paramCount) error {
	c := imp.c
	q, field, err := c.object("quantization_config")
	if err != nil {
		return err
	}
	if q == nil && imp.opts.QuantConfig != nil {
		// hf_quant_config.json: its errors name that file.
		qc, err := parseConfig(imp.opts.QuantConfig, imp.opts.QuantFile)
		if err != nil {
			return err
		}
		q, field = qc.top, "quantization"
		if inner, ok := q["quantization"].(map[string]any); ok {
			q = inner
		}
		defer func(main *hfConfig) { imp.c = main }(imp.c)
		imp.c = qc
		imp.note("quantization read from %s", imp.opts.QuantFile)
	} else if q != nil && imp.opts.QuantConfig != nil {
		imp.note("%s is not read: config.json has its own quantization_config", imp.opts.QuantFile)
	}
	var s *quantScheme
	if q != nil {
		if s, err = imp.scheme(q, field); err != nil {
			return err
		}
		imp.kvScheme(m, q)
	}
	if s != nil {
		imp.countWeights(m, p, s)
	}
	return imp.givenWeights(m)
}

// givenWeights applies --weights-bytes.
func (imp *importer) givenWeights(m *catalog.Model) error {
	if imp.opts.WeightsBytes <= 0 {
		return nil
	}
	if m.WeightsBytes > 0 {
		imp.note("weights_bytes %d from --weights-bytes replaces the %d kvplan estimated from the quantization_config", imp.opts.WeightsBytes, m.WeightsBytes)
	} else {
		imp.note("weights_bytes %d (%s) from --weights-bytes, the checkpoint's size", imp.opts.WeightsBytes, units.Bytes(imp.opts.WeightsBytes))
	}
	m.WeightsBytes = imp.opts.WeightsBytes
	return nil
}

// countWeights sums the modules' bytes under s and sets weight_dtype to the
// format that holds the most parameters.
func (imp *importer) countWeights(m *catalog.Model, p paramCount, s *quantScheme) {
	base, _ := catalog.DtypeBytes(imp.a.baseDtype)
	byDtype := map[string]int64{}
	bytesBy := map[string]float64{}
	var total float64
	for _, mod := range p.modules {
		f, ok := s.format(mod)
		if !ok {
			f = weightFormat{imp.a.baseDtype, base}
		}
		byDtype[f.dtype] += mod.params
		b := float64(mod.params) * f.bpp
		bytesBy[f.dtype] += b
		total += b
	}
	dominant, most := imp.a.baseDtype, int64(-1)
	var parts []string
	for _, d := range catalog.WeightDtypes {
		if n, ok := byDtype[d]; ok {
			parts = append(parts, fmt.Sprintf("%s %d params = %s", d, n, units.Bytes(int64(bytesBy[d]))))
			if n > most {
				dominant, most = d, n
			}
		}
	}
	m.WeightDtype = dominant
	if len(byDtype) == 1 && dominant == imp.a.baseDtype {
		imp.note("quantization_config (%s) converts none of the weights kvplan counts: they stay %s", s.method, dominant)
		return
	}
	m.WeightsBytes = int64(math.Ceil(total))
	imp.note("weights: quantization_config %s; weights_bytes %d (%s) = %s, scales included; weight_dtype %s holds the most parameters",
		s.method, m.WeightsBytes, units.Bytes(m.WeightsBytes), strings.Join(parts, " + "), dominant)
}

// kvScheme reads the KV cache format a checkpoint declares: modelopt's
// kv_cache_quant_algo FP8, or an 8-bit float kv_cache_scheme
// (compressed-tensors and modelopt). The engines then serve the KV cache in
// fp8 with the checkpoint's scales.
func (imp *importer) kvScheme(m *catalog.Model, q map[string]any) {
	algo, _ := q["kv_cache_quant_algo"].(string)
	kv, _ := q["kv_cache_scheme"].(map[string]any)
	bits, _ := jsonInt(kv["num_bits"])
	typ, _ := kv["type"].(string)
	if strings.EqualFold(algo, "FP8") || (bits == 8 && typ == "float") {
		if m.KVDtype != "fp8" {
			imp.note("the checkpoint declares an fp8 KV cache (quantization_config %s): kv_dtype is fp8; give --kv-dtype %s to plan a %s cache",
				pick(algo != "", "kv_cache_quant_algo", "kv_cache_scheme"), m.KVDtype, m.KVDtype)
		}
		m.KVDtype = "fp8"
	}
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// scheme reads a quantization_config. It returns nil, with a note, for a
// block it cannot read.
func (imp *importer) scheme(q map[string]any, field string) (*quantScheme, error) {
	method, _ := q["quant_method"].(string)
	qerr := func(format string, args ...any) error { return imp.c.errAt(field, format, args...) }
	unreadable := func(why string) (*quantScheme, error) {
		imp.note("quantization_config: %s; weights are counted in %s. Give the checkpoint's size with --weights-bytes", why, imp.a.baseDtype)
		return nil, nil
	}
	if method == "" {
		switch {
		case q["quant_algo"] != nil || q["quantization"] != nil:
			method = "modelopt"
		case q["config_groups"] != nil:
			method = "compressed-tensors"
		default:
			return unreadable("no quant_method, and neither quant_algo nor config_groups says the format")
		}
		imp.note("quantization_config has no quant_method: read as %s from its keys", method)
	}
	skip, err := imp.skipList(q, field, "modules_to_not_convert", "ignored_layers", "ignore", "exclude_modules")
	if err != nil {
		return nil, err
	}
	num := func(k string) int { n, _ := jsonInt(q[k]); return n }
	s := &quantScheme{method: method}
	decoder := func(f weightFormat) func(module) (weightFormat, bool) {
		return func(m module) (weightFormat, bool) {
			return f, decoderLinear(m) && !skip(m)
		}
	}
	switch method {
	case "fp8", "fbgemm_fp8":
		s.format = decoder(fmtFP8())
		if imp.a.modelType == "deepseek_v4" {
			experts := fmtMXFP4()
			if d, _ := imp.c.str("expert_dtype"); d == "fp8" {
				experts = fmtFP8()
			}
			s.format = func(m module) (weightFormat, bool) {
				if m.part == partExperts && m.linear {
					return experts, true
				}
				return fmtFP8(), decoderLinear(m) && !skip(m)
			}
		}
	case "mxfp4":
		s.format = func(m module) (weightFormat, bool) { return fmtMXFP4(), m.part == partExperts && m.linear && !skip(m) }
	case "gptq", "awq", "auto-round", "autoround":
		group := num("group_size")
		asym := q["zero_point"] == true || q["sym"] == false
		switch bits := num("bits"); bits {
		case 4:
			s.format = decoder(fmtINT4(max(group, 0), asym))
		case 8:
			s.format = decoder(fmtINT8())
		default:
			return nil, qerr("quant_method %q with bits %d; expected bits 4 or 8", method, bits)
		}
	case "bitsandbytes":
		switch {
		case q["load_in_4bit"] == true:
			f := weightFormat{"int4", 0.5 + 4.0/64}
			if q["bnb_4bit_use_double_quant"] == true {
				f.bpp = 0.5 + (1+4.0/256)/64
			}
			s.format = decoder(f)
		case q["load_in_8bit"] == true:
			s.format = decoder(fmtINT8())
		default:
			return nil, qerr("bitsandbytes without load_in_4bit or load_in_8bit")
		}
	case "compressed-tensors":
		return imp.compressedTensors(q, field, skip)
	case "modelopt":
		return imp.modelopt(q, field, skip)
	default:
		return unreadable(fmt.Sprintf("quant_method %q is not one kvplan reads (fp8, fbgemm_fp8, mxfp4, gptq, awq, auto-round, bitsandbytes, compressed-tensors, modelopt)", method))
	}
	return s, nil
}

// compressedTensors reads a compressed-tensors block: each module takes the
// first config group whose targets match it, unless ignore lists it.
func (imp *importer) compressedTensors(q map[string]any, field string, skip func(module) bool) (*quantScheme, error) {
	qerr := func(format string, args ...any) error { return imp.c.errAt(field, format, args...) }
	groups, _ := q["config_groups"].(map[string]any)
	if len(groups) == 0 {
		return nil, qerr("compressed-tensors without config_groups")
	}
	if len(groups) > maxConfigGroups {
		// Each module is tried against the groups in turn.
		return nil, qerr("config_groups has %s groups, more than the %d kvplan reads", units.Thousands(int64(len(groups))), maxConfigGroups)
	}
	names := make([]string, 0, len(groups))
	for k := range groups {
		names = append(names, k)
	}
	sort.Strings(names)
	type rule struct {
		match func(module) bool
		f     weightFormat
	}
	var rules []rule
	for _, k := range names {
		g, _ := groups[k].(map[string]any)
		w, _ := g["weights"].(map[string]any)
		if w == nil {
			continue
		}
		f, err := tensorsFormat(w)
		if err != nil {
			return nil, qerr("config_groups.%s.weights: %v", k, err)
		}
		targets, err := patternList(g["targets"])
		if err != nil {
			return nil, qerr("config_groups.%s.targets: %v", k, err)
		}
		match, err := moduleMatcher(targets, true)
		if err != nil {
			return nil, qerr("config_groups.%s.targets: %v", k, err)
		}
		rules = append(rules, rule{match, f})
	}
	if len(rules) == 0 {
		return nil, qerr("compressed-tensors without config_groups.*.weights")
	}
	return &quantScheme{method: "compressed-tensors", format: func(m module) (weightFormat, bool) {
		if !m.linear || skip(m) {
			return weightFormat{}, false
		}
		for _, r := range rules {
			if r.match(m) {
				return r.f, true
			}
		}
		return weightFormat{}, false
	}}, nil
}

// tensorsFormat reads a compressed-tensors weights block.
func tensorsFormat(w map[string]any) (weightFormat, error) {
	bits, _ := jsonInt(w["num_bits"])
	typ, _ := w["type"].(string)
	group, _ := jsonInt(w["group_size"])
	asym := w["symmetric"] == false
	switch {
	case bits == 8 && typ == "float":
		return fmtFP8(), nil
	case bits == 8 && typ == "int":
		return fmtINT8(), nil
	case bits == 4 && typ == "float" && group == 16:
		return fmtNVFP4(), nil
	case bits == 4 && typ == "float" && group == 32:
		return fmtMXFP4(), nil
	case bits == 4 && typ == "int":
		return fmtINT4(max(group, 0), asym), nil
	}
	return weightFormat{}, fmt.Errorf("%d-bit %s weights (group_size %d) are not a format kvplan knows; expected 8-bit float or int, 4-bit int, or 4-bit float in groups of 16 (nvfp4) or 32 (mxfp4)", bits, typ, group)
}

// modeloptFormat maps a modelopt quant_algo to its weight format.
func modeloptFormat(algo string) (weightFormat, bool) {
	a := strings.ToUpper(algo)
	switch {
	case a == "FP8" || strings.HasPrefix(a, "FP8_"):
		return fmtFP8(), true
	case a == "MXFP8":
		return weightFormat{"fp8", 1 + 1.0/32}, true // one e8m0 scale per 32
	case strings.Contains(a, "NVFP4"):
		return fmtNVFP4(), true
	case strings.Contains(a, "MXFP4"):
		return fmtMXFP4(), true
	case strings.Contains(a, "AWQ") || strings.Contains(a, "INT4"):
		return fmtINT4(128, false), true
	case strings.Contains(a, "INT8") || strings.Contains(a, "W8A8"):
		return fmtINT8(), true
	}
	return weightFormat{}, false
}

// modelopt reads a modelopt block: FP8, NVFP4 and the like convert every
// Linear but the lm_head; MIXED_PRECISION lists each quantized module.
func (imp *importer) modelopt(q map[string]any, field string, skip func(module) bool) (*quantScheme, error) {
	qerr := func(format string, args ...any) error { return imp.c.errAt(field, format, args...) }
	if inner, ok := q["quantization"].(map[string]any); ok && q["quant_algo"] == nil {
		q = inner // hf_quant_config.json's layout, pasted into config.json
	}
	algo, _ := q["quant_algo"].(string)
	if strings.ToUpper(algo) != "MIXED_PRECISION" {
		f, ok := modeloptFormat(algo)
		if !ok {
			imp.note("quantization_config: modelopt quant_algo %q is not one kvplan reads; weights are counted in %s. Give the checkpoint's size with --weights-bytes", algo, imp.a.baseDtype)
			return nil, nil
		}
		return &quantScheme{method: "modelopt " + algo, format: func(m module) (weightFormat, bool) {
			return f, decoderLinear(m) && !skip(m)
		}}, nil
	}
	layers, _ := q["quantized_layers"].(map[string]any)
	if len(layers) == 0 {
		return nil, qerr("modelopt MIXED_PRECISION without quantized_layers")
	}
	// A module takes the format of the first listed layer (in name order)
	// that is it or under it: the map holds that for the module's name and
	// every dotted prefix of a listed name, so a lookup is one probe.
	formats := map[string]weightFormat{}
	keys := make([]string, 0, len(layers))
	for k := range layers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		l, _ := layers[k].(map[string]any)
		algo, _ := l["quant_algo"].(string)
		f, ok := modeloptFormat(algo)
		if !ok {
			return nil, qerr("quantized_layers.%s: quant_algo %q is not one kvplan reads (FP8, NVFP4, MXFP4, AWQ/INT4, INT8)", k, algo)
		}
		name := canonicalName(k)
		for i := strings.IndexByte(name, '.'); i >= 0; i = nextDot(name, i) {
			if _, ok := formats[name[:i]]; !ok {
				formats[name[:i]] = f
			}
		}
		if _, ok := formats[name]; !ok {
			formats[name] = f
		}
	}
	return &quantScheme{method: "modelopt MIXED_PRECISION", format: func(m module) (weightFormat, bool) {
		if !m.linear || skip(m) {
			return weightFormat{}, false
		}
		f, ok := formats[m.name]
		return f, ok
	}}, nil
}

// skipList reads the modules a block leaves unconverted, under any of keys.
func (imp *importer) skipList(q map[string]any, field string, keys ...string) (func(module) bool, error) {
	var pats []string
	for _, k := range keys {
		l, err := patternList(q[k])
		if err != nil {
			return nil, imp.c.errAt(field, "%s: %v", k, err)
		}
		pats = append(pats, l...)
	}
	m, err := moduleMatcher(pats, false)
	if err != nil {
		return nil, imp.c.errAt(field, "%v", err)
	}
	return m, nil
}

// patternList reads a list of module names or patterns.
func patternList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("is %s; expected a list of module names", jsonType(v))
	}
	out := make([]string, 0, len(l))
	for i, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("entry %d is %s; expected a module name", i, jsonType(x))
		}
		out = append(out, s)
	}
	return out, nil
}

// wrapperPrefixes are the module-name prefixes checkpoints put before
// "layers." and "lm_head"; names are compared without them.
var wrapperPrefixes = []string{"model.language_model.", "language_model.model.", "language_model.", "model.", "transformer.", "backbone."}

// matchPrefixes are the prefixes a pattern is tried with, before a module's
// canonical name.
var matchPrefixes = []string{"", "model.", "language_model.model.", "model.language_model.", "language_model."}

// canonicalName strips a checkpoint's wrapper prefix from a module name.
func canonicalName(name string) string {
	for _, p := range wrapperPrefixes {
		if strings.HasPrefix(name, p) {
			return strings.TrimPrefix(name, p)
		}
	}
	return name
}

// maxModulePatterns bounds the wildcard and "re:" patterns of one list:
// they are compiled into one regular expression and tried on every module
// (60,000 of them took 6.3 s on a 28-layer model). Plain module names are
// not bounded: they are looked up in a set.
const maxModulePatterns = 1000

// maxConfigGroups bounds a compressed-tensors block's config_groups, each
// tried on every module (real checkpoints have one to three).
const maxConfigGroups = 100

// moduleMatcher matches modules against names, fnmatch-style globs and
// "re:" regular expressions (anchored at the start, as Python's re.match).
// A pattern is tried against the module's name with each wrapper prefix;
// a plain name also matches the modules under it and those it is under.
// With classes, "Linear" matches every Linear module. Matching costs a set
// lookup per dotted prefix of the module's name, and one run of a single
// compiled alternation of the patterns per wrapper prefix: linear in the
// modules, not patterns × modules.
func moduleMatcher(patterns []string, classes bool) (func(module) bool, error) {
	names := map[string]bool{} // canonical names
	under := map[string]bool{} // every dotted prefix of a name: "layers.0" of "layers.0.mlp"
	var alts []string
	linear := false
	for _, p := range patterns {
		switch {
		case classes && p == "Linear":
			linear = true
		case strings.HasPrefix(p, "re:"):
			expr := strings.TrimPrefix(p, "re:")
			if _, err := syntax.Parse(expr, syntax.Perl); err != nil {
				return nil, patternError(p, err)
			}
			alts = append(alts, "(?:"+expr+")")
		case strings.ContainsAny(p, "*?["):
			expr, err := globRegexp(p)
			if err != nil {
				return nil, fmt.Errorf("%v: %s", err, safetext.Quote(p))
			}
			alts = append(alts, expr)
		default:
			n := canonicalName(p)
			names[n] = true
			for i := strings.IndexByte(n, '.'); i >= 0; i = nextDot(n, i) {
				under[n[:i]] = true
			}
		}
	}
	if len(alts) > maxModulePatterns {
		return nil, fmt.Errorf("%s patterns with wildcards or re:, more than the %s kvplan matches in one list (plain module names are not limited)",
			units.Thousands(int64(len(alts))), units.Thousands(maxModulePatterns))
	}
	var re *regexp.Regexp
	if len(alts) > 0 {
		var err error
		if re, err = regexp.Compile("^(?:" + strings.Join(alts, "|") + ")"); err != nil {
			return nil, fmt.Errorf("the patterns do not compile together: %v", err)
		}
	}
	return func(m module) bool {
		if linear && m.linear || names[m.name] || under[m.name] {
			return true
		}
		for i := strings.IndexByte(m.name, '.'); i >= 0; i = nextDot(m.name, i) {
			if names[m.name[:i]] {
				return true // the module is under a name listed
			}
		}
		if re != nil {
			for _, w := range matchPrefixes {
				if re.MatchString(w + m.name) {
					return true
				}
			}
		}
		return false
	}, nil
}

// nextDot is the index of the next '.' of s after i, or -1.
func nextDot(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '.')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// patternError says why a "re:" pattern does not compile, the reason first,
// quoting at most 80 bytes of it (a 1,000-paren pattern was echoed whole).
func patternError(p string, err error) error {
	var se *syntax.Error
	if errors.As(err, &se) {
		return fmt.Errorf("not a regular expression (%s): %s", se.Code, safetext.Quote(p))
	}
	return fmt.Errorf("not a regular expression: %s", safetext.Quote(p))
}

// globRegexp translates an fnmatch glob, as path.Match reads it, into a
// regular expression that matches the whole name: '*' any run of
// characters but '/' (module names have none, so dots too), '?' one, [...]
// a class ([^...] negated, a-z ranges, \ escapes).
func globRegexp(p string) (string, error) {
	if _, err := path.Match(p, ""); err != nil {
		return "", err
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		switch c {
		case '*':
			b.WriteString("[^/]*")
			i++
		case '?':
			b.WriteString("[^/]")
			i++
		case '\\':
			r, n := utf8.DecodeRuneInString(p[i+1:])
			b.WriteString(regexp.QuoteMeta(string(r)))
			i += 1 + n
		case '[':
			i++
			negated := i < len(p) && p[i] == '^'
			if negated {
				i++
			}
			var ranges strings.Builder
			for first := true; i < len(p) && (first || p[i] != ']'); first = false {
				lo, n := classChar(p[i:])
				i += n
				hi := lo
				if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
					h, n := classChar(p[i+1:])
					i += 1 + n
					hi = h
				}
				if lo <= hi { // path.Match's b-a matches nothing; RE2 refuses it
					fmt.Fprintf(&ranges, "\\x{%x}-\\x{%x}", lo, hi)
				}
			}
			i++ // the closing ]
			switch {
			case ranges.Len() > 0 && negated:
				b.WriteString("[^" + ranges.String() + "]")
			case ranges.Len() > 0:
				b.WriteString("[" + ranges.String() + "]")
			case negated:
				b.WriteString("[\\x{0}-\\x{10ffff}]") // nothing excluded: any character
			default:
				b.WriteString("[^\\x{0}-\\x{10ffff}]") // nothing allowed
			}
		default:
			r, n := utf8.DecodeRuneInString(p[i:])
			b.WriteString(regexp.QuoteMeta(string(r)))
			i += n
		}
	}
	b.WriteByte('$')
	return b.String(), nil
}

// classChar reads one character of a glob's class, \-escaped or not.
func classChar(s string) (rune, int) {
	if s[0] == '\\' && len(s) > 1 {
		r, n := utf8.DecodeRuneInString(s[1:])
		return r, 1 + n
	}
	return utf8.DecodeRuneInString(s)
}
