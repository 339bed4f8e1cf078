//go:build kvplan_rules_toml

package rules

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
