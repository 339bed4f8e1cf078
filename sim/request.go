package sim

// Request is one prompt as the simulator sees it. Sources fill a Request
// that the caller reuses, so Blocks keeps its backing array between calls.
type Request struct {
	// ArrivalMS is the arrival time in milliseconds from the start of the
	// workload; it is used only when the source is timed (see Timed).
	ArrivalMS float64
	// InputTokens is the prompt length.
	InputTokens int
	// OutputTokens is the number of tokens decoded after the prompt.
	OutputTokens int
	// Blocks holds the chained ids of the prompt's full blocks, in order:
	// Blocks[i] = mix(Blocks[i-1], content of block i), so an id stands for
	// its block and every block before it, as in vLLM and Dynamo. A trailing
	// partial block (InputTokens not a multiple of the block size) has no id.
	Blocks []uint64
}

// Source is a stream of requests. Next fills r and reports whether it did;
// it returns false, nil at the end. Memory stays bounded by the source's own
// state, not by the length of the workload.
type Source interface {
	Next(r *Request) (bool, error)
	// BlockSize is the number of tokens in each block of Request.Blocks.
	BlockSize() int
}

// Timed is implemented by sources whose requests carry arrival times
// (traces). Run follows those times when Config.Concurrency is 0.
type Timed interface {
	Timed() bool
}

// Skipper is implemented by sources that can skip malformed input; Run
// copies the count into Result.SkippedLines.
type Skipper interface {
	Skipped() int
}
