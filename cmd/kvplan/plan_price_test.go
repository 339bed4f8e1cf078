package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planBest runs plan -o json and returns its best candidate.
func planBest(t *testing.T, args ...string) map[string]any {
	t.Helper()
	// Aggregated only (no --link): the split over ib-ndr became as cheap
	// once the workers start at the engine's memory fraction (issue 23).
	base := append(append([]string{}, emitBase...), "--rate", "20", "--itl-p95", "50ms", "-o", "json")
	out, errs, code := kvplan(t, append(base, args...)...)
	if code != 0 {
		t.Fatalf("plan %v: exit %d: %s", args, code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	b, _ := doc["best"].(map[string]any)
	if b == nil {
		t.Fatalf("no best candidate: %s", out)
	}
	return b
}

func num(t *testing.T, m map[string]any, k string) float64 {
	t.Helper()
	v, ok := m[k].(float64)
	if !ok {
		t.Fatalf("%s = %v, not a number", k, m[k])
	}
	return v
}

// TestPlanPricesInstances: the best of the question (10 workers of
// tp 4 on H100s, planned on the engine model) priced as whole instances,
// by hand from instances.toml: AWS 5 × p5.48xlarge at $55.04 = $275.20;
// Lambda 5 × gpu_8x_h100_sxm5 at $31.92 = $159.60; spot 5 × $19.2531 =
// $96.27; a price file's reserved rate of $30 for p5.48xlarge: $150.
func TestPlanPricesInstances(t *testing.T) {
	prices := filepath.Join(t.TempDir(), "prices.toml")
	if err := os.WriteFile(prices, []byte(`[[instance]]
name = "aws/p5.48xlarge"
provider = "aws"
type = "p5.48xlarge"
gpu = "h100-sxm"
gpus = 8
usd_per_hour = 55.04
usd_per_hour_reserved_1y = 30
as_of = "2026-11-30"
source = "a team's negotiated rate"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		args      []string
		usd       float64
		instance  string
		count     float64
		perInst   float64
		provider  string
		idleGPUs  float64
		gpusTotal float64
	}{
		{"aws", nil, 275.20, "aws/p5.48xlarge", 5, 55.04, "aws", 0, 40},
		{"lambda", []string{"--provider", "Lambda"}, 159.60, "lambda/gpu_8x_h100_sxm5", 5, 31.92, "lambda", 0, 40},
		{"any", []string{"--provider", "any"}, 159.60, "lambda/gpu_8x_h100_sxm5", 5, 31.92, "lambda", 0, 40},
		{"spot", []string{"--pricing", "spot"}, 96.27, "aws/p5.48xlarge", 5, 19.2531, "aws", 0, 40},
		{"price file", []string{"--pricing", "reserved-1y", "--price-file", prices}, 150, "aws/p5.48xlarge", 5, 30, "aws", 0, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := planBest(t, tc.args...)
			if got := num(t, b, "usd_per_hour"); math.Abs(got-tc.usd) > 0.005 {
				t.Errorf("usd_per_hour %g, want %g", got, tc.usd)
			}
			ins, _ := b["instances"].([]any)
			if len(ins) != 1 {
				t.Fatalf("instances %v, want one type", b["instances"])
			}
			u := ins[0].(map[string]any)
			if u["type"] != tc.instance || num(t, u, "count") != tc.count || math.Abs(num(t, u, "usd_per_hour")-tc.perInst) > 1e-9 || num(t, u, "idle_gpus") != tc.idleGPUs {
				t.Errorf("instances[0] %v, want %d × %s at %g", u, int(tc.count), tc.instance, tc.perInst)
			}
			if b["provider"] != tc.provider || num(t, b, "gpus") != tc.gpusTotal {
				t.Errorf("provider %v, %v GPUs", b["provider"], b["gpus"])
			}
		})
	}
}

// TestPlanOwned: the same 40 H100s owned. Each busy all the time (40
// decoding sequences per worker: 1 − e^−40 ≈ 1): 40 × 700 W + 40 × 575 W
// host = 51 kW, × PUE 1.2 = 61.2 kW; at $0.10/kWh $6.12/h, and $30,000 per
// GPU over 4 years 40 × 30,000 / (4 × 8760) = $34.25/h: $40.37/h.
func TestPlanOwned(t *testing.T) {
	b := planBest(t, "--owned", "--usd-per-kwh", "0.1", "--pue", "1.2", "--capex-per-gpu", "30000", "--amortize-years", "4")
	if got := num(t, b, "power_kw"); math.Abs(got-61.2) > 0.01 {
		t.Errorf("power_kw %g, want 61.2", got)
	}
	if got := num(t, b, "usd_per_hour"); math.Abs(got-40.37) > 0.005 {
		t.Errorf("usd_per_hour %g, want 40.37", got)
	}
	o, _ := b["owned"].(map[string]any)
	if o == nil || math.Abs(num(t, o, "energy_usd_per_hour")-6.12) > 0.005 || math.Abs(num(t, o, "amortized_usd_per_hour")-34.25) > 0.005 {
		t.Errorf("owned %v", b["owned"])
	}
	// power_kw is there without --owned too: 51 kW at the default PUE of 1.
	if got := num(t, planBest(t), "power_kw"); math.Abs(got-51) > 0.01 {
		t.Errorf("power_kw %g without --owned, want 51", got)
	}
}

// TestPlanPricingRefuses: a provider or pricing kind with no price for a
// GPU offered, and owned flags without --owned, are input errors (exit 2).
func TestPlanPricingRefuses(t *testing.T) {
	base := append(append([]string{}, emitBase...), "--rate", "20", "--itl-p95", "50ms")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"reserved", []string{"--pricing", "reserved-3y"}, "no reserved-3y price for h100-sxm at aws"},
		{"unknown provider", []string{"--provider", "lamda"}, "did you mean lambda?"},
		{"provider without the gpu", []string{"--provider", "lambda", "--gpu", "mi300x"}, "no on-demand price for mi300x at lambda"},
		{"kwh without owned", []string{"--usd-per-kwh", "0.1"}, "give --owned with it"},
		{"owned without kwh", []string{"--owned"}, "--owned needs --usd-per-kwh"},
		{"capex without years", []string{"--owned", "--usd-per-kwh", "0.1", "--capex-per-gpu", "30000"}, "together"},
		{"owned and provider", []string{"--owned", "--usd-per-kwh", "0.1", "--provider", "aws"}, "for rented ones"},
		{"pue below 1", []string{"--pue", "0.5"}, "at least 1"},
		{"bad price file", []string{"--price-file", "/nonexistent/prices.toml"}, "--price-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := kvplan(t, append(append([]string{}, base...), tc.args...)...)
			if code != 2 || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, tc.want)
			}
		})
	}
}

// TestPlanAndCheckPriceAlike: kvplan check prices the plan file plan
// writes through the same function as plan (whole instances of the
// default provider), for an aggregated and a disaggregated best.
func TestPlanAndCheckPriceAlike(t *testing.T) {
	for _, args := range [][]string{
		{"--rate", "20", "--itl-p95", "50ms", "--link", "ib-ndr"},
		{"--rate", "40", "--itl-p95", "35ms", "--link", "ib-ndr"},
	} {
		path := filepath.Join(t.TempDir(), "plan.toml")
		out, errs, code := kvplan(t, append(append(append([]string{}, emitBase...), args...), "--write-plan", path, "-o", "json")...)
		if code != 0 {
			t.Fatalf("plan: exit %d: %s", code, errs)
		}
		var doc struct {
			Best struct {
				USDPerHour float64 `json:"usd_per_hour"`
			} `json:"best"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		out, errs, code = kvplan(t, "check", path, "-o", "json")
		if code != 0 {
			t.Fatalf("check: exit %d: %s", code, errs)
		}
		var chk struct {
			Figures []struct {
				Name  string  `json:"name"`
				Value float64 `json:"value"`
			} `json:"figures"`
		}
		if err := json.Unmarshal([]byte(out), &chk); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range chk.Figures {
			if f.Name == "usd_per_hour" {
				found = true
				if math.Abs(f.Value-doc.Best.USDPerHour) > 0.005 {
					t.Errorf("%v: check's usd_per_hour %g, plan's %g", args, f.Value, doc.Best.USDPerHour)
				}
			}
		}
		if !found || doc.Best.USDPerHour == 0 {
			t.Errorf("%v: no usd_per_hour to compare (plan %g)", args, doc.Best.USDPerHour)
		}
	}
}
