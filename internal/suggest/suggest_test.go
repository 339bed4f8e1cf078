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
