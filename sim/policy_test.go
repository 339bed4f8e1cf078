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
