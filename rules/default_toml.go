//go:build kvplan_rules_toml

package rules

import "github.com/expr-lang/expr/vm"

// defaultPackParsed parses default.toml. This file replaces default_gen.go
// under the build tag kvplan_rules_toml, which `go generate ./rules` uses
// to write default_gen.go anew.
func defaultPackParsed() *Pack {
	p, err := ParsePack(DefaultFile, defaultTOML)
	if err != nil {
		panic("rules: embedded default pack: " + err.Error())
	}
	return p
}

// precompiledProgram has no programs under kvplan_rules_toml: every rule
// compiles from its text, which is what go generate ./rules writes out.
func precompiledProgram(string) (when, denyWhen *vm.Program) { return nil, nil }

// driverTableParsed decodes data/cuda_drivers.toml.
func driverTableParsed() []DriverCUDA {
	t, err := parseDriverTable(driverTableTOML)
	if err != nil {
		panic("rules: embedded data/cuda_drivers.toml: " + err.Error())
	}
	return t
}
