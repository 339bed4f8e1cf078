package capacity

import (
	"fmt"
	"math"
	"strings"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
)

// maxWorkerGPUs bounds the GPUs of one worker the search offers: DeepSeek's
// own decode unit is 144 GPUs and SGLang's 96-H100 deployment runs 72-GPU
// decode workers, but beyond 64 the offered sizes would dominate the
// search's time; --max-gpus lowers it.
const maxWorkerGPUs = 64

// layoutOpt is one worker layout the search offers on a GPU: its ranks, and
// the network between its NVLink domains when it spans more than one.
type layoutOpt struct {
	par     models.Parallelism
	network *catalog.Link // nil: the worker fits one NVLink domain
}

func (o layoutOpt) key() string {
	if o.network == nil {
		return o.par.String()
	}
	return o.par.String() + " over " + o.network.Name
}

// layoutOptions lists the layouts of model m on GPU g the engines run:
//
//   - tensor parallelism alone, tp ∈ tps (every model);
//   - on a mixture of experts, tp T with its experts spread over the same
//     T ranks (EP = T, MoE tp 1: SGLang --tp T --ep-size T, TensorRT-LLM tp T
//     ep T);
//   - on a mixture of experts with latent attention (MLA, whose latent
//     every tensor-parallel rank would replicate), attention data
//     parallelism with the experts over every rank: tp 1, dp D, EP = D
//     (vLLM --data-parallel-size D --enable-expert-parallel, SGLang
//     --enable-dp-attention, TensorRT-LLM enable_attention_dp), D = 2, 4,
//     8, … up to maxWorkerGPUs;
//   - on a dense model that does not fit one node at tp 8, tp 8 with 2 or 4
//     pipeline stages.
//
// A layout wider than g's NVLink domain (8 on HGX, 72 on NVL72) is offered
// once per network link of the query (its nodes joined by it), and not at
// all without one (a note says so). Layouts the model cannot take
// (models.Parallelism.Check: EP not dividing the experts) are left out.
func (q *Query) layoutOptions(m *catalog.Model, g *catalog.GPU, tps []int, note func(string)) []layoutOpt {
	var out []layoutOpt
	for _, tp := range tps {
		out = append(out, layoutOpt{par: models.Parallelism{TP: tp}})
	}
	dom := g.NVLinkDomainGPUs
	if dom <= 0 {
		return out // PCIe cards: tensor parallelism inside the host only
	}
	limit := maxWorkerGPUs
	if q.MaxGPUs > 0 {
		limit = min(limit, q.MaxGPUs)
	}
	if q.GPUs > 0 {
		limit = min(limit, q.GPUs)
	}
	var networks []*catalog.Link
	for _, l := range q.Links {
		if l.Scope != catalog.ScopeNVLink {
			networks = append(networks, l)
		}
	}
	add := func(p models.Parallelism) {
		n := p.GPUs()
		if n > limit || p.Check(m) != nil {
			return
		}
		if n <= dom {
			out = append(out, layoutOpt{par: p})
			return
		}
		if len(networks) == 0 {
			note(fmt.Sprintf("workers of more than %d %s GPUs (one NVLink domain) are not offered: give --link, the network between their nodes (kvplan links list)", dom, g.Name))
			return
		}
		for _, l := range networks {
			out = append(out, layoutOpt{par: p, network: l})
		}
	}
	switch {
	case m.MoE != nil && m.MoE.Experts > 0:
		for _, tp := range tps {
			if tp > 1 {
				add(models.Parallelism{TP: tp, EP: tp})
			}
		}
		if m.MLA != nil {
			for d := 2; d <= limit; d *= 2 {
				add(models.Parallelism{TP: 1, DP: d, EP: d})
			}
		}
	case !fitsAtTP8(m, g) && slicesContain(tps, 8):
		for _, pp := range []int{2, 4} {
			add(models.Parallelism{TP: 8, PP: pp})
		}
	}
	return out
}

// fitsAtTP8 reports whether m's weights take at most 90% of 8 of g: a
// first cut, before the memory model, of which dense models need pipeline
// stages across nodes.
func fitsAtTP8(m *catalog.Model, g *catalog.GPU) bool {
	w, err := models.NewWeights(m, 8)
	return err != nil || float64(w.TotalBytes) <= 0.9*8*float64(g.MemoryBytes)
}

func slicesContain(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// beyondTP reports whether a shape has a role whose layout is more than
// tensor parallelism.
func (s *shape) beyondTP() bool {
	for _, r := range s.roles {
		if !r.par.Plain() {
			return true
		}
	}
	return false
}

// floorUSD is what one worker of each of the shape's roles costs at the
// per-GPU rates the sizing ranks by: no size of the shape costs less. +Inf
// when a role's price is unknown (nothing is pruned on it).
func (s *shape) floorUSD() float64 {
	usd := 0.0
	for _, r := range s.roles {
		if !r.priceOK {
			return math.Inf(1)
		}
		usd += r.usd * float64(r.gpus)
	}
	return usd
}

// noWorkerFits says why nothing was found when no candidate's workers fit
// in GPU memory: the GPUs asked for (the deployment's limit), a worker wider
// than one NVLink domain without a --link to price it over, or the widest
// worker kvplan offers (kvplan's limit); "" when some candidate fits.
func (q *Query) noWorkerFits(res *Result) string {
	for _, c := range res.Candidates {
		if c.LimitedBy != limitMemory {
			return ""
		}
	}
	if len(res.Candidates) == 0 {
		return ""
	}
	widest := maxWorkerGPUs
	bound := ""
	switch {
	case q.GPUs > 0 && q.GPUs < widest:
		widest, bound = q.GPUs, fmt.Sprintf("--gpus %d", q.GPUs)
	case q.MaxGPUs > 0 && q.MaxGPUs < widest:
		widest, bound = q.MaxGPUs, fmt.Sprintf("--max-gpus %d", q.MaxGPUs)
	}
	for _, n := range res.Notes {
		if strings.Contains(n, "are not offered: give --link") {
			return fmt.Sprintf("no worker that fits one NVLink domain holds %s's weights and one request's KV; a worker over several nodes needs the network between them: give --link (kvplan prices what crosses nodes over it, and offers no such worker without it)", q.Model.Name)
		}
	}
	if bound != "" {
		return fmt.Sprintf("no worker of at most %d GPUs (%s) holds %s's weights and one request's KV: the deployment needs more GPUs per worker", widest, bound, q.Model.Name)
	}
	return fmt.Sprintf("no worker kvplan offers holds %s's weights and one request's KV: kvplan's search offers workers of at most %d GPUs (tp up to 8, pipeline stages for dense models, data and expert parallelism for mixtures of experts); this is kvplan's limit, not the deployment's", q.Model.Name, maxWorkerGPUs)
}
