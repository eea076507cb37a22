package chans

import (
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/scalable-go/chans/internal/sched"
)

// The infinite array of cells is a singly linked list of segments of segSize
// cells; cell i of the channel lives in segment i/segSize, at the place in
// its array that spreadIndex gives index i%segSize (segment.cell).
//
// Invariants (for the segments reachable from the three roots of a Chan):
//   - Ids grow by one along next pointers, except where removed segments have
//     been unlinked: then they grow by more. A segment's id is fixed before it
//     is published and never changes (segments are not reused once
//     published; the garbage collector reclaims them).
//   - The tail (next == nil) is never removed.
//   - A segment is removed when all its cells are cancelled (see full) and no
//     root references it. Walkers that already hold a removed segment may go
//     on through it: its next pointer stays valid.
//   - Every root holds one reference (the pointers field of counts) on the
//     segment it names, so a root never names a removed segment.
//   - Nothing before the oldest root is reachable from a root; its prev
//     pointer is cleared so that old segments do not stay alive through it.
const (
	segSize = 1 << segShift
	segMask = segSize - 1
)

// cacheLine is the padding unit for hot words: 128 bytes covers the adjacent
// line prefetcher of x86-64 and the line size of arm64 server parts.
const cacheLine = 128

type pad [cacheLine - 8]byte

// cell is one slot of the infinite array. state is nil (empty), one of the
// marker states of bounded.go, or a *waiter registered by a parked operation.
// elem is written by the sender before the state transition that publishes
// it and read by the receiver after the transition that hands it over.
type cell[T any] struct {
	state atomic.Pointer[waiter]
	elem  T
}

// casMark and storeMark write a cell's state where the state replaced and
// the state written are both nil or markers, never a registration: the
// transitions between markers (nil|inBuffer → buffered, resuming → next,
// resuming → cancelled, nil → inBuffer, cancelledSend → holePaid). The
// markers are elements of a package-level array, not heap objects, and such
// a write needs no write barrier: the garbage collector does not trace
// pointers that lead outside the heap, and has nothing to shade when the
// pointer replaced is nil or leads outside the heap too. So these writes go
// through the uintptr atomics, which the compiler emits as one instruction,
// instead of atomic.Pointer's, which call into the runtime for the barrier.
// A write that stores or replaces a registration (a *waiter on the heap)
// must go through atomic.Pointer. Builds with the tag chans_perturb check
// both rules at every call (mustBeMark).
func casMark(state *atomic.Pointer[waiter], old, new *waiter) bool {
	if sched.Enabled {
		mustBeMark(old, true)
		mustBeMark(new, false)
	}
	return atomic.CompareAndSwapUintptr((*uintptr)(unsafe.Pointer(state)), uintptr(unsafe.Pointer(old)), uintptr(unsafe.Pointer(new)))
}

// storeMark sets a cell's state to the marker new; the state it replaces
// is a marker (see casMark), such as resuming, which only its claimer
// moves on.
func storeMark(state *atomic.Pointer[waiter], new *waiter) {
	if sched.Enabled {
		mustBeMark(new, false)
		mustBeMark(state.Swap(new), false)
		return
	}
	atomic.StoreUintptr((*uintptr)(unsafe.Pointer(state)), uintptr(unsafe.Pointer(new)))
}

// mustBeMark panics unless st is a marker (or nil, where nilOK): the check
// of casMark and storeMark in builds with the tag chans_perturb.
func mustBeMark(st *waiter, nilOK bool) {
	if st == nil && nilOK {
		return
	}
	if p, base := uintptr(unsafe.Pointer(st)), uintptr(unsafe.Pointer(&markers[0])); p < base || p >= base+unsafe.Sizeof(markers) {
		panic("chans: a registration written as a marker")
	}
}

// Layout of segment.counts.
const (
	cancelledRecvOne = 1 << 0  // cells cancelled by receivers: bits 0-15
	cancelledSendOne = 1 << 16 // cells cancelled by senders: bits 16-31
	pointerOne       = 1 << 32 // root references: bits 32-63
)

type segment[T any] struct {
	id   uint64
	next atomic.Pointer[segment[T]]
	prev atomic.Pointer[segment[T]]
	// counts packs the cancelled-cell counts and the root references so that
	// the decision to remove is taken on one word.
	counts atomic.Uint64
	// mixed is true where cells cancelled by senders and by receivers both
	// count towards removal (rendezvous and unbounded channels). Buffered
	// channels count only cells cancelled by receivers: buffer expansion may
	// still need to look at a cell cancelled by a sender (it must then expand
	// again), and a removed segment gives it nothing to look at; when it
	// finds its segment removed it knows every cell there was a cancelled
	// receiver, for which expansion is complete.
	mixed bool
	cells [segSize]cell[T]
}

func newSegment[T any](id uint64, prev *segment[T], pointers uint64, mixed bool) *segment[T] {
	s := &segment[T]{id: id, mixed: mixed}
	s.prev.Store(prev)
	s.counts.Store(pointers * pointerOne)
	return s
}

// full reports whether counts says that every cell is cancelled.
func (s *segment[T]) full(n uint64) bool {
	r := n & 0xffff
	if !s.mixed {
		return r == segSize
	}
	return r+(n>>16)&0xffff == segSize
}

func (s *segment[T]) isTail() bool { return s.next.Load() == nil }

// removed reports whether s is logically removed: all cells cancelled, no root
// reference, and not the tail.
func (s *segment[T]) removed() bool {
	n := s.counts.Load()
	return s.full(n) && n>>32 == 0 && !s.isTail()
}

// cancelled records that one more cell of s was cancelled, by a sender or by a
// receiver, and removes s when that made it removable.
func (s *segment[T]) cancelled(bySender bool) {
	d := uint64(cancelledRecvOne)
	if bySender {
		d = cancelledSendOne
	}
	if n := s.counts.Add(d); s.full(n) && n>>32 == 0 {
		s.remove()
	}
}

// tryRef adds a root reference unless s is already removed.
func (s *segment[T]) tryRef() bool {
	for {
		n := s.counts.Load()
		if s.full(n) && n>>32 == 0 && !s.isTail() {
			return false
		}
		if s.counts.CompareAndSwap(n, n+pointerOne) {
			return true
		}
	}
}

// unref drops a root reference and reports whether that made s removable.
func (s *segment[T]) unref() bool {
	n := s.counts.Add(^uint64(pointerOne - 1)) // - pointerOne
	return s.full(n) && n>>32 == 0 && !s.isTail()
}

// remove unlinks s from the list: its first live predecessor is pointed at its
// first live successor and that successor's prev at the predecessor. Several
// removals may run at once on neighbours; each one re-checks the neighbours it
// linked and goes round again if one of them was removed meanwhile, so that no
// live segment stays pointed at a removed one. (This is the removal procedure
// of seed 000, Appendix B.)
func (s *segment[T]) remove() {
	if s.isTail() {
		return // the tail is never removed; a later grow re-checks s
	}
	for {
		prev := s.aliveLeft()
		next := s.aliveRight()
		for {
			p := next.prev.Load()
			if p == nil || next.prev.CompareAndSwap(p, prev) {
				break
			}
		}
		if prev != nil {
			prev.next.Store(next)
		}
		if next.removed() {
			continue
		}
		if prev != nil && prev.removed() {
			continue
		}
		return
	}
}

func (s *segment[T]) aliveLeft() *segment[T] {
	p := s.prev.Load()
	for p != nil && p.removed() {
		p = p.prev.Load()
	}
	return p
}

func (s *segment[T]) aliveRight() *segment[T] {
	n := s.next.Load()
	for n.removed() {
		nn := n.next.Load()
		if nn == nil {
			return n
		}
		n = nn
	}
	return n
}

// findSeg walks from start to the segment with the given id, growing the list
// as needed, and returns it; if that segment was removed it returns the first
// live segment after it, whose id is larger. start must not be after id.
func (c *Chan[T]) findSeg(start *segment[T], id uint64) *segment[T] {
	cur := start
	for cur.id < id || cur.removed() {
		next := cur.next.Load()
		if next == nil {
			next = c.grow(cur)
		}
		cur = next
	}
	return cur
}

// grow links a successor after the tail cur and returns cur's successor,
// ours or the one a concurrent grow linked first. The new segment comes from
// the spare list when it has one (seed 002, Appendix A); a segment that lost
// the race is offered back to it.
func (c *Chan[T]) grow(cur *segment[T]) *segment[T] {
	n := c.spares.get()
	if n == nil {
		n = newSegment[T](0, nil, 0, c.mixed())
	}
	n.id = cur.id + 1
	n.prev.Store(cur)
	if cur.next.CompareAndSwap(nil, n) { // nil → n: n is published
		if cur.removed() {
			// cur was fully cancelled while it was the tail, when it could
			// not be removed; now it can.
			cur.remove()
		}
		return n
	}
	n.prev.Store(nil)
	c.spares.put(n)
	return cur.next.Load()
}

func (c *Chan[T]) mixed() bool { return c.capacity <= 0 }

// moveForward points root at to unless it already names a segment at least as
// far. It fails when to was removed before it could take its reference.
func (c *Chan[T]) moveForward(root *atomic.Pointer[segment[T]], to *segment[T]) bool {
	for {
		cur := root.Load()
		if cur.id >= to.id {
			return true
		}
		if !to.tryRef() {
			return false
		}
		if root.CompareAndSwap(cur, to) {
			if cur.unref() {
				cur.remove()
			}
			c.cleanPrev()
			return true
		}
		if to.unref() {
			to.remove()
		}
	}
}

// cleanPrev clears the prev pointer of the oldest root: nothing before it is
// reachable from a root, so nothing needs to find it, and keeping the pointer
// would keep every segment ever used alive.
//
// The store is skipped when the pointer is already nil, as it is at most
// moves (a published segment's prev, once cleared, never becomes non-nil
// again: grow sets one only before it publishes the segment, and remove
// replaces only one that is not nil): a store takes the header's line from
// the cores that read it.
// Measured at GOMAXPROCS 2, a producer and a consumer moving batches of 64
// through a 1024-slot channel: 6.5% less time per value. Running cleanPrev
// only at one move in eight saved 9% there, but made two producers and two
// consumers 7% slower, for a reason not pinned down; it was not kept.
func (c *Chan[T]) cleanPrev() {
	m := c.sendSeg.Load()
	if r := c.recvSeg.Load(); r.id < m.id {
		m = r
	}
	if c.capacity > 0 {
		if b := c.bufSeg.Load(); b.id < m.id {
			m = b
		}
	}
	if m.prev.Load() != nil {
		m.prev.Store(nil)
	}
}

// findAndMove finds the segment for id starting at start, which the caller
// read from root before taking its ticket, and moves root forward to it. The
// result's id is larger than id if that segment was removed.
func (c *Chan[T]) findAndMove(root *atomic.Pointer[segment[T]], start *segment[T], id uint64) *segment[T] {
	for {
		s := c.findSeg(start, id)
		if c.moveForward(root, s) {
			return s
		}
	}
}

// cell returns the cell of index i (a ticket & segMask) in s.
//
// Cells of consecutive tickets do not sit side by side: the index is spread
// over each block of 64 cells (spreadIndex), so that tickets which share a
// 64-byte line are 16 apart for 16-byte cells. Senders with
// consecutive tickets write neighbouring cells at the same moment, and so do
// receivers; side by side, those writes would pull one line back and forth
// between their cores at every message. Measured on 2 cores, 2 producers and
// 2 consumers on a channel of capacity 1024: 30% less time per message
// while a cross-core round trip costs about 360 ns, 10% less while it costs
// about 100 ns (see spreadIndex).
func (s *segment[T]) cell(i int) *cell[T] {
	return &s.cells[spreadIndex(i, unsafe.Sizeof(s.cells[0]))]
}

// spreadIndex is the place in a segment's array of the cell of index i, for
// cells of the given size. The array is read as blocks of 64 cells (fewer
// in a smaller segment), laid out one after the other; a block is read as q
// columns of 64/q rows, q cells filling a 64-byte line, and consecutive
// indexes go down a column. q is the power of two that puts consecutive
// indexes 64 bytes or more apart: 8 for 8-byte cells, 4 up to 31 bytes, 2
// up to 63, 1 (no spreading) from 64. Odd blocks start half-way down their
// first column, so that the last index of a block and the first of the next
// are not side by side either. Within a block, cells that share a line
// are 64/q indexes apart (16 for 16-byte cells), as when a segment was one
// block, and cells a multiple of 64 apart (a producer and a consumer on a
// full channel of capacity 64, 128, ...) are half a block apart or more, so
// that large segments (segsize.go) do not make those two write the same
// lines. The size is a constant in each instantiation, and spreadIndex is
// kept within the inliner's budget so that it folds into a few shifts at
// every cell access (as a call it made a send+receive pair 1.08x-1.2x
// slower, and batches 1.4x slower on one machine;
// bench/results/spread-inline-2core-d62ea6a).
func spreadIndex(i int, size uintptr) int {
	if size >= 64 {
		return i
	}
	// log2 q: 3 for 8 to 15 bytes, 2 for 16 to 31, 1 for 32 to 63 (a cell
	// is at least 8 bytes: 16 on 64-bit platforms, 8 on 32-bit ones).
	k := min(uint(7-bits.Len(uint(size))), spreadShift)
	rows := 1 << (spreadShift - k)
	rot := (i >> spreadShift & 1) * (rows / 2) // odd blocks start half-way down
	j := i & (1<<spreadShift - 1)              // the index within its block
	return i&^(1<<spreadShift-1) | ((j+rot)&(rows-1))<<k | j>>(spreadShift-k)
}

// spreadShift sets the size of spreadIndex's blocks: 1<<spreadShift cells.
const spreadShift = min(segShift, 6)
