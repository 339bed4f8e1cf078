//go:build race

package rules

// raceEnabled: the race detector slows expr's VM several times over, so a
// rule that a counted budget stops in well under its time budget may reach
// the time budget first.
const raceEnabled = true
