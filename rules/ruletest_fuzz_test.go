package rules

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzRuleTestFile: any rule test file decodes, sets its [env] and runs the
// default pack, or fails with an error, never a panic.
func FuzzRuleTestFile(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "*", "*"+ExpectSuffix))
	more, _ := filepath.Glob(filepath.Join("..", "testdata", "*", "*", "*"+ExpectSuffix))
	for _, p := range append(files, more...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("must_fire = [\"kv-router-without-events\"]\n[env.router]\nmode = \"kv\"\nkv_events = false\n[[env.pools]]\nname = \"p\"\nworkers = 9223372036854775807\n"))
	set, err := CompileWithBudget([]*Pack{DefaultPack()}, fuzzBudget)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, _, err := decodeExpect("fuzz.expect.toml", data)
		if err != nil {
			return
		}
		e := cleanEnv()
		if doc.Env != nil {
			if err := setEnv(reflect.ValueOf(&e).Elem(), doc.Env, []string{"env"}); err != nil {
				return
			}
		}
		_ = check(doc, set.Evaluate(&e))
	})
}
