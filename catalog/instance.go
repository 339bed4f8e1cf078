package catalog

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Instance is one instance type a provider rents, with the GPUs it holds
// and its list prices per instance-hour. A price of 0 is unknown: kvplan
// never reads it as free.
type Instance struct {
	Name     string `toml:"name" json:"name"`         // provider/type, lower-case: "aws/p5.48xlarge"
	Provider string `toml:"provider" json:"provider"` // aws, gcp, azure, oci, coreweave, lambda, ...
	Type     string `toml:"type" json:"type"`         // the provider's name for it: "p5.48xlarge"
	GPU      string `toml:"gpu" json:"gpu"`           // catalog GPU name
	GPUs     int    `toml:"gpus" json:"gpus"`         // GPUs per instance, all on one node
	// PerGPU marks a rate per GPU-hour on nodes the provider assigns (gpus
	// = 1): a worker of any tp fits, and no GPU is left idle.
	PerGPU bool   `toml:"per_gpu" json:"per_gpu,omitempty"`
	Region string `toml:"region" json:"region,omitempty"`

	USDPerHour           float64 `toml:"usd_per_hour" json:"usd_per_hour,omitempty"`                         // on-demand
	USDPerHourSpot       float64 `toml:"usd_per_hour_spot" json:"usd_per_hour_spot,omitempty"`               // a spot (preemptible) sample
	USDPerHourReserved1Y float64 `toml:"usd_per_hour_reserved_1y" json:"usd_per_hour_reserved_1y,omitempty"` // one-year commitment, per hour
	USDPerHourReserved3Y float64 `toml:"usd_per_hour_reserved_3y" json:"usd_per_hour_reserved_3y,omitempty"` // three-year commitment, per hour

	// AsOf is the date of the prices, YYYY-MM-DD: the source's own date when
	// it has one, else the day they were read from it (the source names the
	// commit read).
	AsOf   string `toml:"as_of" json:"as_of"`
	Source string `toml:"source" json:"source"`
	Note   string `toml:"note" json:"note,omitempty"`

	File string `toml:"-" json:"-"`
	Line int    `toml:"-" json:"-"`
}

// Pricing kinds an instance is priced by.
const (
	PricingOnDemand   = "on-demand"
	PricingSpot       = "spot"
	PricingReserved1Y = "reserved-1y"
	PricingReserved3Y = "reserved-3y"
)

// Pricings lists the kinds in the order the help names them.
var Pricings = []string{PricingOnDemand, PricingSpot, PricingReserved1Y, PricingReserved3Y}

// Price is the instance's price per hour under a pricing kind; 0 = none listed.
func (i *Instance) Price(kind string) float64 {
	switch kind {
	case PricingSpot:
		return i.USDPerHourSpot
	case PricingReserved1Y:
		return i.USDPerHourReserved1Y
	case PricingReserved3Y:
		return i.USDPerHourReserved3Y
	}
	return i.USDPerHour
}

// Date is AsOf parsed.
func (i *Instance) Date() time.Time {
	t, _ := time.Parse(time.DateOnly, i.AsOf)
	return t
}

// maxInstanceUSD bounds a price per instance-hour: far above any listed today.
const maxInstanceUSD = 100_000

func (i *Instance) validate() []fieldErr {
	var errs []fieldErr
	add := func(field, format string, a ...any) { errs = append(errs, fieldErr{field, fmt.Sprintf(format, a...)}) }
	i.Provider, i.GPU = strings.ToLower(strings.TrimSpace(i.Provider)), strings.ToLower(strings.TrimSpace(i.GPU))
	switch {
	case i.Provider == "":
		add("provider", "missing: the provider that rents it (aws, gcp, azure, oci, coreweave, lambda, ...)")
	case strings.ContainsAny(i.Provider, "/ ,"):
		add("provider", "%q: a provider name has no '/', ',' or space", i.Provider)
	}
	if strings.TrimSpace(i.Type) == "" {
		add("type", "missing: the provider's name for the instance type")
	}
	if want := i.Provider + "/" + strings.ToLower(i.Type); i.Provider != "" && i.Type != "" && i.Name != want {
		add("name", "%q: an instance is named provider/type, here %q", i.Name, want)
	}
	if i.GPU == "" {
		add("gpu", "missing: the catalog GPU the instance holds (kvplan gpus list)")
	}
	if i.PerGPU && i.GPUs != 1 {
		add("gpus", "a per_gpu rate is for one GPU: gpus = 1 (got %d)", i.GPUs)
	}
	if i.GPUs < 1 || i.GPUs > 64 {
		add("gpus", "must be between 1 and 64 GPUs per instance (got %d)", i.GPUs)
	}
	known := false
	for _, p := range []struct {
		field string
		v     float64
	}{{"usd_per_hour", i.USDPerHour}, {"usd_per_hour_spot", i.USDPerHourSpot},
		{"usd_per_hour_reserved_1y", i.USDPerHourReserved1Y}, {"usd_per_hour_reserved_3y", i.USDPerHourReserved3Y}} {
		if !(p.v >= 0) || p.v > maxInstanceUSD {
			add(p.field, "must be between 0 (unknown) and %d USD per instance-hour (got %g)", maxInstanceUSD, p.v)
		}
		known = known || p.v > 0
	}
	if !known {
		add("usd_per_hour", "no price: give at least one of usd_per_hour, usd_per_hour_spot, usd_per_hour_reserved_1y, usd_per_hour_reserved_3y")
	}
	if _, err := time.Parse(time.DateOnly, i.AsOf); err != nil {
		add("as_of", "%q: want the prices' date as YYYY-MM-DD", i.AsOf)
	}
	if i.Source == "" {
		add("source", "missing: say where the prices come from (file, commit, page)")
	}
	return errs
}

// checkInstanceGPUs reports the first instance whose GPU the catalog does
// not know, at its file and line.
func (c *Catalog) checkInstanceGPUs() error {
	for _, in := range c.Instances {
		if _, err := c.GPU(in.GPU); err != nil {
			return fmt.Errorf("%s:%d: instance %q: gpu: %w", in.File, in.Line, in.Name, err)
		}
	}
	return nil
}

// InstancesOf lists the instance types that hold GPU g (by its catalog
// name), sorted by name.
func (c *Catalog) InstancesOf(g *GPU) []*Instance {
	var out []*Instance
	for _, in := range c.Instances {
		if gg, err := c.GPU(in.GPU); err == nil && gg.Name == g.Name {
			out = append(out, in)
		}
	}
	return out
}

// Providers lists the providers of the catalog's instances, sorted.
func (c *Catalog) Providers() []string {
	seen := map[string]bool{}
	var out []string
	for _, in := range c.Instances {
		if !seen[in.Provider] {
			seen[in.Provider] = true
			out = append(out, in.Provider)
		}
	}
	sort.Strings(out)
	return out
}

// WithPrices merges the instances of a price file (a catalog file of
// [[instance]] entries, as --price-file reads it) over c's: an entry of the
// same name replaces the catalog's. Every instance must name a GPU of c.
func (c *Catalog) WithPrices(prices *Catalog) error {
	if len(prices.Models)+len(prices.Links)+len(prices.GPUs)+len(prices.Engines)+len(prices.Efficiencies) > 0 {
		return fmt.Errorf("a price file holds [[instance]] entries only (put models, GPUs and engines in a catalog directory, --catalog)")
	}
	for _, in := range prices.Instances {
		c.Instances = replace(c.Instances, in, func(x *Instance) string { return x.Name })
	}
	sort.Slice(c.Instances, func(i, j int) bool { return c.Instances[i].Name < c.Instances[j].Name })
	return c.checkInstanceGPUs()
}
