package planner

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvplan/kvplan/catalog"
)

func pricingCatalog(t *testing.T) (*catalog.Catalog, func(string) *catalog.GPU) {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	return cat, func(name string) *catalog.GPU {
		g, err := cat.GPU(name)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
}

// TestPriceInstances: packings and prices worked out by hand from
// catalog/data/instances.toml's rows.
func TestPriceInstances(t *testing.T) {
	cat, gpu := pricingCatalog(t)
	h100, gh200 := gpu("h100-sxm"), gpu("gh200")
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		groups    []WorkerGroup
		o         PriceOptions
		usd       float64
		idle      int
		instances string // type × count, in order
		note      string // a note that must be among the notes
	}{
		// 10 tp4 workers, two to a p5.48xlarge: 5 × $55.04 = $275.20 (the
		// tp4 workers cannot use the 1-GPU p5.4xlarge).
		{"aws 10×tp4", []WorkerGroup{{h100, 4, 10, false}}, PriceOptions{}, 275.20, 0, "aws/p5.48xlarge×5", ""},
		// 9: the fifth instance holds one worker, 4 GPUs idle: still 5 × $55.04.
		{"aws 9×tp4", []WorkerGroup{{h100, 4, 9, false}}, PriceOptions{}, 275.20, 4, "aws/p5.48xlarge×5", ""},
		// Lambda has a 4-GPU size: 4 × $31.92 + 1 × $16.36 = $144.04, none idle.
		{"lambda 9×tp4", []WorkerGroup{{h100, 4, 9, false}}, PriceOptions{Provider: "lambda", Strict: true}, 144.04, 0, "lambda/gpu_8x_h100_sxm5×4 lambda/gpu_4x_h100_sxm5×1", ""},
		// 3 tp1 workers: 3 × p5.4xlarge $6.88 = $20.64 beats one p5.48xlarge ($55.04).
		// A worker of tp 1 × dp 12 spans two 8-GPU nodes: 2 × $55.04, 4 GPUs idle.
		{"aws multi-node dp12", []WorkerGroup{{h100, 12, 1, true}}, PriceOptions{}, 110.08, 4, "aws/p5.48xlarge×2", ""},
		{"aws 3×tp1", []WorkerGroup{{h100, 1, 3, false}}, PriceOptions{}, 20.64, 0, "aws/p5.4xlarge×3", ""},
		// Prefill 7×tp4 and decode 2×tp8 share the H100 instances: bins
		// [8] [8] [4 4] [4 4] [4 4] [4]: 6 × $55.04 = $330.24, 4 GPUs idle.
		{"aws disaggregated", []WorkerGroup{{h100, 4, 7, false}, {h100, 8, 2, false}}, PriceOptions{}, 330.24, 4, "aws/p5.48xlarge×6", ""},
		// Spot: 5 × the spot sample $19.2531 = $96.2655.
		{"aws spot", []WorkerGroup{{h100, 4, 10, false}}, PriceOptions{Pricing: catalog.PricingSpot}, 96.2655, 0, "aws/p5.48xlarge×5", ""},
		// --price: 40 GPU-hours at $2 = $80, no instance, nothing idle.
		{"--price", []WorkerGroup{{h100, 4, 10, false}}, PriceOptions{GPUPrices: map[string]float64{"h100-sxm": 2}}, 80, 0, "gpu-hour×40", ""},
		// AWS rents no GH200: the catalog's per-GPU price (Lambda's $2.29) for 3 GPUs.
		{"aws has no gh200", []WorkerGroup{{gh200, 1, 3, false}}, PriceOptions{}, 6.87, 0, "gpu-hour×3", "aws rents no gh200"},
		// CoreWeave's H100 GPU-hour of 2024-02-07: 40 × $4.25 = $170, an old price.
		{"coreweave", []WorkerGroup{{h100, 4, 10, false}}, PriceOptions{Provider: "coreweave", Strict: true, Now: now}, 170, 0, "coreweave/h100-gpu-hour×40", "of 2024-02-07, more than a year old"},
		// The cheapest provider for 10×tp4 H100: Lambda, 5 × $31.92 = $159.60
		// (CoreWeave's $170, AWS's $275.20, OCI's 5 × $80 = $400).
		{"any", []WorkerGroup{{h100, 4, 10, false}}, PriceOptions{Provider: ProviderAny}, 159.60, 0, "lambda/gpu_8x_h100_sxm5×5", ""},
	}
	for _, c := range cases {
		o := c.o
		o.Instances = cat.Instances
		d, err := PriceInstances(c.groups, o)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var got []string
		for _, u := range d.Instances {
			got = append(got, u.Type+"×"+strconv.Itoa(u.Count))
		}
		if !d.Known || math.Abs(d.USDPerHour-c.usd) > 1e-6 || d.IdleGPUs != c.idle || strings.Join(got, " ") != c.instances {
			t.Errorf("%s: $%g (known %v), %d idle, %s; want $%g, %d idle, %s", c.name, d.USDPerHour, d.Known, d.IdleGPUs, strings.Join(got, " "), c.usd, c.idle, c.instances)
		}
		if c.note != "" && !strings.Contains(strings.Join(d.Notes, "\n"), c.note) {
			t.Errorf("%s: notes %q, want one saying %q", c.name, d.Notes, c.note)
		}
	}
}

// TestPriceInstancesRefuses: an asked-for provider or pricing kind that has
// no price for a GPU is a PriceError saying what the catalog has.
func TestPriceInstancesRefuses(t *testing.T) {
	cat, gpu := pricingCatalog(t)
	cases := []struct {
		name   string
		groups []WorkerGroup
		o      PriceOptions
		want   string
	}{
		{"reserved", []WorkerGroup{{gpu("h100-sxm"), 4, 2, false}}, PriceOptions{Pricing: catalog.PricingReserved1Y, Provider: "aws", Strict: true},
			"no reserved-1y price for h100-sxm at aws: the catalog has aws's h100-sxm prices (on-demand, spot)"},
		{"provider lacks the gpu", []WorkerGroup{{gpu("gh200"), 1, 2, false}}, PriceOptions{Provider: "aws", Strict: true},
			"no on-demand price for gh200 at aws: aws rents none in the catalog; lambda price it"},
		{"nobody", []WorkerGroup{{gpu("mi325x"), 8, 1, false}}, PriceOptions{Provider: "oci", Strict: true},
			"no provider in the catalog has a on-demand price for it"},
		{"any", []WorkerGroup{{gpu("mi325x"), 8, 1, false}}, PriceOptions{Provider: ProviderAny},
			"no provider rents every GPU of the deployment"},
	}
	for _, c := range cases {
		o := c.o
		o.Instances = cat.Instances
		_, err := PriceInstances(c.groups, o)
		if _, ok := err.(*PriceError); !ok || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a PriceError saying %q", c.name, err, c.want)
		}
	}
	// With the default provider a GPU nobody prices is unknown, never $0.
	d, err := PriceInstances([]WorkerGroup{{gpu("mi325x"), 8, 1, false}}, PriceOptions{Instances: cat.Instances})
	if err != nil || d.Known || d.USDPerHour != 0 || len(d.Unknown) == 0 {
		t.Errorf("mi325x: %+v, %v; want an unknown price with a reason", d, err)
	}
}

// TestPackOddInstances: instances whose GPUs the workers' sizes do not
// divide are packed worker by worker, first-fit decreasing. On 6-GPU
// instances at $6: 3 tp4 workers take one each (2 GPUs idle on each: $18,
// 6 idle); a tp4 and a tp2 share one ($6, none idle).
func TestPackOddInstances(t *testing.T) {
	_, gpu := pricingCatalog(t)
	h100 := gpu("h100-sxm")
	six := []*catalog.Instance{{Name: "x/six", Provider: "x", Type: "six", GPU: "h100-sxm", GPUs: 6, USDPerHour: 6, AsOf: "2026-12-01", Source: "test"}}
	for _, c := range []struct {
		groups []WorkerGroup
		usd    float64
		idle   int
	}{
		{[]WorkerGroup{{h100, 4, 3, false}}, 18, 6},
		{[]WorkerGroup{{h100, 4, 1, false}, {h100, 2, 1, false}}, 6, 0},
	} {
		d, err := PriceInstances(c.groups, PriceOptions{Provider: "x", Strict: true, Instances: six})
		if err != nil || d.USDPerHour != c.usd || d.IdleGPUs != c.idle {
			t.Errorf("%+v: $%g, %d idle, %v; want $%g, %d idle", c.groups, d.USDPerHour, d.IdleGPUs, err, c.usd, c.idle)
		}
	}
}
