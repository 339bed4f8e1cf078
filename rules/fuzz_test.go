package rules

import (
	"testing"
)

// FuzzParsePack: any rule pack compiles or fails with an error, and a
// compiled one evaluates without a panic.
func FuzzParsePack(f *testing.F) {
	f.Add(DefaultPackTOML())
	f.Add([]byte("[[rule]]\nid = \"x\"\nseverity = \"warn\"\nwhen = \"pool.workers > 1\"\nper_pool = true\nmessage = \"${pool.name}\"\nwhy = \"w\"\nfix = \"f\"\n"))
	env := &Env{Pools: []PoolEnv{{Name: "p", Workers: 2}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePack("fuzz.toml", data)
		if err != nil {
			return
		}
		set, err := Compile([]*Pack{p})
		if err != nil {
			return
		}
		_ = set.Evaluate(env)
	})
}
