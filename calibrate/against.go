package calibrate

import (
	"github.com/kvplan/kvplan/benchresult"
	"github.com/kvplan/kvplan/catalog"
)

// Against is kvplan perf --against: every run of a result file predicted
// and set beside what it measured.
type Against struct {
	File    string       `json:"file"`
	Format  string       `json:"format"`
	Layout  string       `json:"layout"`
	Skipped []string     `json:"skipped_runs,omitempty"` // runs the file holds but that measured nothing usable
	Runs    []AgainstRun `json:"runs"`
}

// AgainstRun is one run: its set-up and load as predicted, and its
// figures measured, predicted and the signed error of each.
type AgainstRun struct {
	Run   int    `json:"run"` // 1-based, in the file
	Line  int    `json:"line,omitempty"`
	Label string `json:"label"`

	Setup SetupJSON `json:"setup"`
	Load  LoadJSON  `json:"load"`

	Method    string   `json:"method"`
	How       string   `json:"how"`
	Measured  Figures  `json:"measured"`  // exactly the file's
	Predicted Figures  `json:"predicted"` // the figures the file measured that kvplan predicts
	Error     Figures  `json:"error"`     // predicted / measured − 1
	Notes     []string `json:"notes"`
}

// SetupJSON is a set-up as perf --against reports it.
type SetupJSON struct {
	Model         string `json:"model"`
	GPU           string `json:"gpu"`
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version,omitempty"`
	TP            int    `json:"tp"`
	Replicas      int    `json:"replicas"`
	GPUs          int    `json:"gpus"`
	WeightDtype   string `json:"weight_dtype"`
	KVDtype       string `json:"kv_dtype,omitempty"`
	MaxNumSeqs    int    `json:"max_num_seqs,omitempty"`
	MaxBatchedTok int    `json:"max_num_batched_tokens,omitempty"`
	// Efficiency is the entry the prediction used, and Provenance where its
	// values come from (the shipped fit, or a calibration's file and date).
	Efficiency string `json:"efficiency"`
	Provenance string `json:"efficiency_provenance"`
	Fallback   string `json:"efficiency_fallback,omitempty"`
}

// LoadJSON is a load as perf --against replays it.
type LoadJSON struct {
	Kind         string  `json:"kind"` // concurrency, rate, burst, offline
	Concurrency  int     `json:"concurrency,omitempty"`
	RatePerS     float64 `json:"rate_per_s,omitempty"`
	Burstiness   float64 `json:"burstiness,omitempty"`
	EvenGaps     bool    `json:"even_gaps,omitempty"`
	Prompts      int     `json:"prompts,omitempty"`
	InputTokens  float64 `json:"input_tokens"`  // mean
	OutputTokens float64 `json:"output_tokens"` // mean
	PerRequest   int     `json:"per_request_lengths,omitempty"`
}

// Compare predicts every run of f.
func Compare(cat *catalog.Catalog, f *benchresult.File, g Given) (*Against, error) {
	cases, err := Resolve(cat, f, g)
	if err != nil {
		return nil, err
	}
	out := &Against{File: f.Path, Format: f.Format, Layout: f.Layout, Skipped: f.Skipped}
	for i := range cases {
		c := &cases[i]
		p, err := c.Predict(nil)
		if err != nil {
			return nil, err
		}
		m := MeasuredFigures(c.Run.Measured)
		pred := p.Figures.Only(m)
		ar := AgainstRun{Run: c.Run.Index + 1, Line: c.Run.Line, Label: c.Run.Label, Setup: c.setupJSON(), Load: c.loadJSON(),
			Method: p.Method, How: p.How, Measured: m, Predicted: pred, Error: pred.ErrorAgainst(m)}
		ar.Notes = append(append(ar.Notes, c.Notes...), p.Notes...)
		if ar.Notes == nil {
			ar.Notes = []string{}
		}
		out.Runs = append(out.Runs, ar)
	}
	return out, nil
}

func (c *Case) setupJSON() SetupJSON {
	s := &c.Setup
	j := SetupJSON{Model: s.Model.Name, GPU: s.GPU.Name, Engine: s.Engine, EngineVersion: s.EngineVersion, TP: s.TP, Replicas: s.Replicas,
		GPUs: s.GPUs(), WeightDtype: s.WeightDtype, KVDtype: s.KVDtype, MaxNumSeqs: s.MaxNumSeqs, MaxBatchedTok: s.MaxBatchedTok}
	if m, err := s.Catalog.EfficiencyFor(s.GPU.Name, s.Engine, s.WeightDtype); err == nil {
		j.Efficiency, j.Provenance, j.Fallback = m.Key(), m.Provenance(), m.Fallback
	}
	return j
}

func (c *Case) loadJSON() LoadJSON {
	l := c.Load
	return LoadJSON{Kind: l.Kind, Concurrency: l.Concurrency, RatePerS: l.RatePerS, Burstiness: l.Burstiness, EvenGaps: l.EvenGaps,
		Prompts: l.Prompts, InputTokens: l.InputTokens, OutputTokens: l.OutputTokens, PerRequest: len(l.InputLens)}
}
