package capacity

import (
	"fmt"

	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/planfile"
	"github.com/kvplan/kvplan/planner"
)

// gib is a gibibyte: emitted memory limits are whole Gi.
const gibBytes = 1 << 30

// DeploymentPlan is candidate c as the plan a manifest is written from:
// the plan file's plan (PlanFile, read back by planfile), with each pool's
// container memory limit from the host memory model of the same
// deployment (planner.PlanDeployment, as kvplan check computes it at the
// plan's load): the smallest safe limit, rounded up to a whole GiB. The
// limits are set on the plan, so a check of the manifest computes the same
// headroom.
func (q *Query) DeploymentPlan(cat *catalog.Catalog, c *Candidate) (*planfile.Plan, error) {
	data, err := q.PlanFile(c)
	if err != nil {
		return nil, err
	}
	p, err := planfile.Parse("plan", data)
	if err != nil {
		return nil, fmt.Errorf("the plan file kvplan writes does not read back: %w", err)
	}
	dep, err := planner.PlanDeployment(cat, p)
	if err != nil {
		return nil, err
	}
	for _, pp := range dep.Pools {
		pl := p.Pools[pp.Name]
		if pl == nil || pp.Memory == nil {
			return nil, fmt.Errorf("pool %s has no memory plan", pp.Name)
		}
		limit := (pp.Memory.MinSafeLimitBytes + gibBytes - 1) / gibBytes
		pl.MemoryLimit = fmt.Sprintf("%dGi", max(1, limit))
		pl.MemoryLimitBytes = max(1, limit) * gibBytes
	}
	return p, nil
}

// Pick returns the candidate to write: the best, or the nth of the ranked
// list (from 1, as the table's #n columns number them). A candidate that
// misses the SLO is not written: its manifest would fail its own check.
func (r *Result) Pick(n int) (*Candidate, error) {
	if n == 0 {
		if r.Best == nil {
			return nil, fmt.Errorf("nothing meets the SLO, so there is no deployment to write")
		}
		return r.Best, nil
	}
	if n < 1 || n > len(r.Candidates) {
		return nil, fmt.Errorf("--candidate %d: the search sized %d candidates (1 to %d)", n, len(r.Candidates), len(r.Candidates))
	}
	c := r.Candidates[n-1]
	if !c.MeetsSLO {
		return nil, fmt.Errorf("--candidate %d (%s) does not meet the SLO (%s): kvplan writes only deployments that meet it", n, c.Describe(), c.Misses)
	}
	return c, nil
}

// GPUProducts maps each GPU the plan's pools run on (by the name the plan
// gives it) to the nvidia.com/gpu.product label the catalog has for it, for
// the emitted manifests' node selectors; a GPU with none is left out.
func GPUProducts(cat *catalog.Catalog, p *planfile.Plan) map[string]string {
	out := map[string]string{}
	for _, pl := range p.Pools {
		if g, err := cat.GPU(pl.GPU); err == nil && g.GPUProduct != "" {
			out[pl.GPU] = g.GPUProduct
		}
	}
	return out
}
