package chans

import (
	"sync"
	"sync/atomic"
)

// The spare list keeps segments for grow: ones allocated by a grow but not
// published, because another goroutine linked its successor first (seed 002,
// Appendix A; when many goroutines reach the end of the list together, all
// but one of their allocations would otherwise be garbage at once), and ones
// retired for reuse (segment.go, "Reuse") that no grow took at once, or
// whose publishing lost that race.
//
// What a lagging goroutine can do with a spare segment: a new segment that
// lost the race was never stored where another goroutine could load it (not
// in a next or prev field, a root, or a cell), and the goroutine that put it
// here drops its own pointer right after. A retired one may still be held
// from its last life by a walker, which reads retiredID in its id (grow
// stores it on a segment that loses the race in a channel that reuses) and
// looks no further in it, or by a goroutine about to hold it, whose hold
// fails on that id. A segment leaves the list through get, which takes it
// out of its slot with one CompareAndSwap, so two goroutines never get the
// same segment.
//
// The list is a few slots rather than a Treiber stack: a stack's pop is open to
// ABA (a node popped and pushed back between another pop's load and its
// CompareAndSwap hands one segment out twice), while a slot is emptied by the
// one CompareAndSwap that takes the segment it holds.
//
// Behind the slots, a sync.Pool of the channel's own takes the spares that
// find every slot taken. Retirement goes in list order, so a goroutine that
// stops between its ticket and the end of its step (preempted, or a parked
// receiver not yet running after its wake-up) holds back every segment
// after its own; once it moves on they retire together, more than the slots
// hold, while grows went on allocating. Measured with two producers and two
// consumers on a 1024-slot channel at GOMAXPROCS 2 (no work): 1110 of 3124
// retired segments found the four slots full and were dropped, and 1120
// segments were allocated. The pool keeps them for the next stall; the
// collector empties it (a pool's objects survive one collection), so memory
// still goes back after a burst. The pool is the channel's own: a segment
// never moves to another channel, where a lagging walker of this one could
// mistake one of its ids for one of ours.
const spareSlots = 4

type spareList[T any] struct {
	slots    [spareSlots]atomic.Pointer[segment[T]]
	overflow sync.Pool // of *segment[T]
}

// get returns a spare segment, or nil if there is none.
func (l *spareList[T]) get() *segment[T] {
	for i := range l.slots {
		if s := l.slots[i].Load(); s != nil && l.slots[i].CompareAndSwap(s, nil) {
			return s
		}
	}
	s, _ := l.overflow.Get().(*segment[T])
	return s
}

// put offers an unpublished segment for reuse: to a slot, or when every
// slot is taken to the overflow pool.
func (l *spareList[T]) put(s *segment[T]) {
	for i := range l.slots {
		if l.slots[i].Load() == nil && l.slots[i].CompareAndSwap(nil, s) {
			return
		}
	}
	l.overflow.Put(s)
}
