package chans

import (
	"fmt"
	"reflect"
	"strings"
)

// CheckInvariants checks, at a quiescent point (no operation on c under
// way, none parked), the invariants stated at the top of bounded.go, and
// returns an error that dumps the counters and the cells when one fails.
// It is built into test binaries only.
func CheckInvariants[T any](c *Chan[T]) error {
	if c.rb != nil {
		return c.rb.checkInvariants()
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	sw := c.s.Load()
	s, closed := sw&counterMask, sw&closedBit != 0
	r, b, settled := c.r.Load(), c.b.Load(), c.settled.Load()
	closeAt, roomEnd := c.closeAt.Load(), c.roomEnd.Load()

	// Close's words.
	switch {
	case !closed && closeAt != openMark:
		fail("open, but closeAt = %d", closeAt)
	case closed && closeAt > s:
		fail("closeAt %d past S %d", closeAt, s)
	}
	if c.capacity >= 0 {
		switch {
		case !closed && roomEnd != openMark:
			fail("open and quiescent, but roomEnd = %#x (a Close is under way?)", roomEnd)
		case closed && (roomEnd == openMark || roomEnd == closingMark):
			fail("closed, but roomEnd = %#x was never stored", roomEnd)
		}
	}

	// The buffer end: each receive ticket settles once, and takes one
	// expansion ticket from B, or two where its expansion met a hole that
	// the hole's own receiver has not reached yet.
	ahead := 0 // holePaid cells at or past R: paid by an expansion
	for idx, st := range c.cellStates() {
		if idx >= r && st == stHolePaid {
			ahead++
		}
	}
	holeFrom := c.holeFrom.Load()
	switch {
	case c.capacity <= 0:
	case holeFrom == noHoles:
		// Before the first hole the buffer ends at R + capacity and
		// expansions take no tickets: B and settled are as New left them,
		// and no cell is a hole.
		if b != uint64(c.capacity) || settled != 0 {
			fail("no hole yet, but B = %d, settled = %d (want %d, 0)", b, settled, c.capacity)
		}
		for idx, st := range c.cellStates() {
			if st == stCancelledSend || st == stHolePaid || st == stHoleSeen {
				fail("cell %d is a hole, but holeFrom says none appeared", idx)
			}
		}
	case holeFrom == holesSwitching:
		fail("holeFrom still switching at a quiescent point")
	case holeFrom > r:
		fail("holeFrom %d past R %d", holeFrom, r)
	case !closed:
		if settled != r {
			fail("settled %d != R %d", settled, r)
		}
		if want := uint64(c.capacity) + r + uint64(ahead); b != want {
			fail("B = %d, want capacity + R + paid holes ahead = %d", b, want)
		}
	}
	if c.capacity > 0 && holeFrom != noHoles && settled > r {
		fail("settled %d past R %d", settled, r)
	}
	// roomSeen is a buffer end some send saw: never past the end now.
	if seen := c.roomSeen.Load(); c.capacity <= 0 && seen != 0 || seen > max(b, r+uint64(c.capacity)) {
		fail("roomSeen %d past the buffer end max(B, R + capacity) = %d", seen, max(b, r+uint64(c.capacity)))
	}

	// Cells.
	end := s
	if closed {
		end = closeAt
	}
	values := 0
	for idx, st := range c.cellStates() {
		cl := c.cellAt(idx)
		zero := reflect.ValueOf(&cl.elem).Elem().IsZero()
		switch {
		case isWaiter(st) || st == stResuming:
			fail("cell %d holds a registration or is held in resuming at a quiescent point", idx)
		case st == stBuffered && idx >= r && idx < end:
			values++ // a value waiting for its receiver
		case !zero:
			fail("cell %d (%s) keeps a value that nobody will receive", idx, stateName(st))
		}
		if idx < end && idx < r && (st == nil || st == stInBuffer) {
			// Every ticket below min(S, R) (below closeAt once closed)
			// belonged to a sender that wrote its cell.
			fail("cell %d below S and R is still %s", idx, stateName(st))
		}
	}
	// Each segment counts its given-up cells (towards removal): the cells a
	// receiver gave up, and those a sender gave up, holes paid or seen
	// included; taking a cell back (rejoin) takes it off the count.
	for seg := c.oldestRoot(); seg != nil; seg = seg.next.Load() {
		var recv, send uint64
		for i := range seg.cells {
			switch seg.cell(i).state.Load() {
			case stCancelledRecv:
				recv++
			case stCancelledSend, stHolePaid, stHoleSeen:
				send++
			}
		}
		n := seg.counts.Load()
		if got := n & 0xffff; got != recv {
			fail("segment %d counts %d cells given up by receivers, holds %d", seg.id.Load(), got, recv)
		}
		if got := n >> 16 & 0xffff; got != send {
			fail("segment %d counts %d cells given up by senders, holds %d", seg.id.Load(), got, send)
		}
	}
	if c.capacity >= 0 && values > max(c.capacity, 0) {
		fail("%d values buffered, capacity %d", values, c.capacity)
	}
	if c.capacity != 0 {
		if n := c.Len(); n != values {
			fail("Len = %d, cells hold %d values", n, values)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("chans invariants: %s\n%s", strings.Join(errs, "; "), c.dump())
}

// cellStates yields the index and state of every cell from the oldest root
// segment to the tail.
func (c *Chan[T]) cellStates() func(func(uint64, *waiter) bool) {
	return func(yield func(uint64, *waiter) bool) {
		for seg := c.oldestRoot(); seg != nil; seg = seg.next.Load() {
			for i := range seg.cells {
				if !yield(seg.id.Load()<<segShift|uint64(i), seg.cell(i).state.Load()) {
					return
				}
			}
		}
	}
}

// cellAt returns the cell of index idx, which must be reachable.
func (c *Chan[T]) cellAt(idx uint64) *cell[T] {
	if cl := c.findCell(idx); cl != nil {
		return cl
	}
	panic(fmt.Sprintf("cell %d not reachable", idx))
}

// findCell returns the cell of index idx, or nil while its segment is not
// linked yet.
func (c *Chan[T]) findCell(idx uint64) *cell[T] {
	for seg := c.oldestRoot(); seg != nil && seg.id.Load() <= idx>>segShift; seg = seg.next.Load() {
		if seg.id.Load() == idx>>segShift {
			return seg.cell(int(idx & segMask))
		}
	}
	return nil
}

func (c *Chan[T]) oldestRoot() *segment[T] {
	m := c.sendSeg.Load()
	if r := c.recvSeg.Load(); r.id.Load() < m.id.Load() {
		m = r
	}
	if c.capacity > 0 {
		if b := c.bufSeg.Load(); b.id.Load() < m.id.Load() {
			m = b
		}
	}
	return m
}

// dump renders the counters and every reachable cell, for failure reports.
func (c *Chan[T]) dump() string {
	var sb strings.Builder
	sw := c.s.Load()
	fmt.Fprintf(&sb, "capacity %d  S %d (closed %v)  R %d  B %d  settled %d  closeAt %#x  roomEnd %#x\n",
		c.capacity, sw&counterMask, sw&closedBit != 0, c.r.Load(), c.b.Load(), c.settled.Load(), c.closeAt.Load(), c.roomEnd.Load())
	for idx, st := range c.cellStates() {
		fmt.Fprintf(&sb, "  cell %d: %s %v\n", idx, stateName(st), c.cellAt(idx).elem)
	}
	return sb.String()
}

func stateName(st *waiter) string {
	switch st {
	case nil:
		return "nil"
	case stBuffered:
		return "buffered"
	case stInBuffer:
		return "inBuffer"
	case stDone:
		return "done"
	case stTaken:
		return "taken"
	case stCancelledSend:
		return "cancelledSend"
	case stCancelledRecv:
		return "cancelledRecv"
	case stResuming:
		return "resuming"
	case stHolePaid:
		return "holePaid"
	case stConsumed:
		return "consumed"
	case stHoleSeen:
		return "holeSeen"
	}
	if st.op == opSend {
		return "wS"
	}
	return "wR"
}
