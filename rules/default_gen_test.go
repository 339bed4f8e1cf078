package rules

import (
	"reflect"
	"testing"
)

// TestDefaultPackGenerated fails while default_gen.go is stale: the pack
// the binary carries must be exactly what ParsePack reads from default.toml,
// rule lines and expression positions included.
func TestDefaultPackGenerated(t *testing.T) {
	parsed, err := ParsePack(DefaultFile, defaultTOML)
	if err != nil {
		t.Fatal(err)
	}
	compiled := defaultPackParsed()
	if !reflect.DeepEqual(compiled, parsed) {
		t.Fatal("rules/default_gen.go is stale: default.toml changed since it was generated; run `go generate ./rules` and commit the result")
	}
	if len(compiled.Rules) == 0 {
		t.Fatal("the default pack has no rule")
	}
	if a, b := defaultPackParsed(), defaultPackParsed(); a.Rules[0] == b.Rules[0] {
		t.Fatal("two calls share a rule: a Load compiles into its rules, so each needs its own")
	}
}

// TestDriverTableGenerated fails while default_gen.go's driver table is not
// what data/cuda_drivers.toml holds.
func TestDriverTableGenerated(t *testing.T) {
	parsed, err := parseDriverTable(driverTableTOML)
	if err != nil {
		t.Fatal(err)
	}
	if got := driverTableParsed(); !reflect.DeepEqual(got, parsed) || len(got) == 0 {
		t.Fatal("rules/default_gen.go's driver table is stale: data/cuda_drivers.toml changed since it was generated; run `go generate ./rules` and commit the result")
	}
}
