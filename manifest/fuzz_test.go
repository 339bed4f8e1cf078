package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRead: no input makes the reader panic or hang; it returns a plan or
// an error. Seeds are every manifest in testdata.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.yaml"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("kind: Pod\nspec:\n  containers:\n    - command: [sh, -c, 'vllm serve \"$(unclosed']\n"))
	// Issue 28's manifests: empty documents, counts that are not counts, bytes YAML refuses.
	pod := "kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - command: [vllm, serve, M]\n"
	for _, s := range []string{pod + "---\n", pod + "---\n---\n# c\n", pod + "  note: \xff\x00\n",
		"kind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: .nan\n  template:\n    spec:\n      containers:\n        - command: [vllm, serve, M]\n          resources:\n            limits:\n              nvidia.com/gpu: 1e20\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Read("fuzz.yaml", data)
		if err != nil {
			return
		}
		if m.Plan == nil || len(m.Plan.Pools) == 0 {
			t.Fatalf("Read returned no error and no pools")
		}
		for _, n := range m.Plan.PoolNames() {
			_ = m.Plan.Pos("pools." + n + ".tp")
		}
		_, _, _ = Complete(m, nil, Supplement{GPU: map[string]string{"": "h100-sxm"}})
	})
}

// FuzzShellWords: the shell reader, through both of its doors (a Pod's
// `sh -c SCRIPT` and kvplan memory's --vllm-args), never panics, overflows
// its stack or runs away, whatever the script; a refusal is one line. The
// seeds are issue 28's crashes and blow-ups, cut to a fuzzer's size, and
// the commands of the shell tests.
func FuzzShellWords(f *testing.F) {
	for _, s := range []string{
		"vllm serve M <(x)", // a nil dereference before process substitutions had a handler
		"vllm serve M >(x)",
		"vllm serve M --max-model-len $(cat f) `nproc`",
		strings.Repeat("(", 70) + "vllm serve M" + strings.Repeat(")", 70), // 200,000 overflowed the stack
		"A=x; " + strings.Repeat("A=$A$A; ", 29) + "vllm serve M --served-model-name $A",
		"A=x; " + strings.Repeat("A=${A//x/xxxxxxxxxx}; ", 8) + "vllm serve M --served-model-name $A",
		"A=xxxxxxxxxx; vllm serve M --served-model-name " + strings.Repeat("$A", 200),
		"vllm serve M --max-model-len '4096", // the parse error used to be dropped
		"vllm serve M --served-model-name {a,b}{c,d}{1..9} ~root/x ${A:-${B:-c}} ${A%%x*} ${A^^} ${!A*} $((1+2*3))",
		"export A=1 B+=2; A+=3 exec python3 -m sglang.launch_server --model-path M --tp $A",
		"set -e\nif [ -n \"$X\" ]; then exec vllm serve M; fi\ncat <<EOF\n$(x)\nEOF\n",
		"--max-model-len 4096 --kv-transfer-config '{\"kv_connector\":\"NixlConnector\"}'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		if _, err := ReadCommandString("--vllm-args", script); err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("--vllm-args error of more than one line: %q", err)
		}
		m, err := Read("pod.yaml", shellPod(script))
		switch {
		case err != nil:
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("manifest error of more than one line: %q", err)
			}
		case m.Plan == nil || len(m.Plan.Pools) == 0:
			t.Fatalf("Read returned no error and no pools")
		}
	})
}
