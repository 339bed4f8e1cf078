package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPathsRoot checks where a plan's deployment.manifest may point: inside
// the working directory when the plan is inside it (the documented layout,
// plans/review.toml naming ../dynamo/x.yaml), inside --paths-root when
// given, anywhere with --allow-outside-paths, and nowhere else.
func TestPathsRoot(t *testing.T) {
	review, err := os.ReadFile("../../testdata/manifests/plans/review.toml")
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	for _, d := range []string{"plans", "dynamo"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, "../../testdata/manifests/dynamo/vllm_disagg_router.yaml", filepath.Join(repo, "dynamo", "vllm_disagg_router.yaml"))
	copyFile(t, "../../testdata/manifests/dynamo/vllm_disagg_router.yaml", filepath.Join(base, "outside.yaml"))
	write := func(name, manifest string) string {
		p := filepath.Join(repo, "plans", name)
		text := strings.Replace(string(review), `manifest = "../dynamo/vllm_disagg_router.yaml"`, `manifest = "`+manifest+`"`, 1)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inRepo := write("review.toml", "../dynamo/vllm_disagg_router.yaml")
	escape := write("escape.toml", "../../outside.yaml")
	reviewed := func(code int) bool { return code == ExitOK || code == ExitFindings }

	t.Chdir(repo)
	if _, errOut, code := kvplan(t, "check", "plans/review.toml"); !reviewed(code) {
		t.Errorf("plan inside the working directory naming ../dynamo: exit %d: %s", code, errOut)
	}
	if _, errOut, code := kvplan(t, "check", "plans/escape.toml"); code != ExitUsage || !strings.Contains(errOut, "deployment.manifest") || !strings.Contains(errOut, "--paths-root") {
		t.Errorf("manifest outside the working directory: exit %d: %s", code, errOut)
	}
	if _, errOut, code := kvplan(t, "check", "plans/escape.toml", "--allow-outside-paths"); !reviewed(code) {
		t.Errorf("--allow-outside-paths: exit %d: %s", code, errOut)
	}
	t.Chdir(base) // the plan is inside the working directory again, and so is outside.yaml
	if _, errOut, code := kvplan(t, "check", escape); !reviewed(code) {
		t.Errorf("from the parent directory: exit %d: %s", code, errOut)
	}
	if _, errOut, code := kvplan(t, "check", escape, "--paths-root", repo); code != ExitUsage {
		t.Errorf("--paths-root repo: exit %d: %s", code, errOut)
	}
	t.Chdir(t.TempDir()) // the plan is outside the working directory: its own directory is the root
	if _, errOut, code := kvplan(t, "check", inRepo); code != ExitUsage {
		t.Errorf("plan outside the working directory naming ../dynamo: exit %d: %s", code, errOut)
	}
	if _, errOut, code := kvplan(t, "check", inRepo, "--paths-root", repo); !reviewed(code) {
		t.Errorf("--paths-root repo: exit %d: %s", code, errOut)
	}
}
