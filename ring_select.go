package chans

// Select cases on a channel with a ring (ring.go). A case registers on the
// ring's queue and is kicked, never completed, by a waker: the select then
// tries the case again in its next registration round (select.go), and a
// case that completes commits the select itself, as a cell that completes
// during registration does. Ring cases are never deferred, their
// registrations never outlive Close unseen (Close kicks them, and each
// registration is followed by a try), and nobody but the select itself
// commits the select to them.
//
// A case woken by a waker owes the wake-up to another operation until it
// tries the ring again: withdrawing it passes the wake-up on (afterSend for
// a receive case, afterRecv for a send case), so that a value or a free slot
// never waits while another operation is parked for it.

// ringRecvCase is OnRecv's case on a channel with a ring.
type ringRecvCase[T any] struct {
	caseReg
	recvOutcome[T]
	c     *Chan[T]
	e     ringRecvW[T] // its registration on the receive queue
	in    bool         // e was put on the queue and not taken back by this case
	woken bool         // a waker took e off the queue, and the case has not tried since
}

func (rc *ringRecvCase[T]) snapshot(dst []uint64) ([]uint64, bool) {
	rb := rc.c.rb
	h := rb.head.Load()
	t := rb.tail.Load()
	return append(dst, h, t), t&ringPosMask > h || t&closedBit != 0
}

func (rc *ringRecvCase[T]) try() bool {
	rb := rc.c.rb
	rc.woken = false // a try answers the wake-up: it takes the value or finds it gone
	v, r := rb.tryRecv()
	switch r {
	case ringEmpty:
		return false
	case ringOK:
		rb.afterRecv()
	}
	rc.v, rc.ok = v, r == ringOK
	return true
}

func (rc *ringRecvCase[T]) register(sc *selCall, j int) bool {
	rc.c.rb.recvq.add(&rc.e, sc)
	rc.in = true
	// Try after registering: a send that published before the try is seen
	// by it; one after it wakes the registration.
	if !rc.try() {
		return false
	}
	rc.takeBack()
	sc.commit(j)
	return true
}

// takeBack takes the registration off the queue; if a waker took it first,
// its wake-up is passed on (the value this case took may not be the one it
// was woken for).
func (rc *ringRecvCase[T]) takeBack() {
	rc.in = false
	if !rc.c.rb.recvq.remove(&rc.e) {
		rc.c.rb.afterSend()
	}
}

func (rc *ringRecvCase[T]) registered() bool { return rc.in }

func (rc *ringRecvCase[T]) refresh() {
	if rc.in && rc.e.popped.Load() {
		rc.in, rc.woken = false, true // woken: register tries again
	}
}

func (rc *ringRecvCase[T]) closedNow() bool { return false }

func (rc *ringRecvCase[T]) withdraw() bool {
	switch {
	case rc.in:
		rc.in = false
		if rc.c.rb.recvq.remove(&rc.e) {
			return true
		}
		rc.c.rb.afterSend() // woken, and leaving without a try
	case rc.woken:
		rc.woken = false
		rc.c.rb.afterSend()
	}
	return false
}

func (rc *ringRecvCase[T]) collect() {}

// ringSendCase is OnSend's and OnSendPtr's case on a channel with a ring.
type ringSendCase[T any] struct {
	caseReg
	sendOutcome[T]
	c     *Chan[T]
	e     ringSendW[T] // its registration on the send queue (no value: a waker kicks it)
	in    bool
	woken bool
}

func (sc *ringSendCase[T]) snapshot(dst []uint64) ([]uint64, bool) {
	rb := sc.c.rb
	h := rb.head.Load()
	t := rb.tail.Load()
	return append(dst, h, t), t&closedBit != 0 || rb.unbounded != nil || t-h < rb.n
}

func (sc *ringSendCase[T]) try() bool {
	sc.woken = false
	rb := sc.c.rb
	switch rb.trySend(*sc.p) {
	case ringFull:
		return false
	case ringOK:
		rb.afterSend()
		sc.err = nil
	default:
		sc.err = ErrClosed
	}
	return true
}

func (sc *ringSendCase[T]) register(call *selCall, j int) bool {
	sc.c.rb.sendq.add(&sc.e, call)
	sc.in = true
	// Try after registering: a receive that freed a slot before the try is
	// seen by it; one after it kicks the registration.
	if !sc.try() {
		return false
	}
	sc.takeBack()
	call.commit(j)
	return true
}

// takeBack takes the registration off the queue and always passes the
// hand-off on: plain senders that came while the case was queued and had
// not tried yet parked behind it without a look at the ring (ring.go,
// send), and the slot this case did not take may be theirs.
func (sc *ringSendCase[T]) takeBack() {
	sc.in = false
	sc.c.rb.sendq.remove(&sc.e)
	sc.c.rb.afterRecv()
}

func (sc *ringSendCase[T]) registered() bool { return sc.in }

func (sc *ringSendCase[T]) refresh() {
	if sc.in && sc.e.popped.Load() {
		sc.in, sc.woken = false, true
	}
}

func (sc *ringSendCase[T]) closedNow() bool { return false }

func (sc *ringSendCase[T]) withdraw() bool {
	switch {
	case sc.in:
		sc.in = false
		if sc.c.rb.sendq.remove(&sc.e) {
			return true
		}
		sc.c.rb.afterRecv()
	case sc.woken:
		sc.woken = false
		sc.c.rb.afterRecv()
	}
	return false
}

func (sc *ringSendCase[T]) collect() {}
