package benchresult

// readInferencePerf reads an inference-perf lifecycle report
// (stage_N_lifecycle_metrics.json, summary_lifecycle_metrics.json):
// load_summary (count, requested_rate, send_duration), successes.latency
// (time_to_first_token, time_per_output_token, inter_token_latency,
// request_latency: distributions in seconds), successes.throughput,
// prompt_len and output_len, failures.count. The report names neither the
// model nor the GPU, and not whether arrivals were constant or Poisson.
func readInferencePerf(f *fields, m map[string]any) Run {
	var r Run
	w := &r.Workload
	ls := f.obj(m, "", "load_summary")
	w.Prompts = f.count(ls, "load_summary", "count", 0)
	w.DurationS = f.numOr(ls, "load_summary", "send_duration", 0)
	if rate := f.rate(ls, "load_summary", "requested_rate"); rate > 0 {
		w.Kind, w.RatePerS = LoadRate, rate
	} else {
		r.Notes = append(r.Notes, "no load_summary.requested_rate: a summary over every stage, whose load is not one rate")
	}
	s := f.obj(m, "", "successes")
	w.Completed = f.count(s, "successes", "count", -1)
	if fl := f.obj(m, "", "failures"); fl != nil {
		w.Failed = f.count(fl, "failures", "count", 0)
	}
	if pl := f.obj(s, "successes", "prompt_len"); pl != nil {
		w.InputTokensMean = f.numOr(pl, "successes.prompt_len", "mean", 0)
	}
	if ol := f.obj(s, "successes", "output_len"); ol != nil {
		w.OutputTokensMean = f.numOr(ol, "successes.output_len", "mean", 0)
	}
	mt := &r.Measured
	if lat := f.obj(s, "successes", "latency"); lat != nil {
		d := func(key string) Dist { return secondsDist(f, lat, "successes.latency", key) }
		mt.TTFT = d("time_to_first_token")
		mt.TPOT = d("time_per_output_token")
		mt.ITL = d("inter_token_latency")
		mt.E2E = d("request_latency")
	}
	if tp := f.obj(s, "successes", "throughput"); tp != nil {
		mt.RequestsPerS = f.num(tp, "successes.throughput", "requests_per_sec")
		mt.OutputTokensPerS = f.num(tp, "successes.throughput", "output_tokens_per_sec")
	}
	r.Label = runLabel(w)
	return r
}

// readInferencePerfProm reads inference-perf's stage_N_prometheus_metrics.json:
// the vLLM server's own view of a stage (successes.rate, prompt_len.rate and
// output_len.rate in tokens/s, request_latency, time_to_first_token,
// time_per_output_token with mean/median/p90/p99 in seconds). It states no
// load: the lifecycle file of the same stage does.
func readInferencePerfProm(f *fields, m map[string]any) Run {
	var r Run
	w := &r.Workload
	s := f.obj(m, "", "successes")
	w.Completed = f.count(s, "successes", "count", -1)
	mt := &r.Measured
	mt.RequestsPerS = f.num(s, "successes", "rate")
	if ol := f.obj(s, "successes", "output_len"); ol != nil {
		mt.OutputTokensPerS = f.num(ol, "successes.output_len", "rate")
		if mt.RequestsPerS != nil && *mt.RequestsPerS > 0 && mt.OutputTokensPerS != nil {
			w.OutputTokensMean = *mt.OutputTokensPerS / *mt.RequestsPerS
		}
	}
	if pl := f.obj(s, "successes", "prompt_len"); pl != nil {
		if rate := f.num(pl, "successes.prompt_len", "rate"); rate != nil && mt.RequestsPerS != nil && *mt.RequestsPerS > 0 {
			w.InputTokensMean = *rate / *mt.RequestsPerS
		}
	}
	mt.TTFT = secondsDist(f, s, "successes", "time_to_first_token")
	mt.TPOT = secondsDist(f, s, "successes", "time_per_output_token")
	mt.E2E = secondsDist(f, s, "successes", "request_latency")
	r.Notes = append(r.Notes, "the server's Prometheus view: mean lengths are its token rates over its request rate; the load is in the stage's lifecycle file")
	r.Label = runLabel(w, "server-side (Prometheus)")
	return r
}

// secondsDist reads an inference-perf distribution (mean, median, p90,
// p95, p99 in seconds) into milliseconds.
func secondsDist(f *fields, m map[string]any, path, key string) Dist {
	o := f.obj(m, path, key)
	if o == nil {
		return Dist{}
	}
	p := join(path, key)
	return Dist{Mean: scaled(f.num(o, p, "mean"), 1000), P50: scaled(f.num(o, p, "median"), 1000), P90: scaled(f.num(o, p, "p90"), 1000),
		P95: scaled(f.num(o, p, "p95"), 1000), P99: scaled(f.num(o, p, "p99"), 1000)}
}
