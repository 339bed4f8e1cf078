package sim

// chainRoot is the parent id of a request's first block.
const chainRoot uint64 = 0x6a09e667f3bcc909

// mix combines a parent block id with the content key of the next block and
// returns the child block id. It is the 64-bit finaliser of MurmurHash3
// applied to a multiply-xor of its inputs: fast, well spread, and never 0
// (0 marks an empty slot in the hash tables).
func mix(parent, content uint64) uint64 {
	x := parent*0x9e3779b97f4a7c15 ^ (content + 0x632be59bd9b4e019)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	if x == 0 {
		x = 1
	}
	return x
}
