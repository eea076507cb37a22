package chans

import (
	"sync/atomic"

	"github.com/scalable-go/chans/internal/sched"
)

// RecvTickets and SendTickets return the receive and send tickets a channel
// on cells has handed out (R, and S without Close's bit), ReusesSegments
// whether it still reuses its segments, and RecvRegistered whether a receive
// (or a select's receive case) is registered in one of its cells, for the
// tests of the chans_test package. RecvRegistered walks the segments from
// the oldest one not retired; call it while nothing else retires segments.
func RecvTickets[T any](c *Chan[T]) uint64  { return c.r.Load() }
func SendTickets[T any](c *Chan[T]) uint64  { return c.s.Load() & counterMask }
func ReusesSegments[T any](c *Chan[T]) bool { return !c.reuseOff.Load() }

// SegSize is the number of cells in a segment.
const SegSize = segSize

// GiveUpRecvCells takes n receive tickets and gives each one's cell up, as
// n receives would that registered and were cancelled before they parked
// (nil → wR → cancelledRecv), on an idle rendezvous or unbounded channel.
func GiveUpRecvCells[T any](c *Chan[T], n int) {
	if c.capacity > 0 {
		panic("GiveUpRecvCells: a buffered channel's receives owe expansions")
	}
	for range n {
		for try := 0; !giveUpRecvCell(c); try++ {
			if try == 1000 {
				panic("GiveUpRecvCells: every ticket fell in a removed segment")
			}
		}
	}
}

// giveUpRecvCell takes a receive ticket, registers a waiter in its cell and
// withdraws it, as a receive does whose context fires before it parks. It
// reports false if the ticket's segment had been removed (recvOp would take
// another ticket then).
func giveUpRecvCell[T any](c *Chan[T]) bool {
	start := c.recvSeg.Load()
	r := c.r.Add(1) - 1
	seg := c.cellSeg(&c.recvSeg, start, r)
	if seg == nil {
		return false
	}
	i := int(r & segMask)
	w := newWaiter(opRecv)
	if !seg.cell(i).state.CompareAndSwap(nil, w) { // nil → wR
		panic("giveUpRecvCell: the cell of a receive ticket on an idle channel was not empty")
	}
	if !c.withdraw(seg, i, w) { // wR → cancelledRecv
		panic("giveUpRecvCell: a registration on an idle channel was claimed")
	}
	return true
}

// CursorID returns the index of the oldest segment of c not retired.
func CursorID[T any](c *Chan[T]) uint64 { return c.cursor.Load().id.Load() }

// TakeSendTicket takes a send ticket and does nothing with its cell: the
// first step of a send that then finds its cell given up, stopped before it
// takes another.
func TakeSendTicket[T any](c *Chan[T]) { c.s.Add(1) }

func RecvRegistered[T any](c *Chan[T]) bool {
	for s := c.cursor.Load(); s != nil; s = s.next.Load() {
		for i := range s.cells {
			if st := s.cells[i].state.Load(); isWaiter(st) && st.op == opRecv {
				return true
			}
		}
	}
	return false
}

// OnRejoinWindow makes the next rejoin of the receive case k (on a
// Chan[T]) call f once, at its perturbation point between its hold on the
// segment of its given-up cell and its move of the cell, in builds with the
// tag chans_perturb (in others Points call no hook). stop removes the hook
// and reports whether f ran.
func OnRejoinWindow[T any](k Case, f func()) (stop func() bool) {
	rc := k.k.(*recvCase[T])
	seg, i := rc.last.Value(), int(rc.lastIdx&segMask)
	base := seg.counts.Load() & pointerMask
	var ran atomic.Bool
	sched.SetHook(func() {
		if seg.counts.Load()&pointerMask == base+pointerOne && seg.cell(i).state.Load() == stCancelledRecv && ran.CompareAndSwap(false, true) {
			f()
		}
	})
	return func() bool {
		sched.SetHook(nil)
		return ran.Load()
	}
}

// OnReclaimWindow makes the next retire on c call f once, at its
// perturbation point between its scan of a segment's cells and its look at
// the segment's references, in builds with the tag chans_perturb. stop
// removes the hook and reports whether f ran.
func OnReclaimWindow[T any](c *Chan[T], f func()) (stop func() bool) {
	var ran atomic.Bool
	sched.SetHook(func() {
		if c.reclaiming.Load() && ran.CompareAndSwap(false, true) {
			f()
		}
	})
	return func() bool {
		sched.SetHook(nil)
		return ran.Load()
	}
}

// Reclaim retires what segments of c it can, as a grow or a receive that
// moves a root on does.
func Reclaim[T any](c *Chan[T]) { c.reclaim() }

// SkipSends takes send tickets until S is to, doing nothing with their
// cells, and moves the send root to the segment of ticket to-1: what sends
// that found their cells given up and went on leave behind.
func SkipSends[T any](c *Chan[T], to uint64) {
	for c.s.Load()&counterMask < to {
		c.s.Add(1)
	}
	if c.cellSeg(&c.sendSeg, c.sendSeg.Load(), to-1) == nil {
		panic("SkipSends: no segment for the last ticket")
	}
}

// GivenUpSegmentAlive reports, each time it is called, whether the segment
// of the cell that the receive case k (on a Chan[T]) last gave up is still
// in memory.
func GivenUpSegmentAlive[T any](k Case) func() bool {
	wp := k.k.(*recvCase[T]).last
	return func() bool { return wp.Value() != nil }
}
