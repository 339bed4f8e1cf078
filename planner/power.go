package planner

import (
	"fmt"
	"math"

	"github.com/kvplan/kvplan/catalog"
)

// DefaultHostWattsPerGPU is the power of a GPU server's host (CPUs, memory,
// NICs, fans, power conversion) per GPU at full load: NVIDIA's DGX H100
// datasheet gives ~10.2 kW maximum system power for 8 H100 SXM GPUs of
// 700 W each, so the rest is (10,200 − 8 × 700) / 8 = 575 W per GPU. It is
// a maximum, and an H100 server's: give your servers' figure for others.
const DefaultHostWattsPerGPU = 575

// HoursPerYear turns an amortisation period into hours (365 days).
const HoursPerYear = 8760

// PowerGroup is one pool's GPUs and the share of time they are busy.
type PowerGroup struct {
	GPU  *catalog.GPU
	GPUs int
	Busy float64 // in [0, 1]
}

// Power is a deployment's electrical power.
type Power struct {
	KW        float64 // (GPU + host) × PUE, kW; 0 when not Known
	GPUKW     float64
	HostKW    float64
	PUE       float64
	Known     bool
	Unknown   []string // GPUs without a TDP in the catalog
	Formula   string
	HostWatts float64 // per GPU
}

// DeploymentPower is the deployment's power draw: each GPU at its TDP times
// the share of time it is busy (an idle GPU's own draw is not counted: the
// catalog holds no idle figure), plus hostWattsPerGPU for every GPU (0 =
// DefaultHostWattsPerGPU), times the facility's PUE (0 = 1: the servers
// alone).
func DeploymentPower(groups []PowerGroup, hostWattsPerGPU, pue float64) Power {
	if hostWattsPerGPU <= 0 {
		hostWattsPerGPU = DefaultHostWattsPerGPU
	}
	if pue <= 0 {
		pue = 1
	}
	p := Power{PUE: pue, Known: true, HostWatts: hostWattsPerGPU}
	gpus := 0
	for _, g := range groups {
		gpus += g.GPUs
		if g.GPU.TDPWatts <= 0 {
			p.Known = false
			p.Unknown = append(p.Unknown, fmt.Sprintf("%s has no TDP in the catalog (%s)", g.GPU.Name, g.GPU.TDPSource))
			continue
		}
		p.GPUKW += g.GPU.TDPWatts * math.Max(0, math.Min(1, g.Busy)) * float64(g.GPUs) / 1000
	}
	p.HostKW = hostWattsPerGPU * float64(gpus) / 1000
	if p.Known {
		p.KW = (p.GPUKW + p.HostKW) * pue
	}
	p.Formula = "(Σ GPUs × tdp_watts × busy + GPUs × host_watts_per_gpu) × PUE / 1000"
	return p
}

// OwnedOptions is what an owned cluster's cost comes from.
type OwnedOptions struct {
	USDPerKWh     float64 // electricity
	CapexPerGPU   float64 // purchase price of one GPU with its share of the server; 0 = amortisation not counted
	AmortizeYears float64 // years the capex is spread over
}

// OwnedCost is an owned deployment's cost per hour.
type OwnedCost struct {
	EnergyUSDPerHour    float64 `json:"energy_usd_per_hour"`    // power_kw × usd_per_kwh
	AmortizedUSDPerHour float64 `json:"amortized_usd_per_hour"` // capex_per_gpu × GPUs / (amortize_years × 8760)
	USDPerKWh           float64 `json:"usd_per_kwh"`
	PUE                 float64 `json:"pue"`
	CapexPerGPU         float64 `json:"capex_per_gpu,omitempty"`
	AmortizeYears       float64 `json:"amortize_years,omitempty"`
}

// Owned prices a deployment of gpus GPUs drawing p on owned hardware.
func Owned(p Power, gpus int, o OwnedOptions) OwnedCost {
	c := OwnedCost{EnergyUSDPerHour: p.KW * o.USDPerKWh, USDPerKWh: o.USDPerKWh, PUE: p.PUE, CapexPerGPU: o.CapexPerGPU, AmortizeYears: o.AmortizeYears}
	if o.CapexPerGPU > 0 && o.AmortizeYears > 0 {
		c.AmortizedUSDPerHour = o.CapexPerGPU * float64(gpus) / (o.AmortizeYears * HoursPerYear)
	}
	return c
}
