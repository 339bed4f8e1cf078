package planfile

import "testing"

// Pos answers the same way for a plan file (lines from its TOML keys) and a
// plan a manifest reader filled (file, line and column of each value).
func TestPos(t *testing.T) {
	toml, err := Decode("plan.toml", []byte(`[model]
name = "qwen3-0.6b"

[pools.prefill]
role = "prefill"
memory_limit = "3584Mi"
`))
	if err != nil {
		t.Fatal(err)
	}
	yaml := &Plan{Path: "deploy.yaml"}
	yaml.SetPos("pools.decode", Pos{File: "deploy.yaml", Line: 19, Col: 5})
	yaml.SetPos("pools.decode.tp", Pos{File: "deploy.yaml", Line: 45, Col: 15})
	yaml.SetPos("model.name", Pos{File: "deploy.yaml", Line: 36, Col: 15})
	yaml.SetPos("slo.ttft_ms", Pos{}) // a flag's value has no place and is not recorded

	cases := []struct {
		name  string
		p     *Plan
		field string
		want  string
	}{
		{"toml key", toml, "pools.prefill.memory_limit", "plan.toml:6"},
		{"toml absent key: its table", toml, "pools.prefill.gpu", "plan.toml:4"},
		{"toml absent table", toml, "router.mode", ""},
		{"yaml argument value", yaml, "pools.decode.tp", "deploy.yaml:45:15"},
		{"yaml absent key: its pool", yaml, "pools.decode.memory_limit", "deploy.yaml:19:5"},
		{"yaml table without a place: the first key below", yaml, "model", "deploy.yaml:36:15"},
		{"zero place is not recorded", yaml, "slo.ttft_ms", ""},
	}
	for _, c := range cases {
		if got := c.p.Pos(c.field).String(); got != c.want {
			t.Errorf("%s: Pos(%s) = %q, want %q", c.name, c.field, got, c.want)
		}
	}
	if !toml.Has("model.name") || toml.Has("model.tp") || yaml.Has("slo.ttft_ms") {
		t.Errorf("Has: model.name %v, model.tp %v, slo.ttft_ms %v", toml.Has("model.name"), toml.Has("model.tp"), yaml.Has("slo.ttft_ms"))
	}
	err = yaml.FieldError("pools.decode.tp", errString("two is not a number"))
	if want := "deploy.yaml:45:15: pools.decode.tp: two is not a number"; err.Error() != want {
		t.Errorf("FieldError = %q, want %q", err, want)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
