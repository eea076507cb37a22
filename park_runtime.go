//go:build !race && !chans_nolinkname

package chans

import (
	"unsafe"

	"github.com/scalable-go/chans/internal/sched"
)

// The runtime's park, ready and yield, which the Go team keeps callable from
// outside the runtime with their signatures unchanged (go.dev/issue/67401).
//
//go:linkname gopark runtime.gopark
func gopark(commit func(gp uintptr, arg unsafe.Pointer) bool, arg unsafe.Pointer, reason, traceReason uint8, traceSkip int)

//go:linkname goready runtime.goready
func goready(gp uintptr, traceSkip int)

//go:linkname goyield runtime.goyield
func goyield()

// yieldLocal lets the goroutines runnable on this P run before the caller
// goes on, putting the caller at the back of this P's run queue.
func yieldLocal() { goyield() }

// park parks the calling goroutine in the runtime until wake readies it,
// unless a claimer has woken s already. The goroutine is published in s
// only once the runtime has marked it waiting (parkCommit runs then), so
// a claimer that finds it there may ready it at once. It shows as
// "[waiting]" in goroutine dumps. token is for the race build's park.
func park(s *sleeper, token chan struct{}) {
	if s.state.Load() == sleepAwake {
		sched.Point() // a claimer may wake the owner here: parkCommit must see it
		gopark(parkCommit, unsafe.Pointer(s), 0, 0, 1)
	}
}

// parkCommit runs on the scheduler's stack once the parking goroutine gp
// is marked waiting: sleepAwake → gp commits it to block; if a claimer came
// first (sleepWoken), it reports false and the goroutine runs on at once.
//
//go:nosplit
func parkCommit(gp uintptr, s unsafe.Pointer) bool {
	return (*sleeper)(s).state.CompareAndSwap(sleepAwake, gp)
}

// ready makes runnable the goroutine that park published in a sleeper. A
// goroutine is held as a number: the runtime never frees one, nor moves it.
func ready(gp uintptr) { goready(gp, 1) }

// parksInRuntime reports whether a sleeper parks its owner in the runtime
// (true in this build) rather than on its token channel.
const parksInRuntime = true
