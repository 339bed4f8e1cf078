package planfile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const configPlan = `[model]
config = %q
[workload]
input_tokens = 10
[pools.a]
role = "aggregated"
gpu = "l4"
`

func writePlan(t *testing.T, dir, config string) string {
	t.Helper()
	p := filepath.Join(dir, "plan.toml")
	if err := os.WriteFile(p, []byte(strings.Replace(configPlan, "%q", `"`+config+`"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConfinement: model.config resolves inside the plan's directory, as
// written and after symbolic links, unless AllowOutsidePaths.
func TestConfinement(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "plans")
	if err := os.MkdirAll(filepath.Join(dir, "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(root, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"secret": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models", "config.json"), []byte(`{"ok": true}`), 0o644); err != nil {
		t.Fatal(err)
	}

	// Inside: read.
	p, err := Load(writePlan(t, dir, "models/config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if data, err := p.ReadConfig(); err != nil || string(data) != `{"ok": true}` {
		t.Errorf("inside: %q, %v", data, err)
	}

	// Outside as written: refused when the plan is loaded.
	for _, cfg := range []string{"../secret.json", "/etc/passwd", "models/../../secret.json"} {
		_, err := Load(writePlan(t, dir, cfg))
		if err == nil || !strings.Contains(err.Error(), "model.config:") || !strings.Contains(err.Error(), "--allow-outside-paths") {
			t.Errorf("%s: %v", cfg, err)
		}
		p, err := LoadWith(writePlan(t, dir, cfg), Options{AllowOutsidePaths: true})
		if err != nil {
			t.Errorf("%s with AllowOutsidePaths: %v", cfg, err)
		} else if cfg == "../secret.json" {
			if data, err := p.ReadConfig(); err != nil || !strings.Contains(string(data), "secret") {
				t.Errorf("allowed read: %q, %v", data, err)
			}
		}
	}

	// Outside through a symbolic link inside the directory: refused on read.
	if err := os.Symlink(secret, filepath.Join(dir, "models", "link.json")); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	p, err = Load(writePlan(t, dir, "models/link.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.ReadConfig()
	if err == nil || !strings.Contains(err.Error(), "plan.toml:2: model.config:") || !strings.Contains(err.Error(), ", outside ") {
		t.Errorf("symlink escape: %v", err)
	}
}

// TestLoadRefusesSpecialFiles: a FIFO hung forever and /dev/zero grew to
// gigabytes; both are refused at once.
func TestLoadRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "plan.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs: %v", err)
	}
	for _, path := range []string{fifo, "/dev/zero"} {
		done := make(chan error, 1)
		go func() { _, err := Load(path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: %v", path, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Load(%s) hangs", path)
		}
	}
}

// TestManyPools: 20,000 pools took over 10 s (a linear scan per line
// lookup); lookups are now map reads. The bound is generous for a loaded
// 2-core CI machine: the parse takes about 0.3 s.
func TestManyPools(t *testing.T) {
	var b strings.Builder
	b.WriteString("[model]\nname = \"qwen3-0.6b\"\n[workload]\ninput_tokens = 100\n")
	const n = 20000
	for i := 0; i < n/2; i++ {
		b.WriteString("[pools.p" + strconv.Itoa(i) + "]\nrole = \"prefill\"\ngpu = \"l4\"\n[pools.d" + strconv.Itoa(i) + "]\nrole = \"decode\"\ngpu = \"l4\"\nshares_gpu_with = \"p" + strconv.Itoa(i) + "\"\n")
	}
	start := time.Now()
	p, err := Parse("many.toml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("20,000 pools took %v", d)
	}
	// 4 header lines, then 7 lines per pair; shares_gpu_with is the 7th.
	if len(p.Pools) != n || p.Line("pools.d9999.shares_gpu_with") != 4+7*9999+7 {
		t.Errorf("%d pools, line %d", len(p.Pools), p.Line("pools.d9999.shares_gpu_with"))
	}
}
