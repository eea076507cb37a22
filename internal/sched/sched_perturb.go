//go:build chans_perturb

package sched

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
)

// Enabled reports whether this build perturbs schedules.
const Enabled = true

// hook, when set, runs at every Point instead of the perturbation.
var hook atomic.Pointer[func()]

// SetHook makes every Point call f instead of perturbing, until SetHook(nil):
// for tests that stop one operation at a chosen point while others run.
func SetHook(f func()) {
	if f == nil {
		hook.Store(nil)
		return
	}
	hook.Store(&f)
}

// Point yields the processor one time in four and spins for a random short
// while one time in eight, so that another goroutine can slip in between the
// two atomic steps around the call; or it calls the hook (SetHook).
func Point() {
	if h := hook.Load(); h != nil {
		(*h)()
		return
	}
	switch n := rand.Uint32(); {
	case n&3 == 0:
		runtime.Gosched()
	case n&7 == 1:
		sink.Store(spin(n >> 24))
	}
}

// sink keeps spin's result, so that the spin is not work without effect.
var sink atomic.Uint32

// spin busy-waits for about n iterations without touching shared memory.
//
//go:noinline
func spin(n uint32) uint32 {
	x := uint32(0)
	for i := uint32(0); i < n; i++ {
		x += i
	}
	return x
}
