//go:build !chans_perturb

// Package sched holds the schedule-perturbation hook of the chans protocols.
//
// The protocols call Point between their atomic steps. In normal builds Point is
// an empty function that the compiler inlines away. Built with the tag
// chans_perturb, Point yields or spins at random, so that stress and
// linearizability tests reach rare interleavings even on two cores (the idea of
// Lincheck's model-checking mode).
package sched

// Enabled reports whether this build perturbs schedules.
const Enabled = false

// Point marks a place between two atomic steps of a protocol.
func Point() {}

// SetHook does nothing in normal builds: Point has no hook to call (see the
// chans_perturb build).
func SetHook(func()) {}
