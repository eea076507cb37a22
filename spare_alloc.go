package chans

import (
	"sync"
	"sync/atomic"
	"weak"
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
// Behind the slots, an overflow stack takes the spares that find every
// slot taken. Retirement goes in list order, so a goroutine that stops
// between its ticket and the end of its step (preempted, or a parked
// receiver not yet running after its wake-up) holds back every segment
// after its own; once it moves on they retire together, more than the slots
// hold, while grows went on allocating. Measured with two producers and two
// consumers on a 1024-slot channel at GOMAXPROCS 2 (no work): 1110 of 3124
// retired segments found the four slots full and were dropped, and 1120
// segments were allocated. The stack keeps them for the next stall. The
// channel holds it only through a weak pointer, so the collector frees it,
// and the segments in it, at its next cycle: memory still goes back after
// a burst, and the stack keeps nothing else alive (a sync.Pool, tried
// first, is registered with the runtime on its first Put, which kept an
// abandoned channel and its buffered values alive for one more
// collection). A mutex guards the stack: it is used once per segment, and
// only while the slots are full or empty. The stack is the channel's own: a
// segment never moves to another channel, where a lagging walker of this
// one could mistake one of its ids for one of ours.
const spareSlots = 4

type spareList[T any] struct {
	slots [spareSlots]atomic.Pointer[segment[T]]
	more  atomic.Bool // the overflow stack may hold segments
	mu    sync.Mutex  // guards overflow and the stack it names
	// overflow names the stack of spares that found the slots taken; nil
	// once the collector has freed it.
	overflow weak.Pointer[spareStack[T]]
}

type spareStack[T any] struct {
	segs []*segment[T]
}

// get returns a spare segment, or nil if there is none.
func (l *spareList[T]) get() *segment[T] {
	for i := range l.slots {
		if s := l.slots[i].Load(); s != nil && l.slots[i].CompareAndSwap(s, nil) {
			return s
		}
	}
	if !l.more.Load() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.overflow.Value()
	if st == nil || len(st.segs) == 0 {
		l.more.Store(false)
		return nil
	}
	n := len(st.segs) - 1
	s := st.segs[n]
	st.segs[n] = nil
	st.segs = st.segs[:n]
	if n == 0 {
		l.more.Store(false)
	}
	return s
}

// put offers an unpublished segment for reuse: to a slot, or when every
// slot is taken to the overflow stack.
func (l *spareList[T]) put(s *segment[T]) {
	for i := range l.slots {
		if l.slots[i].Load() == nil && l.slots[i].CompareAndSwap(nil, s) {
			return
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.overflow.Value()
	if st == nil {
		st = &spareStack[T]{}
		l.overflow = weak.Make(st)
	}
	st.segs = append(st.segs, s)
	l.more.Store(true)
}
