package manifest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// crdSchema compiles a CRD's openAPIV3Schema kept in testdata/emit/schema
// (see SOURCES.md there), with every object that lists properties closed
// unless the CRD preserves unknown fields there: the API server's strict
// field validation refuses an unknown field in such an object.
func crdSchema(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	return crdSubschema(t, file, "")
}

// crdSubschema compiles the part of a CRD's schema at a JSON pointer ("" =
// the whole schema), closed as crdSchema closes it.
func crdSubschema(t *testing.T, file, pointer string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "emit", "schema", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	closeObjects(doc)
	c := jsonschema.NewCompiler()
	if err := c.AddResource(file, doc); err != nil {
		t.Fatal(err)
	}
	loc := file
	if pointer != "" {
		loc += "#" + pointer
	}
	s, err := c.Compile(loc)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func closeObjects(v any) {
	switch x := v.(type) {
	case map[string]any:
		_, props := x["properties"]
		_, extra := x["additionalProperties"]
		_, keep := x["x-kubernetes-preserve-unknown-fields"]
		if props && !extra && !keep {
			x["additionalProperties"] = false
		}
		for _, e := range x {
			closeObjects(e)
		}
	case []any:
		for _, e := range x {
			closeObjects(e)
		}
	}
}

// yamlDoc turns a YAML document into the JSON value the API server sees.
func yamlDoc(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// podTemplatePointer is where the DisaggregatedSet CRD holds a role's
// worker pod template: a Kubernetes PodTemplateSpec, as controller-gen
// writes core/v1's schema into the CRD.
const podTemplatePointer = "/properties/spec/properties/roles/items/properties/spec/properties/leaderWorkerTemplate/properties/workerTemplate"

// TestEmitMatchesCRDSchemas: every DynamoGraphDeployment,
// LLMInferenceService and llm-d DisaggregatedSet the emitters write
// validates against the CRD's published schema, and the pod template of an
// aggregated llm-d Deployment against the PodTemplateSpec schema in the
// DisaggregatedSet CRD; a misspelled field does not, so the validation
// means something.
func TestEmitMatchesCRDSchemas(t *testing.T) {
	schemas := map[string]*jsonschema.Schema{
		EmitDynamo: crdSchema(t, "dynamographdeployment-v1alpha1.schema.json.gz"),
		EmitKServe: crdSchema(t, "llminferenceservice-v1alpha1.schema.json.gz"),
		EmitLLMD:   crdSchema(t, "disaggregatedset-v1.schema.json.gz"),
	}
	podTemplate := crdSubschema(t, "disaggregatedset-v1.schema.json.gz", podTemplatePointer)
	validated := map[string]int{}
	for _, c := range emitPlans {
		for _, f := range c.formats {
			s, ok := schemas[f]
			if !ok {
				continue
			}
			out := emitFile(t, c.file, f)
			doc := yamlDoc(t, out)
			if f == EmitLLMD && strings.Contains(string(out), "kind: LeaderWorkerSet") {
				// Aggregated workers over several nodes: a LeaderWorkerSet, whose
				// group template is the DisaggregatedSet role's (both inline
				// LWS's LeaderWorkerTemplate): validate its two pod templates.
				for _, tmpl := range lwsTemplates(t, doc) {
					if err := podTemplate.Validate(tmpl); err != nil {
						t.Errorf("%s: a pod template does not match the schema: %v", goldenName(c.file, f), err)
					}
				}
				validated[f]++
				continue
			}
			if f == EmitLLMD && !strings.Contains(string(out), "kind: DisaggregatedSet") {
				// An aggregated plan is a Deployment (apps/v1, no CRD): its pod
				// template is the part kvplan writes beyond three fields.
				s = podTemplate
				doc = deploymentTemplate(t, doc)
			}
			if err := s.Validate(doc); err != nil {
				t.Errorf("%s: does not match the CRD's schema: %v", goldenName(c.file, f), err)
			}
			validated[f]++
		}
	}
	if validated[EmitLLMD] != 4 {
		t.Errorf("%d llm-d outputs validated, want 4: aggregated and disaggregated, on one node and over two", validated[EmitLLMD])
	}
	agg := string(emitFile(t, "agg-vllm.toml", EmitLLMD))
	if bad := strings.Replace(agg, "volumeMounts:", "volumeMount:", 1); bad == agg {
		t.Fatal("llm-d (aggregated): volumeMounts is not in the output")
	} else if podTemplate.Validate(deploymentTemplate(t, yamlDoc(t, []byte(bad)))) == nil {
		t.Error("llm-d (aggregated): the pod template schema accepts volumeMount")
	}
	for f, typo := range map[string][2]string{
		EmitDynamo: {"componentType: worker", "componenType: worker"},
		EmitKServe: {"parallelism:", "paralelism:"},
		EmitLLMD:   {"leaderWorkerTemplate:", "leaderWorkerTemplates:"},
	} {
		out := string(emitFile(t, "disagg-vllm.toml", f))
		bad := strings.Replace(out, typo[0], typo[1], 1)
		if bad == out {
			t.Fatalf("%s: %q is not in the output", f, typo[0])
		}
		if schemas[f].Validate(yamlDoc(t, []byte(bad))) == nil {
			t.Errorf("%s: the schema accepts %q", f, typo[1])
		}
	}
}

// deploymentTemplate is a Deployment's spec.template, after checking the
// fields around it that kvplan writes.
// lwsTemplates are a LeaderWorkerSet's leader and worker pod templates.
func lwsTemplates(t *testing.T, doc any) []any {
	t.Helper()
	m, _ := doc.(map[string]any)
	if m["apiVersion"] != "leaderworkerset.x-k8s.io/v1" {
		t.Fatalf("a LeaderWorkerSet of apiVersion %v", m["apiVersion"])
	}
	spec, _ := m["spec"].(map[string]any)
	lwt, _ := spec["leaderWorkerTemplate"].(map[string]any)
	if lwt["leaderTemplate"] == nil || lwt["workerTemplate"] == nil {
		t.Fatalf("a LeaderWorkerSet without its two templates: %v", lwt)
	}
	return []any{lwt["leaderTemplate"], lwt["workerTemplate"]}
}

func deploymentTemplate(t *testing.T, doc any) any {
	t.Helper()
	m, _ := doc.(map[string]any)
	if m["apiVersion"] != "apps/v1" || m["kind"] != "Deployment" {
		t.Fatalf("an aggregated llm-d manifest is an apps/v1 Deployment, got %v %v", m["apiVersion"], m["kind"])
	}
	spec, _ := m["spec"].(map[string]any)
	for k := range spec {
		if k != "replicas" && k != "selector" && k != "template" {
			t.Errorf("Deployment spec.%s: kvplan writes replicas, selector and template", k)
		}
	}
	if spec["template"] == nil {
		t.Fatal("the Deployment has no spec.template")
	}
	return spec["template"]
}
