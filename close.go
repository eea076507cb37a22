package chans

import "runtime"

// Close closes the channel. Later sends fail with ErrClosed; senders parked
// at Close wake with ErrClosed and their values are never received; values
// already delivered stay receivable, after which receives report the channel
// closed; receivers parked on the drained channel wake. Close returns
// ErrClosed if the channel was already closed.
//
// Linearization: the atomic OR that sets the closed bit of S. Sends with
// tickets below the count it returns (closeAt) were already under way; each
// of them either delivers or, if it would have to wait, fails as if it came
// after Close.
func (c *Chan[T]) Close() error {
	if c.capacity >= 0 && c.s.Load()&closedBit == 0 {
		c.recordRoom()
	}
	old := c.s.Or(closedBit)
	if old&closedBit != 0 {
		return ErrClosed
	}
	sc := old & counterMask
	c.closeAt.Store(sc)

	// Wake what can no longer complete: parked senders (all have tickets
	// below sc) and receivers parked at or past sc. A registration made after
	// this walk passed its cell sees the closed bit or closeAt itself (park).
	// Parked operations before the oldest root need no help: the partner
	// that moved the root past them has its ticket and will claim them.
	lo := uint64(0)
	start := c.sendSeg.Load()
	if c.capacity >= 0 {
		if r := c.recvSeg.Load(); r.id < start.id {
			start = r
		}
		if c.capacity > 0 {
			if b := c.bufSeg.Load(); b.id < start.id {
				start = b
			}
		}
	} else {
		lo = sc // unbounded: no parked senders; receivers from sc on
	}
	end := max(c.r.Load(), sc)
	for seg := start; seg != nil && seg.id<<segShift < end; seg = seg.next.Load() {
		for i := range seg.cells {
			idx := seg.id<<segShift | uint64(i)
			if idx < lo {
				continue
			}
			if idx >= end {
				break
			}
			st := seg.cells[i].state.Load()
			if !isWaiter(st) {
				continue
			}
			if st.op == opSend {
				if !st.isSel && idx < c.roomEnd.Load() {
					continue // inside the buffer at Close: as good as buffered (inWindow); its claimer delivers it
				}
				if claim(seg, i, st, stCancelledSend) { // wS → cancelledSend: the send fails after Close
					seg.cancelled(true)
					st.wakeUp(resClosed)
				}
			} else if idx >= sc {
				if claim(seg, i, st, stCancelledRecv) { // wR → cancelledRecv: no send will come
					seg.cancelled(false)
					st.wakeUp(resClosed)
				}
			}
		}
	}
	return nil
}

// recordRoom lowers roomEnd to max(B, R + capacity) read now, a lower bound
// on the room when the winning Close takes effect if read before its OR (so
// Close reads it only while S is open). It keeps the least bound: a losing
// Close racing the winner may read R and B after the winner's OR, and its
// larger bound need not hold at the OR.
func (c *Chan[T]) recordRoom() {
	end := c.r.Load() + uint64(c.capacity)
	if c.capacity > 0 {
		end = max(end, c.b.Load())
	}
	for cur := c.roomEnd.Load(); end < cur && !c.roomEnd.CompareAndSwap(cur, end); cur = c.roomEnd.Load() {
	}
}

// Len returns the number of values buffered in the channel: a count that
// was true at one instant during the call, and may be stale by the time it
// returns. A rendezvous channel buffers nothing and always reports 0.
//
// Len reads R before and after it counts, and only trusts a count during
// which R did not move (a double collect: R only grows, so equal reads mean
// it held that value throughout). For an unbounded channel the count is then
// S - R at the load of S. For a buffered one Len walks the cells from R and
// counts values, waiting for senders that have their tickets to write their
// cells; while R stands still values only arrive, one at a time, so the
// tally lies between the counts at the start and the end of the walk and
// equals the count at some instant between. If receives keep moving R for
// lenTries rounds, Len returns its last tally, which may be off by the
// values those receives took.
func (c *Chan[T]) Len() int {
	if c.capacity == 0 {
		return 0
	}
	n := 0
	for try := 0; try < lenTries; try++ {
		r := c.r.Load()
		sw := c.s.Load()
		s := sw & counterMask
		if sw&closedBit != 0 {
			s = min(s, c.closedAt())
		}
		if c.capacity < 0 {
			n = 0
			if s > r {
				n = int(s - r) // every send in [R, S) delivers (unbounded.go)
			}
		} else {
			n = c.countValues(r, s)
		}
		if c.r.Load() == r {
			break
		}
	}
	return n
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

// countValues counts the values in cells [r, s) of a buffered channel. A
// send buffers only below B or below R + capacity (roomFor), and B may lag
// behind R + capacity while a receive's expansion is under way; so values
// lie below max(B, R + capacity), between holes left by senders that gave up
// and cells of parked senders.
func (c *Chan[T]) countValues(r, s uint64) int {
	end := min(s, max(c.b.Load(), r+uint64(c.capacity)))
	n := 0
	if end <= r {
		return 0
	}
	for seg := c.recvSeg.Load(); seg.id<<segShift < end; seg = c.nextSeg(seg) {
		for i := range seg.cells {
			idx := seg.id<<segShift | uint64(i)
			if idx >= end {
				break
			}
			if idx < r {
				continue
			}
			cl := &seg.cells[i]
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
			if st == stBuffered || (isWaiter(st) && st.op == opSend && !st.isSel && c.mayDeliver(idx)) {
				n++ // a plain sender parked below end is as good as buffered (inWindow)
			}
		}
	}
	return min(n, c.capacity)
}

// nextSeg returns seg's successor, linking one if a sender with a ticket past
// seg has not done so yet.
func (c *Chan[T]) nextSeg(seg *segment[T]) *segment[T] {
	if n := seg.next.Load(); n != nil {
		return n
	}
	return c.grow(seg)
}
