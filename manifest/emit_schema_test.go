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
	s, err := c.Compile(file)
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

// TestEmitMatchesCRDSchemas: every DynamoGraphDeployment and
// LLMInferenceService the emitters write validates against the CRD's
// published schema; a misspelled field does not, so the validation means
// something.
func TestEmitMatchesCRDSchemas(t *testing.T) {
	schemas := map[string]*jsonschema.Schema{
		EmitDynamo: crdSchema(t, "dynamographdeployment-v1alpha1.schema.json.gz"),
		EmitKServe: crdSchema(t, "llminferenceservice-v1alpha1.schema.json.gz"),
	}
	for _, c := range emitPlans {
		for _, f := range c.formats {
			s, ok := schemas[f]
			if !ok {
				continue
			}
			out := emitFile(t, c.file, f)
			if err := s.Validate(yamlDoc(t, out)); err != nil {
				t.Errorf("%s: does not match the CRD's schema: %v", goldenName(c.file, f), err)
			}
		}
	}
	for f, typo := range map[string][2]string{
		EmitDynamo: {"componentType: worker", "componenType: worker"},
		EmitKServe: {"parallelism:", "paralelism:"},
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
