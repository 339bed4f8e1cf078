package fit

import (
	"fmt"
	"sort"
	"testing"
)

func TestQueuedExplore(t *testing.T) {
	cat, _, _, cases, _ := load(t)
	preds := Predict(cases, FromCatalog(cat))
	var lines []string
	n, predQ, kvq, seqq, falseKV := 0, 0, 0, 0, 0
	for _, p := range preds {
		c := p.Case
		measured := c.TTFTMS > 5000
		r, _ := c.Predict(&p.Efficiency)
		if r.KVLimited && !measured {
			falseKV++
		}
		if !measured {
			continue
		}
		n++
		if p.TTFTMS > 5000 {
			predQ++
		}
		if r.KVLimited {
			kvq++
		}
		if r.SeqLimited {
			seqq++
		}
		lines = append(lines, fmt.Sprintf("%-8s %-18s %-9s tp%d isl%5d osl%5d bs%4d C%4d rep%d  meas %8.0f pred %8.0f  kv%v seq%v maxrun %d running %.0f wait %.0f", c.Engine, c.Group, c.GPU.Name, c.TP, c.ISL, c.OSL, c.BatchSize, c.Concurrency, c.Replicas, c.TTFTMS, p.TTFTMS, r.KVLimited, r.SeqLimited, r.MaxRunning, r.Running, r.WaitingMS))
	}
	sort.Strings(lines)
	for _, l := range lines {
		t.Log(l)
	}
	t.Logf("queued %d: predicted TTFT>5s %d, KV-limited %d, seq-limited %d; false KV-limited (measured < 5 s) %d", n, predQ, kvq, seqq, falseKV)
}
