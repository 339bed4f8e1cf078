package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/internal/safefile"
	"github.com/kvplan/kvplan/internal/suggest"
	"github.com/kvplan/kvplan/planner"
	"github.com/kvplan/kvplan/planner/capacity"
)

// pricingFlags reads --provider, --price-file and the owned-cluster and
// power flags into q.
func pricingFlags(c *cli.Context, cat *catalog.Catalog, q *capacity.Query) error {
	q.Instances, q.Now = cat.Instances, time.Now()
	if path := c.String("price-file"); path != "" {
		data, err := safefile.ReadFile(path, safefile.Catalog)
		if err != nil {
			return fmt.Errorf("--price-file: %w", err)
		}
		prices, err := catalog.Parse(path, data)
		if err != nil {
			return fmt.Errorf("--price-file: %w", err)
		}
		merged := *cat
		merged.Instances = append([]*catalog.Instance(nil), cat.Instances...)
		if err := merged.WithPrices(prices); err != nil {
			return fmt.Errorf("--price-file %s: %w", path, err)
		}
		q.Instances = merged.Instances
	}
	if c.IsSet("provider") {
		p := strings.ToLower(strings.TrimSpace(c.String("provider")))
		known := append((&catalog.Catalog{Instances: q.Instances}).Providers(), planner.ProviderAny)
		ok := false
		for _, k := range known {
			ok = ok || k == p
		}
		if !ok {
			msg := fmt.Sprintf("--provider %q: the catalog's providers are %s", c.String("provider"), strings.Join(known, ", "))
			if cl := suggest.Closest(p, known, 1); len(cl) > 0 {
				msg += "; did you mean " + cl[0] + "?"
			}
			return fmt.Errorf("%s", msg)
		}
		q.Provider, q.ProviderStrict = p, p != planner.ProviderAny
	}
	var err error
	if q.PUE, err = floatIn(c, "pue", 0, 10, ""); err != nil {
		return err
	}
	if c.IsSet("pue") && q.PUE < 1 {
		return fmt.Errorf("plan: --pue %g: a power usage effectiveness is at least 1 (the servers alone)", q.PUE)
	}
	if q.HostWattsPerGPU, err = floatIn(c, "host-watts-per-gpu", 0, 100_000, "W"); err != nil {
		return err
	}
	owned := []string{"usd-per-kwh", "capex-per-gpu", "amortize-years"}
	if !c.Bool("owned") {
		for _, f := range owned {
			if c.IsSet(f) {
				return fmt.Errorf("plan: --%s prices owned GPUs: give --owned with it", f)
			}
		}
		return nil
	}
	if c.IsSet("provider") || c.IsSet("price-file") || c.IsSet("price") || c.IsSet("pricing") {
		return fmt.Errorf("plan: --owned prices the GPUs by their power and capex: --provider, --pricing, --price and --price-file are for rented ones")
	}
	if !c.IsSet("usd-per-kwh") {
		return fmt.Errorf("plan: --owned needs --usd-per-kwh (the electricity price, e.g. 0.12)")
	}
	o := &capacity.Owned{}
	if o.USDPerKWh, err = floatIn(c, "usd-per-kwh", 0, 100, "USD"); err != nil {
		return err
	}
	if o.CapexPerGPU, err = floatIn(c, "capex-per-gpu", 0, 10_000_000, "USD"); err != nil {
		return err
	}
	if o.AmortizeYears, err = floatIn(c, "amortize-years", 0, 50, "years"); err != nil {
		return err
	}
	q.Owned = o
	return nil
}

// instancesCell is the instances a candidate rents: "5 × aws/p5.48xlarge",
// with the GPUs they leave idle.
func instancesCell(c *capacity.Candidate) string {
	if c.Owned != nil {
		return fmt.Sprintf("owned: $%.2f energy + $%.2f capex per hour", c.Owned.EnergyUSDPerHour, c.Owned.AmortizedUSDPerHour)
	}
	if len(c.Instances) == 0 {
		return "-"
	}
	var out []string
	for _, u := range c.Instances {
		if u.Type == "gpu-hour" {
			out = append(out, fmt.Sprintf("%d %s GPU-hours", u.Count, u.GPU))
			continue
		}
		out = append(out, fmt.Sprintf("%d × %s", u.Count, u.Type))
	}
	s := strings.Join(out, " + ")
	if c.IdleGPUs > 0 {
		s += fmt.Sprintf(" (%d GPUs idle)", c.IdleGPUs)
	}
	return s
}
