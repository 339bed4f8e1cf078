package perf

import (
	"math"
	"sort"
)

// simResult is what the step-by-step simulation measures.
type simResult struct {
	ttftMS, tpotMS, itlP50MS, reqPerS, running float64
	requests                                   int
}

// simulate runs a closed-loop load step by step, the reference the
// mean-field Steady is checked against. Each iteration schedules, as vLLM V1
// does, the running sequences first (one token per decoding sequence, the
// next chunk of a prefill in progress), then admits waiting requests FCFS
// while the token budget, max_num_seqs and the KV slots (ISL + OSL tokens
// reserved per request) allow. With SeparatePrefill an iteration either
// prefills (ongoing chunk, then admissions, budget B) or decodes every
// running sequence, prefill first, as SGLang does. A client's next request
// reaches the engine overheadMS after its previous one finished, so it misses
// the iteration that starts at that instant.
//
// start gives each client's first arrival; generations is how many requests
// each client sends, the first warm of which are left out of the metrics.
func simulate(m *Model, ld Load, lim Limits, start func(client int) float64, generations, warm int) simResult {
	return simulatePhased(m, ld, lim, start, generations, warm, false)
}

// simulatePhased is simulate; with phase, every request is measured (warm
// must be 0) and client c of C sends its second request c/C of its first
// request's latency after the first finished (Load.AsHarness).
func simulatePhased(m *Model, ld Load, lim Limits, start func(client int) float64, generations, warm int, phase bool) simResult {
	overheadMS := m.Efficiency.RequestMS + float64(ld.InputTokens)*m.Efficiency.RequestUSTok/1000 + minDelayMS
	draw := func(n int) int { return n }
	type req struct {
		isl, osl                      int
		client, prefilled, generated  int
		send, arrive, first, admitted float64
		measured                      bool
		// With lim.GrowKV: the tokens to prefill (the prompt; after a
		// preemption the prompt and the tokens generated), and whether the
		// first token is out already.
		target  int
		resumed bool
	}
	C, ISL, OSL := ld.Concurrency, ld.InputTokens, ld.OutputTokens
	bs := lim.BlockSize
	if bs <= 0 {
		bs = 16
	}
	need := int64((ISL+OSL+bs-1)/bs) * int64(bs)
	blocks := func(n int) float64 { return float64((n + bs - 1) / bs * bs) }
	// hold is what a running request holds once the next iteration has
	// run (GrowKV): its prompt's blocks while it prefills, else those of
	// its context and the token it is about to generate.
	hold := func(r *req) float64 {
		if r.prefilled < r.target {
			return blocks(r.target)
		}
		return blocks(r.isl + r.generated + 1)
	}
	held := func(rs []*req) float64 {
		var s float64
		for _, r := range rs {
			s += hold(r)
		}
		return s
	}
	if f := lim.KVReserveOutput; f > 0 && f < 1 && !lim.GrowKV {
		need = int64((ISL+int(math.Ceil(f*float64(OSL)))+bs-1)/bs) * int64(bs)
	}
	sent := make([]int, C)
	firstMeasured := math.Inf(1)
	var waiting, running []*req
	for c := 0; c < C; c++ {
		waiting = append(waiting, &req{client: c, send: start(c), arrive: start(c) + overheadMS, isl: draw(ISL), osl: draw(OSL), measured: phase, target: ISL})
		if phase {
			firstMeasured = math.Min(firstMeasured, start(c)+overheadMS)
		}
		sent[c] = 1
	}
	sortByArrival := func() {
		sort.SliceStable(waiting, func(i, j int) bool { return waiting[i].arrive < waiting[j].arrive })
	}
	sortByArrival()
	var (
		now, kvUsed       float64
		ttft, tpot, steps []float64
		runSum, runN      float64
		lastDone          float64
		done              int
	)
	fits := func(r *req) bool {
		if lim.GrowKV {
			return held(running)+blocks(r.target) <= float64(lim.KVSlots)
		}
		return kvUsed+float64(need) <= float64(lim.KVSlots)
	}
	var pTok, pCtx, dCtx []int
	var pReq, dReq []*req
	// lim.RecvInterval: the scheduler sees the requests that had arrived when
	// it last read (readT); it reads before an iteration that follows a
	// prefill iteration or an idle wait, and after decode-only ones when the
	// read due comes: (RecvInterval − 1) / 2 decode iterations (whole, the
	// remainders carried) after the iteration in which the first unread
	// request arrived while one could be scheduled (Limits.RecvInterval).
	readT, afterDecode, decodes, readDue, carry := math.Inf(-1), false, 0, -1, 0.0
	for {
		if len(running) == 0 && len(waiting) == 0 {
			break
		}
		if len(running) == 0 && waiting[0].arrive > now {
			now, afterDecode = waiting[0].arrive, false
		}
		if lim.RecvInterval <= 1 || !afterDecode || (readDue >= 0 && decodes >= readDue) {
			readT, readDue = now, -1
		} else if readDue < 0 && len(running) < lim.MaxNumSeqs {
			for _, r := range waiting {
				if r.arrive > readT && r.arrive <= now && fits(r) {
					carry += float64(lim.RecvInterval-1) / 2
					w := int(carry)
					carry -= float64(w)
					readDue = decodes + w
					if w == 0 {
						readT, readDue = now, -1
					}
					break
				}
			}
		}
		// Recompute preemption (GrowKV): the request admitted last gives its
		// blocks back until the running ones have theirs for this iteration.
		for lim.GrowKV && len(running) > 1 && held(running) > float64(lim.KVSlots) {
			r := running[len(running)-1]
			running = running[:len(running)-1]
			if r.prefilled >= r.target {
				r.target, r.resumed = r.isl+r.generated, true
			}
			r.prefilled = 0
			waiting = append([]*req{r}, waiting...)
		}
		budget := lim.MaxNumBatchedTokens
		pTok, pCtx, dCtx, pReq, dReq = pTok[:0], pCtx[:0], dCtx[:0], pReq[:0], dReq[:0]
		prefilling := false
		for _, r := range running {
			if r.prefilled < r.target {
				prefilling = true
			}
		}
		admissible := len(waiting) > 0 && waiting[0].arrive <= readT && len(running) < lim.MaxNumSeqs && fits(waiting[0])
		prefillStep := !lim.SeparatePrefill || prefilling || admissible
		decodeStep := !lim.SeparatePrefill || !(prefilling || admissible)
		for _, r := range running {
			if budget <= 0 {
				break
			}
			switch {
			case r.prefilled < r.target && prefillStep:
				n := min(r.target-r.prefilled, budget)
				pTok, pCtx, pReq = append(pTok, n), append(pCtx, r.prefilled), append(pReq, r)
				budget -= n
			case r.prefilled >= r.target && decodeStep:
				dCtx, dReq = append(dCtx, r.isl+r.generated), append(dReq, r)
				budget--
			}
		}
		for prefillStep && budget > 0 && len(waiting) > 0 && waiting[0].arrive <= readT &&
			len(running) < lim.MaxNumSeqs && fits(waiting[0]) {
			r := waiting[0]
			waiting = waiting[1:]
			r.admitted = now
			kvUsed += float64(need)
			running = append(running, r)
			n := min(r.target, budget)
			pTok, pCtx, pReq = append(pTok, n), append(pCtx, 0), append(pReq, r)
			budget -= n
		}
		if len(pTok) == 0 && len(dCtx) == 0 {
			// Nothing runnable yet: wait for the next arrival.
			now, afterDecode = max(now, waiting[0].arrive), false
			continue
		}
		if afterDecode = len(pTok) == 0; afterDecode {
			decodes++
		}
		dt := m.StepMS(pTok, pCtx, dCtx)
		now += dt
		if len(dCtx) > 0 && now > firstMeasured {
			steps = append(steps, dt)
		}
		if now > firstMeasured {
			runSum += float64(len(running)) * dt
			runN += dt
		}
		for i, r := range pReq {
			r.prefilled += pTok[i]
			if r.prefilled >= r.target && !r.resumed {
				r.generated, r.first = 1, now
				if r.measured {
					ttft = append(ttft, now-r.send)
				}
			}
		}
		var finished []*req
		for _, r := range dReq {
			r.generated++
		}
		for _, r := range running {
			if r.prefilled >= r.target && r.generated >= r.osl {
				finished = append(finished, r)
			}
		}
		if len(finished) > 0 {
			keep := running[:0]
			for _, r := range running {
				if !(r.prefilled >= r.target && r.generated >= r.osl) {
					keep = append(keep, r)
				}
			}
			running = keep
		}
		for _, r := range finished {
			kvUsed -= float64(need)
			if r.measured {
				if r.osl > 1 {
					tpot = append(tpot, (now-r.first)/float64(r.osl-1))
				}
				done++
				lastDone = now
			}
			c := r.client
			if sent[c] < generations {
				send := now
				if phase && sent[c] == 1 {
					send += (now - r.send) * float64(c) / float64(C)
				}
				nr := &req{client: c, send: send, arrive: send + overheadMS, measured: sent[c] >= warm, isl: draw(ISL), osl: draw(OSL), target: ISL}
				if nr.measured && nr.arrive < firstMeasured {
					firstMeasured = nr.arrive
				}
				sent[c]++
				waiting = append(waiting, nr)
			}
		}
		if len(finished) > 0 {
			sortByArrival()
		}
	}
	res := simResult{ttftMS: mean(ttft), tpotMS: mean(tpot), itlP50MS: median(steps), requests: done}
	if runN > 0 {
		res.running = runSum / runN
	}
	if done > 0 && lastDone > firstMeasured {
		res.reqPerS = float64(done) / (lastDone - firstMeasured) * 1000
	}
	return res
}

func mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	return y[len(y)/2]
}

// ramp starts client c at rampMS × (c + ½) / clients, as Steady does.
func ramp(clients int, rampMS float64) func(int) float64 {
	return func(c int) float64 { return rampMS * (float64(c) + 0.5) / float64(clients) }
}
