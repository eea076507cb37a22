package chans

import (
	"sync/atomic"

	"github.com/scalable-go/chans/internal/sched"
)

// A sleeper is how a parked operation (a plain one's waiter, a ring's
// queued sender or receiver, or a select's call) blocks until the goroutine
// that completes it (its claimer) wakes it, and how the two agree on
// whether a wake-up must reach a blocked goroutine at all. A select's
// claimers are the ones that move its state word out of selWaiting; each
// of them wakes it once.
//
// The owner commits to block with one CompareAndSwap from sleepAwake; the
// claimer, once it has written the outcome, moves sleepAwake to sleepWoken
// with another. Whichever comes second learns what the other did:
//
//	sleepAwake    → sleepWoken     claimer first: the owner takes the
//	                               outcome without blocking (no wake-up sent)
//	sleepAwake    → sleepBlocking  the owner blocks on its token channel (it
//	                               also waits for a context): the claimer
//	                               sends one token
//	sleepAwake    → a goroutine    the owner parked itself in the runtime
//	                               (block, no context): the claimer readies
//	                               that goroutine
//
// The sleeper is back at sleepAwake before the owner's next registration,
// with its token taken if one was sent, so that a token channel is empty
// whenever its owner registers. Who puts it back: the claimer of a blocked
// owner, before its wake-up (only that claimer moves the state then, and
// the wake-up orders the write before the owner runs), so that an owner
// that parked and was readied writes nothing more (one atomic write less
// per park and wake-up); an owner woken before it blocked, or one that
// withdrew, writes it itself (awake).
//
// Parking in the runtime (park_runtime.go) skips the channel the token
// would cross: a wake-up through a channel is a second lock, queue and
// hand-off behind the ones the operation already made. Two goroutines
// waking each other in turn on our 2-core VM took 118-142 ns per park and
// wake-up at GOMAXPROCS 1 parked in the runtime, 181-186 ns through a
// token; 99-104 against 173-198 ns at GOMAXPROCS 2 (bench/results/park-2core).
// Race builds, and builds with the tag chans_nolinkname, block on the token
// instead (park_token.go).
type sleeper struct {
	state atomic.Uintptr
}

// States of a sleeper; any other value is the goroutine parked in the
// runtime.
const (
	sleepAwake    = 0 // the owner has not blocked; no claimer has woken it
	sleepWoken    = 1 // a claimer wrote the outcome before the owner blocked: no wake-up
	sleepBlocking = 2 // the owner blocks on its token channel: the claimer sends a token
)

// blocking is the owner's step before it waits on token and a context: it
// reports false, leaving the sleeper awake again, if a claimer has woken it
// already (the outcome is then written), and true once a claimer is bound
// to send a token.
func (s *sleeper) blocking() bool {
	sched.Point() // a claimer may wake the owner here, with or without a token
	if s.state.CompareAndSwap(sleepAwake, sleepBlocking) {
		return true
	}
	s.awake()
	return false
}

// blockOr is block for an owner that also waits for done: it commits to
// block on token (blocking) and waits for the token or done. It reports
// true once woken, with the sleeper awake again (the outcome is written);
// false if done came first, the owner still committed to its token: the
// owner then withdraws its registration and calls awake, or, if a claimer
// took it first, waits for that claimer's token (takeToken).
func (s *sleeper) blockOr(token chan struct{}, done <-chan struct{}) bool {
	if !s.blocking() {
		return true // woken already
	}
	select {
	case <-token: // the claimer put the sleeper back before it sent it
		return true
	case <-done:
		return false
	}
}

// takeToken waits for the token of a claimer that took the registration of
// an owner committed to its token (blocking); that claimer put the sleeper
// back before it sent the token.
func (s *sleeper) takeToken(token chan struct{}) {
	<-token
}

// block waits, with no context, until a claimer has woken the owner, and
// leaves the sleeper awake for the next registration. token is the owner's
// token channel, which a build without the runtime's park blocks on.
func (s *sleeper) block(token chan struct{}) {
	park(s, token)
	if s.state.Load() != sleepAwake { // woken before it blocked: put it back
		s.awake()
	}
}

// wake is the claimer's step, after it wrote the outcome: it sends token
// to an owner blocked on it, readies an owner parked in the runtime (having
// put the sleeper back to awake for either), and only marks the sleeper
// woken for an owner that has not blocked yet (it takes the outcome without
// blocking).
func (s *sleeper) wake(token chan struct{}) {
	old := s.state.Load()
	if old == sleepAwake {
		sched.Point() // the owner may commit to block here
		if s.state.CompareAndSwap(sleepAwake, sleepWoken) {
			return // the owner takes the outcome without blocking
		}
		old = s.state.Load() // it committed: to its token, or parked
	}
	// The owner is blocked, and only this claimer moves the state now: put
	// it back for the owner's next registration before the owner runs.
	s.state.Store(sleepAwake)
	if old == sleepBlocking {
		token <- struct{}{}
	} else {
		ready(old)
	}
}

// awake puts the sleeper back for the owner's next registration, once the
// owner has its outcome (and the token, if one was sent) or withdrew.
func (s *sleeper) awake() { s.state.Store(sleepAwake) }
