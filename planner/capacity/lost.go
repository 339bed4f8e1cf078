package capacity

import (
	"fmt"
	"strings"
)

// Reasons an offered GPU or link lost.
const (
	LostCost   = "cost"   // a deployment with it meets the SLO, but costs more (max-rate mode: sustains less)
	LostSLO    = "SLO"    // no deployment with it meets the SLO
	LostMemory = "memory" // the model does not fit it at any tp offered
)

// Lost is a GPU or link the query offered that the best deployment does
// not use, and why: so that an option given with --gpu a,b,c or --link
// x,y never vanishes from the comparison without a reason.
type Lost struct {
	Kind    string `json:"kind"` // gpu | link
	Name    string `json:"name"`
	Reason  string `json:"reason"`            // cost | SLO | memory
	Why     string `json:"why"`               // one sentence with the figures
	Closest string `json:"closest,omitempty"` // its best candidate's pools, when there is one
}

// lost lists, for each GPU and link offered that res's best (or, when
// nothing meets the SLO, the closest) does not use, its best candidate in
// rank order and why that one lost.
func (q *Query) lost(res *Result, notes []string) []Lost {
	ref := res.Best
	if ref == nil {
		ref = res.Closest
	}
	if ref == nil {
		return nil
	}
	var out []Lost
	uses := func(c *Candidate, kind, name string) bool {
		if kind == "link" {
			return c.Link == name
		}
		for _, p := range c.Pools {
			if p.GPU == name {
				return true
			}
		}
		return false
	}
	judge := func(kind, name string) {
		if uses(ref, kind, name) {
			return
		}
		l := Lost{Kind: kind, Name: name}
		var best *Candidate
		for _, c := range res.Candidates { // in rank order
			if uses(c, kind, name) {
				best = c
				break
			}
		}
		switch {
		case best == nil:
			l.Reason, l.Why = LostMemory, "no deployment with it could be sized"
			for _, n := range notes {
				if strings.Contains(n, " on "+name+" ") || strings.Contains(n, " on "+name+":") {
					l.Why = n
					break
				}
			}
			if kind == "link" {
				l.Reason = LostSLO
			}
		case best.MeetsSLO:
			l.Reason, l.Closest = LostCost, best.Describe()
			l.Why = q.lostOnCost(best, ref)
		case best.LimitedBy == limitMemory:
			l.Reason, l.Closest = LostMemory, best.Describe()
			// Memory failures rank last, so every candidate with it failed so.
			l.Why = "at no tp offered does the model leave room for one request's KV"
			for _, n := range best.Notes { // role.memoryWhy, of the GPU's own pool
				if strings.Contains(n, " on "+name) && (strings.Contains(n, "no room") || strings.Contains(n, "less than one request")) {
					l.Why += "; e.g. " + n
					break
				}
			}
		default:
			l.Reason, l.Closest = LostSLO, best.Describe()
			l.Why = fmt.Sprintf("no deployment with it meets the SLO; the closest, %s, is limited by %s", best.Describe(), best.LimitedBy)
			if best.Misses != "" {
				l.Why += ": " + best.Misses
			}
		}
		out = append(out, l)
	}
	for _, g := range q.GPUOptions {
		judge("gpu", g.Name)
	}
	for _, link := range q.Links {
		judge("link", link.Name)
	}
	return out
}

// lostOnCost says how a candidate that meets the SLO compares with the best.
func (q *Query) lostOnCost(c, best *Candidate) string {
	if q.RatePerS == 0 {
		return fmt.Sprintf("its best deployment, %s, sustains %.4g requests/s on %d GPUs against %.4g", c.Describe(), c.RatePerS, q.GPUs, best.RatePerS)
	}
	if c.USDPerHour != nil && best.USDPerHour != nil {
		if sameCost(c, best) {
			return fmt.Sprintf("its cheapest deployment, %s, costs the same ($%.2f/h) and ranks after the best (%d GPUs against %d, capacity %.4g against %.4g requests/s)",
				c.Describe(), *c.USDPerHour, c.GPUs, best.GPUs, c.RequestsPerSCapacity, best.RequestsPerSCapacity)
		}
		return fmt.Sprintf("its cheapest deployment, %s, costs $%.2f/h against $%.2f/h", c.Describe(), *c.USDPerHour, *best.USDPerHour)
	}
	if c.USDPerHour == nil && best.USDPerHour != nil {
		var unpriced []string
		for _, p := range c.Pools {
			if p.USDPerGPUHour == 0 && !strings.Contains(strings.Join(unpriced, ","), p.GPU) {
				unpriced = append(unpriced, p.GPU)
			}
		}
		return fmt.Sprintf("its best deployment, %s, meets the SLO but has no price (%s: none in the catalog; --price GPU=USD sets one), and priced candidates rank first",
			c.Describe(), strings.Join(unpriced, ", "))
	}
	return fmt.Sprintf("its cheapest deployment, %s, takes %d GPUs against %d", c.Describe(), c.GPUs, best.GPUs)
}
