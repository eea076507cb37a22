//go:build !race

package main

// raceEnabled reports whether the race detector is on: TestMutantsApply
// type-checks the mutated package only without it (a check of one goroutine,
// which the detector slows about sevenfold).
const raceEnabled = false
