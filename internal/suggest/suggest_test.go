package suggest

import (
	"reflect"
	"testing"
)

func TestClosest(t *testing.T) {
	names := []string{"qwen3-0.6b", "qwen3-8b", "qwen3-32b", "llama-3.1-8b", "deepseek-v3"}
	cases := []struct {
		in   string
		n    int
		want []string
	}{
		{"qwen3-06b", 1, []string{"qwen3-0.6b"}},
		{"QWEN3-8B", 1, []string{"qwen3-8b"}},
		{"llama", 1, []string{"llama-3.1-8b"}},
		{"zzzzzz", 3, nil},
	}
	// Short names one edit away (Jaro-Winkler alone gives "l5" 0.7 against "l4").
	gpus := []string{"l4", "l40s", "a10g", "h100-sxm", "h200"}
	for _, c := range []struct {
		in   string
		want []string
	}{{"l5", []string{"l4"}}, {"a10", []string{"a10g"}}, {"h20", []string{"h200"}}, {"x9", nil}} {
		if got := Closest(c.in, gpus, 1); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Closest(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	for _, c := range cases {
		if got := Closest(c.in, names, c.n); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Closest(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	if got := DidYouMean("kv_event", []string{"kv_events", "block_size", "mode"}); got != "; did you mean kv_events?" {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := DidYouMean("xyz", []string{"kv_events"}); got != "" {
		t.Errorf("DidYouMean of nothing close = %q", got)
	}
}
