package perf

import "math"

// Terms is one iteration's time, by operator class, in milliseconds, and
// what drove it.
type Terms struct {
	FixedMS      float64 `json:"fixed_ms"`                  // per-step and per-layer fixed costs
	DenseMS      float64 `json:"dense_ms"`                  // dense GEMMs (attention projections, dense MLPs, shared experts)
	ExpertsMS    float64 `json:"experts_ms"`                // routed expert GEMMs
	LMHeadMS     float64 `json:"lm_head_ms"`                // logits of every sequence in the step
	AttentionMS  float64 `json:"attention_ms"`              // prefill attention compute
	KVReadMS     float64 `json:"kv_read_ms"`                // decode attention: every sequence's KV read (and its compute)
	AllReduceMS  float64 `json:"allreduce_ms"`              // tensor-parallel all-reduces
	ActivationMS float64 `json:"activation_ms,omitempty"`   // memory-bound activation kernels (norms, MLP activation, MoE combine); 0 unless the efficiencies set activation_traffic
	TotalMS      float64 `json:"step_ms"`                   // the sum
	Tokens       int     `json:"tokens"`                    // prefill tokens + decoding sequences
	Sequences    int     `json:"sequences"`                 // prefill chunks + decoding sequences
	CUDAGraph    bool    `json:"cuda_graph"`                // the step runs under CUDA graphs (fixed per-layer cost is the graphed one)
	Experts      float64 `json:"experts_touched,omitempty"` // distinct routed experts the tokens route to, per layer (per expert-parallel rank)

	// The parallel layout's terms (Spec.Parallel; absent for tensor
	// parallelism alone): see parallel.go.
	AllToAllMS    float64 `json:"alltoall_ms,omitempty"`     // MoE dispatch + combine (EP > 1), or all-gather + reduce-scatter (DP > 1, EP 1)
	PipelineMS    float64 `json:"pipeline_ms,omitempty"`     // pipeline bubble and point-to-point sends: the cycle beyond the last stage's work
	DraftMS       float64 `json:"draft_ms,omitempty"`        // MTP layers proposing the speculative tokens
	Imbalance     float64 `json:"ep_imbalance,omitempty"`    // the hottest expert-parallel rank's routed tokens / mean (1 = even)
	MicroBatches  int     `json:"micro_batches,omitempty"`   // pipeline micro-batches of the step
	IterationMS   float64 `json:"iteration_ms,omitempty"`    // the whole step, every term; step_ms = iteration_ms / tokens_per_step
	TokensPerStep float64 `json:"tokens_per_step,omitempty"` // tokens each decoding sequence gains per step (MTP: the acceptance length)
}

// StepMS is the time of one engine iteration, in milliseconds: prefill chunk
// i runs prefillTokens[i] new tokens on top of prefillContext[i] tokens
// already in that sequence's KV (prefillContext may be nil: no context), and
// every decoding sequence j, with decodeContext[j] tokens of context,
// advances by one token. It is pure, allocation-free and safe for
// concurrent use. An empty step costs 0.
func (m *Model) StepMS(prefillTokens, prefillContext, decodeContext []int) float64 {
	return m.Step(prefillTokens, prefillContext, decodeContext).TotalMS
}

// Step is StepMS with its terms.
func (m *Model) Step(prefillTokens, prefillContext, decodeContext []int) Terms {
	var a batch
	for i, p := range prefillTokens {
		if p <= 0 {
			continue
		}
		c := 0
		if i < len(prefillContext) {
			c = prefillContext[i]
		}
		a.prefill += float64(p)
		a.seqs++
		for gi := range m.groups {
			g := &m.groups[gi]
			a.prefillFLOP += causalPairs(float64(p), float64(c), g.window) * g.pairFLOP
			a.kvBytes += capWindow(float64(c+p), g.window) * g.kvBytesToken
		}
	}
	a.decodes = float64(len(decodeContext))
	a.seqs += a.decodes
	for gi := range m.groups {
		g := &m.groups[gi]
		var ctx float64
		if g.window == 0 {
			for _, c := range decodeContext {
				ctx += float64(c)
			}
		} else {
			for _, c := range decodeContext {
				ctx += capWindow(float64(c), g.window)
			}
		}
		a.decodeFLOP += ctx * g.decodeFLOP
		a.kvBytes += ctx * g.kvBytesToken
	}
	return m.terms(a)
}

// batch is what an iteration's time depends on, summed over its sequences.
type batch struct {
	prefill     float64 // prefill tokens
	decodes     float64 // decoding sequences (one token each)
	seqs        float64 // prefill chunks + decoding sequences
	prefillFLOP float64 // prefill attention FLOPs
	decodeFLOP  float64 // decode attention FLOPs
	kvBytes     float64 // KV bytes read (contexts of every sequence), linear state excluded
}

// terms prices a batch.
func (m *Model) terms(a batch) Terms {
	if m.par != nil {
		return m.parTerms(a)
	}
	var t Terms
	T := a.prefill + a.decodes
	t.Tokens, t.Sequences = int(math.Round(T)), int(math.Round(a.seqs))
	if T <= 0 {
		return t
	}
	t.CUDAGraph = !m.eager && T <= m.graphMax && (a.prefill == 0 || m.graphPrefill)
	if t.CUDAGraph {
		t.FixedMS = m.stepMS + m.graphLayerMS
	} else {
		t.FixedMS = m.stepMS + m.eagerLayerMS
	}
	t.DenseMS = smax(m.denseFLOPTok*T/m.gemmFLOPms, m.denseBytes/m.memBms)
	if m.experts > 0 {
		t.Experts = m.experts * -math.Expm1(T*m.logMiss)
		t.ExpertsMS = smax(m.expertFLOPTok*T/m.moeFLOPms, t.Experts*m.expertBytes/m.moeBms)
	}
	t.LMHeadMS = smax(m.lmFLOPSeq*a.seqs/m.lmFLOPms, m.lmBytes/m.memBms)
	t.AttentionMS = a.prefillFLOP / m.attnFLOPms
	kv := a.kvBytes + 2*m.stateBytes*a.seqs
	if kv > 0 || a.decodeFLOP > 0 {
		t.KVReadMS = smax(a.decodeFLOP/m.attnFLOPms, kv/m.memBms)
	}
	t.AllReduceMS = m.allReduceMS(T)
	t.ActivationMS = m.activationMS(T)
	if !t.CUDAGraph && m.eagerOver {
		// The launches overlap the GPU's work: the step takes the smooth
		// maximum of the two, the part of the launches not hidden is fixed.
		gpu := t.DenseMS + t.ExpertsMS + t.LMHeadMS + t.AttentionMS + t.KVReadMS + t.AllReduceMS + t.ActivationMS
		t.FixedMS = m.stepMS + smax(m.eagerLayerMS, gpu) - gpu
	}
	t.FixedMS += m.seqMS * a.seqs
	t.TotalMS = t.FixedMS + t.DenseMS + t.ExpertsMS + t.LMHeadMS + t.AttentionMS + t.KVReadMS + t.AllReduceMS + t.ActivationMS
	return t
}

// Parts names the terms an iteration's time is the sum of, as derivations
// print them, with their values in ms: the activation term only when the
// efficiencies turn it on, the parallel layout's (all-to-all, pipeline,
// draft) only with parallel.
func (t Terms) Parts(parallel bool) ([]string, []float64) {
	names := []string{"fixed", "dense", "experts", "lm_head", "attention", "kv_read", "allreduce"}
	vals := []float64{t.FixedMS, t.DenseMS, t.ExpertsMS, t.LMHeadMS, t.AttentionMS, t.KVReadMS, t.AllReduceMS}
	if t.ActivationMS > 0 {
		names, vals = append(names, "activations"), append(vals, t.ActivationMS)
	}
	if parallel {
		names = append(names, "alltoall", "pipeline", "draft")
		vals = append(vals, t.AllToAllMS, t.PipelineMS, t.DraftMS)
	}
	return names, vals
}

// smax is a smooth maximum of a compute time and a memory time: the cube
// norm, within 26% of the larger when they are equal and within 1% once one
// is twice the other.
func smax(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if a == 0 {
		return 0
	}
	r := b / a
	return a * math.Cbrt(1+r*r*r)
}

// causalPairs counts the (query, key) pairs of a chunk of p new tokens on
// top of c tokens of context: query i (1-based, position c+i) attends to
// min(c+i, window) keys, window 0 meaning all.
func causalPairs(p, c float64, window int) float64 {
	if window <= 0 || c+p <= float64(window) {
		return p*c + p*(p+1)/2
	}
	w := float64(window)
	if c >= w {
		return p * w
	}
	// positions c+1 … window attend to their position, the rest to window keys.
	return (w*(w+1)-c*(c+1))/2 + (c+p-w)*w
}

func capWindow(n float64, window int) float64 {
	if window > 0 && n > float64(window) {
		return float64(window)
	}
	return n
}
