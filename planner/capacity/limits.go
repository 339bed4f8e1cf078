package capacity

// Reasons a candidate fails, or what bounds its capacity (JSON limited_by),
// beyond a worker's own (openloop.LimitPrefill, LimitDecode, LimitKV).
const (
	limitLink   = "link"
	limitMemory = "memory"
	limitGPUs   = "max GPUs"
)
