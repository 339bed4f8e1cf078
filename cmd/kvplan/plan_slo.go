package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/planner/capacity"
	"github.com/kvplan/kvplan/slo"
	"github.com/kvplan/kvplan/units"
	"github.com/kvplan/kvplan/workload"
)

// sloFlags are plan's SLO targets, one flag each (slo.Targets): a
// duration for the latencies, a share for --goodput.
func sloFlags() []cli.Flag {
	var out []cli.Flag
	for _, t := range slo.Targets {
		usage := ""
		var aliases []string
		switch {
		case t.Metric == slo.Goodput:
			usage = "share of requests, in (0, 1], that must meet every per-request target (TTFT, TPOT, E2E), as vllm bench --goodput"
		case t.Metric == slo.TPOT && t.Stat == "mean":
			usage = "SLO on the mean TPOT, (E2E − TTFT) / (output tokens − 1) per request averaged over requests, as vllm bench's mean_tpot, e.g. 40ms"
			aliases = []string{"tpot-mean"}
		case t.Metric == slo.TPOT:
			usage = "SLO on the 99th percentile of TPOT over requests, e.g. 60ms"
		case t.Metric == slo.ITL:
			usage = fmt.Sprintf("SLO on the %s percentile of inter-token latency (every gap between tokens), e.g. 50ms", ordinal(t.Stat))
		case t.Metric == slo.TTFT:
			usage = fmt.Sprintf("SLO on the %s percentile of time to first token, e.g. 1000ms, 1s", ordinal(t.Stat))
		case t.Metric == slo.E2E:
			usage = "SLO on the 95th percentile of end-to-end latency, e.g. 20s"
		}
		out = append(out, &cli.StringFlag{Name: t.Name, Aliases: aliases, Usage: usage})
	}
	return out
}

// ordinal turns "p95" into "95th".
func ordinal(stat string) string { return strings.TrimPrefix(stat, "p") + "th" }

// workloadFlags are plan's workload and arrival flags.
func workloadFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "lengths", Usage: "request lengths from a file: a Mooncake JSONL trace (input_length, output_length; its timestamps and hash_ids too), a benchmark result with input_lens and output_lens (vllm bench), or a CSV of input and output tokens"},
		&cli.StringFlag{Name: "isl-range-ratio", Usage: "draw input lengths uniformly in [N(1 − R), N(1 + R)] around --isl N, as vllm bench's random dataset (R in [0, 1))"},
		&cli.StringFlag{Name: "osl-range-ratio", Usage: "draw output lengths likewise around --osl"},
		&cli.StringFlag{Name: "burstiness", Usage: "gamma shape of the gaps between arrivals, as vllm bench: 1 = Poisson, below 1 burstier"},
		&cli.StringFlag{Name: "arrivals", Value: "poisson", Usage: "poisson (gamma with --burstiness) or trace: the --lengths trace's timestamps (its rate unless --rate, which rescales them)"},
		&cli.StringFlag{Name: "prefix-routing", Usage: "kv: assume KV-aware routing, so a --lengths trace's repeated prompt blocks (hash_ids) are found cached"},
		&cli.StringFlag{Name: "rate-profile", Usage: "a day's traffic: CSV of period start (HH:MM or hours) and requests/s; the peak's best shape is sized for every period (schedule, usd_per_day)"},
		&cli.StringFlag{Name: "storage-link", Usage: "with --rate-profile: the link workers load their weights over when they start (kvplan links list; default the median of measured vLLM start-ups, 1 GiB/s a rank)"},
		&cli.StringFlag{Name: "scale-up-lead", Usage: "with --rate-profile: the time a new worker takes to serve, e.g. 90s (default: weights over the storage link + 25.7 s of warm-up)"},
	}
}

// planDay reads --rate-profile and its lead-time flags into q: the rate is
// the peak's until PlanDay sizes every period.
func planDay(c *cli.Context, cat *catalog.Catalog, q *capacity.Query) (*workload.Profile, error) {
	path := c.String("rate-profile")
	if path == "" {
		if c.String("storage-link") != "" || c.String("scale-up-lead") != "" {
			return nil, fmt.Errorf("--storage-link and --scale-up-lead go with --rate-profile")
		}
		return nil, nil
	}
	if c.String("rate") != "" || c.IsSet("gpus") {
		return nil, fmt.Errorf("give --rate-profile, --rate or --gpus: a profile plans each of its periods' rates")
	}
	p, err := workload.ReadProfile(path)
	if err != nil {
		return nil, err
	}
	q.RatePerS = p.Periods[p.Peak()].RatePerS
	if name := c.String("storage-link"); name != "" {
		if q.StorageLink, err = cat.Link(name); err != nil {
			return nil, fmt.Errorf("--storage-link: %w", err)
		}
	}
	if s := c.String("scale-up-lead"); s != "" {
		ms, err := units.ParseMS(s)
		if err != nil {
			return nil, fmt.Errorf("--scale-up-lead: %w", err)
		}
		if !(ms > 0) || ms > 86_400_000 {
			return nil, fmt.Errorf("--scale-up-lead %s: must be above 0 and at most a day", s)
		}
		q.ScaleUpLeadS = ms / 1000
	}
	return p, nil
}

// planSLO reads the SLO flags.
func planSLO(c *cli.Context) (slo.SLO, error) {
	var s slo.SLO
	for _, t := range slo.Targets {
		v := c.String(t.Name)
		if v == "" {
			continue
		}
		if t.Metric == slo.Goodput {
			g, err := units.ParseNumber(v)
			if err != nil {
				return s, fmt.Errorf("--goodput: %w", err)
			}
			if !(g > 0 && g <= 1) {
				return s, fmt.Errorf("--goodput %s: want a share of requests in (0, 1], e.g. 0.9", v)
			}
			t.Set(&s, g)
			continue
		}
		ms, err := sloFlag(c, t.Name)
		if err != nil {
			return s, err
		}
		t.Set(&s, ms)
	}
	return s, s.Check()
}

// planWorkload reads --lengths or the range ratios, and the arrivals, into q.
func planWorkload(c *cli.Context, q *capacity.Query) error {
	var err error
	if s := c.String("burstiness"); s != "" {
		if q.Burstiness, err = units.ParseNumber(s); err != nil {
			return fmt.Errorf("--burstiness: %w", err)
		}
		if !(q.Burstiness > 0) {
			return fmt.Errorf("--burstiness %s: want a gamma shape above 0 (1 = Poisson, below 1 burstier)", s)
		}
	}
	arrivals, err := parseEnumFlag("--arrivals", c.String("arrivals"), []string{"poisson", "trace"})
	if err != nil {
		return err
	}
	q.TraceArrivals = arrivals == "trace"
	if s := c.String("prefix-routing"); s != "" {
		if q.PrefixRouting, err = parseEnumFlag("--prefix-routing", s, []string{"kv", "round-robin"}); err != nil {
			return err
		}
	}
	path := c.String("lengths")
	inRatio, outRatio := c.String("isl-range-ratio"), c.String("osl-range-ratio")
	switch {
	case path != "" && (c.IsSet(flagInputTokens) || c.IsSet(flagOutputTokens) || inRatio != "" || outRatio != ""):
		return fmt.Errorf("give --lengths or --isl and --osl (with their range ratios), not both")
	case path != "":
		if q.Workload, err = workload.Read(path); err != nil {
			return err
		}
		return nil
	case inRatio != "" || outRatio != "":
		ri, ro := 0.0, 0.0
		if inRatio != "" {
			if ri, err = units.ParseNumber(inRatio); err != nil {
				return fmt.Errorf("--isl-range-ratio: %w", err)
			}
		}
		if outRatio != "" {
			if ro, err = units.ParseNumber(outRatio); err != nil {
				return fmt.Errorf("--osl-range-ratio: %w", err)
			}
		}
		q.Workload, err = workload.Random(q.InputTokens, ri, q.OutputTokens, ro, c.Uint64("seed"))
		return err
	}
	return nil
}
