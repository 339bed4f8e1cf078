package planner

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/units"
)

// KVScenario asks for the KV size of a request.
type KVScenario struct {
	Model   *catalog.Model
	KVDtype string // "" = the model's default
	TP      int    // 0 or 1 = no tensor parallelism
	Tokens  int
	Engine  string // linear-attention and Mamba state convention; "" = vllm
}

// KVPlan is the KV size of one token and one request, per tensor-parallel
// rank and for all ranks together.
type KVPlan struct {
	Model                   string     `json:"model"`
	KVDtype                 string     `json:"kv_dtype"`
	TP                      int        `json:"tp"`
	KVBytesPerToken         int64      `json:"kv_bytes_per_token"`
	FullAttnBytesPerToken   int64      `json:"full_attention_bytes_per_token"`
	StateBytesPerRequest    int64      `json:"state_bytes_per_request"`
	Tokens                  int        `json:"tokens"`
	KVBytes                 int64      `json:"kv_bytes"`
	KVBytesAllRanks         int64      `json:"kv_bytes_all_ranks"`
	SlidingWindowCapApplied bool       `json:"sliding_window_cap_applied"`
	MTPConvention           string     `json:"mtp_convention"`
	StateConvention         string     `json:"state_convention,omitempty"` // how linear and Mamba state bytes are counted, when the model has such layers
	Derivation              Derivation `json:"derivation,omitempty"`

	kv *models.KV
}

// Compressed reports whether some layers cache compressed entries or
// indexer keys, so that the long-context bytes per token are not only the
// full-attention layers'.
func (p *KVPlan) Compressed() bool {
	for _, g := range p.kv.Groups {
		if g.Ratio > 1 {
			return true
		}
	}
	return false
}

// PlanKV computes the KV bytes of sc.Tokens tokens of sc.Model.
func PlanKV(sc KVScenario) (*KVPlan, error) {
	if sc.Model == nil {
		return nil, fmt.Errorf("no model given")
	}
	if sc.Tokens < 0 {
		return nil, fmt.Errorf("tokens must be >= 0 (got %d)", sc.Tokens)
	}
	if sc.TP < 0 {
		return nil, fmt.Errorf("tp must be >= 1 (got %d)", sc.TP)
	}
	kv, err := models.NewKV(sc.Model, models.KVOptions{KVDtype: sc.KVDtype, TP: sc.TP, Engine: sc.Engine})
	if err != nil {
		return nil, err
	}
	p := &KVPlan{
		Model:                 sc.Model.Name,
		KVDtype:               kv.KVDtype,
		TP:                    kv.TP,
		KVBytesPerToken:       kv.BytesPerToken(),
		FullAttnBytesPerToken: kv.FullBytesPerToken(),
		StateBytesPerRequest:  kv.StateBytesPerRequest(),
		Tokens:                sc.Tokens,
		KVBytes:               kv.RequestBytes(sc.Tokens),
		MTPConvention:         models.MTPConvention,
		kv:                    kv,
	}
	if p.KVBytesAllRanks, err = units.Product(p.KVBytes, int64(kv.TP)); err != nil {
		return nil, fmt.Errorf("KV of %d tokens on all %d ranks: %w", sc.Tokens, kv.TP, err)
	}
	for _, g := range kv.Groups {
		if g.SSMBytesEach > 0 || g.ConvBytesEach > 0 {
			p.StateConvention = kv.State.Describe()
		}
	}
	p.SlidingWindowCapApplied = p.KVBytes < int64(sc.Tokens)*p.KVBytesPerToken+p.StateBytesPerRequest
	d := &p.Derivation
	for _, g := range kv.Groups {
		switch g.Kind {
		case catalog.LayerLinear, catalog.LayerMamba:
			d.Add("state_bytes_"+g.Kind, float64(int64(g.Count)*g.StateBytesEach), "B/request", g.Formula(), "%s", g.Values())
			if g.SSMBytesEach > 0 || g.ConvBytesEach > 0 {
				d.Note(kv.State.Describe())
			}
			continue
		case models.KindMLA:
			d.Add("kv_bytes_per_token_mla", float64(g.BytesPerToken()), "B/token", g.Formula(), "%s", g.Values())
			continue
		}
		name := "kv_bytes_per_token_" + g.Kind
		switch {
		case g.Kind == catalog.LayerCompressed:
			name = fmt.Sprintf("%s_ratio_%d_window_%d", name, g.Ratio, g.Window)
		case g.Kind == models.KindIndexer && g.Ratio > 1:
			name = fmt.Sprintf("%s_ratio_%d", name, g.Ratio)
		case g.Window > 0:
			name = fmt.Sprintf("%s_window_%d", name, g.Window)
		}
		d.Add(name, float64(g.BytesPerToken()), "B/token", g.Formula(), "%s", g.Values())
		if g.StateBytesEach > 0 {
			d.Add(fmt.Sprintf("state_bytes_compressor_ratio_%d", g.Ratio), float64(int64(g.Count)*g.StateBytesEach), "B/request",
				"layers × compressor state per layer (replicated on every rank)", "%d × %d", g.Count, g.StateBytesEach)
		}
		if kv.TP > 1 && !g.Latent && g.Kind != models.KindIndexer {
			d.Note(fmt.Sprintf("kv heads per rank = max(1, kv heads / tp) with tp %d", kv.TP))
		}
	}
	var parts []string
	for _, g := range kv.Groups {
		if g.Kind != catalog.LayerLinear && g.Kind != catalog.LayerMamba {
			parts = append(parts, fmt.Sprint(g.BytesPerToken()))
		}
	}
	d.Add("kv_bytes_per_token", float64(p.KVBytesPerToken), "B/token", "sum over attention layer groups", "%s", strings.Join(parts, " + "))
	d.Note(models.MTPConvention)
	d.Add("kv_bytes", float64(p.KVBytes), "B", requestFormula(kv), "%s", requestValues(kv, sc.Tokens))
	return p, nil
}

func requestFormula(kv *models.KV) string {
	f := "tokens × kv_bytes_per_token"
	compressed := false
	for _, g := range kv.Groups {
		compressed = compressed || g.Ratio > 1
	}
	switch {
	case compressed:
		f = "Σ groups entries(tokens) × group bytes per entry: full and MLA every token, sliding min(tokens, window), " +
			"compressed min(tokens, window) + floor(tokens / ratio), indexer floor(tokens / ratio)"
	case kv.HasWindows():
		f = "Σ groups min(tokens, window) × group bytes per token"
	}
	switch {
	case kv.StateBytesPerRequest() > 0 && compressed:
		f += " + state per request"
	case kv.StateBytesPerRequest() > 0:
		f += " + linear state per request"
	}
	return f
}

func requestValues(kv *models.KV, tokens int) string {
	s := ""
	for _, g := range kv.Groups {
		if g.Kind == catalog.LayerLinear || g.Kind == catalog.LayerMamba {
			continue
		}
		if s != "" {
			s += " + "
		}
		s += fmt.Sprintf("%d × %d", g.Entries(tokens), int64(g.Count)*g.BytesPerTokenEach)
	}
	if st := kv.StateBytesPerRequest(); st > 0 {
		s += fmt.Sprintf(" + %d", st)
	}
	return s
}
