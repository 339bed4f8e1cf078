package planner

// DenyFindings counts the findings of a worker's memory plan that kvplan
// check denies: the engine refuses to start (weights and overheads leave no
// KV cache, or one max_model_len request does not fit), or the host limit
// cannot hold the worker (the container is OOM-killed). `kvplan memory`
// exits 1 when there is one, as check does.
func (p *MemoryPlan) DenyFindings() int {
	n := 0
	if !p.ModelFits || !p.MaxModelLenFits {
		n++
	}
	if p.HostLimitBytes > 0 && !p.HostFits {
		n++
	}
	return n
}
