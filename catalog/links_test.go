package catalog_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

// TestEveryLinkStatesItsRatePer: rate_per decides whether tensor-parallel
// ranks send in parallel, so no embedded link may leave it to the default.
// The expected values follow FACTS.md §7 (Rails): RDMA NICs and NVLink are
// one per GPU; an Ethernet port, host TCP and an aggregate over a node's NICs
// are one path per host.
func TestEveryLinkStatesItsRatePer(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("data", "links.toml"))
	if err != nil {
		t.Fatal(err)
	}
	entries := strings.Split(string(data), "[[link]]")[1:]
	stated := regexp.MustCompile(`(?m)^rate_per = "(gpu|node)"$`)
	for i, e := range entries {
		if !stated.MatchString(e) {
			t.Errorf("link entry %d does not state rate_per:\n%s", i+1, e)
		}
	}
	c := load(t)
	want := map[string]string{
		"1gbe": "node", "100gbe": "node", "host-tcp": "node", "same-gpu-nixl": "node", "mooncake-8x400g": "node",
		"ib-ndr": "gpu", "roce-200g": "gpu", "nvlink4": "gpu", "pcie5-x16": "gpu",
	}
	for name, per := range want {
		l, err := c.Link(name)
		if err != nil {
			t.Fatal(err)
		}
		if l.RatePer != per || !strings.Contains(l.Source, "Rate per") {
			t.Errorf("%s: rate_per %q, want %q, with its reason in the source (%q)", name, l.RatePer, per, l.Source)
		}
	}
}

func TestRatePerValidation(t *testing.T) {
	dir := t.TempDir()
	write := func(ratePer string) error {
		text := "[[link]]\nname = \"lab\"\nnominal = \"10Gbps\"\nefficiency = 0.8\nlatency = \"0.1ms\"\nshared = true\nsource = \"test\"\n" + ratePer
		if err := os.WriteFile(filepath.Join(dir, "links.toml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := catalog.Load(dir)
		return err
	}
	if err := write(""); err != nil {
		t.Fatal(err)
	}
	c := load(t, dir)
	if l, _ := c.Link("lab"); l.RatePer != catalog.RatePerNode || l.PerGPU() {
		t.Errorf("absent rate_per = %q; want the conservative node", l.RatePer)
	}
	err := write("rate_per = \"rack\"\n")
	if err == nil || !strings.Contains(err.Error(), `rate_per: "rack" is not accepted: want "gpu"`) || !strings.Contains(err.Error(), "links.toml:") {
		t.Errorf("bad rate_per: %v", err)
	}
}
