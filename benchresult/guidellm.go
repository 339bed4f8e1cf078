package benchresult

import (
	"fmt"
)

// readGuideLLM reads every benchmark of a guidellm report: v0.3
// (benchmarks[].args.strategy, run_stats, worker.backend_model), v1
// (metadata, args, benchmarks[].config.strategy) and v2 (config in place of
// args). The metrics are metrics.X.successful distributions.
func readGuideLLM(f *fields, m map[string]any) []Run {
	model := ""
	if args := f.obj(m, "", "args"); args != nil {
		model = f.str(args, "args", "model")
	}
	if cfg := f.obj(m, "", "config"); cfg != nil {
		if spec := f.obj(cfg, "config", "spec"); spec != nil {
			if be := f.obj(spec, "config.spec", "backend"); be != nil {
				model = f.str(be, "config.spec.backend", "model")
			}
		}
	}
	bs := f.arr(m, "", "benchmarks")
	if f.err == nil && len(bs) == 0 {
		f.fail("benchmarks", "empty: the report holds no benchmark")
	}
	var runs []Run
	for i, bv := range bs {
		path := fmt.Sprintf("benchmarks[%d]", i)
		b, ok := bv.(map[string]any)
		if !ok {
			f.fail(path, "want an object, got %s", describe(bv))
			return nil
		}
		r := readGuideLLMBenchmark(f, b, path)
		if r.Setup.Model == "" {
			r.Setup.Model = model
		}
		runs = append(runs, r)
	}
	return runs
}

func guidellmLayout(m map[string]any) string {
	if md, ok := m["metadata"].(map[string]any); ok {
		if v, ok := md["version"]; ok {
			return fmt.Sprintf("v%s layout (guidellm %v)", fmt.Sprint(v), md["guidellm_version"])
		}
	}
	return "v0.3-era layout (args, run_stats)"
}

func readGuideLLMBenchmark(f *fields, b map[string]any, path string) Run {
	var r Run
	var strat map[string]any
	if cfg := f.obj(b, path, "config"); cfg != nil {
		strat = f.obj(cfg, path+".config", "strategy")
	}
	if strat == nil {
		if args := f.obj(b, path, "args"); args != nil {
			strat = f.obj(args, path+".args", "strategy")
		}
	}
	if wk := f.obj(b, path, "worker"); wk != nil {
		r.Setup.Model = f.str(wk, path+".worker", "backend_model")
	}
	w := &r.Workload
	w.DurationS = f.numOr(b, path, "duration", 0)
	if strat != nil {
		sp := path + ".strategy"
		switch t := f.str(strat, sp, "type_"); t {
		case "synchronous":
			w.Kind, w.Concurrency = LoadConcurrency, 1
		case "concurrent":
			w.Kind, w.Concurrency = LoadConcurrency, f.count(strat, sp, "streams", 0)
		case "throughput":
			w.Kind = LoadBurst
			if c := f.count(strat, sp, "max_concurrency", 0); c > 0 {
				w.Kind, w.Concurrency = LoadConcurrency, c
			}
		case "constant":
			w.Kind, w.RatePerS, w.EvenGaps = LoadRate, f.numOr(strat, sp, "rate", 0), true
		case "poisson":
			w.Kind, w.RatePerS, w.Burstiness = LoadRate, f.numOr(strat, sp, "rate", 0), 1
		default:
			r.Notes = append(r.Notes, fmt.Sprintf("guidellm strategy %q: the load is not stated in a form kvplan models", t))
		}
		if w.Kind == LoadConcurrency && w.Concurrency < 1 || w.Kind == LoadRate && !(w.RatePerS > 0) {
			f.fail(sp, "a %s strategy without its streams or rate", f.str(strat, sp, "type_"))
		}
	}
	met := f.obj(b, path, "metrics")
	if met == nil {
		f.fail(path+".metrics", "missing: the benchmark has no metrics")
		return r
	}
	mp := path + ".metrics"
	dist := func(key string, scale float64) (Dist, *float64) {
		o := f.obj(met, mp, key)
		if o == nil {
			return Dist{}, nil
		}
		s := f.obj(o, mp+"."+key, "successful")
		if s == nil {
			return Dist{}, nil
		}
		sp := mp + "." + key + ".successful"
		d := Dist{Mean: scaled(f.num(s, sp, "mean"), scale), P50: scaled(f.num(s, sp, "median"), scale)}
		if pc := f.obj(s, sp, "percentiles"); pc != nil {
			pp := sp + ".percentiles"
			if d.P50 == nil {
				d.P50 = scaled(f.num(pc, pp, "p50"), scale)
			}
			d.P90, d.P95, d.P99 = scaled(f.num(pc, pp, "p90"), scale), scaled(f.num(pc, pp, "p95"), scale), scaled(f.num(pc, pp, "p99"), scale)
		}
		return d, f.num(s, sp, "count")
	}
	mt := &r.Measured
	mt.TTFT, _ = dist("time_to_first_token_ms", 1)
	mt.TPOT, _ = dist("time_per_output_token_ms", 1)
	mt.ITL, _ = dist("inter_token_latency_ms", 1)
	mt.E2E, _ = dist("request_latency", 1000) // seconds
	rps, _ := dist("requests_per_second", 1)
	mt.RequestsPerS = rps.Mean
	ops, _ := dist("output_tokens_per_second", 1)
	mt.OutputTokensPerS = ops.Mean
	in, _ := dist("prompt_token_count", 1)
	out, _ := dist("output_token_count", 1)
	if in.Mean != nil {
		w.InputTokensMean = *in.Mean
	}
	if out.Mean != nil {
		w.OutputTokensMean = *out.Mean
	}
	// Request totals: metrics.request_totals (v1, v2) or request_totals (v0.3).
	totals := f.obj(met, mp, "request_totals")
	tp := mp + ".request_totals"
	if totals == nil {
		totals, tp = f.obj(b, path, "request_totals"), path+".request_totals"
	}
	w.Completed = -1
	if totals != nil {
		w.Completed = f.count(totals, tp, "successful", -1)
		w.Failed = f.count(totals, tp, "errored", 0)
		w.Prompts = f.count(totals, tp, "total", 0)
		if inc := f.count(totals, tp, "incomplete", 0); inc > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%d requests were still running when the benchmark ended (incomplete)", inc))
		}
	}
	r.Label = runLabel(w)
	return r
}
