package sim

import (
	"reflect"
	"strings"
	"testing"
)

func TestPolicies(t *testing.T) {
	want := []string{"round-robin", "random", "least-loaded", "kv-aware", "kv-aware-no-events", "kv-aware-approx"}
	if got := Policies(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Policies() = %v, want %v", got, want)
	}
	Policies()[0] = "changed"
	if Policies()[0] != "round-robin" {
		t.Fatal("Policies returned its internal slice")
	}
}

func TestResolvePolicies(t *testing.T) {
	cases := []struct {
		in   []string
		want []string
		err  string
	}{
		{[]string{"all"}, Policies(), ""},
		{[]string{"kv-aware", "round-robin", "kv-aware"}, []string{"kv-aware", "round-robin"}, ""},
		{[]string{"random", "all"}, []string{"random", "round-robin", "least-loaded", "kv-aware", "kv-aware-no-events", "kv-aware-approx"}, ""},
		{[]string{"kv-awre"}, nil, `unknown policy "kv-awre"; did you mean "kv-aware"?`},
		{[]string{"roundrobin"}, nil, `did you mean "round-robin"?`},
		{[]string{"kv-aware-no-event"}, nil, `did you mean "kv-aware-no-events"?`},
		{[]string{"least"}, nil, `did you mean "least-loaded"?`},
		{[]string{"Random"}, nil, `did you mean "random"?`},
		{[]string{"fastest"}, nil, `unknown policy "fastest" (known: round-robin, random, least-loaded, kv-aware, kv-aware-no-events, kv-aware-approx, all)`},
		{nil, nil, "no policy given"},
	}
	for _, tc := range cases {
		got, err := ResolvePolicies(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestDynamoCost checks the kv-aware cost and least-loaded's count on
// router states set by hand, against the costs worked out here. Block 16; the
// request has 100 prompt tokens and 6 full blocks x1..x6.
//
// w0 books 200 prefill tokens and holds 50 active blocks, x1 and x2 among
// them; w1 books none and holds 60; w2 books 400 and holds 10. Overlaps as
// the router sees them: 6, 0, 2. Dynamo's cost is
// scale × max(0, (booked + 100)/16 − credit × overlap) + active + new:
//
//	scale 1, credit 1: w0 300/16 − 6 = 12.75, + 50 + 4 = 66.75
//	                   w1 100/16     =  6.25, + 60 + 6 = 72.25
//	                   w2 500/16 − 2 = 29.25, + 10 + 6 = 45.25 → w2
//	scale 3:           w0 38.25 + 54 = 92.25; w1 18.75 + 66 = 84.75;
//	                   w2 87.75 + 16 = 103.75 → w1
//	w0, w1 only:       credit 1: 66.75 < 72.25 → w0; credit 0.5:
//	                   18.75 − 3 = 15.75, + 54 = 69.75 → w0; credit 0:
//	                   18.75 + 54 = 72.75 > 72.25 → w1
//	no events (every overlap 0), scale 1: w0 72.75, w1 72.25, w2 31.25 + 16
//	                   = 47.25 → w2; w0, w1 only → w1
//
// The booked prefill is the prompt less the overlap seen on the chosen
// worker: 100 − 6 × 16 = 4 on w0, 100 − 0 on w1, 100 − 2 × 16 = 68 on w2;
// without events, the whole prompt.
func TestDynamoCost(t *testing.T) {
	ids := []uint64{11, 12, 13, 14, 15, 16}
	span := func(from uint64, n int) []uint64 {
		s := make([]uint64, n)
		for i := range s {
			s[i] = from + uint64(i)
		}
		return s
	}
	setup := func(r *router, n int) []worker {
		ws := r.newWorkers(3, 0)
		ws[0].activeAdd(append([]uint64{11, 12}, span(100, 48)...), 200, true)
		ws[1].activeAdd(span(200, 60), 0, true)
		ws[2].activeAdd(span(300, 10), 400, true)
		return ws[:n]
	}
	cases := []struct {
		name          string
		kind          policyKind
		scale, credit float64
		workers       int
		want, charge  int
	}{
		{"default", polKVAwareApprox, 1, 1, 3, 2, 68},
		{"scale 3", polKVAwareApprox, 3, 1, 3, 1, 100},
		{"two, credit 1", polKVAwareApprox, 1, 1, 2, 0, 4},
		{"two, credit 0.5", polKVAwareApprox, 1, 0.5, 2, 0, 4},
		{"two, credit 0", polKVAwareApprox, 1, 0, 2, 1, 100},
		{"no events", polKVAwareNoEvents, 1, 1, 3, 2, 100},
		{"two, no events", polKVAwareNoEvents, 1, 1, 2, 1, 100},
	}
	for _, tc := range cases {
		r := newRouter(tc.kind, Config{Workers: 3, BlockSize: 16, PrefillLoadScale: tc.scale, OverlapCredit: tc.credit})
		ws := setup(r, tc.workers)
		if r.ov != nil {
			copy(r.ov, []int{6, 0, 2})
		}
		got := r.choose(ids, 100, ws)
		if got != tc.want || r.charge(100, got) != tc.charge {
			t.Errorf("%s: worker %d charged %d, want %d charged %d", tc.name, got, r.charge(100, got), tc.want, tc.charge)
		}
	}

	// Blocks in flight count once: w1's in-flight request holds x1..x6, so
	// the request adds none there. No events: w0 6.25 + 6 + 6 = 18.25, w1
	// 6.25 + 6 + 0 = 12.25 → w1. Once that request ends, both are empty
	// again (6.25 + 0 + 6 each), a tie, and w0 has had fewer requests.
	r := newRouter(polKVAwareNoEvents, Config{Workers: 2, BlockSize: 16, PrefillLoadScale: 1, OverlapCredit: 1})
	ws := r.newWorkers(2, 0)
	ws[0].activeAdd(span(500, 6), 0, true)
	ws[1].activeAdd(ids, 0, true)
	ws[1].activeAdd(nil, 0, true) // a second request there, already ended
	ws[1].activeFree(nil, true)
	if got := r.choose(ids, 100, ws); got != 1 {
		t.Errorf("in-flight blocks: worker %d, want 1", got)
	}
	ws[0].activeFree(span(500, 6), true)
	ws[1].activeFree(ids, true)
	if ws[0].blocks != 0 || ws[1].blocks != 0 || ws[1].inFlight != 0 || ws[1].refs.n != 0 {
		t.Fatalf("after the frees: blocks %d %d, in flight %d, refs %d", ws[0].blocks, ws[1].blocks, ws[1].inFlight, ws[1].refs.n)
	}
	if got := r.choose(ids, 100, ws); got != 0 {
		t.Errorf("empty: worker %d, want 0 (fewer requests)", got)
	}

	// Least-loaded counts requests in flight: w0 2, w1 1, w2 1 with one
	// more routed so far → w1.
	r = newRouter(polLeastLoaded, Config{Workers: 3, BlockSize: 16})
	ws = r.newWorkers(3, 0)
	ws[0].activeAdd(nil, 0, false)
	ws[0].activeAdd(nil, 0, false)
	ws[1].activeAdd(nil, 0, false)
	ws[2].activeAdd(nil, 0, false)
	ws[2].activeAdd(nil, 0, false)
	ws[2].activeFree(nil, false)
	if got := r.choose(ids, 100, ws); got != 1 {
		t.Errorf("least-loaded: worker %d, want 1", got)
	}
}
