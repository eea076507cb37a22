package chans

import (
	"runtime"

	"github.com/scalable-go/chans/internal/sched"
)

// Cell states and their histories.
//
// Every send takes a ticket s from S, every receive a ticket r from R, and
// (buffered channels only) every buffer expansion a ticket b from B; the
// send and the receive with equal tickets meet in the cell of that index. A
// cell's state only moves forward, through one of the histories below. S, R:
// the sender and the receiver of the cell; EB: the buffer expansion whose
// ticket is the cell's index; X: Close. Histories 1-4 are the unbounded ones
// (seed 002's nil → element and nil → waiter, plus cancellation); buffered
// and rendezvous channels add the rest, where wS is seed 002's weakWaiter (a
// sender parked until the buffer reaches it) and inBuffer its sentinel.
//
//	#   events                                      history
//	1   S, R                                        nil → buffered
//	2   R parks, S                                  nil → wR → done
//	3   R parks and gives up (ctx, Close), S        nil → wR → cancelledRecv          (S restarts)
//	4   R cannot wait (TryRecv, done ctx), S        nil → cancelledRecv               (S restarts)
//	5   EB, S, R                                    nil → inBuffer → buffered
//	6   EB, R parks, S                              nil → inBuffer → wR → done
//	7   EB, R gives up, S                           nil → inBuffer → (wR →) cancelledRecv
//	8   S parks, EB, R                              nil → wS → buffered               (EB moves the value into the buffer)
//	9   S parks, R                                  nil → wS → taken                  (R takes it before EB came)
//	10  S parks and gives up (ctx, Close), R, EB    nil → wS → cancelledSend → holePaid
//	11  S cannot wait (TrySend, done ctx), R, EB    nil → cancelledSend → holePaid
//
// In 10 and 11 (buffered channels) the first of R and EB to reach the hole
// makes it good and moves it to holePaid: R by running an expansion of its
// own, EB by taking another ticket; both then restart or finish as usual.
//
// A select registration in place of wR or wS, and any parked sender claimed
// by R or EB, is claimed in two steps, w → resuming → next; a registration
// whose select went with another case, or a parked sender found after Close,
// ends w → resuming → cancelledX (history 3, 7 or 10).
//
// Who moves a cell from each state:
//
//	nil            S: → buffered if the cell is in the buffer (s < B, or
//	                  s < R + capacity) or its receiver has its ticket
//	                  (s < R), else → wS or cancelledSend
//	               R: → wR or cancelledRecv
//	               EB: → inBuffer
//	inBuffer       S: → buffered;  R: → wR or cancelledRecv
//	wR             S: → done;  R itself or X: → cancelledRecv
//	wS             EB: → buffered;  R: → taken;  S itself or X: → cancelledSend.
//	               EB and R go through resuming and look at Close's bit
//	               there: after Close they move it to cancelledSend instead.
//	resuming       the claimer of a select registration, to its next state
//	cancelledSend  R or EB, the first to come (buffered channels): → holePaid
//	buffered, done, taken, holePaid, cancelledRecv: final (cancelledSend is
//	final in rendezvous channels)
//
// Buffer end. Seed 002 lets a sender block unless s < R + capacity. Once
// waiters can be cancelled that is wrong (seed 000, section 3.2): a
// cancelled sender inside R..R+capacity leaves a hole, and a later sender
// would block while the buffer has room. So B is an explicit counter,
// starting at the capacity: every receive that does not end in a
// cancelledSend cell runs one buffer expansion (expand), which takes a ticket b
// from B and makes cell b part of the buffer; an expansion that finds
// cancelledSend takes another ticket, so holes are never counted as room.
// Rendezvous channels have no buffer and no B: s < R is the only room.
//
// Linearization points. A send that delivers without parking takes effect at
// the fetch-and-add that gave it the ticket of its last attempt (an attempt
// ends early only in a cell its receiver gave up, and then nobody saw it;
// to keep it so, a TryRecv and a receive whose context fires do not give
// up a cell whose sender already has its ticket, and on a buffered channel
// a select's receive case does not register in one: see recvCell, await
// and recvCase.register); a
// send that parks takes effect at the claimer's transition to buffered or
// taken. A receive that gets a value takes effect just after the send it
// pairs with: at that send's point if the receive's ticket came first,
// otherwise at its own ticket (receives, like sends, are ordered by ticket).
// This is why a send whose ticket predates Close may still deliver after the
// closed bit is set: it took effect before Close.
//
// Close and the room. Close takes effect at its OR of the closed bit into
// S. A send whose ticket predates the OR and which reaches its cell after
// it delivers only if its ticket is below roomEnd (mayDeliver), a bound on
// the room that Close reads before its OR: every cell below it was room at
// the OR, so the send took effect before Close. A send past it fails as if
// it came after Close. For that to agree with every full verdict (TrySend's
// ErrFull, a select's send case found not ready, Len counting a parked
// sender as buffered), each verdict must count as buffered only sends below
// roomEnd. So Close runs in two steps (close.go):
//
//	beginClose   roomEnd: open → closing; then read max(B, R + capacity)
//	finishClose  OR the closed bit into S (Close's linearization point);
//	             the winner stores roomEnd: closing → the bound it read
//
// A full verdict reads roomEnd after its loads of B and R and stands only
// if no Close has begun (fullCheck, count): then all its loads came before
// the bound was read, and the bound covers every send it counted. Otherwise
// it waits for the OR and reports the channel closed. roomEnd is written
// once after the OR and readers of it wait for that store (closedRoom), so
// every send and claimer after Close decides against the same bound.
var (
	markers         [8]waiter
	stBuffered      = &markers[0] // the value in elem waits for the receiver of this cell
	stInBuffer      = &markers[1] // EB made the cell part of the buffer before its sender came
	stDone          = &markers[2] // a sender put its value in elem for the receiver parked here
	stTaken         = &markers[3] // the receiver took the value of the sender parked here
	stCancelledSend = &markers[4] // the sender of this cell gave up; R and EB skip the cell
	stCancelledRecv = &markers[5] // the receiver of this cell gave up; S skips the cell
	stResuming      = &markers[6] // a claimer holds the cell while it completes a parked sender or a select
	stHolePaid      = &markers[7] // cancelledSend whose slot in the buffer was made good (see payHole)
)

// outcome is what a cell step tells the ticket loop.
type outcome uint8

const (
	outOK        outcome = iota // delivered, or received
	outRestart                  // the cell is dead for this operation: take a new ticket
	outNoWait                   // the operation would have to wait and may not
	outClosed                   // the channel is closed
	outCancelled                // the context was done while parked
)

// Spin budget, in loads of the cell. A partner running on another core is
// usually a few hundred nanoseconds away, while parking and waking cost a
// microsecond or more; but a spinner holds its P, which a partner that is not
// running needs. Measured on 2 cores (ping-pong and 2+2 rendezvous MPMC at
// GOMAXPROCS 2): 512 loads made ping-pong ten times slower, 64 made
// rendezvous MPMC about twice as slow as none; 16 and one yield did best on
// both; yielding after registering rather than before costs ping-pong
// about a third (see spinWhile). A non-blocking receive whose sender has its ticket waits for it,
// yielding after spinPark loads.
const (
	spinPark = 16 // before registering a waiter, or yielding
)

// spinWhile spins, with GOMAXPROCS > 1, up to spinPark loads for the state
// of cl to leave st before the caller registers to park, and reports whether
// it did: a partner on another P is usually a few hundred nanoseconds away.
// The yield that lets a partner on this P run comes after registering (in
// await), so that the partner finds the registration: yielding before it
// let a polling TrySend or TryRecv on one P turn a blocking partner away
// again and again (40 ms per value at GOMAXPROCS 1).
func (c *Chan[T]) spinWhile(cl *cell[T], st *waiter) bool {
	return c.spin && spinLoads(cl, st, spinPark)
}

// spinLoads spins up to n loads for the state of cl to leave st.
func spinLoads[T any](cl *cell[T], st *waiter, n int) bool {
	for i := 0; i < n; i++ {
		if cl.state.Load() != st {
			return true
		}
	}
	return false
}

// roomFor reports whether the send with ticket s may complete without a
// receiver at hand: its cell is in the buffer (s < B), or its receiver has
// its ticket (s < R), or s < R + capacity. The last is a lower bound on the
// buffer end that holds even while the buffer expansion of a receive that
// has already taken effect is still under way (B lags then): the cells in
// [R, s) are fewer than the capacity, so they cannot hold a full buffer.
// The loads go S (by the caller), then B, then R, so that a false answer held
// at the instant of the load of B.
func (c *Chan[T]) roomFor(s uint64) bool {
	if c.capacity > 0 && s < c.b.Load() {
		return true
	}
	return s < c.r.Load()+uint64(c.capacity)
}

// recvPastHole is the receiver's step past a cell its sender gave up (a
// hole) in a buffered channel. Each hole must be made good exactly once,
// or B drifts from the buffer's true end: the hole's receiver does it with
// an expansion of its own, or the expansion that reaches the hole does it by
// taking another ticket, whichever moves the cell cancelledSend → holePaid
// first. (Seed 000's receiver skips the hole without expanding, and until
// an expansion reaches the hole the buffer has one slot fewer; a full
// verdict then fails spuriously.)
func (c *Chan[T]) recvPastHole(cl *cell[T], st *waiter) {
	if c.capacity <= 0 {
		return
	}
	if st == stCancelledSend && cl.state.CompareAndSwap(stCancelledSend, stHolePaid) {
		c.expand()
		return
	}
	c.settled.Add(1) // a ticket that owes no expansion (full)
}

// full reports whether the send with ticket s finds no room (roomNo), and
// (for a buffered channel) no buffer expansion is under way or owed, so that
// the buffer was full at the load of B; or room after all (roomYes); or no
// room while a Close is under way (roomClosing, returned once Close has
// taken effect: the send then fails as closed).
//
// While an expansion is owed, B lags behind the true end of the buffer: a
// receive has taken effect, or an expansion has taken a ticket that turned
// out to be a hole and is about to take another. R + capacity does not see
// the holes in [R, S), so only the expansions themselves can tell. Every
// receive ticket owes one expansion, except one that met a hole an
// expansion had made good already; settled counts those tickets and the
// expansions that have finished, so an expansion is owed while R >
// settled. full then waits, yielding: for running receives only, since a
// receive expands before it parks.
//
// The loads go settled, B, R. If the tickets settled by the first load
// cover every receive ticket at the last, no expansion ran between the two
// loads (each would belong to one of those tickets, settled before it
// ran): B stood still at the end the finished expansions had made, and s
// was past it.
func (c *Chan[T]) full(s uint64) room {
	for {
		switch v := c.fullCheck(s); v {
		case roomYes, roomNo:
			return v
		case roomClosing:
			c.awaitClosed()
			return roomClosing
		}
		runtime.Gosched()
	}
}

// room is fullCheck's verdict.
type room uint8

const (
	roomYes     room = iota // the send has room
	roomNo                  // the buffer was full at the load of B
	roomWait                // an expansion is owed: ask again
	roomClosing             // no room, and a Close has begun: the operation fails as closed once Close takes effect
)

// fullCheck is one round of full. It repeats roomFor's loads so that one
// load of R serves both tests: the loads go settled, B, R, then roomEnd.
// A verdict of no room stands only if roomEnd still showed no Close begun:
// then every load came before any Close read the room (beginClose), so the
// sends this verdict counts as buffered are all below that Close's bound and
// deliver even if they reach their cells after it.
func (c *Chan[T]) fullCheck(s uint64) room {
	var settled uint64
	if c.capacity > 0 {
		settled = c.settled.Load()
		if s < c.b.Load() {
			return roomYes
		}
	}
	r := c.r.Load()
	if s < r+uint64(c.capacity) {
		return roomYes
	}
	if c.roomEnd.Load() != openMark {
		return roomClosing
	}
	if c.capacity == 0 || r <= settled {
		return roomNo
	}
	return roomWait // an expansion is owed
}

// inWindow reports whether cell idx lies inside the buffer: below B, or
// below R + capacity (B may lag while expansions are owed). A plain sender
// parked there is as good as buffered: an expansion, or the cell's receiver,
// is bound to claim it.
func (c *Chan[T]) inWindow(idx uint64) bool {
	return c.capacity > 0 && c.roomFor(idx)
}

// mayDeliver reports whether the send with ticket s, which has just found
// room (or a parked receiver, which is room), may deliver. If Close's bit was
// clear at this load, the send takes effect at this load, where it had room
// and the channel was open. If Close came first, the send may still take
// effect just before Close, but only if it had room then: roomEnd is a lower
// bound on the room at Close. Otherwise it fails as if it came after Close (it
// is still under way, so it may), even though room appeared later: a full
// channel must not take more values once closed.
func (c *Chan[T]) mayDeliver(s uint64) bool {
	return c.s.Load()&closedBit == 0 || s < c.closedRoom()
}

// sendBounded runs the sender's side of the cell histories for a buffered or
// rendezvous channel. block is false for TrySend and for an already-done
// context: then the sender gives up the cell (history 11) where it would park.
func (c *Chan[T]) sendBounded(done <-chan struct{}, seg *segment[T], i int, s uint64, v T, w *waiter, block bool) outcome {
	cl := &seg.cells[i]
	cl.elem = v
	spun := false
	for {
		st := cl.state.Load()
		sched.Point()
		switch {
		case st == nil || st == stInBuffer:
			if st == stInBuffer || (c.roomFor(s) && (block || c.capacity > 0)) {
				// (A non-blocking send on a rendezvous channel hands off only
				// to a registered receiver, below: one still on its way may
				// be a TryRecv, and two non-blocking calls must not meet.)
				if !c.mayDeliver(s) {
					if cl.state.CompareAndSwap(st, stCancelledSend) { // nil|inBuffer → cancelledSend: the send fails after Close
						drop(cl)
						seg.cancelled(true)
						return outClosed
					}
					continue
				}
				if cl.state.CompareAndSwap(st, stBuffered) { // nil|inBuffer → buffered
					return outOK
				}
				continue
			}
			if !block {
				if c.capacity == 0 {
					// Rendezvous: only a registered receiver takes the value.
					// The cell's receiver may be about to register; give it
					// a moment, then give up the cell. (It may be a TryRecv
					// waiting for this sender: neither may wait for the other.)
					if spinLoads(cl, st, spinPark) {
						continue
					}
				} else {
					switch c.full(s) {
					case roomYes:
						continue // room after all: an owed expansion came
					case roomClosing:
						if cl.state.CompareAndSwap(nil, stCancelledSend) { // nil → cancelledSend: the send fails after Close
							drop(cl)
							seg.cancelled(true)
							return outClosed
						}
						continue
					}
				}
				if cl.state.CompareAndSwap(nil, stCancelledSend) { // nil → cancelledSend (history 11)
					drop(cl)
					seg.cancelled(true)
					return outNoWait
				}
				continue
			}
			if !spun {
				spun = true
				c.spinWhile(cl, nil)
				continue
			}
			own, pooled := takeWaiter(w, &sendWaiters)
			if !cl.state.CompareAndSwap(nil, own) { // nil → wS: park until EB or R claims it
				putWaiter(own, pooled, &sendWaiters)
				continue
			}
			kickPending(&c.selfPending, nil) // after registering: see select.go, register
			return c.park(done, seg, i, own, pooled)
		case st == stCancelledRecv:
			drop(cl)
			return outRestart
		case st == stResuming:
			runtime.Gosched()
		case isWaiter(st) && st.op == opRecv:
			if !c.mayDeliver(s) {
				failReceiver(seg, i, st) // wR → cancelledRecv: the receiver takes a new ticket
				continue
			}
			if claim(seg, i, st, stDone) { // wR → done: hand the value to the parked receiver
				st.wakeUp(resOK)
				return outOK
			}
		default:
			panic("chans: corrupt cell state in send")
		}
	}
}

// recvCell runs the receiver's side of the cell histories, for every kind of
// channel. With block false (TryRecv, already-done context) the receiver
// gives up a cell it would park in (history 4), after waiting briefly for a
// sender that already has its ticket.
func (c *Chan[T]) recvCell(done <-chan struct{}, seg *segment[T], i int, r uint64, w *waiter, block bool) (T, outcome) {
	cl := &seg.cells[i]
	spun := false
	var zero T
	for {
		st := cl.state.Load()
		sched.Point()
		switch {
		case st == stBuffered:
			v := cl.elem // the receive takes effect here
			cl.elem = zero
			c.expand()
			return v, outOK
		case st == nil || st == stInBuffer:
			if r >= c.closeAt.Load() {
				return zero, outClosed // no send at or past closeAt delivers
			}
			if !block {
				if r < c.s.Load()&counterMask {
					// The sender of this cell has its ticket and is on its way
					// (every ticket below S and below closeAt belongs to a
					// sender that will write its cell). Full and empty verdicts
					// elsewhere count it as sent, so it must not be turned away:
					// wait for it, yielding, without parking.
					c.awaitSender(cl, st, r)
					continue
				}
				if cl.state.CompareAndSwap(st, stCancelledRecv) { // nil|inBuffer → cancelledRecv (history 4, 7)
					seg.cancelled(false)
					c.expand()
					return zero, outNoWait
				}
				continue
			}
			if !spun {
				spun = true
				if c.spinWhile(cl, st) {
					continue
				}
			}
			own, pooled := takeWaiter(w, &recvWaiters)
			if !cl.state.CompareAndSwap(st, own) { // nil|inBuffer → wR: park until S claims it
				putWaiter(own, pooled, &recvWaiters)
				continue
			}
			kickPending(&c.selfPending, nil) // after registering: see select.go, register
			c.expand()
			switch out := c.park(done, seg, i, own, pooled); out {
			case outOK:
				v := cl.elem // the sender wrote it before its claim
				cl.elem = zero
				return v, outOK
			default:
				return zero, out
			}
		case st == stCancelledSend || st == stHolePaid:
			c.recvPastHole(cl, st)
			return zero, outRestart
		case st == stResuming:
			runtime.Gosched()
		case isWaiter(st) && st.op == opSend:
			if c.claimSender(seg, i, st, stTaken) { // wS → resuming → taken: the receive takes effect here
				v := cl.elem
				cl.elem = zero
				st.wakeUp(resOK)
				c.expand()
				return v, outOK
			}
		default:
			panic("chans: corrupt cell state in receive")
		}
	}
}

// awaitSender waits, yielding after spinPark loads and never parking, for
// the sender of cell r, which has its ticket, to move the cell on from st,
// or for Close to show that ticket past closeAt (the send then fails without
// writing the cell). The caller must not give the cell up meanwhile: full
// and empty verdicts already count that send.
func (c *Chan[T]) awaitSender(cl *cell[T], st *waiter, r uint64) {
	for i := 0; cl.state.Load() == st && r < c.closeAt.Load(); i++ {
		if i >= spinPark {
			runtime.Gosched()
		}
	}
}

// park blocks the owner of the registration own in cell i of seg until it is
// claimed, or until done is closed and the owner cancels it first. It checks
// for Close after registering, and Close walks the cells after setting its
// bit, so one of them sees the other.
func (c *Chan[T]) park(done <-chan struct{}, seg *segment[T], i int, own *waiter, pooled bool) outcome {
	cl := &seg.cells[i]
	idx := seg.id<<segShift | uint64(i)
	send := own.op == opSend
	out := c.await(done, seg, i, own, (send && !c.mayDeliver(idx)) || (!send && idx >= c.closeAt.Load()))
	if out != outOK && send {
		drop(cl)
	}
	if send {
		putWaiter(own, pooled, &sendWaiters)
	} else {
		putWaiter(own, pooled, &recvWaiters)
	}
	return out
}

// await waits for the registration own to be claimed. closed says that the
// owner saw Close after registering: then it withdraws at once.
func (c *Chan[T]) await(done <-chan struct{}, seg *segment[T], i int, own *waiter, closed bool) outcome {
	if closed && c.cancel(seg, i, own) {
		return outClosed
	}
	// Yield once before blocking: a partner this goroutine has just made
	// runnable sits in this P's run queue; running now, it finds the
	// registration and leaves the wake token, and the receive below does
	// not park.
	runtime.Gosched()
	if done == nil {
		<-own.wake // a plain receive parks far more cheaply than a select
		return c.result(own)
	}
	select {
	case <-own.wake:
		return c.result(own)
	case <-done:
		// A receiver whose sender has its ticket does not withdraw: full
		// and empty verdicts elsewhere count that send as made, and turning
		// it away would make it take a later ticket. The sender is running
		// and claims this registration (or, after Close, fails it), so the
		// wait is short; the value is returned although ctx is done.
		idx := seg.id<<segShift | uint64(i)
		if own.op == opRecv && idx < c.s.Load()&counterMask && idx < c.closeAt.Load() {
			<-own.wake
			return c.result(own)
		}
		// Likewise a sender parked inside the buffer window: it counts as
		// buffered (Len, full verdicts), and what stands between it and its
		// claim is only the expansions owed by running receives.
		if own.op == opSend && c.inWindow(idx) && c.mayDeliver(idx) {
			<-own.wake
			return c.result(own)
		}
		if c.cancel(seg, i, own) {
			return outCancelled
		}
		<-own.wake // claimed as the context fired: the operation happened
		return c.result(own)
	}
}

func (c *Chan[T]) result(w *waiter) outcome {
	switch w.res {
	case resClosed:
		return outClosed
	case resRestart:
		return outRestart
	}
	return outOK
}

// cancel withdraws the owner's registration own: wS → cancelledSend or
// wR → cancelledRecv. It fails when a claimer got there first.
func (c *Chan[T]) cancel(seg *segment[T], i int, own *waiter) bool {
	next := stCancelledRecv
	if own.op == opSend {
		next = stCancelledSend
	}
	if !seg.cells[i].state.CompareAndSwap(own, next) {
		return false
	}
	seg.cancelled(own.op == opSend)
	return true
}

// expand runs one buffer expansion (seed 000's expandBuffer): it makes the
// next cell past the buffer part of it, restarting while that cell belongs
// to a sender that gave up, and counts itself in settled when done (full).
func (c *Chan[T]) expand() {
	if c.capacity <= 0 {
		return
	}
	for {
		seg := c.bufSeg.Load()
		b := c.b.Add(1) - 1
		sched.Point()
		if b >= c.s.Load()&counterMask {
			// The sender of cell b has no ticket yet; it will find b < B.
			c.settled.Add(1)
			// Still move the root along, as far as the list reaches, or it
			// would keep every segment since the buffer was last full alive.
			if id := b >> segShift; seg.id < id {
				c.advanceBufSeg(seg, id)
			}
			return
		}
		if id := b >> segShift; seg.id != id {
			seg = c.findAndMove(&c.bufSeg, seg, id)
			if seg.id != id {
				// Segment removed: in a buffered channel only cells given up
				// by receivers count towards removal, and expansion is done
				// for those.
				c.settled.Add(1)
				return
			}
		}
		if c.expandCell(seg, int(b&segMask)) {
			c.settled.Add(1) // after the cell's transition: full reads this first
			return
		}
	}
}

// advanceBufSeg moves the bufSeg root from seg towards the segment with the
// given id, without growing the list.
func (c *Chan[T]) advanceBufSeg(seg *segment[T], id uint64) {
	cur := seg
	for cur.id < id {
		n := cur.next.Load()
		if n == nil {
			break
		}
		cur = n
	}
	for cur != seg && !c.moveForward(&c.bufSeg, cur) {
		cur = cur.next.Load() // cur was removed; its successor is not, or is the tail
		if cur == nil {
			return
		}
	}
}

func (c *Chan[T]) expandCell(seg *segment[T], i int) bool {
	cl := &seg.cells[i]
	for {
		st := cl.state.Load()
		sched.Point()
		switch {
		case st == nil:
			if cl.state.CompareAndSwap(nil, stInBuffer) { // nil → inBuffer: the coming sender will not park
				return true
			}
		case st == stCancelledSend:
			// cancelledSend → holePaid: this expansion makes good the hole
			// by taking another ticket, unless the cell's receiver did first.
			if cl.state.CompareAndSwap(stCancelledSend, stHolePaid) {
				return false
			}
		case st == stHolePaid:
			return true // the cell's receiver made it good with an expansion of its own
		case st == stResuming:
			runtime.Gosched()
		case isWaiter(st) && st.op == opSend:
			if c.claimSender(seg, i, st, stBuffered) { // wS → resuming → buffered: the parked send takes effect
				st.wakeUp(resOK)
				return true
			}
		default: // buffered, done, taken, inBuffer, wR, cancelledRecv: the cell is in the buffer already
			return true
		}
	}
}

// drop drops the cell's reference to a value that was not delivered.
func drop[T any](cl *cell[T]) {
	var zero T
	cl.elem = zero
}
