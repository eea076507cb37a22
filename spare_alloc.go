package chans

import "sync/atomic"

// The spare list keeps segments that were allocated by grow but never
// published, because another goroutine linked its successor first (seed 002,
// Appendix A). When many goroutines reach the end of the list together, all
// but one of their allocations would otherwise be garbage at once.
//
// Why no lagging goroutine can reach a spare segment: a segment enters the
// list only from grow, after its CompareAndSwap on the tail's next pointer
// failed, so no pointer to it was ever stored where another goroutine could
// load it (not in a next or prev field, a root, or a cell). The goroutine that
// put it there drops its own pointer right after. A segment leaves the list
// through get, which takes it out of its slot with one CompareAndSwap, so two
// goroutines never get the same segment. Published segments are never put on
// the list; the garbage collector reclaims them once unlinked and unreferenced.
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
