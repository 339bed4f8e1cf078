package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kvplanIn runs kvplan with stdin.
func kvplanIn(t *testing.T, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runIn(append([]string{"kvplan"}, args...), bytes.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// TestCheckStdinByContent: check - reads a TOML plan or a YAML manifest
// from stdin, told apart by content, and reports what the same file does.
func TestCheckStdinByContent(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		args       []string
	}{
		{"plan", "../../examples/disagg-1gbe-no-events.toml", nil},
		{"manifest", "../../testdata/manifests/dynamo/vllm_disagg_router.yaml", []string{"--gpu", "h100-sxm"}},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		fromFile, _, codeFile := kvplan(t, append([]string{"check", tc.file, "-o", "json"}, tc.args...)...)
		fromStdin, errs, codeStdin := kvplanIn(t, data, append([]string{"check", "-", "-o", "json"}, tc.args...)...)
		if codeStdin != codeFile || codeStdin == ExitUsage {
			t.Fatalf("%s: stdin exit %d (%s), file exit %d", tc.name, codeStdin, errs, codeFile)
		}
		// The same report but for the file's name.
		fromStdin = strings.ReplaceAll(fromStdin, `\u003cstdin\u003e`, "<stdin>") // JSON escapes < and >
		if strings.ReplaceAll(fromFile, tc.file, "<stdin>") != fromStdin {
			t.Errorf("%s: stdin's report differs from the file's beyond its name:\n%s\n---\n%s", tc.name, fromStdin, fromFile)
		}
	}
}

// TestCheckTPErrorAtKey: model.tp = 3 in a disaggregated plan is the
// tp-not-divisible finding at model.tp's line (3), not an error at
// [workload]'s.
func TestCheckTPErrorAtKey(t *testing.T) {
	plan := []byte("[model]\nname = \"llama-3.1-70b\"\ntp = 3\n\n[workload]\ninput_tokens = 4000\noutput_tokens = 512\nrequest_rate = 2\n\n" +
		"[pools.prefill]\nrole = \"prefill\"\ngpu = \"h100-sxm\"\n\n[pools.decode]\nrole = \"decode\"\ngpu = \"h100-sxm\"\n\n[link]\nname = \"ib-ndr\"\n")
	out, errs, code := kvplanIn(t, plan, "check", "-", "-o", "github")
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1: %s%s", code, errs, out)
	}
	if !strings.Contains(out, "file=<stdin>,line=3,title=tp-not-divisible") {
		t.Errorf("want tp-not-divisible at line 3:\n%s", out)
	}
	if strings.Contains(out, "predicted_itl") || strings.Contains(out, "line=5") {
		t.Errorf("a figure or finding at [workload]:\n%s", out)
	}
}

// TestNVLinkTopology: NVLink 4 between two separate 8-GPU tp8 workers on
// H100 (each its own HGX board) is the nvlink-beyond-its-domain finding;
// tp4 + tp4 inside one board is not, nor two tp8 workers in a GB200 NVL72
// rack over NVLink 5.
func TestNVLinkTopology(t *testing.T) {
	plan := func(gpu, link string, tp int) []byte {
		return []byte(fmt.Sprintf("[model]\nname = \"llama-3.1-70b\"\ntp = %d\n\n[workload]\ninput_tokens = 4000\noutput_tokens = 512\nconcurrency = 4\n\n"+
			"[pools.prefill]\nrole = \"prefill\"\ngpu = %q\n\n[pools.decode]\nrole = \"decode\"\ngpu = %q\n\n[link]\nname = %q\n", tp, gpu, gpu, link))
	}
	for _, tc := range []struct {
		gpu, link string
		tp        int
		fires     bool
	}{
		{"h100-sxm", "nvlink4", 8, true},
		{"h100-sxm", "nvlink4", 4, false},
		{"h100-sxm", "ib-ndr", 8, false},
		{"gb200", "nvlink5", 8, false},
		{"l40s", "nvlink4", 1, true}, // no NVLink at all
	} {
		out, errs, _ := kvplanIn(t, plan(tc.gpu, tc.link, tc.tp), "check", "-", "-o", "github")
		if errs != "" {
			t.Fatalf("%+v: %s", tc, errs)
		}
		if got := strings.Contains(out, "title=nvlink-beyond-its-domain"); got != tc.fires {
			t.Errorf("%s tp%d over %s: fires %v, want %v:\n%s", tc.gpu, tc.tp, tc.link, got, tc.fires, out)
		}
	}
}

// TestUnknownPricePrintsUnknown: a GPU without a price in the catalog (the
// RTX 4090: no instance rents it, gpus.toml has no usd_per_hour) prints
// "unknown", never $0.00, in plan and in check; JSON writes null.
func TestUnknownPricePrintsUnknown(t *testing.T) {
	args := []string{"plan", "--model", "qwen3-0.6b", "--isl", "1000", "--osl", "100", "--rate", "2", "--ttft-p95", "1s", "--itl-p95", "50ms",
		"--gpu", "rtx4090", "--verify", "0"}
	res := runJSON(t, 0, args...)
	best := res["best"].(map[string]any)
	if best["usd_per_hour"] != nil || best["price"] != "unknown" {
		t.Errorf("plan's best: usd_per_hour %v, price %v; want null, unknown", best["usd_per_hour"], best["price"])
	}
	table, _, _ := kvplan(t, args...)
	if strings.Contains(table, "$0.00") || !strings.Contains(table, "unknown") {
		t.Errorf("plan's table shows a price of 0 or no unknown:\n%s", table)
	}
	path := filepath.Join(t.TempDir(), "rtx4090.toml")
	runJSON(t, 0, append(args, "--write-plan", path)...)
	chk := runJSON(t, 0, "check", path)
	for _, f := range chk["figures"].([]any) {
		m := f.(map[string]any)
		if m["name"] == "usd_per_hour" && (m["value"] != nil || m["unknown"] != true) {
			t.Errorf("check's usd_per_hour: %v", m)
		}
	}
	out, _, _ := kvplan(t, "check", path)
	if strings.Contains(out, "$0.00") {
		t.Errorf("check's table shows $0.00:\n%s", out)
	}
}

// TestUnpricedPoolHasNoTTFT: a worker over two nodes with no [link] for its
// all-to-all cannot be priced by the engine model; check said
// "ttft_one_request_ms 13.00 ms", the frontend alone. It now gives no TTFT,
// and with the link the figures of the load.
func TestUnpricedPoolHasNoTTFT(t *testing.T) {
	// The emit tests write Llama-3.1-70B as the model id: the copy names DeepSeek-V3's.
	golden, err := os.ReadFile(filepath.Join("..", "..", "manifest", "testdata", "emit", "golden", "agg-dep16-vllm.llm-d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(t.TempDir(), "dep16.yaml")
	if err := os.WriteFile(manifest, []byte(strings.ReplaceAll(string(golden), "meta-llama/Llama-3.1-70B-Instruct", "deepseek-ai/DeepSeek-V3")), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"check", manifest, "--gpu", "h100-sxm", "--rate", "1", "--isl", "2000", "--osl", "500", "--ttft-p95", "2s", "--itl-p95", "50ms"}
	names := func(res map[string]any) map[string]float64 {
		out := map[string]float64{}
		for _, f := range res["figures"].([]any) {
			m := f.(map[string]any)
			v, _ := m["value"].(float64)
			out[m["name"].(string)] = v
		}
		return out
	}
	got := names(runJSON(t, 0, args...))
	for _, n := range []string{"ttft_one_request_ms", "ttft_p95_ms", "prefill_ms"} {
		if v, ok := got[n]; ok {
			t.Errorf("without a link: %s = %v, want no such figure", n, v)
		}
	}
	got = names(runJSON(t, 0, append(args, "--link", "ib-ndr")...))
	if got["ttft_p95_ms"] < 100 || got["prefill_ms"] < 50 {
		t.Errorf("with ib-ndr: ttft_p95_ms %v, prefill_ms %v; want a 2,000-token prefill's hundreds of ms", got["ttft_p95_ms"], got["prefill_ms"])
	}
}
