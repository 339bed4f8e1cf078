package planfile

import "testing"

func TestLooksLikePlan(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"# a plan\n\n[model]\nname = \"qwen3-0.6b\"\n", true},
		{"model.name = \"x\"\n", true},
		{"[pools.workers]\nrole = \"aggregated\"\n", true},
		{"\xef\xbb\xbf[model]\n", true},
		{"apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\n", false},
		{"---\n# Source: chart\napiVersion: v1\n", false},
		{"servingEngineSpec:\n  modelSpec:\n  - name: x\n", false},
		{"{\"apiVersion\": \"v1\"}", false},
		{"- a\n- b\n", false},
		{"", false},
	} {
		if got := LooksLikePlan([]byte(tc.text)); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.text, got, tc.want)
		}
	}
}
