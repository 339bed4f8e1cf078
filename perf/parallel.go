package perf

import (
	"fmt"
	"math"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

// The parallel terms of the engine model: a worker of TP × DP × PP GPUs
// with attention data parallelism, expert parallelism, pipeline stages and
// MTP (Spec.Parallel).
//
// Step and StepMS are given the whole worker's batch: every prefill chunk
// and decoding sequence of every data-parallel rank. The model splits it:
//
//   - pipeline: the batch runs as m = min(PP, sequences) micro-batches (the
//     slowest holding ⌈n / m⌉ of the chunks and of the decodes); each
//     stage holds layers / PP; the iteration takes
//     max(m × (stage + lm head), PP × stage + lm head + (PP − 1) × p2p), the
//     slower of a full pipeline and one micro-batch's trip through it;
//   - attention data parallelism: a micro-batch's prefill chunks and decodes
//     spread over the DP ranks, the slowest rank holding ⌈n / DP⌉ of each;
//     it sets the step (dense GEMMs, attention, KV reads, the lm head and the
//     tensor-parallel all-reduces are that rank's, with TP inside it);
//   - experts: the MoE layer sees every rank's tokens; each of the EP ranks
//     holds (E + redundant) / EP experts, each split MoE TP = TP × DP / EP
//     ways; compute is 2 × routed active params × tokens / (TP × DP) times
//     the imbalance (the hottest rank's tokens / mean), weight reads are the
//     rank's touched experts;
//   - all-to-all (EP > 1): per MoE layer a dispatch and a combine, each GPU
//     sending its tokens × hidden × top-k × (dispatch bytes + combine bytes)
//     × (EP − 1)/EP, times the imbalance, over NVLink inside the NVLink domain
//     and the deployment's link across it; with EP 1 and DP > 1 an all-gather
//     and a reduce-scatter of the tokens instead;
//   - MTP: each decoding sequence verifies N + 1 tokens per target step
//     (its GEMM tokens and attention queries × (N + 1)), the MTP layers
//     propose N tokens (N × the MTP layers' share of a decode step plus its
//     lm head), and a decode-only iteration yields acceptance-length tokens
//     per sequence: its StepMS is the target step over the acceptance
//     length, the time of one token (Terms.IterationMS is the whole step).
//     Iterations that carry prefill are counted as one token per decoding
//     sequence (the replay advances them one token; conservative).
type parallel struct {
	tp, dp, ep, pp float64
	moeGPUs        float64 // TP × DP: the GPUs of one MoE layer (one stage)
	moeTP          float64
	spec, accept   float64 // MTP: proposed tokens N, mean accepted tokens per step L
	mtpLayers      float64
	layers         float64
	skew           float64 // routing skew (Imbalance or EPLBImbalance)
	imbZ           float64 // √(2 ln EP): the hottest of EP ranks, in standard deviations
	imbVar         float64 // variance of one token's picks landing on one rank (hypergeometric)
	imbMean        float64 // k / EP: one token's mean picks on one rank
	expertsPerRank float64 // (E + redundant) / EP

	a2aCalls      float64 // dispatches and combines per iteration (2 per MoE layer), all stages
	a2aBytesTok   float64 // bytes one GPU sends per token it holds, dispatch + combine (low-latency kernels: a copy per routed expert)
	a2aNormalTok  float64 // the same for the normal kernels: a copy per other rank the token routes to
	gatherBytes   float64 // EP 1, DP > 1: bytes each GPU moves per worker token (all-gather + reduce-scatter)
	a2aBms        float64 // bytes per ms the all-to-all reaches per GPU (low-latency kernels: per expert)
	a2aNormalBms  float64 // the same for the normal kernels (across domains: once per node)
	a2aLLMS       float64 // per call, low-latency kernels
	a2aNormalMS   float64 // per call, normal kernels
	a2aOverDomain bool    // the MoE layer's GPUs span more than one NVLink domain

	p2pBytesTok float64 // activations sent per token between stages: hidden × 2 B
	p2pBms      float64
	p2pMS       float64

	eff ParallelEfficiency
	tbo bool // two-batch overlap
}

// ParallelDesc is what the parallel terms were built from, for --explain.
type ParallelDesc struct {
	Layout            string             `json:"layout"`
	GPUs              int                `json:"gpus"`
	MoETP             int                `json:"moe_tp,omitempty"`
	ExpertsPerRank    float64            `json:"experts_per_rank,omitempty"`
	NVLinkDomain      int                `json:"nvlink_domain_gpus"`
	Link              string             `json:"link,omitempty"`
	AllToAllGBs       float64            `json:"alltoall_gb_per_s,omitempty"`               // per GPU, reached (low-latency kernels: decode-only steps)
	AllToAllNormalGBs float64            `json:"alltoall_normal_gb_per_s,omitempty"`        // per GPU, reached (normal kernels: steps with prefill)
	AllToAllBytes     float64            `json:"alltoall_bytes_per_token,omitempty"`        // low-latency kernels (decode-only steps): a copy per routed expert on another rank
	AllToAllNormal    float64            `json:"alltoall_normal_bytes_per_token,omitempty"` // normal kernels (steps with prefill): a copy per other rank hit
	DispatchBytes     float64            `json:"dispatch_bytes_per_element,omitempty"`
	OverDomain        bool               `json:"alltoall_over_link,omitempty"`
	Skew              float64            `json:"imbalance_skew,omitempty"`
	EPLB              bool               `json:"eplb,omitempty"`
	TwoBatchOverlap   bool               `json:"two_batch_overlap,omitempty"`
	Redundant         int                `json:"redundant_experts,omitempty"`
	Efficiency        ParallelEfficiency `json:"parallel_efficiency"`
}

// Parallel returns what the parallel terms were built from; nil for a plain
// tensor-parallel model.
func (m *Model) Parallel() *ParallelDesc { return m.parDesc }

// CheckLayout reports why layout p cannot serve model m on GPU g over link
// (nil: within one NVLink domain), with the counts and what is accepted:
// models.Parallelism.Check (with redundant experts counted), MTP heads, and
// a worker wider than the NVLink domain without a network link.
func CheckLayout(m *catalog.Model, g *catalog.GPU, p models.Parallelism, redundant int, link *catalog.Link) error {
	if redundant < 0 {
		return fmt.Errorf("redundant experts must be >= 0 (got %d)", redundant)
	}
	mc := *m
	if redundant > 0 {
		if m.MoE == nil || m.MoE.Experts <= 0 {
			return fmt.Errorf("redundant experts need a mixture-of-experts model; %s is dense", m.Name)
		}
		if ep := p.Norm().EP; (m.MoE.Experts+redundant)%ep != 0 {
			r := redundant + ep - (m.MoE.Experts+redundant)%ep
			return fmt.Errorf("expert-parallel-size %d does not divide the %d routed + %d redundant experts of %s; %d redundant experts would make it %d", ep, m.MoE.Experts, redundant, m.Name, r, m.MoE.Experts+r)
		}
		moe := *m.MoE
		moe.Experts += redundant
		mc.MoE = &moe
	}
	if err := p.Check(&mc); err != nil {
		return err
	}
	n := p.Norm()
	if n.SpeculativeTokens > 0 && m.MTPLayers <= 0 {
		return fmt.Errorf("speculative-tokens %d needs the model's MTP heads; %s has none in the catalog (draft models are kvplan's limit: not modelled)", n.SpeculativeTokens, m.Name)
	}
	if n.DP > 1 && m.AttentionHeads > 0 && n.TP > m.AttentionHeads {
		return fmt.Errorf("tp %d exceeds the %d attention heads of %s", n.TP, m.AttentionHeads, m.Name)
	}
	dom := domainGPUs(g)
	if p.GPUs() > dom {
		switch {
		case link == nil:
			return fmt.Errorf("a worker of %s = %d GPUs spans %d nodes of %d %s GPUs (its NVLink domain): give --link, the network between them (kvplan links list)",
				n, p.GPUs(), (p.GPUs()+dom-1)/dom, dom, g.Name)
		case link.Scope == catalog.ScopeNVLink:
			return fmt.Errorf("link %s joins GPUs inside one NVLink domain only (%d %s GPUs), but a worker of %s needs %d GPUs: give a network link (kvplan links list)",
				link.Name, dom, g.Name, n, p.GPUs())
		case link.EffectiveBytesPerS <= 0:
			return fmt.Errorf("link %s has no effective bandwidth in the catalog", link.Name)
		}
	}
	return nil
}

// domainGPUs is the GPUs one NVLink domain (or, for PCIe cards, one host of
// 8) joins.
func domainGPUs(g *catalog.GPU) int {
	if g.NVLinkDomainGPUs >= 8 {
		return g.NVLinkDomainGPUs
	}
	return 8
}

// linkBytesPerGPU is the link's bandwidth each GPU of a node gets.
func linkBytesPerGPU(l *catalog.Link, nodeGPUs int) float64 {
	if l == nil {
		return 0
	}
	if l.RatePer == catalog.RatePerGPU {
		return l.EffectiveBytesPerS
	}
	return l.EffectiveBytesPerS / float64(max(1, nodeGPUs))
}

// newParallel builds the parallel terms of spec into out (which New has
// filled for TP alone); it rescales the per-rank figures New computed.
func newParallel(spec Spec, out *Model, wb float64) error {
	m, g := spec.Model, spec.GPU
	p := spec.Parallel
	p.TP = spec.TP
	if err := CheckLayout(m, g, p, spec.RedundantExperts, spec.Link); err != nil {
		return err
	}
	n := p.Norm()
	eff := ParallelEfficiencyFor(spec.Engine)
	if spec.ParallelEfficiency != nil {
		eff = *spec.ParallelEfficiency
	}
	q := &parallel{tp: float64(n.TP), dp: float64(n.DP), ep: float64(n.EP), pp: float64(n.PP),
		moeGPUs: float64(n.TP * n.DP), moeTP: float64(n.MoETP()), layers: float64(m.Layers), eff: eff, tbo: spec.TwoBatchOverlap}
	if n.SpeculativeTokens > 0 {
		q.spec, q.accept, q.mtpLayers = float64(n.SpeculativeTokens), n.AcceptanceLength, float64(m.MTPLayers)
	}
	eplb := spec.EPLB || spec.RedundantExperts > 0
	q.skew = eff.Imbalance
	if eplb {
		q.skew = eff.EPLBImbalance
	}
	dom := domainGPUs(g)
	icBytes := out.icBytesS
	if icBytes <= 0 {
		icBytes = 25e9 // PCIe Gen4, as the all-reduces take it (FACTS.md §3)
	}
	linkGPU := linkBytesPerGPU(spec.Link, dom)
	desc := &ParallelDesc{Layout: n.String(), GPUs: p.GPUs(), NVLinkDomain: dom, Efficiency: eff, EPLB: eplb, Redundant: spec.RedundantExperts,
		TwoBatchOverlap: spec.TwoBatchOverlap}
	if spec.Link != nil {
		desc.Link = spec.Link.Name
	}

	// Tensor parallelism wider than the domain: the all-reduces cross the link.
	if n.TP > dom && out.arCount > 0 {
		out.icBms = linkGPU * out.Efficiency.Interconnect / 1000
		out.Notes = append(out.Notes, fmt.Sprintf("tp %d spans more than one NVLink domain of %d GPUs: all-reduces run over %s", n.TP, dom, desc.Link))
	}

	if out.experts > 0 {
		E, k := float64(m.MoE.Experts), float64(m.MoE.ExpertsPerToken)
		R := float64(spec.RedundantExperts)
		// Experts: compute over the MoE layer's GPUs, weights per rank.
		out.expertFLOPTok = out.expertFLOPTok * q.tp / q.moeGPUs // New divided by tp
		out.expertBytes = out.expertBytes * q.tp / q.moeTP       // one expert's weights per GPU
		q.expertsPerRank = (E + R) / q.ep
		desc.MoETP, desc.ExpertsPerRank = int(q.moeTP), q.expertsPerRank
		if n.EP > 1 {
			q.imbZ = math.Sqrt(2 * math.Log(q.ep))
			q.imbMean = k / q.ep
			q.imbVar = k * (1 / q.ep) * (1 - 1/q.ep) * (E - k) / math.Max(1, E-1)
			// With dp 1 the tokens are already on every tp rank (attention
			// is tensor-parallel): each rank runs its experts on them and
			// the all-reduce tp has anyway sums the outputs, so expert
			// parallelism needs no all-to-all (SGLang --ep-size without
			// --moe-a2a-backend deepep, TRT-LLM and vLLM with attention tp).
		}
		if n.EP > 1 && n.DP > 1 {
			db := 2.0 // bf16 dispatch
			switch out.WeightDtype {
			case "fp8", "fp4", "nvfp4", "mxfp4":
				db = 1 + 4.0/128 // fp8 with a 4-byte scale per 128 elements (DeepEP)
			}
			desc.DispatchBytes = db
			q.a2aBytesTok = float64(m.HiddenSize) * k * (db + 2) * (q.ep - 1) / q.ep
			desc.AllToAllBytes = q.a2aBytesTok
			// The normal (throughput) kernels send a token once to each
			// other rank that holds one of its k experts, and the rank
			// copies it to its experts (DeepEP's dispatch layout,
			// is_token_in_rank); the low-latency kernels send a copy per
			// expert. Other ranks hit, with E/EP experts per rank and k
			// distinct experts a token: (EP − 1)(1 − C(E − E/EP, k)/C(E, k)).
			q.a2aNormalTok = float64(m.HiddenSize) * (db + 2) * otherRanksHit(E, k, q.ep)
			desc.AllToAllNormal = q.a2aNormalTok
			q.a2aCalls = 2 * q.layers
		} else if n.DP > 1 {
			// Attention DP without EP: the MoE layer is tensor-parallel over
			// TP × DP GPUs; tokens are all-gathered before it and
			// reduce-scattered after.
			q.gatherBytes = 2 * (q.moeGPUs - 1) / q.moeGPUs * float64(m.HiddenSize) * 2
			desc.AllToAllBytes = q.gatherBytes
			q.a2aCalls = 2 * q.layers
		}
		if q.a2aCalls > 0 {
			G := q.moeGPUs
			inv := 1 / icBytes // seconds per byte, inside the domain
			invNormal := inv
			if int(G) > dom {
				out := (G - float64(dom)) / (G - 1) // share of the peers across the link
				q.a2aOverDomain = true
				desc.OverDomain = true
				inv = math.Max((1-out)/icBytes, out/linkGPU)
				// The normal kernels send a token once to each other node
				// it routes to and forward it over NVLink there (DeepEP's
				// internode kernels): the link carries, per token, the
				// other domains hit, (D − 1)(1 − (1 − 1/D)^k), of the k
				// copies the low-latency kernels send.
				if n.EP > 1 {
					D := G / float64(dom)
					hit := (D - 1) * -math.Expm1(k*math.Log1p(-1/D))
					invNormal = math.Max((1-out)/icBytes, hit/otherRanksHit(E, k, q.ep)/linkGPU)
				} else {
					invNormal = inv
				}
			}
			q.a2aBms = eff.AllToAll / inv / 1000
			q.a2aNormalBms = eff.AllToAll / invNormal / 1000
			desc.AllToAllGBs = eff.AllToAll / inv / 1e9
			desc.AllToAllNormalGBs = eff.AllToAll / invNormal / 1e9
			q.a2aLLMS, q.a2aNormalMS = eff.AllToAllUS/1000, eff.AllToAllNormalUS/1000
		}
		desc.Skew = q.skew
	}
	if n.PP > 1 {
		q.p2pBytesTok = float64(m.HiddenSize) * 2
		bw := icBytes
		if p.GPUs() > dom {
			bw = linkGPU
		}
		q.p2pBms = bw / 1000
		q.p2pMS = eff.P2PUS / 1000
	}
	out.par, out.parDesc = q, desc
	out.Name = fmt.Sprintf("%s on %d × %s (%s), %s, %s weights", m.Name, p.GPUs(), g.Name, n, spec.Engine, out.WeightDtype)
	_ = wb
	return nil
}

// imbalance is the hottest expert-parallel rank's routed tokens over the
// mean when tokens tokens each pick k of E experts: (1 + skew) × (1 +
// √(2 ln EP) × σ / μ), σ and μ of one rank's picks under uniform routing
// (the maximum of EP roughly normal counts), at most EP.
func (q *parallel) imbalance(tokens float64) float64 {
	if q.ep <= 1 || tokens <= 0 {
		return 1
	}
	mu := tokens * q.imbMean
	sd := math.Sqrt(tokens * q.imbVar)
	return math.Min(q.ep, (1+q.skew)*(1+q.imbZ*sd/mu))
}

// otherRanksHit is the mean number of the other ep − 1 ranks one token's k
// distinct experts (of e, e/ep on each rank) land on: (ep − 1) × (1 −
// C(e − e/ep, k) / C(e, k)).
func otherRanksHit(e, k, ep float64) float64 {
	if ep <= 1 {
		return 0
	}
	miss := 1.0
	for i := 0.0; i < k; i++ {
		miss *= math.Max(0, e-e/ep-i) / (e - i)
	}
	return (ep - 1) * (1 - miss)
}

// share is the slowest of d ranks' share of n items spread over them: ⌈n/d⌉ / n.
func share(n, d float64) float64 {
	if n <= 0 || d <= 1 {
		return 1
	}
	return math.Ceil(n/d-1e-9) / n
}

// parTerms prices a worker's batch under the parallel layout (see parallel).
func (m *Model) parTerms(a batch) Terms {
	q := m.par
	var t Terms
	T := a.prefill + a.decodes
	t.Tokens, t.Sequences = int(math.Round(T)), int(math.Round(a.seqs))
	if T <= 0 {
		return t
	}
	n1 := 1.0 // tokens each decoding sequence runs through the target model
	if q.spec > 0 && a.decodes > 0 {
		n1 = q.spec + 1
	}
	chunks := math.Max(0, a.seqs-a.decodes)
	mb := 1.0
	if q.pp > 1 {
		mb = math.Min(q.pp, math.Max(1, math.Round(a.seqs)))
	}
	// The slowest micro-batch (⌈n / m⌉ of the chunks and of the decodes),
	// and in it the slowest data-parallel rank (⌈n / D⌉ of each).
	mp, md := share(chunks, mb), share(a.decodes, mb)
	fp, fd := share(chunks*mp, q.dp), share(a.decodes*md, q.dp)
	fp, fd = fp*mp, fd*md // shares of the whole batch
	pr, dr := a.prefill*fp, a.decodes*fd
	cr := chunks * fp
	kvShare := fd
	if chunks+a.decodes > 0 {
		kvShare = (fd*a.decodes + fp*chunks) / (chunks + a.decodes)
	}
	rank := rankBatch{
		tokens: pr + dr*n1, seqs: cr + dr, lmSeqs: cr + dr*n1,
		prefillFLOP: a.prefillFLOP * fp, decodeFLOP: a.decodeFLOP * fd * n1,
		kvBytes: a.kvBytes * kvShare, worker: a.prefill*mp + a.decodes*md*n1,
	}
	decodeOnly := a.prefill == 0
	t.CUDAGraph = !m.eager && rank.tokens <= m.graphMax && (decodeOnly || m.graphPrefill)
	full := m.rankTerms(rank, decodeOnly)
	s := 1 / q.pp
	layerFixed := m.eagerLayerMS
	if t.CUDAGraph {
		layerFixed = m.graphLayerMS
	}
	work := full.dense + full.experts + full.attention + full.kv + full.ar + full.act
	comm := full.a2a
	if q.tbo && comm > 0 {
		// Two micro-batches, each one's all-to-all under the other's
		// compute: the longer of the two (the all-to-all term keeps what
		// the compute does not hide).
		comm = math.Max(0, comm-work)
	}
	if !t.CUDAGraph && m.eagerOver {
		// Launches overlap the rank's work (Efficiency.EagerOverlap): only
		// what the work does not hide is fixed.
		layerFixed = smax(layerFixed, work+comm) - (work + comm)
	}
	// The host's per-sequence cost (seq_us) is paid by each rank's own
	// scheduler for the sequences it runs.
	host := m.stepMS + m.seqMS*rank.seqs
	stage := host + s*(layerFixed+work+comm)
	lm := full.lm
	cycle := mb * (stage + lm)
	if q.pp > 1 {
		p2p := q.p2pMS + rank.tokens*q.p2pBytesTok/q.p2pBms
		cycle = math.Max(cycle, q.pp*stage+lm+(q.pp-1)*p2p)
	}
	// Report the busy time of the last stage over the m micro-batches;
	// PipelineMS is the rest of the cycle (bubble and sends).
	t.FixedMS = mb * (host + s*layerFixed)
	t.DenseMS = mb * s * full.dense
	t.ExpertsMS = mb * s * full.experts
	t.AttentionMS = mb * s * full.attention
	t.KVReadMS = mb * s * full.kv
	t.AllReduceMS = mb * s * full.ar
	t.ActivationMS = mb * s * full.act
	t.AllToAllMS = mb * s * comm
	t.LMHeadMS = mb * lm
	t.PipelineMS = cycle - mb*(stage+lm)
	t.Imbalance = full.imbalance
	t.MicroBatches = int(mb)
	if m.experts > 0 {
		t.Experts = full.touched
	}
	if q.spec > 0 && a.decodes > 0 {
		// The MTP layers propose N tokens for every decoding sequence: N
		// steps of one token through them and the lm head.
		d := m.rankTerms(rankBatch{tokens: dr, seqs: dr, lmSeqs: dr, decodeFLOP: a.decodeFLOP * fd,
			kvBytes: a.kvBytes * fd, worker: a.decodes * md}, true)
		perLayer := (d.dense + d.experts + d.kv + d.ar + d.a2a) / q.layers
		t.DraftMS = mb * q.spec * (q.mtpLayers*(perLayer+m.graphLayerMS/q.layers) + d.lm)
	}
	t.IterationMS = t.FixedMS + t.DenseMS + t.ExpertsMS + t.LMHeadMS + t.AttentionMS + t.KVReadMS + t.AllReduceMS + t.ActivationMS +
		t.AllToAllMS + t.PipelineMS + t.DraftMS
	t.TokensPerStep = 1
	if q.spec > 0 && decodeOnly {
		t.TokensPerStep = q.accept
	}
	t.TotalMS = t.IterationMS / t.TokensPerStep
	return t
}

// rankBatch is one micro-batch as the slowest data-parallel rank sees it.
type rankBatch struct {
	tokens, seqs, lmSeqs    float64 // GEMM tokens, sequences, logits rows
	prefillFLOP, decodeFLOP float64
	kvBytes                 float64
	worker                  float64 // GEMM tokens of every rank: what the MoE layer sees
}

// rankFull is a rank's terms over every layer of the model (not a stage).
type rankFull struct {
	dense, experts, lm, attention, kv, ar, a2a, act float64
	imbalance, touched                              float64
}

func (m *Model) rankTerms(r rankBatch, decodeOnly bool) rankFull {
	q := m.par
	var f rankFull
	f.dense = smax(m.denseFLOPTok*r.tokens/m.gemmFLOPms, m.denseBytes/m.memBms)
	f.imbalance = 1
	if m.experts > 0 {
		f.imbalance = q.imbalance(r.worker)
		f.touched = q.expertsPerRank * -math.Expm1(r.worker*m.logMiss)
		f.experts = smax(m.expertFLOPTok*r.worker*f.imbalance/m.moeFLOPms, f.touched*m.expertBytes/m.moeBms)
	}
	f.lm = smax(m.lmFLOPSeq*r.lmSeqs/m.lmFLOPms, m.lmBytes/m.memBms)
	f.attention = r.prefillFLOP / m.attnFLOPms
	kv := r.kvBytes + 2*m.stateBytes*r.seqs
	if kv > 0 || r.decodeFLOP > 0 {
		f.kv = smax(r.decodeFLOP/m.attnFLOPms, kv/m.memBms)
	}
	f.ar = m.allReduceMS(r.tokens)
	f.act = m.activationMS(r.tokens)
	if q.a2aCalls > 0 {
		lat, bw := q.a2aNormalMS, q.a2aNormalBms
		if decodeOnly {
			lat, bw = q.a2aLLMS, q.a2aBms
		}
		var bytes float64
		if q.a2aBytesTok > 0 {
			// Each GPU holds its rank's tokens / TP; the hottest rank
			// receives the imbalance times the mean.
			per := q.a2aNormalTok
			if decodeOnly {
				per = q.a2aBytesTok
			}
			bytes = r.tokens / q.tp * per * f.imbalance / 2 // per call: half is dispatch, half combine
		} else {
			bytes = r.worker * q.gatherBytes / 2
		}
		f.a2a = q.a2aCalls * (lat + bytes/bw)
	}
	return f
}
