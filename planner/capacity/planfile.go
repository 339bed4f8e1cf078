package capacity

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/kvplan/kvplan/planfile"
	"github.com/kvplan/kvplan/slo"
)

// planFile is the subset of a kvplan plan file (package planfile) that a
// search result fills, with keys in the order a reader expects them.
type planFile struct {
	Model    planModel           `toml:"model"`
	Workload planWorkload        `toml:"workload"`
	Pools    map[string]planPool `toml:"pools"`
	Link     *planLink           `toml:"link,omitempty"`
	Router   planRouter          `toml:"router"`
	Runtime  planRuntime         `toml:"runtime"`
	SLO      slo.SLO             `toml:"slo"`
}

type planModel struct {
	Name        string `toml:"name"`
	KVDtype     string `toml:"kv_dtype"`
	WeightDtype string `toml:"weight_dtype,omitempty"`
	TP          int    `toml:"tp"`
}

type planWorkload struct {
	InputTokens  int     `toml:"input_tokens"`
	OutputTokens int     `toml:"output_tokens"`
	RequestRate  float64 `toml:"request_rate"`
	Concurrency  int     `toml:"concurrency"`
	Prefixes     int     `toml:"prefixes,omitempty"`
	PrefixTokens int     `toml:"prefix_tokens,omitempty"`
}

type planPool struct {
	Role                 string  `toml:"role"`
	Workers              int     `toml:"workers"`
	GPU                  string  `toml:"gpu"`
	TP                   int     `toml:"tp"`
	DataParallelSize     int     `toml:"data_parallel_size,omitzero"`
	ExpertParallelSize   int     `toml:"expert_parallel_size,omitzero"`
	PipelineParallelSize int     `toml:"pipeline_parallel_size,omitzero"`
	SpeculativeTokens    int     `toml:"speculative_tokens,omitzero"`
	AcceptanceLength     float64 `toml:"acceptance_length,omitzero"`
	GPUMemoryUtilization float64 `toml:"gpu_memory_utilization"`
	MaxModelLen          int     `toml:"max_model_len"`
	MaxNumBatchedTokens  int     `toml:"max_num_batched_tokens"`
	MaxNumSeqs           int     `toml:"max_num_seqs"`
}

type planLink struct {
	Name string `toml:"name"`
}

type planRouter struct {
	Mode        string `toml:"mode"`
	KVEvents    bool   `toml:"kv_events"`
	RequestPath string `toml:"request_path,omitempty"` // written when direct: frontend is the plan file's default
}

type planRuntime struct {
	Engine string `toml:"engine"`
}

// PlanFile writes c as a kvplan plan file: the model, the workload at the
// candidate's rate (concurrency from Little's law: rate × mean request
// time), its pools with the engine settings the search assumed, the link,
// the router the search assumed (round-robin, or the KV router with events
// when prompts share prefixes), the engine and the SLO (p95 targets, as
// `kvplan plan` was asked). `kvplan check` reads it back.
func (q *Query) PlanFile(c *Candidate) ([]byte, error) {
	if c == nil || c.shape == nil {
		return nil, fmt.Errorf("no candidate to write")
	}
	s := c.shape
	wd := ""
	if s.weightDtype != q.Model.WeightDtype {
		wd = s.weightDtype
	}
	inFlight := c.RatePerS * (c.TTFTMeanMS + float64(q.OutputTokens-1)*c.ITLMeanMS) / 1000
	pf := planFile{
		Model: planModel{Name: q.Model.Name, KVDtype: s.kvDtype, WeightDtype: wd, TP: s.roles[0].tp},
		Workload: planWorkload{InputTokens: q.InputTokens, OutputTokens: q.OutputTokens, RequestRate: c.RatePerS,
			Concurrency: max(1, int(math.Ceil(inFlight))), Prefixes: q.Prefixes, PrefixTokens: q.PrefixTokens},
		Pools:   map[string]planPool{},
		Router:  planRouter{Mode: "round-robin", KVEvents: true},
		Runtime: planRuntime{Engine: q.Engine.Name},
		SLO:     q.SLO,
	}
	if q.routerPolicy() == "kv-aware" {
		pf.Router.Mode = "kv"
	}
	if !q.Path.IsFrontend() {
		pf.Router.RequestPath = planfile.RequestPathDirect
	}
	if s.link != nil {
		pf.Link = &planLink{Name: s.link.Name}
	}
	for _, r := range s.roles {
		if r.network != nil && pf.Link == nil {
			// An aggregated worker over several nodes: the network between
			// them, which kvplan check prices its all-to-all over.
			pf.Link = &planLink{Name: r.network.Name}
		}
	}
	for i, r := range s.roles {
		name := "workers"
		if s.mode == ModeDisaggregated {
			name = r.name
		}
		pl := planPool{Role: r.name, Workers: c.Pools[i].Workers, GPU: r.gpu.Name, TP: r.tp,
			GPUMemoryUtilization: r.memory.GPUUtil, MaxModelLen: r.maxModelLen, MaxNumBatchedTokens: r.budget, MaxNumSeqs: r.maxSeqs}
		// A layout beyond tp writes only the counts above 1: a plain pool's
		// plan file reads as it always has.
		if n := r.par.Norm(); !n.Plain() {
			pl.DataParallelSize, pl.ExpertParallelSize, pl.PipelineParallelSize = above1(n.DP), above1(n.EP), above1(n.PP)
			pl.SpeculativeTokens, pl.AcceptanceLength = n.SpeculativeTokens, n.AcceptanceLength
		}
		pf.Pools[name] = pl
	}
	var b bytes.Buffer
	for _, line := range q.Summary(c) {
		b.WriteString("# " + line + "\n")
	}
	b.WriteString("\n")
	if err := toml.NewEncoder(&b).Encode(pf); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Summary is what a file written from c says first: the question, the
// deployment and its predicted figures (the plan file's and every emitted
// manifest's leading comment).
func (q *Query) Summary(c *Candidate) []string {
	return []string{
		fmt.Sprintf("Written by kvplan plan: the cheapest deployment of %s found for %.4g requests/s of %d tokens in and %d out",
			q.Model.Name, c.RatePerS, q.InputTokens, q.OutputTokens),
		fmt.Sprintf("within %s: %s, %d GPUs.", sloSummary(q.SLO), c.Describe(), c.GPUs),
		fmt.Sprintf("Predicted: TTFT p95 %.0f ms, ITL p95 %.1f ms, capacity %.4g requests/s (utilization %.0f%%). Check it with `kvplan check`.",
			c.TTFTP95MS, c.ITLP95MS, c.RequestsPerSCapacity, c.Utilization*100),
	}
}

// sloSummary says the targets as the plan file's header has always said
// the two p95 ones: "TTFT p95 1000 ms and ITL p95 50 ms".
func sloSummary(s slo.SLO) string {
	var parts []string
	for _, g := range s.Given() {
		if g.Metric == slo.Goodput {
			parts = append(parts, fmt.Sprintf("goodput %g (%s per request)", g.Value, s.PerRequestString()))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %g ms", g.Label(), g.Value))
	}
	switch len(parts) {
	case 0:
		return "no SLO"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// above1 is n when it is above 1, else 0 (left out of the plan file).
func above1(n int) int {
	if n > 1 {
		return n
	}
	return 0
}
