package capacity_test

import (
	"testing"

	"github.com/kvplan/kvplan/catalog"
	. "github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/planner/capacity/capacitytest"
)

func testCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// exampleQuery is the question: 20 requests/s of Llama-3.1-70B,
// 4,000 in and 512 out, TTFT p95 ≤ 1 s and ITL p95 ≤ 50 ms, on H100s over NDR.
func exampleQuery(t testing.TB, cat *catalog.Catalog) Query {
	t.Helper()
	m, _ := cat.Model("llama-3.1-70b")
	g, _ := cat.GPU("h100-sxm")
	l, _ := cat.Link("ib-ndr")
	e, _ := cat.Engine("vllm")
	return Query{Model: m, Engine: e, InputTokens: 4000, OutputTokens: 512, RatePerS: 20, TTFTP95MS: 1000, ITLP95MS: 50,
		GPUOptions: []*catalog.GPU{g}, Links: []*catalog.Link{l}, FrontendMS: 13, Timers: capacitytest.Timers}
}

func TestSearchExample(t *testing.T) {
	cat := testCatalog(t)
	res, err := Search(exampleQuery(t, cat))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Candidates[:min(8, len(res.Candidates))] {
		t.Logf("%s %s meets=%v gpus=%d ttft=%.0f itl=%.1f cap=%.1f lim=%s %s", c.Mode, c.Describe(), c.MeetsSLO, c.GPUs, c.TTFTP95MS, c.ITLP95MS, c.RequestsPerSCapacity, c.LimitedBy, c.Misses)
	}
	t.Log(res.Verdict)
	if res.Best == nil {
		t.Fatal("nothing meets the SLO")
	}
}

func TestVerifyExample(t *testing.T) {
	cat := testCatalog(t)
	q := exampleQuery(t, cat)
	res, err := Search(q)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Verify(res, 3, 2000, 1); err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Candidates[:3] {
		t.Logf("%s: analytic ttft p95 %.0f itl mean %.1f | sim %+v", c.Describe(), c.TTFTP95MS, c.ITLMeanMS, *c.Simulated)
	}
}
