package chans

import "sync/atomic"

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
const spareSlots = 4

type spareList[T any] struct {
	slots [spareSlots]atomic.Pointer[segment[T]]
}

// get returns a spare segment, or nil if there is none.
func (l *spareList[T]) get() *segment[T] {
	for i := range l.slots {
		if s := l.slots[i].Load(); s != nil && l.slots[i].CompareAndSwap(s, nil) {
			return s
		}
	}
	return nil
}

// put offers an unpublished segment for reuse; when every slot is taken the
// segment is left to the garbage collector, which bounds the spares.
func (l *spareList[T]) put(s *segment[T]) {
	for i := range l.slots {
		if l.slots[i].Load() == nil && l.slots[i].CompareAndSwap(nil, s) {
			return
		}
	}
}
