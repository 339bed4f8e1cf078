package planner

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kvplan/kvplan/catalog"
)

// WorkerGroup is one pool to price: Workers workers of TP GPUs each (TP is
// the GPUs of one worker: tp × data × pipeline ranks of its layout). A
// worker of data or pipeline ranks (SpansNodes) larger than the provider's
// largest instance of its GPU takes whole instances of it (a multi-node
// worker, its nodes joined by the network); the ranks of tensor
// parallelism alone share one node.
type WorkerGroup struct {
	GPU        *catalog.GPU
	TP         int
	Workers    int
	SpansNodes bool
}

// ProviderAny asks PriceInstances for the provider that rents the whole
// deployment cheapest.
const ProviderAny = "any"

// DefaultProvider is the provider priced when none is asked for: AWS, whose
// list prices the catalog's per-GPU prices are.
const DefaultProvider = "aws"

// PriceOptions says how a deployment is priced.
type PriceOptions struct {
	Pricing   string              // catalog.PricingOnDemand (""), PricingSpot, PricingReserved1Y, PricingReserved3Y
	Provider  string              // a provider, ProviderAny, or "" for DefaultProvider
	Strict    bool                // the provider was asked for: a GPU it does not rent is an error, not a per-GPU price
	Instances []*catalog.Instance // the catalog's, with a --price-file merged over them
	GPUPrices map[string]float64  // GPU name → USD per GPU-hour (--price): priced by the GPU, no instance
	Now       time.Time           // prices older than a year before it are noted; zero = no note
}

// InstanceUse is instances of one type in a priced deployment.
type InstanceUse struct {
	Type            string  `json:"type"` // provider/type, or "gpu-hour" for a GPU priced by the hour
	Provider        string  `json:"provider,omitempty"`
	GPU             string  `json:"gpu"`
	GPUsPerInstance int     `json:"gpus_per_instance"`
	Count           int     `json:"count"`
	USDPerHour      float64 `json:"usd_per_hour"`    // of one instance
	IdleGPUs        int     `json:"idle_gpus"`       // GPUs of these instances no worker uses
	AsOf            string  `json:"as_of,omitempty"` // the price's date
	Source          string  `json:"source"`
}

// PricedDeployment is what a deployment costs on the instances it rents.
type PricedDeployment struct {
	USDPerHour float64
	Known      bool // every GPU has a price under the pricing
	Provider   string
	Instances  []InstanceUse
	IdleGPUs   int
	Sources    []string // where each price comes from
	Notes      []string // per-GPU fallbacks, old prices
	Unknown    []string // why a GPU has no price
}

// PriceError is a price that cannot be had (an asked-for provider or
// pricing kind with no price for a GPU): an input error.
type PriceError struct{ Msg string }

func (e *PriceError) Error() string { return e.Msg }

// PriceInstances prices pools as whole instances of one provider. The
// workers of each GPU are packed onto instances of that GPU, a worker's
// tensor-parallel ranks on one instance (first-fit decreasing, which is
// optimal when, as here, every tp and instance size is a power of two:
// every instance but the last is full); of the provider's instance types
// that hold the GPU it takes the cheapest packing onto one type, or onto
// one type with the last instance's workers on another. The GPUs of
// partly filled instances are idle and paid for. A GPU priced by --price
// is paid by the GPU-hour with no instance. With the default provider, a
// GPU it does not rent is paid at the catalog's per-GPU price (a note);
// with an asked-for provider it is an error.
func PriceInstances(groups []WorkerGroup, o PriceOptions) (PricedDeployment, error) {
	kind := o.Pricing
	if kind == "" {
		kind = catalog.PricingOnDemand
	}
	provider := o.Provider
	if provider == "" {
		provider = DefaultProvider
	}
	if provider != ProviderAny {
		return priceAt(groups, o, kind, provider)
	}
	var best *PricedDeployment
	var errs []string
	for _, p := range providersOf(o.Instances) {
		opt := o
		opt.Strict = true
		d, err := priceAt(groups, opt, kind, p)
		if err != nil {
			errs = append(errs, p)
			continue
		}
		if best == nil || d.USDPerHour < best.USDPerHour-1e-9 {
			dd := d
			best = &dd
		}
	}
	if best == nil {
		return PricedDeployment{}, &PriceError{Msg: fmt.Sprintf("--provider any: no provider rents every GPU of the deployment at %s prices (%s)", kind, strings.Join(gpuNames(groups), ", "))}
	}
	return *best, nil
}

func providersOf(ins []*catalog.Instance) []string {
	seen := map[string]bool{}
	var out []string
	for _, in := range ins {
		if !seen[in.Provider] {
			seen[in.Provider] = true
			out = append(out, in.Provider)
		}
	}
	sort.Strings(out)
	return out
}

func gpuNames(groups []WorkerGroup) []string {
	var out []string
	for _, g := range groups {
		if !slices.Contains(out, g.GPU.Name) {
			out = append(out, g.GPU.Name)
		}
	}
	return out
}

// priceAt prices the deployment at one provider.
func priceAt(groups []WorkerGroup, o PriceOptions, kind, provider string) (PricedDeployment, error) {
	d := PricedDeployment{Known: true, Provider: provider}
	source := func(s string) {
		if !slices.Contains(d.Sources, s) {
			d.Sources = append(d.Sources, s)
		}
	}
	for _, name := range gpuNames(groups) {
		var g *catalog.GPU
		l := load{} // tp → workers
		spans := false
		for _, wg := range groups {
			if wg.GPU.Name == name {
				g = wg.GPU
				l[max(1, wg.TP)] += wg.Workers
				spans = spans || wg.SpansNodes
			}
		}
		gpus, maxTP := l.gpus(), l.maxTP()
		if usd, ok := o.GPUPrices[name]; ok {
			d.Instances = append(d.Instances, InstanceUse{Type: "gpu-hour", GPU: name, GPUsPerInstance: 1, Count: gpus, USDPerHour: usd,
				Source: "--price " + name})
			d.USDPerHour += usd * float64(gpus)
			source("--price " + name)
			continue
		}
		types := typesFor(o.Instances, g, provider, kind)
		if len(types) == 0 {
			if o.Strict {
				return PricedDeployment{}, &PriceError{Msg: noInstanceMsg(o.Instances, g, provider, kind)}
			}
			usd := gpuPrice(g, kind)
			if usd <= 0 {
				d.Known = false
				d.Unknown = append(d.Unknown, fmt.Sprintf("no %s price for %s: %s has no instance of it and the catalog no per-GPU %s price (--price %s=USD sets one)", kind, name, provider, kind, name))
				continue
			}
			d.Instances = append(d.Instances, InstanceUse{Type: "gpu-hour", GPU: name, GPUsPerInstance: 1, Count: gpus, USDPerHour: usd,
				Source: g.PriceSource})
			d.USDPerHour += usd * float64(gpus)
			d.Notes = append(d.Notes, fmt.Sprintf("%s rents no %s: priced at the catalog's %s per-GPU price, $%.2f/GPU-hour (%s)", provider, name, kind, usd, g.PriceSource))
			source(g.PriceSource)
			continue
		}
		fit := types[:0:0]
		for _, t := range types {
			if t.GPUs >= maxTP || t.PerGPU {
				fit = append(fit, t)
			}
		}
		if len(fit) == 0 {
			// A worker of more GPUs than the largest node spans whole nodes
			// (a multi-node worker, LeaderWorkerSet or Dynamo multinode):
			// each node of it is priced as one worker of that node's GPUs.
			if big := types[len(types)-1]; big.GPUs > 0 && spans {
				spans := load{}
				for tp, w := range l {
					if tp > big.GPUs {
						spans[big.GPUs] += w * ((tp + big.GPUs - 1) / big.GPUs)
						d.IdleGPUs += w * (((tp+big.GPUs-1)/big.GPUs)*big.GPUs - tp)
					} else {
						spans[tp] += w
					}
				}
				l = spans
				for _, t := range types {
					if t.GPUs >= l.maxTP() || t.PerGPU {
						fit = append(fit, t)
					}
				}
			}
		}
		if len(fit) == 0 {
			big := types[len(types)-1]
			d.Known = false
			d.Unknown = append(d.Unknown, fmt.Sprintf("%s's largest %s instance (%s, %d GPUs) cannot hold a worker of tp %d, whose ranks share one node", provider, name, big.Name, big.GPUs, maxTP))
			continue
		}
		uses := pack(l, fit, kind)
		for _, u := range uses {
			d.USDPerHour += u.USDPerHour * float64(u.Count)
			d.IdleGPUs += u.IdleGPUs
			source(u.Source)
		}
		d.Instances = append(d.Instances, uses...)
		for _, u := range uses {
			if o.Now.IsZero() || u.AsOf == "" {
				continue
			}
			if t, err := time.Parse(time.DateOnly, u.AsOf); err == nil && o.Now.Sub(t) > 365*24*time.Hour {
				d.Notes = append(d.Notes, fmt.Sprintf("the price of %s is of %s, more than a year old", u.Type, u.AsOf))
			}
		}
	}
	if !d.Known {
		d.USDPerHour = 0
	}
	return d, nil
}

// gpuPrice is the catalog's per-GPU price of g under a pricing kind.
func gpuPrice(g *catalog.GPU, kind string) float64 {
	switch kind {
	case catalog.PricingOnDemand:
		return g.USDPerHour
	case catalog.PricingSpot:
		return g.USDPerHourSpot
	}
	return 0
}

// typesFor lists a provider's instance types of GPU g priced under kind,
// smallest first.
func typesFor(ins []*catalog.Instance, g *catalog.GPU, provider, kind string) []*catalog.Instance {
	var out []*catalog.Instance
	for _, in := range ins {
		if in.Provider == provider && gpuIs(in.GPU, g) && in.Price(kind) > 0 {
			out = append(out, in)
		}
	}
	slices.SortStableFunc(out, func(a, b *catalog.Instance) int {
		return cmp.Or(cmp.Compare(a.GPUs, b.GPUs), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// gpuIs reports whether an instance's GPU name is g (its name or an alias).
func gpuIs(name string, g *catalog.GPU) bool {
	if strings.EqualFold(name, g.Name) {
		return true
	}
	for _, a := range g.Aliases {
		if strings.EqualFold(name, a) {
			return true
		}
	}
	return false
}

// noInstanceMsg explains why an asked-for provider and pricing price no g.
func noInstanceMsg(ins []*catalog.Instance, g *catalog.GPU, provider, kind string) string {
	var have, kinds []string
	for _, in := range ins {
		if !gpuIs(in.GPU, g) {
			continue
		}
		if in.Price(kind) > 0 && !slices.Contains(have, in.Provider) {
			have = append(have, in.Provider)
		}
		if in.Provider == provider {
			for _, k := range catalog.Pricings {
				if in.Price(k) > 0 && !slices.Contains(kinds, k) {
					kinds = append(kinds, k)
				}
			}
		}
	}
	msg := fmt.Sprintf("no %s price for %s at %s", kind, g.Name, provider)
	switch {
	case len(kinds) > 0:
		msg += fmt.Sprintf(": the catalog has %s's %s prices (%s)", provider, g.Name, strings.Join(kinds, ", "))
	case len(have) > 0:
		msg += fmt.Sprintf(": %s rents none in the catalog; %s price it (%s)", provider, strings.Join(have, ", "), kind)
	default:
		msg += fmt.Sprintf(": no provider in the catalog has a %s price for it", kind)
	}
	return msg + "; give --price-file with your own, or --price " + g.Name + "=USD"
}

// load is workers to pack, by tp.
type load map[int]int

func (l load) gpus() int {
	n := 0
	for tp, w := range l {
		n += tp * w
	}
	return n
}

func (l load) maxTP() int {
	m := 0
	for tp, w := range l {
		if w > 0 {
			m = max(m, tp)
		}
	}
	return m
}

// tps lists the load's sizes, largest first.
func (l load) tps() []int {
	var out []int
	for tp, w := range l {
		if w > 0 {
			out = append(out, tp)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}

// divides reports whether every size is a power of two that divides c:
// then first-fit decreasing fills every bin but the last, and needs no
// search.
func (l load) divides(c int) bool {
	for _, tp := range l.tps() {
		if tp&(tp-1) != 0 || c%tp != 0 {
			return false
		}
	}
	return true
}

// bins packs the load first-fit decreasing into bins of capacity c: the
// number of bins, the GPUs they leave idle, and what the last bin holds.
// With sizes that divide c this is arithmetic (every bin but the last is
// full, and the last holds the smallest workers); otherwise the workers
// are placed one by one.
func (l load) bins(c int) (n, idle int, last load) {
	if l.divides(c) {
		sum := l.gpus()
		n = (sum + c - 1) / c
		idle = n*c - sum
		r := sum - (n-1)*c // the last bin's GPUs: the smallest workers
		last = load{}
		tps := l.tps()
		for i := len(tps) - 1; i >= 0 && r > 0; i-- {
			tp := tps[i]
			k := min(l[tp], r/tp)
			last[tp], r = k, r-k*tp
		}
		return n, idle, last
	}
	var free []int
	var contents []load
	for _, tp := range l.tps() {
		for k := 0; k < l[tp]; k++ {
			placed := false
			for i := range free {
				if free[i] >= tp {
					free[i] -= tp
					contents[i][tp]++
					placed = true
					break
				}
			}
			if !placed {
				free, contents = append(free, c-tp), append(contents, load{tp: 1})
			}
		}
	}
	for _, f := range free {
		idle += f
	}
	return len(free), idle, contents[len(contents)-1]
}

// minus is l without the workers of m.
func (l load) minus(m load) load {
	out := load{}
	for tp, w := range l {
		if w-m[tp] > 0 {
			out[tp] = w - m[tp]
		}
	}
	return out
}

// packing is a choice of instances for one GPU's workers.
type packing struct {
	cost  float64
	idle  int
	names string
	uses  []InstanceUse
}

// pack picks the cheapest packing of the load onto the instance types: all
// on one type, or all but the last instance's workers on one type and those
// on another. Ties go to fewer idle GPUs, then to the types' names.
func pack(l load, types []*catalog.Instance, kind string) []InstanceUse {
	use := func(t *catalog.Instance, n, idle int) InstanceUse {
		return InstanceUse{Type: t.Name, Provider: t.Provider, GPU: t.GPU, GPUsPerInstance: t.GPUs, Count: n,
			USDPerHour: t.Price(kind), IdleGPUs: idle, AsOf: t.AsOf, Source: t.Source}
	}
	total := func(us ...InstanceUse) packing {
		p := packing{}
		var names []string
		for _, u := range us {
			if u.Count == 0 {
				continue
			}
			p.cost += u.USDPerHour * float64(u.Count)
			p.idle += u.IdleGPUs
			p.uses = append(p.uses, u)
			names = append(names, u.Type)
		}
		p.names = strings.Join(names, "+")
		return p
	}
	better := func(a, b packing) bool {
		if math.Abs(a.cost-b.cost) > 1e-9 {
			return a.cost < b.cost
		}
		if a.idle != b.idle {
			return a.idle < b.idle
		}
		return a.names < b.names
	}
	var best *packing
	consider := func(p packing) {
		if best == nil || better(p, *best) {
			best = &p
		}
	}
	for _, a := range types {
		if a.PerGPU {
			// By the GPU-hour: every worker's GPUs, none idle.
			consider(total(use(a, l.gpus(), 0)))
			continue
		}
		n, idle, last := l.bins(a.GPUs)
		consider(total(use(a, n, idle)))
		if n < 2 {
			continue
		}
		// The last instance's workers on another type; the others are full
		// (or, with sizes that do not divide the instance, as first-fit left them).
		nr, restIdle, _ := l.minus(last).bins(a.GPUs)
		for _, b := range types {
			if b == a || b.PerGPU || b.GPUs < last.maxTP() {
				continue
			}
			nb, idleB, _ := last.bins(b.GPUs)
			consider(total(use(a, nr, restIdle), use(b, nb, idleB)))
		}
	}
	return best.uses
}

// CheapestPerGPU is the lowest per-GPU rate among a provider's instance
// types of g (any provider's with ProviderAny) that hold a worker of tp,
// priced under kind, and the instance it comes from; ok is false when none
// does. It is what sizing ranks worker counts by.
func CheapestPerGPU(ins []*catalog.Instance, g *catalog.GPU, tp int, provider, kind string) (usd float64, source string, ok bool) {
	best := math.Inf(1)
	for _, in := range ins {
		if provider != ProviderAny && in.Provider != provider || !gpuIs(in.GPU, g) {
			continue
		}
		if p := in.Price(kind); p > 0 && (in.GPUs >= tp || in.PerGPU) && p/float64(in.GPUs) < best {
			best, source = p/float64(in.GPUs), fmt.Sprintf("%s: %s $%g/h ÷ %d", kind, in.Name, p, in.GPUs)
		}
	}
	if math.IsInf(best, 1) {
		return 0, "", false
	}
	return best, source, true
}
