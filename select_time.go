package chans

import (
	"math/rand/v2"
	"reflect"
	"time"
)

// OnDone and OnTimeout: select cases that wait on the outside world.
//
// Neither registers in any channel. The poll pass finds an OnDone case ready
// when its channel is closed (a non-blocking receive, which takes nothing
// from a closed channel) and an OnTimeout case ready when its duration is
// not positive; a TrySelect's double collect includes whether each done
// channel was closed, and since a channel once closed stays closed, two
// equal collects mean it was open at every instant between them.
//
// A blocking call arms them when it starts: the done channels go into
// fixed slots of the native select the call parks in (beside its wake
// channel and the context's Done), and the earliest positive timeout starts
// the call's one timer, whose channel goes into that select too. When one
// of them fires, the select commits itself to that case with a
// CompareAndSwap from selWaiting, as the context path does to give up; if
// the CompareAndSwap fails, a claimer committed (or kicked) the select
// first, and its wake token is on the way. A select kicked into selDirty
// that finds such a case ready commits to it instead of registering again.
// A call that parks with more done channels than there are slots waits in
// reflect.Select instead, which allocates.
//
// The timer relies on the timer channels of Go 1.23 and later (which this
// module's go directive selects): after Stop or Reset no stale value is
// received. disarm also drains the channel after a Stop that finds the
// timer fired, which keeps a stale value away where a program sets
// GODEBUG=asynctimerchan=1.

// doneSlots is how many OnDone channels a parked select waits on without
// allocating.
const doneSlots = 4

// What park reports besides a case index.
const (
	evWake = -1 // the wake token: the select was committed or kicked
	evCtx  = -2 // the context is done
)

// OnDone returns a case that is ready once done is closed, as a context's
// Done channel or a quit channel is closed to stop a loop; the select that
// commits it runs f (which may be nil). It takes nothing from done. A nil
// done is never ready, like a nil channel in a select statement.
//
// done must only ever be closed, never sent on: a value sent on it may be
// received, and so lost, by a select that holds the case. For a channel
// that carries values, use FromChan.
//
// A call that parks waits on up to four OnDone channels without
// allocating, and allocates each time it parks with more. A select that
// commits the case takes effect at an instant at which done was closed.
func OnDone(done <-chan struct{}, f func()) Case {
	if done == nil {
		return Case{}
	}
	return Case{k: &doneCase{signalCase: signalCase{f}, done: done}, sig: true}
}

// OnTimeout returns a case that is ready d after each call of Select or
// SelectContext that holds it starts (at once if d <= 0); the select that
// commits it runs f (which may be nil). A Selector restarts it on every
// call. In TrySelect, and in SelectContext with a context already done,
// which do not wait, it is ready only if d <= 0.
//
// The timeout takes nothing and delivers nothing: a value that commits
// another case first, even as the timeout fires, is that case's, and the
// timeout then has no effect. Of several OnTimeout cases in one call, the
// earliest is the one that fires (one chosen at random among equal ones).
// A call uses one timer, which a Selector keeps from call to call, so that
// a reused Selector allocates nothing whether a value or the timeout wins.
//
// A select that commits the case takes effect at an instant at least d
// after the call started.
func OnTimeout(d time.Duration, f func()) Case {
	return Case{k: &timeoutCase{signalCase: signalCase{f}, d: d}, sig: true}
}

// signalCase holds what OnDone's and OnTimeout's cases share: they register
// nowhere, so every step of the registration protocol is empty.
type signalCase struct{ f func() }

func (*signalCase) register(*selCall, int) bool { return false }

// registered is true: there is nothing to register, and the register pass
// skips the case.
func (*signalCase) registered() bool   { return true }
func (*signalCase) waiter() *waiter    { return nil }
func (*signalCase) reg() *caseReg      { return nil }
func (*signalCase) refresh()           {}
func (*signalCase) closedNow() bool    { return false }
func (*signalCase) withdraw() bool     { return false }
func (*signalCase) setClosed()         {}
func (*signalCase) collect()           {}
func (*signalCase) deferred() bool     { return false }
func (*signalCase) setDeferred(bool)   {}
func (*signalCase) publish(*selCall)   {}
func (*signalCase) unpublish(*selCall) {}

func (s *signalCase) complete() {
	if s.f != nil {
		s.f()
	}
}

// doneCase is OnDone's case.
type doneCase struct {
	signalCase
	done <-chan struct{}
}

func (d *doneCase) snapshot(dst []uint64) ([]uint64, bool) {
	if closed(d.done) {
		return append(dst, 1), true
	}
	return append(dst, 0), false
}

func (d *doneCase) try() bool { return closed(d.done) }

// timeoutCase is OnTimeout's case.
type timeoutCase struct {
	signalCase
	d time.Duration
}

// snapshot: a poll finds only a timeout of d <= 0 ready; a positive one
// fires through the call's timer, while the call is parked.
func (t *timeoutCase) snapshot(dst []uint64) ([]uint64, bool) { return dst, t.d <= 0 }

func (t *timeoutCase) try() bool { return t.d <= 0 }

// closed reports whether done is closed (or, against OnDone's contract, had
// a value to receive).
func closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// selSignals is the part of a call's state that serves its OnDone and
// OnTimeout cases.
type selSignals struct {
	sigs    []int             // the indices of the call's OnDone and OnTimeout cases
	dones   []<-chan struct{} // the OnDone cases' channels, armed for this call
	doneIdx []int             // the index of each one's case
	timer   *time.Timer       // made on first need, then reused
	tC      <-chan time.Time  // the timer's channel while it runs for this call, else nil
	tcase   int               // the case the timer runs for
	tfired  bool              // this call received the timer's value
	rcases  []reflect.SelectCase
}

// arm prepares a blocking call's OnDone and OnTimeout cases (sc.sigs): it
// lists the done channels and starts the timer for the earliest positive
// timeout, unless a timeout of d <= 0 makes the poll pass commit anyway.
func (sc *selCall) arm(cases []Case) {
	var best time.Duration
	ties, now := 0, false
	for _, j := range sc.sigs {
		switch k := cases[j].k.(type) {
		case *doneCase:
			sc.dones = append(sc.dones, k.done)
			sc.doneIdx = append(sc.doneIdx, j)
		case *timeoutCase:
			switch {
			case k.d <= 0:
				now = true
			case ties == 0 || k.d < best:
				best, ties, sc.tcase = k.d, 1, j
			case k.d == best:
				ties++
				if rand.IntN(ties) == 0 { // uniform among equal timeouts
					sc.tcase = j
				}
			}
		}
	}
	if ties == 0 || now {
		return
	}
	if sc.timer == nil {
		sc.timer = time.NewTimer(best)
	} else {
		sc.timer.Reset(best)
	}
	sc.tC, sc.tfired = sc.timer.C, false
}

// disarm stops the call's timer and forgets its done channels.
func (sc *selCall) disarm() {
	if sc.tC != nil {
		if !sc.timer.Stop() {
			select { // see the top of the file
			case <-sc.timer.C:
			default:
			}
		}
		sc.tC = nil
	}
	sc.tfired = false
	clear(sc.dones)
	sc.dones, sc.doneIdx = sc.dones[:0], sc.doneIdx[:0]
	clear(sc.rcases)
	sc.rcases = sc.rcases[:0]
}

// park waits, parked, for the wake-up (evWake), the context (evCtx), the
// timer or a done channel; for the last two it returns the case's index.
// With none of those it parks in the runtime (sleeper.block); otherwise it
// commits to block on the wake token first (sleeper.blocking), and returns
// evWake at once if a claimer woke it already. On evWake the sleeper is
// awake again; on any other event it is still committed to the token, and
// the caller, if its CompareAndSwap from selWaiting fails, takes the token
// (sleeper.takeToken).
func (sc *selCall) park(ctxDone <-chan struct{}) int {
	if len(sc.dones) == 0 && sc.tC == nil && ctxDone == nil {
		sc.st.sleep.block(sc.wake)
		return evWake
	}
	if !sc.st.sleep.blocking() {
		return evWake // committed or kicked before the select blocked
	}
	return sc.parkToken(ctxDone) // woken: the claimer put the sleeper back
}

// parkToken is park's wait on the wake token beside the other events.
func (sc *selCall) parkToken(ctxDone <-chan struct{}) int {
	switch {
	case len(sc.dones) > doneSlots:
		return sc.parkMany(ctxDone)
	case len(sc.dones) == 0 && sc.tC == nil: // no OnDone or OnTimeout case to wait on
		select {
		case <-sc.wake:
			return evWake
		case <-ctxDone:
			return evCtx
		}
	}
	var d [doneSlots]<-chan struct{} // nil slots are never ready
	copy(d[:], sc.dones)
	select {
	case <-sc.wake:
		return evWake
	case <-ctxDone:
		return evCtx
	case <-sc.tC:
		sc.tfired = true
		return sc.tcase
	case <-d[0]:
		return sc.doneIdx[0]
	case <-d[1]:
		return sc.doneIdx[1]
	case <-d[2]:
		return sc.doneIdx[2]
	case <-d[3]:
		return sc.doneIdx[3]
	}
}

// parkMany is park for more done channels than doneSlots, through
// reflect.Select.
func (sc *selCall) parkMany(ctxDone <-chan struct{}) int {
	rc := append(sc.rcases[:0],
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(sc.wake)},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctxDone)},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(sc.tC)})
	for _, d := range sc.dones {
		rc = append(rc, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(d)})
	}
	sc.rcases = rc
	i, _, _ := reflect.Select(rc)
	switch i {
	case 0:
		return evWake
	case 1:
		return evCtx
	case 2:
		sc.tfired = true
		return sc.tcase
	}
	return sc.doneIdx[i-3]
}

// signalReady returns an OnDone case whose channel is closed or the
// OnTimeout case whose timer fired, chosen at random among those, or -1 if
// there is none.
func (sc *selCall) signalReady() int {
	pick, n := -1, 0
	if sc.tC != nil && !sc.tfired {
		select {
		case <-sc.tC:
			sc.tfired = true
		default:
		}
	}
	if sc.tfired {
		pick, n = sc.tcase, 1
	}
	for i, d := range sc.dones {
		if closed(d) {
			n++
			if n == 1 || rand.IntN(n) == 0 {
				pick = sc.doneIdx[i]
			}
		}
	}
	return pick
}
