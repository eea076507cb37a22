//go:build race || chans_nolinkname

package chans

import "runtime"

// park blocks on the owner's token channel, unless a claimer has woken s
// already. The race detector cannot run the runtime's park hook (it runs on
// the scheduler's stack, where instrumented atomics crash), so race builds
// take this path; so does any build with the tag chans_nolinkname.
func park(s *sleeper, token chan struct{}) {
	if s.blocking() { // a claimer may wake the owner at its Point, before the commitment
		<-token
	}
}

// ready is never called: no sleeper of this build holds a goroutine.
func ready(uintptr) {
	panic("chans: a sleeper holds a goroutine in a build that does not park in the runtime")
}

// yieldLocal lets other goroutines run before the caller goes on.
func yieldLocal() { runtime.Gosched() }

// parksInRuntime reports whether a sleeper parks its owner in the runtime
// (false in this build: it blocks on its token channel).
const parksInRuntime = false
