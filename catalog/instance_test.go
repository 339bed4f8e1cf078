package catalog_test

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

const okInstance = `[[instance]]
name = "aws/p5.48xlarge"
provider = "aws"
type = "p5.48xlarge"
gpu = "h100-sxm"
gpus = 8
usd_per_hour = 55.04
as_of = "2026-12-01"
source = "test"
`

// TestInstanceValidation: a malformed instance entry is refused at its line
// and field, with what would be accepted.
func TestInstanceValidation(t *testing.T) {
	cases := []struct{ name, replace, with, want string }{
		{"no source", `source = "test"`, ``, `x.toml:1: instance "aws/p5.48xlarge": source: missing`},
		{"bad date", `as_of = "2026-12-01"`, `as_of = "Dec 2026"`, `as_of: "Dec 2026": want the prices' date as YYYY-MM-DD`},
		{"no price", `usd_per_hour = 55.04`, ``, `usd_per_hour: no price`},
		{"negative price", `usd_per_hour = 55.04`, `usd_per_hour = -1`, `usd_per_hour: must be between 0 (unknown) and 100000`},
		{"nan price", `usd_per_hour = 55.04`, `usd_per_hour = nan`, `usd_per_hour: must be between 0`},
		{"no gpus", `gpus = 8`, `gpus = 0`, `gpus: must be between 1 and 64`},
		{"wrong name", `name = "aws/p5.48xlarge"`, `name = "p5"`, `name: "p5": an instance is named provider/type, here "aws/p5.48xlarge"`},
		{"no provider", `provider = "aws"`, ``, `provider: missing`},
	}
	for _, c := range cases {
		_, err := catalog.Parse("x.toml", []byte(strings.Replace(okInstance, c.replace, c.with, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v\nwant it to contain %s", c.name, err, c.want)
		}
	}
	if _, err := catalog.Parse("x.toml", []byte(okInstance)); err != nil {
		t.Fatalf("the base entry is valid: %v", err)
	}
}

// TestInstanceUnknownGPU: a user catalog's instance of a GPU the catalog
// does not know is refused with its place and a did-you-mean.
func TestInstanceUnknownGPU(t *testing.T) {
	dir := t.TempDir()
	doc := strings.Replace(okInstance, `gpu = "h100-sxm"`, `gpu = "h100-sxn"`, 1)
	if err := os.WriteFile(filepath.Join(dir, "i.toml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := catalog.Load(dir)
	if err == nil || !strings.Contains(err.Error(), "i.toml:1: instance \"aws/p5.48xlarge\": gpu: unknown gpu") || !strings.Contains(err.Error(), "did you mean h100-sxm") {
		t.Errorf("err = %v", err)
	}
}

// TestGPUPricesFollowInstances: a GPU whose per-GPU price cites an
// instances.toml entry has that entry's price ÷ its GPUs (to the cent),
// so the two files cannot drift apart.
func TestGPUPricesFollowInstances(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	cite := regexp.MustCompile(`^instances\.toml (\S+):`)
	n := 0
	for _, g := range c.GPUs {
		m := cite.FindStringSubmatch(g.PriceSource)
		if m == nil {
			continue
		}
		n++
		var in *catalog.Instance
		for _, x := range c.Instances {
			if x.Name == m[1] {
				in = x
			}
		}
		if in == nil {
			t.Errorf("%s cites %s, which instances.toml lacks", g.Name, m[1])
			continue
		}
		if want := in.USDPerHour / float64(in.GPUs); math.Abs(g.USDPerHour-want) > 0.005 {
			t.Errorf("%s: $%g per GPU-hour, but %s is $%g for %d GPUs = $%.3f", g.Name, g.USDPerHour, in.Name, in.USDPerHour, in.GPUs, want)
		}
	}
	if n < 6 {
		t.Errorf("%d GPUs cite instances.toml; the six the issue listed unpriced (and the A6000) do", n)
	}
}

// TestEveryDataCentreGPUPriced: the GPUs without any price are the
// consumer and laptop parts (owned, not rented) and the MI325X, which no
// source kvplan read lists a price for (DigitalOcean's pricing page says
// "per contract"); each says so in price_source.
func TestEveryDataCentreGPUPriced(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	var unpriced []string
	for _, g := range c.GPUs {
		if g.USDPerHour == 0 && len(c.InstancesOf(g)) == 0 {
			unpriced = append(unpriced, g.Name)
			if g.PriceSource == "" {
				t.Errorf("%s has no price and no price_source saying why", g.Name)
			}
		}
	}
	sort.Strings(unpriced)
	want := "mi325x rtx3090 rtx4060-laptop rtx4090 rtx5090"
	if got := strings.Join(unpriced, " "); got != want {
		t.Errorf("unpriced GPUs %q, want %q", got, want)
	}
}

// TestInstanceDates: every date parses, and the catalog's older prices are
// the ones it says are old (CoreWeave's of 2024-02-07, from vidur).
func TestInstanceDates(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range c.Instances {
		if in.Date().IsZero() {
			t.Errorf("%s: as_of %q", in.Name, in.AsOf)
		}
		if y, _ := strconv.Atoi(in.AsOf[:4]); y < 2026 && in.Provider != "coreweave" {
			t.Errorf("%s: a price of %s", in.Name, in.AsOf)
		}
	}
}
