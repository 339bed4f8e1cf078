package sim

import (
	"encoding/json"
	"testing"
)

// TestResultJSONNames pins the JSON field names the CLI and reports rely on.
func TestResultJSONNames(t *testing.T) {
	b, err := json.Marshal(Result{Name: "kv-aware", Workers: []WorkerResult{{}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"kv-aware","requests":0,"repeat_requests":0,"hit_requests":0,"hit_rate":0,` +
		`"cached_token_ratio":0,"evictions":0,"blocks_referenced":0,"repeated_blocks":0,"block_size":0,` +
		`"input_tokens":0,"cached_tokens":0,"overflow_blocks":0,"skipped_lines":0,` +
		`"repeat_requests_uncertain":0,"forgotten_block_ids":0,` +
		`"workers":[{"index":0,"requests":0,"request_share":0,"peak_occupancy_blocks":0,"evictions":0,"overflow_blocks":0}]}`
	if string(b) != want {
		t.Fatalf("JSON\n got %s\nwant %s", b, want)
	}
}
