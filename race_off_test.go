//go:build !race

package chans_test

// raceEnabled reports whether the race detector is on; stress and heap tests
// shrink their sizes under it.
const raceEnabled = false
