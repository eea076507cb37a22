//go:build !race

package chans

// raceOn reports whether the race detector is on, for internal tests that
// count allocations (the detector makes its own).
const raceOn = false
