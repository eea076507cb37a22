package chans

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/scalable-go/chans/internal/sched"
)

// TestWakeBeforeBlocking replays a claim that comes before the owner of a
// plain registration blocks: the claimer leaves no token, and the owner,
// told so by blocking, takes the result at once and leaves the waiter ready
// for its next registration.
func TestWakeBeforeBlocking(t *testing.T) {
	w := newWaiter(opRecv)
	w.wakeUp(resRestart) // the claimer, while the owner still yields
	if n := len(w.wake); n != 0 {
		t.Fatalf("a claim before the owner blocked sent %d tokens, want none", n)
	}
	if w.sleep.blocking() {
		t.Fatal("the owner would block on a wake channel no claimer will send on")
	}
	if w.res != resRestart {
		t.Fatalf("res = %d, want the claimer's %d", w.res, resRestart)
	}
	if s := w.sleep.state.Load(); s != sleepAwake {
		t.Fatalf("after the owner took its result sleep = %d, want awake (%d)", s, sleepAwake)
	}
}

// TestWakeAfterBlocking replays a claim that comes after the owner has
// committed to block: the claimer must send the one token the owner waits
// for.
func TestWakeAfterBlocking(t *testing.T) {
	w := newWaiter(opSend)
	if !w.sleep.blocking() {
		t.Fatal("an owner with no claim yet did not commit to block")
	}
	w.wakeUp(resOK)
	if n := len(w.wake); n != 1 {
		t.Fatalf("a claim after the owner blocked sent %d tokens, want 1", n)
	}
	<-w.wake
	w.sleep.awake()
	if s := w.sleep.state.Load(); s != sleepAwake {
		t.Fatalf("sleep = %d after the owner woke, want awake (%d)", s, sleepAwake)
	}
	// A select's registrations share their call's wake channel and
	// sleeper: a select committed to block on the token gets one, and one
	// that has not blocked yet gets none.
	st := &selState{}
	sel := &waiter{op: opRecv, isSel: true, sel: st, wake: make(chan struct{}, 1)}
	if !st.sleep.blocking() {
		t.Fatal("a select with no claim yet did not commit to block")
	}
	sel.wakeUp(resOK)
	if len(sel.wake) != 1 {
		t.Fatal("a select blocked on its token was claimed without one")
	}
	<-sel.wake
	st.sleep.awake()
	sel.wakeUp(resOK)
	if len(sel.wake) != 0 || st.sleep.blocking() {
		t.Fatal("a select claimed before it blocked got a token, or would block for one")
	}
}

// TestWakeResetsParkedOwner checks that the claimer of an owner parked
// with no context (block) puts its sleeper back to awake before the owner
// runs again, so that the owner's next registration costs it no write:
// on one P the owner cannot run between the claim and the check.
func TestWakeResetsParkedOwner(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	w := newWaiter(opRecv)
	done := make(chan struct{})
	go func() {
		w.sleep.block(w.wake)
		close(done)
	}()
	for w.sleep.state.Load() < sleepBlocking { // parked in the runtime, or on its token
		runtime.Gosched()
	}
	w.wakeUp(resOK)
	if s := w.sleep.state.Load(); s != sleepAwake {
		t.Errorf("after the claim of a parked owner sleep = %d, want awake (%d)", s, sleepAwake)
	}
	<-done
	if s := w.sleep.state.Load(); s != sleepAwake || len(w.wake) != 0 {
		t.Errorf("after the owner woke: sleep = %d, %d tokens left; want awake, none", s, len(w.wake))
	}
}

// claimer starts a goroutine that claims w with each result sent on claim,
// as a partner would; stop ends it and waits for it.
func claimer(w *waiter) (claim chan<- uint8, stop func()) {
	c := make(chan uint8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for res := range c {
			w.wakeUp(res)
		}
	}()
	return c, func() { close(c); <-done }
}

// TestWakeRace races an owner's commitment to block on its token against
// its claimer, round after round on one waiter, as a Handle's waiter is
// reused (raceClaims). A lost token hangs the test.
func TestWakeRace(t *testing.T) {
	raceClaims(t, 20000, func(w *waiter, _ int) {
		if w.sleep.blocking() {
			<-w.wake
			w.sleep.awake()
		}
	})
}

// TestBlockRace is TestWakeRace for an owner blocking with no context
// (block: parked in the runtime, or on its token in race builds), which
// yields first in every other round so that the claim comes before it
// blocks. A wake-up lost to the race (an owner that parks after a claimer
// found it awake) hangs the test.
func TestBlockRace(t *testing.T) {
	raceClaims(t, 50000, func(w *waiter, i int) {
		if i%2 == 0 {
			runtime.Gosched()
		}
		w.sleep.block(w.wake)
	})
}

// raceClaims runs rounds of a claim, by another goroutine, against wait,
// the owner's side, on one waiter: in every round the owner must come back
// with that round's result exactly once, whether the claim came before it
// blocked or after, and leave the waiter awake with no token behind (a
// token left would wake the next round's owner with a stale result).
func raceClaims(t *testing.T, rounds int, wait func(w *waiter, round int)) {
	if testing.Short() {
		rounds /= 10
	}
	w := newWaiter(opRecv)
	claim, stop := claimer(w)
	defer stop()
	for i := range rounds {
		res := uint8(resOK + i%3)
		claim <- res // the claimer runs now or later, against wait
		wait(w, i)
		if w.res != res {
			t.Fatalf("round %d: res = %d, want %d", i, w.res, res)
		}
		if s := w.sleep.state.Load(); s != sleepAwake || len(w.wake) != 0 {
			t.Fatalf("round %d: sleep = %d with %d tokens after the wait, want awake and none", i, s, len(w.wake))
		}
	}
}

// TestWithdrawnWaiterIsReset parks a receive and a send through a Handle,
// each until its owner has committed to block, then cancels its context: the
// owner withdraws, and the Handle's waiter must be left as a fresh one is
// (sleep awake, no token, free), or its next registration would be woken by
// a claim meant for this one or block with no token coming.
func TestWithdrawnWaiterIsReset(t *testing.T) {
	for _, op := range []string{"recv", "send"} {
		t.Run(op, func(t *testing.T) {
			c := newCells[int](0)
			h := c.Handle()
			w := h.wr
			if op == "send" {
				w = h.ws
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() {
				var err error
				if op == "send" {
					err = h.SendContext(ctx, 1)
				} else {
					_, err = h.RecvContext(ctx)
				}
				done <- err
			}()
			for w.sleep.state.Load() != sleepBlocking {
				runtime.Gosched() // until the owner has registered and committed to block
			}
			cancel()
			if err := <-done; err != context.Canceled {
				t.Fatalf("%s: %v, want context.Canceled", op, err)
			}
			if s := w.sleep.state.Load(); s != sleepAwake {
				t.Fatalf("%s withdrawn: sleep = %d, want awake (%d)", op, s, sleepAwake)
			}
			if len(w.wake) != 0 || w.busy.Load() {
				t.Fatalf("%s withdrawn: %d tokens left, busy %v", op, len(w.wake), w.busy.Load())
			}
		})
	}
}

// TestBlockParksInRuntime checks which way an owner with no context blocks:
// parked in the runtime, its goroutine published in the sleeper, in builds
// that can (neither race nor chans_nolinkname), and on its token channel
// otherwise; and that a claim then wakes it.
func TestBlockParksInRuntime(t *testing.T) {
	w := newWaiter(opRecv)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.sleep.block(w.wake)
	}()
	var s uintptr
	for s = w.sleep.state.Load(); s == sleepAwake; s = w.sleep.state.Load() {
		runtime.Gosched() // until the owner has committed to block
	}
	if got := s != sleepBlocking; got != parksInRuntime {
		t.Fatalf("owner blocked with sleep = %#x: parked in the runtime %v, want %v", s, got, parksInRuntime)
	}
	w.wakeUp(resOK)
	<-done
	if w.res != resOK || w.sleep.state.Load() != sleepAwake || len(w.wake) != 0 {
		t.Fatalf("after the wake-up: res %d, sleep %d, %d tokens", w.res, w.sleep.state.Load(), len(w.wake))
	}
}

// TestClaimJustBeforePark replays a claim that lands after the owner of a
// plain registration found its sleeper awake and before it committed to
// block (the scheduler hook runs the claimer at the one perturbation point
// block makes, in that window): the commitment must see the claim and the
// owner run on. An owner that parks without looking again would sleep for
// good, and the test would hang. Needs the chans_perturb build.
func TestClaimJustBeforePark(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the chans_perturb build")
	}
	w := newWaiter(opSend)
	var claimed atomic.Bool
	sched.SetHook(func() {
		if claimed.CompareAndSwap(false, true) {
			w.res = resOK
			w.sleep.wake(w.wake) // the claimer's step, between the owner's look and its commitment
		}
	})
	w.sleep.block(w.wake)
	sched.SetHook(nil)
	if !claimed.Load() || w.res != resOK {
		t.Fatalf("block returned without the claim (claimed %v, res %d)", claimed.Load(), w.res)
	}
	if s := w.sleep.state.Load(); s != sleepAwake || len(w.wake) != 0 {
		t.Fatalf("sleep = %d with %d tokens after block, want awake and none", s, len(w.wake))
	}
}
