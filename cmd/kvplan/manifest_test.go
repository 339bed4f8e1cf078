package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const manifests = "../../testdata/manifests/"

// reviewCatalog adds the KServe sample's model and stand-in SGLang and
// TensorRT-LLM engine entries (see the file).
const reviewCatalog = manifests + "catalog"

// sharedManifests are the copies of ../shared/manifests, with the pools
// each one has (read off the YAML by hand).
var sharedManifests = []struct {
	file  string
	pools []string
}{
	{"dynamo/vllm_agg_router.yaml", []string{"VllmDecodeWorker"}},
	{"dynamo/vllm_disagg_router.yaml", []string{"VllmDecodeWorker", "VllmPrefillWorker"}},
	{"dynamo/vllm_disagg_multinode.yaml", []string{"decode", "prefill"}},
	{"dynamo/sglang_agg_router.yaml", []string{"decode"}},
	{"dynamo/trtllm_disagg_router.yaml", []string{"TRTLLMDecodeWorker", "TRTLLMPrefillWorker"}},
	{"kserve/llmisvc_pd_qwen2-7b-gpu.yaml", []string{"decode", "prefill"}},
	{"llm-d/llm-d_guides_pd-disaggregation_gpu_vllm_disaggregatedset.yaml", []string{"decode", "prefill"}},
	{"vllm-production-stack/values-16-disagg-prefill.yaml", []string{"llama-decode", "llama-prefill"}},
}

var annotation = regexp.MustCompile(`^::(error|warning|notice) file=([^,]+),line=(\d+),col=(\d+),title=`)

// TestManifestDoneWhen: every shared manifest is read, `manifest show`
// prints its pools, and `check --gpu` gives findings located in the YAML
// (file, line and column in every GitHub annotation).
func TestManifestDoneWhen(t *testing.T) {
	for _, c := range sharedManifests {
		t.Run(c.file, func(t *testing.T) {
			path := manifests + c.file
			out, errOut, code := kvplan(t, "manifest", "show", path)
			if code != ExitOK {
				t.Fatalf("show: exit %d: %s", code, errOut)
			}
			for _, p := range c.pools {
				if !strings.Contains(out, "[pools."+p+"]") {
					t.Errorf("show lacks [pools.%s]:\n%s", p, out)
				}
			}
			out, errOut, code = kvplan(t, "check", path, "--gpu", "h100-sxm", "--catalog", reviewCatalog, "-o", "github")
			if code != ExitOK && code != ExitFindings {
				t.Fatalf("check: exit %d: %s", code, errOut)
			}
			for _, line := range strings.Split(out, "\n") {
				if !strings.HasPrefix(line, "::") {
					continue
				}
				m := annotation.FindStringSubmatch(line)
				if m == nil || m[2] != path {
					t.Errorf("annotation not located in %s: %s", path, line)
				}
			}
		})
	}
}

// TestManifestFindingsLocated: the field study's blind KV router is seen in
// the Dynamo examples, at the args of the worker that publishes no events.
func TestManifestFindingsLocated(t *testing.T) {
	cases := []struct {
		file string
		want []string
	}{
		{"dynamo/vllm_agg_router.yaml", []string{"::error file=" + manifests + "dynamo/vllm_agg_router.yaml,line=35,col=13,title=kv-router-without-events::"}},
		{"dynamo/vllm_disagg_router.yaml", []string{"::error file=" + manifests + "dynamo/vllm_disagg_router.yaml,line=54,col=13,title=kv-router-without-events::"}},
		{"forms/args.yaml", []string{
			"::error file=" + manifests + "forms/args.yaml,line=19,col=54,title=manifest/bad-value (vllm-pod)::vllm-pod: --max-num-seqs two",
			"::notice file=" + manifests + "forms/args.yaml,line=19,col=15,title=manifest/not-understood (vllm-pod)::",
		}},
		{"forms/kvbm.yaml", []string{"::error file=" + manifests + "forms/kvbm.yaml,line=47,col=17,title=manifest/gpu-count (decode)::"}},
	}
	for _, c := range cases {
		out, errOut, code := kvplan(t, "check", manifests+c.file, "--gpu", "h100-sxm", "-o", "github")
		if code != ExitFindings {
			t.Errorf("%s: exit %d, want 1: %s", c.file, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", c.file, w, out)
			}
		}
	}
	// --disable turns a manifest finding off too.
	out, _, _ := kvplan(t, "check", manifests+"forms/args.yaml", "--gpu", "l4", "--disable", "manifest/not-understood", "-o", "github")
	if strings.Contains(out, "manifest/not-understood") {
		t.Errorf("--disable manifest/not-understood ignored:\n%s", out)
	}
}

// TestManifestWithPlanFile: a plan file that points at a manifest adds the
// field study's GPU, limits and workload; findings land in both files.
func TestManifestWithPlanFile(t *testing.T) {
	out, errOut, code := kvplan(t, "check", manifests+"plans/review.toml", "-o", "github", "--paths-root", manifests)
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"::error file=" + manifests + "dynamo/vllm_disagg_router.yaml,line=54,col=13,title=kv-router-without-events::",
		"::error file=" + manifests + "plans/review.toml,line=19,title=host-oom-staged-kv (VllmPrefillWorker)::",
		"::error file=" + manifests + "plans/review.toml,line=32,title=ttft-slo::",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	golden(t, "manifest-review.github", out)
}

func TestManifestStdin(t *testing.T) {
	data, err := os.ReadFile(manifests + "dynamo/vllm_agg_router.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := runIn([]string{"kvplan", "check", "-", "--gpu", "h100-sxm", "-o", "github"}, bytes.NewReader(data), &out, &errb)
	if code != ExitFindings || !strings.Contains(out.String(), "::error file=<stdin>,line=35,col=13,title=kv-router-without-events::") {
		t.Errorf("exit %d\n%s%s", code, out.String(), errb.String())
	}
}

func TestManifestGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"manifest-show.toml", []string{"manifest", "show", manifests + "dynamo/vllm_disagg_router.yaml"}},
		{"manifest-show-llmd.json", []string{"manifest", "show", manifests + "llm-d/llm-d_guides_pd-disaggregation_gpu_vllm_disaggregatedset.yaml", "-o", "json"}},
		{"manifest-check.table", []string{"check", manifests + "dynamo/vllm_disagg_router.yaml", "--gpu", "h100-sxm", "--link", "25gbe", "--isl", "3000", "--concurrency", "8"}},
		{"manifest-check.sarif", []string{"check", manifests + "dynamo/vllm_agg_router.yaml", "--gpu", "h100-sxm", "-o", "sarif"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := kvplan(t, c.args...)
			if code != ExitOK && code != ExitFindings {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, c.name, out)
		})
	}
}

// TestManifestShowReadsBack: the TOML that show prints is a plan file.
func TestManifestShowReadsBack(t *testing.T) {
	out, _, code := kvplan(t, "manifest", "show", manifests+"forms/kvbm.yaml", "--gpu", "h100-sxm")
	if code != ExitOK {
		t.Fatal(code)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.toml")
	if err := os.WriteFile(path, []byte(out+"\n[workload]\ninput_tokens = 1000\n\n[link]\nname = \"ib-ndr\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := kvplan(t, "check", path); code == ExitUsage || code == ExitInternal {
		t.Errorf("the printed plan does not check: exit %d: %s", code, errOut)
	}
}

func TestManifestSARIFValid(t *testing.T) {
	out, _, _ := kvplan(t, "check", manifests+"dynamo/vllm_disagg_router.yaml", "--gpu", "h100-sxm", "-o", "sarif")
	c := jsonschema.NewCompiler()
	schema, err := c.Compile("../../testdata/rules/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Errorf("SARIF invalid: %v", err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine, StartColumn int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	loc := log.Runs[0].Results[0].Locations[0].PhysicalLocation
	if !strings.HasSuffix(loc.ArtifactLocation.URI, "vllm_disagg_router.yaml") || loc.Region.StartLine != 54 || loc.Region.StartColumn != 13 {
		t.Errorf("first result at %+v", loc)
	}
}

func TestManifestBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"not YAML", []string{"check", manifests + "bad/not-yaml.yaml", "--gpu", "h100-sxm"}, "bad/not-yaml.yaml:1: not valid YAML"},
		{"no workers", []string{"check", manifests + "bad/no-workers.yaml"}, "no serving workers found (documents: Service frontend, ConfigMap settings)"},
		{"no GPU", []string{"check", manifests + "dynamo/vllm_agg_router.yaml"}, "vllm_agg_router.yaml:19:5: pools.VllmDecodeWorker.gpu: no GPU for pool(s) VllmDecodeWorker"},
		{"unknown GPU", []string{"check", manifests + "dynamo/vllm_agg_router.yaml", "--gpu", "h100-sx"}, "did you mean h100-sxm"},
		{"unknown model at its line", []string{"check", manifests + "kserve/llmisvc_pd_qwen2-7b-gpu.yaml", "--gpu", "h100-sxm"}, "llmisvc_pd_qwen2-7b-gpu.yaml:12:10: model.name: unknown model"},
		{"gpu flag on a plan file", []string{"check", "../../examples/clean.toml", "--gpu", "h100-sxm"}, "--gpu applies to a manifest"},
		{"bad isl", []string{"check", manifests + "dynamo/vllm_agg_router.yaml", "--gpu", "h100-sxm", "--isl", "-3"}, "--input-tokens -3"},
		{"bad slo", []string{"check", manifests + "dynamo/vllm_agg_router.yaml", "--gpu", "h100-sxm", "--ttft-p95", "fast"}, `--ttft-p95 "fast"`},
		{"show a plan file", []string{"manifest", "show", "../../examples/clean.toml"}, "plan file without [deployment] manifest"},
		{"show missing", []string{"manifest", "show", manifests + "nope.yaml"}, "nope.yaml"},
		{"show bad format", []string{"manifest", "show", manifests + "forms/args.yaml", "-o", "xml"}, `-o "xml" is not a format`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := kvplan(t, c.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want 2; stdout %s stderr %s", code, out, errOut)
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("stderr %q lacks %q", errOut, c.want)
			}
		})
	}
}
