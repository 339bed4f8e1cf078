package capacity

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planner"
)

// explain writes the arithmetic of a candidate into its Derivation.
func (q *Query) explain(c *Candidate) {
	s, e := c.shape, c.load
	d := &c.Derivation
	d.Add("requests_per_s", e.rate, "requests/s", "the rate asked for (max-rate mode: the highest rate within the SLO)", "%.4g", e.rate)
	for i, r := range s.roles {
		pre := r.name + "."
		n := e.workers[i]
		d.Add(pre+"kv_slots_per_worker", float64(r.slots), "tokens", "the memory model (kvplan memory): (GPU memory × util − weights − activations − overheads) / KV bytes per token, in blocks",
			"%s, %s, util %.2g, max_model_len %d", r.gpu.Name, explainLayout(r.par), r.memory.GPUUtil, r.maxModelLen)
		if r.note != "" {
			d.Note(r.note)
		}
		if i >= len(e.loads) {
			continue
		}
		ld := e.loads[i]
		per := e.rate / float64(n)
		d.Add(pre+"rate_per_worker", per, "requests/s", "requests_per_s / workers", "%.4g / %d", e.rate, n)
		d.Add(pre+"batch_cap", float64(ld.BatchCap), "sequences", "min(max_num_seqs, kv slots / blocks of one request)", "min(%d, %d / %d)", r.maxSeqs, r.slots, int64(q.InputTokens+q.OutputTokens))
		if r.name != rolePrefill {
			w := s.worker(q, r, nil)
			d.Add(pre+"decode_step_ms", w.DecodeStepAt(1+ld.Batch), "ms", "engine model: one decode-only iteration of 1 + batch sequences at mean context input + output/2",
				"StepMS(decodes = %.3g)", 1+ld.Batch)
			d.Add(pre+"batch", ld.Batch, "sequences", "root of B = rate_per_worker × (output tokens − 1) × ITL(B) (Little's law)",
				"%.4g/s × %d × %.4g ms", per, q.OutputTokens-1, ld.ITLMeanMS)
			d.Add(pre+"itl_mean_ms", ld.ITLMeanMS, "ms", "1 / (u / chunk iteration + (1 − u) / decode step), u = share of time in iterations that carry prefill",
				"u = %.4g", ld.PrefillUtil)
			d.Add(pre+"itl_p95_ms", ld.ITLP95MS, "ms", "95th percentile of the iteration a sequence sees: 1 + Poisson(batch) sequences, a prefill chunk in a share of them",
				"batch %.4g, prefill share of tokens %.4g", ld.Batch, ld.MixedShare)
		}
		if r.name != roleDecode {
			d.Add(pre+"prefill_ms", ld.Prefill.AloneMS, "ms", "engine model: the prompt's chunks (max_num_batched_tokens each, less the decodes sharing them), summed",
				"%d uncached tokens in chunks of at most %d", q.InputTokens, r.budget)
			d.Add(pre+"prefill_utilization", ld.PrefillUtil, "ratio", "rate_per_worker × GPU time per prompt when prompts queue (packed to the budget)",
				"%.4g/s × %.4g ms", per, ld.Prefill.PackedMS)
			if f := e.inFlight; f != nil {
				shape := 1.0 // GapCV2 0: Poisson
				if f.GapCV2 > 0 {
					shape = 1 / f.GapCV2
				}
				d.Add(pre+"prefill_wait_p95_ms", e.prefill.P95MS, "ms", "data-parallel ranks in lockstep: what is left of the previous arrival's prefill iteration, (chunk iteration − gap)⁺, P(W > t) = F(chunk iteration − t), F the gaps' gamma distribution",
					"chunk iteration %.4g ms, gaps of mean %.4g ms and shape 1/c² = %.4g, P(wait) %.4g, mean %.4g ms", f.IterMS, 1000/f.RatePerS, shape, f.PWait(), e.prefill.MeanMS)
			} else {
				d.Add(pre+"prefill_wait_p95_ms", e.prefill.P95MS, "ms", "M/G/c (c = 1 per aggregated worker, c = workers for a prefill pool): Erlang C(c, a = rate × service), wait tail C × exp(−t/θ), θ = (1 + c_s²)/2 / (c/service − rate)",
					"C = %.4g, mean %.4g ms", e.prefill.PWait, e.prefill.MeanMS)
			}
		}
		if r.name != rolePrefill {
			d.Add(pre+"seat_wait_p95_ms", ld.Admission.P95MS, "ms", "M/G/c over batch seats: c = batch_cap, service = (output tokens − 1) × ITL + prefill",
				"P(wait) %.4g", ld.Admission.PWait)
		}
	}
	if s.mode == ModeDisaggregated {
		t := e.transfer
		d.Add("kv_bytes_per_request", float64(t.bytes), "B", "prompt KV, all prefill ranks (what crosses the link)", "%d tokens", q.InputTokens)
		d.Add("bytes_per_path", float64(t.pathBytes), "B", "links.Split: per-GPU rails carry 1/min(prefill tp, decode tp) each", "%d rails", t.rails)
		d.Add("transfer_alone_ms", t.aloneMS, "ms", "latency + bytes_per_path / effective throughput", "%g ms + %d B / %.4g B/s", s.link.LatencyMS, t.pathBytes, s.link.EffectiveBytesPerS)
		d.Note(s.link.Source)
		d.Add("link_utilization", t.util, "ratio", "requests_per_s / worker pairs × transfer alone", "%.4g/s / %d × %.4g ms", e.rate, t.pairs, t.aloneMS)
		d.Add("transfers_in_flight", t.inFlight, "transfers", "links.InFlightOpen: Little's law, processor sharing: rate per path × (latency + alone / (1 − ρ))", "%.4g/s per path", t.ratePerS)
		d.Add("transfer_ms", t.meanMS, "ms", "transfers_in_flight / rate per path", "%.4g / %.4g/s", t.inFlight, t.ratePerS)
		d.Add("transfer_p95_ms", t.p95MS, "ms", "latency + (1 + N95) × alone, N95 = ⌈ln 0.05 / ln ρ⌉ − 1 others in flight (geometric under processor sharing)", "ρ = %.4g", t.util)
	}
	rc := q.requestCost(s.roles[0])
	d.Add("request_ms", rc.MS(float64(q.InputTokens)), "ms", rc.Formula+", at the mean prompt", "%s", rc.Values(float64(q.InputTokens)))
	d.Note(rc.Source)
	for _, p := range e.ttftParts {
		d.Add("ttft_part."+p.name, p.p95MS, "ms", "95th percentile of this part of TTFT (mean in values)", "mean %.4g ms", p.meanMS)
	}
	d.Add("ttft_p95_ms", e.ttftP95MS, "ms", "Σ parts' means + √Σ (part p95 − part mean)² (independent parts)", "mean %.4g ms", e.ttftMeanMS)
	d.Add("itl_p95_ms", e.itlP95MS, "ms", "the decoding pool's ITL p95", "%.4g", e.itlP95MS)
	q.explainTargets(c, d)
	d.Add("gpus", float64(c.GPUs), "GPUs", "Σ pools workers × tp", "%d", c.GPUs)
	if c.PowerKW != nil {
		d.Add("power_kw", *c.PowerKW, "kW", "(Σ GPUs × tdp_watts × busy + GPUs × host_watts_per_gpu) × PUE / 1000; busy = prefill share + (1 − it) × (1 − e^−batch) (decode: 1 − e^−batch; prefill: its share)",
			"host %g W per GPU, PUE %g", q.hostWatts(), max(1, q.PUE))
	}
	if c.USDPerHour != nil {
		formula, values := "Σ instances count × $/instance-hour (workers packed onto whole instances, idle GPUs paid)", instancesText(c)
		if c.Owned != nil {
			formula, values = "power_kw × usd_per_kwh + GPUs × capex_per_gpu / (amortize_years × 8760 h)",
				fmt.Sprintf("%.4g + %.4g", c.Owned.EnergyUSDPerHour, c.Owned.AmortizedUSDPerHour)
		}
		d.Add("usd_per_hour", *c.USDPerHour, "$/h", formula, "%s; %s", values, c.PriceSource)
		if c.USDPerMillionOutputTokens != nil {
			d.Add("usd_per_million_output_tokens", *c.USDPerMillionOutputTokens, "$", "usd_per_hour / (requests_per_s × output tokens × 3600) × 1e6",
				"%.4g / (%.4g × %d × 3600) × 1e6", *c.USDPerHour, e.rate, q.OutputTokens)
		}
	}
	if c.RequestsPerSCapacity > 0 {
		d.Add("requests_per_s_capacity", c.RequestsPerSCapacity, "requests/s", "highest rate these pools carry within both SLOs (bisection on the rate)", "limited by %s", c.LimitedBy)
		d.Add("utilization", c.Utilization, "ratio", "requests_per_s / requests_per_s_capacity (headroom = 1 − utilization)", "%.4g / %.4g", e.rate, c.RequestsPerSCapacity)
	}
}

// instancesText lists a candidate's instances: "5 × aws/p5.48xlarge at $55.04 (0 GPUs idle)".
func instancesText(c *Candidate) string {
	var out []string
	for _, u := range c.Instances {
		out = append(out, fmt.Sprintf("%d × %s at $%g (%d GPUs idle)", u.Count, u.Type, u.USDPerHour, u.IdleGPUs))
	}
	return strings.Join(out, " + ")
}

// hostWatts is the host power per GPU the query uses.
func (q *Query) hostWatts() float64 {
	if q.HostWattsPerGPU > 0 {
		return q.HostWattsPerGPU
	}
	return planner.DefaultHostWattsPerGPU
}

// explainLayout is "tp 8" for tensor parallelism alone (as derivations
// have always said it), else the layout: "tp1 dp8 ep8".
func explainLayout(p models.Parallelism) string {
	if p.Plain() {
		return fmt.Sprintf("tp %d", p.Norm().TP)
	}
	return p.String()
}
