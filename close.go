package chans

import (
	"runtime"

	"github.com/scalable-go/chans/internal/sched"
)

// Close closes the channel. Later sends fail with ErrClosed; senders parked
// at Close wake with ErrClosed and their values are never received; values
// already delivered stay receivable, after which receives report the channel
// closed; receivers parked on the drained channel wake. Close returns
// ErrClosed if the channel was already closed.
//
// Linearization: the moment the channel is marked closed. A send already
// under way then either delivers, if it had room before that moment, or
// fails as if it came after Close; an operation that would have had to
// report the channel full while Close was under way waits for that moment
// and reports it closed instead.
func (c *Chan[T]) Close() error {
	if c.rb != nil {
		return c.rb.close(&c.plainCap)
	}
	c.mustBeMade()
	end := openMark
	if c.capacity >= 0 && c.s.Load()&closedBit == 0 {
		end = c.beginClose()
	}
	sched.Point() // Close has read the room and not yet taken effect
	return c.finishClose(end)
}

// closingMark is roomEnd from the moment a Close begins (beginClose) until
// the winning Close stores the room it read.
const closingMark = openMark - 1

// beginClose announces a Close of a bounded channel and returns the room it
// reads after the announcement: max(B, R + capacity), a lower bound on the
// room at the OR that follows. roomEnd goes open → closing here, once for
// all Closes; from then on a full verdict does not stand but waits for the
// OR (fullCheck, Len), so every full verdict given stands before the
// announcement, where the room it counted was at most the bound read here.
func (c *Chan[T]) beginClose() uint64 {
	c.plainCap.Store(0)                             // before roomEnd moves: plainlyFull stops at once
	c.roomEnd.CompareAndSwap(openMark, closingMark) // open → closing: full verdicts wait for the OR
	c.holesOn()                                     // Close fails the sends past the room it reads below
	sched.Point()
	end := c.r.Load() + uint64(c.capacity)
	if c.capacity > 0 {
		end = max(end, c.b.Load())
	}
	return end
}

// finishClose is Close from its OR on; end is the room its beginClose read
// (openMark for an unbounded channel, or when S was seen closed already).
func (c *Chan[T]) finishClose(end uint64) error {
	old := c.s.Or(closedBit)
	if old&closedBit != 0 {
		return ErrClosed
	}
	sched.Point() // Close has taken effect; roomEnd and closeAt are not stored yet
	if c.capacity >= 0 {
		// Only the winner stores, and it stores once: closing → end. Every
		// reader of roomEnd after the closed bit waits for this store
		// (closedRoom), so all of them see the same bound.
		c.roomEnd.Store(end)
	}
	sc := old & counterMask
	sched.Point()
	c.closeAt.Store(sc)

	// Wake what can no longer complete: parked senders (all have tickets
	// below sc) and receivers parked at or past sc. A registration made after
	// this walk passed its cell sees the closed bit or closeAt itself (park).
	// Parked operations before the oldest root need no help: the partner
	// that moved the root past them has its ticket and will claim them.
	lo := uint64(0)
	if c.capacity < 0 {
		lo = sc // unbounded: no parked senders; receivers from sc on
	}
	hi := max(c.r.Load(), sc)
	c.killParked(lo, hi, sc)
	return nil
}

// killParked is Close's walk over cells [lo, hi): it fails parked senders
// outside the room and receivers parked at or past sc.
//
// Segments are reused (segment.go, "Reuse"): the walk starts at the cursor,
// the oldest segment not retired, and checks its hops as findSeg does,
// starting again from the cursor when one fails (cells it has been through are looked at again,
// harmlessly: a registration it ended is cancelled now). It holds a segment
// before it claims a registration there: it is no party of that cell, and a
// registration, a pooled waiter, can come back in the same cell of a later
// life of the segment.
func (c *Chan[T]) killParked(lo, hi, sc uint64) {
	seg, sid := c.cursorSeg()
	sched.Point() // the cursor's segment may be retired here
	for sid<<segShift < hi {
		restart := false
		for i := range seg.cells {
			idx := sid<<segShift | uint64(i)
			if idx < lo {
				continue
			}
			if idx >= hi {
				break
			}
			st := seg.cell(i).state.Load()
			if !isWaiter(st) {
				continue
			}
			sched.Point() // the walk found a registration and has not claimed it yet
			if !seg.hold(sid) {
				restart = true
				break
			}
			if st.op == opSend {
				if !c.asBuffered(idx, st) && claim(seg, i, st, stCancelledSend) { // wS → cancelledSend: the send fails after Close
					seg.cancelled(true)
					st.wakeUp(resClosed)
				} // else below the room Close read: as good as buffered; its claimer delivers it
			} else if idx >= sc {
				if claim(seg, i, st, stCancelledRecv) { // wR → cancelledRecv: no send will come
					seg.cancelled(false)
					st.wakeUp(resClosed)
				}
			}
			seg.release()
		}
		var next *segment[T]
		var nid uint64
		if !restart {
			if next = seg.next.Load(); next == nil {
				if seg.id.Load() == sid {
					return // the tail
				}
				restart = true // retired and cleared under the walk
			} else {
				nid = next.id.Load()
				sched.Point() // seg may be retired here
				restart = seg.id.Load() != sid || nid == retiredID
			}
		}
		if restart {
			seg, sid = c.cursorSeg()
			sched.Point()
			continue
		}
		seg, sid = next, nid
	}
}

// closedRoom returns roomEnd once the closed bit is set: the winning Close
// stores it just after its OR, and a caller that saw the bit waits, yielding,
// for the store (as closedAt does for closeAt).
func (c *Chan[T]) closedRoom() uint64 {
	for {
		if e := c.roomEnd.Load(); e != closingMark {
			return e
		}
		runtime.Gosched()
	}
}

// awaitClosed waits, yielding, for a Close that has begun (roomEnd no longer
// openMark) to set the closed bit.
func (c *Chan[T]) awaitClosed() {
	for c.s.Load()&closedBit == 0 {
		c.mustBeMade() // a zero Chan's roomEnd is 0, as if a Close had begun
		runtime.Gosched()
	}
}

// Len returns the number of values buffered in the channel: a count that
// was true at one instant during the call, and may be stale by the time it
// returns. A rendezvous channel buffers nothing and always reports 0. If
// receives complete without pause throughout the call, Len stops retrying
// after a few rounds, and its count may then be off by the values they took.
func (c *Chan[T]) Len() int {
	if c.rb != nil {
		return c.rb.len()
	}
	c.mustBeMade()
	if c.capacity == 0 {
		return 0
	}
	// Len reads R before and after it counts, and trusts a count during
	// which R did not move (a double collect: R only grows, so equal reads
	// mean it held that value throughout). For an unbounded channel the
	// count is then S - R at the load of S. For a buffered one count walks
	// the cells from R and counts values, waiting for senders that have
	// their tickets to write their cells; while R stands still values only
	// arrive, one at a time, so the tally lies between the counts at the
	// start and the end of the walk and equals the count at some instant
	// between. After lenTries rounds in which receives moved R, Len returns
	// its last tally.
	for try := 0; ; {
		r := c.r.Load()
		n, ok := c.count(r)
		if !ok {
			c.awaitClosed() // then count again: the closed bit decides
			continue
		}
		if c.r.Load() == r {
			return n
		}
		if try++; try == lenTries {
			if lenGaveUp != nil {
				lenGaveUp()
			}
			return n
		}
	}
}

// count is one round of Len from the receive count r: the values in cells
// [r, S). It reports false, for a buffered channel, if a Close began during
// the count without having taken effect when the count read S: a parked
// sender counted as buffered may then fail at Close's OR (beginClose).
func (c *Chan[T]) count(r uint64) (int, bool) {
	sw := c.s.Load()
	s := sw & counterMask
	if sw&closedBit != 0 {
		s = min(s, c.closedAt())
	}
	if c.capacity < 0 {
		if s > r {
			return int(s - r), true // every send in [R, S) delivers (unbounded.go)
		}
		return 0, true
	}
	n := c.countValues(r, s)
	return n, sw&closedBit != 0 || c.roomEnd.Load() == openMark
}

// closedAt returns closeAt once the closed bit is set. Close stores closeAt
// just after its OR; in between, S already counts tickets of sends that fail
// at once without writing their cells, so a caller that would wait for the
// cells below S must first wait, yielding, for the store.
func (c *Chan[T]) closedAt() uint64 {
	for {
		if ca := c.closeAt.Load(); ca != openMark {
			return ca
		}
		runtime.Gosched()
	}
}

// lenTries bounds the rounds Len retries while receives move R.
const lenTries = 8

// lenGaveUp, if set (by tests, before any channel is used), is called by a
// Len that returns its last count after lenTries rounds: the count may then
// be one that the channel never held, as Len's documentation allows, and
// the linearizability check accepts any count from such a call.
var lenGaveUp func()

// countValues counts the values in cells [r, s) of a buffered channel. A
// send buffers only below B or below R + capacity (roomFor), and B may lag
// behind R + capacity while a receive's expansion is under way; so values
// lie below max(B, R + capacity), between holes left by senders that gave up
// and cells of parked senders.
//
// Segments are reused (segment.go, "Reuse"): the walk holds each segment in
// its life before it reads its cells, and starts again from the cursor when
// a hold fails. (A cell whose value was received during the count shows
// consumed, and counts as the value it held: Len keeps a count only if R
// did not move meanwhile.)
func (c *Chan[T]) countValues(r, s uint64) int {
	end := min(s, max(c.b.Load(), r+uint64(c.capacity)))
	n := 0
	if end <= r {
		return 0
	}
	seg := c.recvSeg.Load()
	sid := seg.id.Load()
	if !seg.hold(sid) {
		seg, sid = c.heldCursor()
	} else if sid > r>>segShift {
		// The root was retired and reused after R was read, its new life
		// at the tail (a receive with a ticket below r moved the root on:
		// R may well not have moved). The cursor is not past r's segment
		// while R stays at r: cell r is not final.
		seg.release()
		seg, sid = c.heldCursor()
	}
	for sid<<segShift < end {
		first := 0 // the first index at or past r: the root may be behind it
		if base := sid << segShift; r > base {
			first = int(min(r-base, segSize))
		}
		for i := first; i < segSize; i++ {
			idx := sid<<segShift | uint64(i)
			if idx >= end {
				break
			}
			cl := seg.cell(i)
			st := cl.state.Load()
			for j := 0; st == nil || st == stInBuffer || st == stResuming; j++ {
				// The sender of this cell has its ticket: wait for it to
				// write the cell, so that a send that took effect counts.
				// Likewise for a claimer holding the cell in resuming: a
				// parked sender counted as buffered must not drop out of
				// the count while it is being moved into the buffer.
				if j >= spinPark {
					runtime.Gosched()
				}
				st = cl.state.Load()
			}
			if st == stBuffered || st == stConsumed || (isWaiter(st) && st.op == opSend && c.asBuffered(idx, st)) {
				n++ // a plain sender parked inside the window is as good as buffered
			}
		}
		next := seg.next.Load()
		if next == nil {
			next = c.grow(seg, sid) // a sender with a ticket past seg has not linked it yet
		}
		nid := next.id.Load()
		seg.release()
		next, nid, held := holdLive(next, nid)
		if !held {
			// Retired (then R has moved, and Len counts again) or not
			// given its id yet: count again from the cursor.
			runtime.Gosched()
			seg, sid = c.heldCursor()
			n = 0
			continue
		}
		seg, sid = next, nid
	}
	seg.release()
	return min(n, c.capacity)
}

// heldCursor returns the cursor's segment and its id, held in that life.
// The cursor may name a removed segment until a retirement moves it on;
// a removed segment is never reused, so its successor is taken instead.
func (c *Chan[T]) heldCursor() (*segment[T], uint64) {
	for {
		x, xid := c.cursorSeg()
		if x, xid, ok := holdLive(x, xid); ok {
			return x, xid
		}
		runtime.Gosched()
	}
}

// holdLive holds x in the life whose id is xid, going on to the successor
// while x is removed (every cell given up, no value there; a removed
// segment is never reused and never the tail, so its next pointer stays).
// It reports false if x was retired or reused since xid was read, or had
// no id yet (xid = retiredID).
func holdLive[T any](x *segment[T], xid uint64) (*segment[T], uint64, bool) {
	for !x.hold(xid) {
		if xid == retiredID || x.id.Load() != xid {
			return x, xid, false
		}
		x = x.next.Load()
		xid = x.id.Load()
	}
	return x, xid, true
}
