package capacity

import (
	"fmt"
	"math"
	"strings"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/planner"
)

// Pricing kinds beyond on-demand and spot.
const (
	PricingReserved1Y = catalog.PricingReserved1Y
	PricingReserved3Y = catalog.PricingReserved3Y
)

// Owned is an owned cluster's cost inputs (--owned): the deployment costs
// its power and, with a capex, its amortisation, instead of a list price.
type Owned = planner.OwnedOptions

// priceOptions are the instance-pricing options of the query.
func (q *Query) priceOptions() planner.PriceOptions {
	return planner.PriceOptions{Pricing: q.Pricing, Provider: q.Provider, Strict: q.ProviderStrict, Instances: q.Instances,
		GPUPrices: q.Prices, Now: q.Now}
}

// provider is the provider priced: the asked-for one, or the default.
func (q *Query) provider() string {
	if q.Provider == "" {
		return planner.DefaultProvider
	}
	return q.Provider
}

// checkPrices refuses an asked-for provider or pricing kind that prices
// none of a GPU offered: kvplan says so rather than rank by GPUs.
func (q *Query) checkPrices() error {
	if q.Owned != nil || q.Provider == planner.ProviderAny || !q.ProviderStrict && q.Pricing != PricingReserved1Y && q.Pricing != PricingReserved3Y {
		return nil
	}
	for _, g := range q.GPUOptions {
		if _, given := q.Prices[g.Name]; given {
			continue
		}
		o := q.priceOptions()
		o.Strict = true
		o.Provider = q.provider()
		if _, err := planner.PriceInstances([]planner.WorkerGroup{{GPU: g, TP: 1, Workers: 1}}, o); err != nil {
			return err
		}
	}
	return nil
}

// perGPU is the $/GPU-hour a role's sizing ranks by: --price, else the
// cheapest per-GPU rate of the provider's instance types that hold a worker
// of tp (any provider's with --provider any), else, for the default
// provider, the catalog's per-GPU price. The candidate itself is priced as
// whole instances (priceCandidate).
func (q *Query) perGPU(g *catalog.GPU, tp int) (usd float64, source string, ok bool) {
	if v, given := q.Prices[g.Name]; given {
		return v, "--price " + g.Name, true
	}
	if q.Owned != nil {
		return 0, "owned", false // owned GPUs cost their power and capex: sized by GPUs
	}
	kind := q.Pricing
	if usd, source, ok := planner.CheapestPerGPU(q.Instances, g, tp, q.provider(), kind); ok {
		return usd, source, true
	}
	if q.ProviderStrict || q.provider() == planner.ProviderAny {
		return 0, fmt.Sprintf("no %s price for %s at %s", kind, g.Name, q.provider()), false
	}
	switch {
	case kind == PricingSpot && g.USDPerHourSpot > 0:
		return g.USDPerHourSpot, "spot: " + g.PriceSource, true
	case kind == PricingOnDemand && g.USDPerHour > 0:
		return g.USDPerHour, "on-demand: " + g.PriceSource, true
	}
	return 0, "no " + kind + " price for " + g.Name + " in the catalog (--price " + g.Name + "=USD sets one)", false
}

// busy is the share of time a worker's GPUs run iterations: prefill's
// share of its GPU time, and, when it decodes, the share of the rest in
// which at least one sequence decodes (1 − e^−B for a Poisson number of
// decoding sequences of mean B, as the decode batch model has them).
func busy(role string, prefillUtil, batch float64) float64 {
	decoding := 1 - math.Exp(-math.Max(0, batch))
	u := math.Max(0, math.Min(1, prefillUtil))
	switch role {
	case rolePrefill:
		return u
	case roleDecode:
		return decoding
	}
	return math.Min(1, u+(1-u)*decoding)
}

// priceCandidate sets c's price from its pools: whole instances of the
// provider (planner.PriceInstances), or with --owned its power and
// amortisation; and its power draw (power_kw) in every case.
func (q *Query) priceCandidate(c *Candidate) {
	var groups []planner.WorkerGroup
	var power []planner.PowerGroup
	for i, r := range c.shape.roles {
		p := c.Pools[i]
		groups = append(groups, planner.WorkerGroup{GPU: r.gpu, TP: r.gpus, Workers: p.Workers, SpansNodes: r.gpus > r.tp})
		power = append(power, planner.PowerGroup{GPU: r.gpu, GPUs: p.Workers * r.gpus, Busy: busy(r.name, p.PrefillUtilization, p.Batch)})
	}
	pw := planner.DeploymentPower(power, q.HostWattsPerGPU, q.PUE)
	if pw.Known {
		kw := math.Round(pw.KW*1000) / 1000 // to the watt
		c.PowerKW = &kw
	} else {
		c.Notes = append(c.Notes, "power unknown: "+strings.Join(pw.Unknown, "; "))
	}
	c.Price = "unknown"
	if q.Owned != nil {
		c.Provider = "owned"
		if !pw.Known {
			c.PriceSource = "owned: the power is unknown (" + strings.Join(pw.Unknown, "; ") + ")"
			return
		}
		oc := planner.Owned(pw, c.GPUs, *q.Owned)
		c.Owned = &oc
		usd := oc.EnergyUSDPerHour + oc.AmortizedUSDPerHour
		c.USDPerHour, c.Price = &usd, "known"
		c.PriceSource = fmt.Sprintf("owned: %.4g kW × $%g/kWh", pw.KW, q.Owned.USDPerKWh)
		if oc.AmortizedUSDPerHour > 0 {
			c.PriceSource += fmt.Sprintf(" + %d GPUs × $%g ÷ (%g years × %d h)", c.GPUs, q.Owned.CapexPerGPU, q.Owned.AmortizeYears, planner.HoursPerYear)
		} else {
			c.PriceSource += "; amortisation not counted (give --capex-per-gpu and --amortize-years)"
		}
		return
	}
	d, err := planner.PriceInstances(groups, q.priceOptions())
	if err != nil {
		c.PriceSource = err.Error()
		return
	}
	c.Provider, c.Instances, c.IdleGPUs = d.Provider, d.Instances, d.IdleGPUs
	c.PriceNotes = append(c.PriceNotes, d.Notes...)
	if !d.Known {
		c.PriceSource = strings.Join(d.Unknown, "; ")
		return
	}
	usd := d.USDPerHour
	c.USDPerHour, c.Price = &usd, "known"
	c.PriceSource = strings.Join(d.Sources, "; ")
}

// NodeGPUs is the GPUs of the largest instance c's workers are packed onto,
// the node size an emitted script places workers on; 0 when c rents none
// (priced by the GPU-hour, or owned).
func NodeGPUs(c *Candidate) int {
	n := 0
	for _, u := range c.Instances {
		if u.Type != "gpu-hour" && !strings.HasSuffix(u.Type, "-gpu-hour") {
			n = max(n, u.GPUsPerInstance)
		}
	}
	return n
}

// PriceLine says in one line what c costs and on what, for a written
// file's header.
func PriceLine(c *Candidate) string {
	cost := "price unknown"
	if c.USDPerHour != nil {
		cost = fmt.Sprintf("$%.2f/h", *c.USDPerHour)
	}
	var on []string
	for _, u := range c.Instances {
		on = append(on, fmt.Sprintf("%d × %s", u.Count, u.Type))
	}
	switch {
	case c.Owned != nil:
		return fmt.Sprintf("Priced as owned GPUs: %s (%s).", cost, c.PriceSource)
	case len(on) > 0:
		s := fmt.Sprintf("Priced on %s: %s", strings.Join(on, " + "), cost)
		if c.IdleGPUs > 0 {
			s += fmt.Sprintf(", %d GPUs idle", c.IdleGPUs)
		}
		return s + "."
	}
	return "Priced: " + cost + "."
}
