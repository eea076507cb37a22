package chans

import (
	"math/bits"
	"runtime"
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
//     been unlinked: then they grow by more. A segment's id is fixed for one
//     life: set when it is published (a new segment's just before, a reused
//     one's just after), retiredID from its retirement on (see "Reuse"
//     below); no two lives share an id. The garbage collector reclaims the
//     segments that are not reused.
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
	notPoison(st)
	if st == nil && nilOK {
		return
	}
	if p, base := uintptr(unsafe.Pointer(st)), uintptr(unsafe.Pointer(&markers[0])); p < base || p >= base+unsafe.Sizeof(markers) {
		panic("chans: a registration written as a marker")
	}
}

// Layout of segment.counts.
const (
	cancelledRecvOne = 1 << 0            // cells cancelled by receivers: bits 0-15
	cancelledSendOne = 1 << 16           // cells cancelled by senders: bits 16-31
	pointerOne       = 1 << 32           // references (roots, and holds: see hold): bits 32-62
	pointerMask      = (1<<31 - 1) << 32 // all of them
	retiredBit       = 1 << 63           // retired (reclaim): no reference can be taken any more
)

// retiredID is the id of a segment from its retirement until a reuse has
// published it again (see reclaim): past every ticket, so that a walker
// reading it looks no further in it.
const retiredID = ^uint64(0)

type segment[T any] struct {
	// The header's words that others only read, on a line of their own:
	// every operation loads id (cellSeg), and expansions load next. When
	// they shared a line with counts and sendRegs, which holds, root moves
	// and send registrations write, and with the first cells, producers and
	// consumers at GOMAXPROCS 2, on far cores of the 2-core VM, took 1.31x
	// native's time per message on 64 slots, against 1.07x apart (faster in
	// 11 of 12 paired rounds), and 0.90x against 0.73x on 1024 slots; 64
	// slots with work between operations about 4% slower; on near cores no
	// difference (bench/results/holes-zen5-2core-1e8d81e).

	// id is the index of the segment in the infinite array, for one life
	// of the segment: retiredID from its retirement (reclaim) until grow has
	// published it again; a life's id is never any other life's.
	id   atomic.Uint64
	next atomic.Pointer[segment[T]]
	prev atomic.Pointer[segment[T]]
	// mixed is true where cells cancelled by senders and by receivers both
	// count towards removal (rendezvous and unbounded channels). Buffered
	// channels count only cells cancelled by receivers: buffer expansion may
	// still need to look at a cell cancelled by a sender (it must then expand
	// again), and a removed segment gives it nothing to look at; when it
	// finds its segment removed it knows every cell there was a cancelled
	// receiver, for which expansion is complete.
	mixed bool
	// reuseOff is the channel's flag that ends segment reuse (remove).
	reuseOff *atomic.Bool
	_        [cacheLine - 40]byte

	// counts packs the cancelled-cell counts and the root references so that
	// the decision to remove is taken on one word.
	counts atomic.Uint64
	// sendRegs counts the sends that have registered in this life of the
	// segment in a buffered channel (they found no room), counted before
	// each registration; an implicit expansion whose cell lies here looks at
	// that cell only if it is not 0 (expandImplicit).
	sendRegs atomic.Uint32
	_        [cacheLine - 12]byte

	cells [segSize]cell[T]
}

func (c *Chan[T]) newSegment(id uint64, prev *segment[T], pointers uint64) *segment[T] {
	s := &segment[T]{mixed: c.mixed(), reuseOff: &c.reuseOff}
	s.id.Store(id)
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
	return s.full(n) && n&pointerMask == 0 && !s.isTail()
}

// cancelled records that one more cell of s was cancelled, by a sender or by a
// receiver, and removes s when that made it removable. A segment that was
// retired meanwhile (the count of a party that gave its cell up comes after
// the cell's transition, and the cursor may pass the segment in between)
// is behind the cursor already: nothing to unlink.
func (s *segment[T]) cancelled(bySender bool) {
	d := uint64(cancelledRecvOne)
	if bySender {
		d = cancelledSendOne
	}
	if n := s.counts.Add(d); s.full(n) && n&(pointerMask|retiredBit) == 0 {
		s.remove()
	}
}

// tryRef adds a reference unless s is already removed or retired.
func (s *segment[T]) tryRef() bool {
	for {
		n := s.counts.Load()
		if n&retiredBit != 0 || s.full(n) && n&pointerMask == 0 && !s.isTail() {
			return false
		}
		if s.counts.CompareAndSwap(n, n+pointerOne) {
			return true
		}
	}
}

// unref drops a reference and reports whether that made s removable.
func (s *segment[T]) unref() bool {
	n := s.counts.Add(^uint64(pointerOne - 1)) // - pointerOne
	return s.full(n) && n&(pointerMask|retiredBit) == 0 && !s.isTail()
}

// hold keeps s in the life whose id is id, for a goroutine that is not a
// party of the cells it is about to act on (Close's walk, Len's walk, a
// grow at the tail, cleanPrev): it takes a reference, which keeps reclaim
// from retiring s, and then checks that s is still in that life. It fails
// if s was removed or retired, or has been reused since id was read, and
// for id = retiredID: s was read after a grow published it and before the
// grow stored its id, and has no life to hold yet (a hold that took it
// would leave the walker with retiredID for an id, past every ticket). A
// hold is dropped with release.
func (s *segment[T]) hold(id uint64) bool {
	if id == retiredID || !s.tryRef() {
		return false
	}
	if s.id.Load() == id {
		return true
	}
	s.release() // taken in another life
	return false
}

// release drops a hold (or a root's reference), removing s if that made it
// removable.
func (s *segment[T]) release() {
	if s.unref() {
		s.remove()
	}
}

// remove unlinks s from the list: its first live predecessor is pointed at its
// first live successor and that successor's prev at the predecessor. Several
// removals may run at once on neighbours; each one re-checks the neighbours it
// linked and goes round again if one of them was removed meanwhile, so that no
// live segment stays pointed at a removed one. (This is the removal procedure
// of seed 000, Appendix B.)
//
// A channel's first removal ends segment reuse on it for good (reuseOff):
// the cursor may then go round segments that were unlinked, and a segment
// after one of them must not come back in a new life while a walker inside
// it may still follow its next pointer (see reclaim). The flag is set
// before any link is read.
func (s *segment[T]) remove() {
	if !s.reuseOff.Load() {
		s.reuseOff.Store(true)
	}
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
// as needed, and returns it with its id; if that segment was given up (every
// cell in it cancelled) it returns a later segment, whose id is larger.
//
// start was read from a root before the caller took its ticket, so in its
// life it is not past id; but it may have been retired and reused since
// (reclaim), and a segment reached from it may be retired while the walk
// is in it. So the walk checks each hop hand over hand (the successor's id
// is read before the predecessor's id is read again: if that is unchanged,
// the predecessor was still in its life, and nothing after it on the
// cursor's path was retired), and starts again from the cursor, which is
// never past a segment holding a cell still to be served, when its start
// shows an id past its ticket or a hop fails. A larger id means the
// segment was given up only when a checked hop or the cursor shows it.
func (c *Chan[T]) findSeg(start *segment[T], id uint64) (*segment[T], uint64) {
	cur := start
	cid := cur.id.Load()
	checked := false
	for {
		if cid == retiredID || cid > id && !checked {
			if cid == retiredID {
				// Retired under the walk, or published by a grow that has
				// not stored its id yet: let that grow run.
				runtime.Gosched()
			}
			cur, cid = c.cursorSeg()
			checked = true
			continue
		}
		if cid > id || cid == id && !cur.removed() {
			return cur, cid
		}
		next := cur.next.Load()
		if next == nil {
			if next = c.grow(cur, cid); next == nil {
				cid = retiredID // cur was retired under the walk
				continue
			}
		}
		if nid, ok := hop(cur, cid, next); ok {
			cur, cid, checked = next, nid, true
		} else {
			cid = retiredID // the next pointer may be of a later life
		}
	}
}

// hop is a walk's step from cur, whose id the walker read as cid, to its
// successor next: it reads next's id, then cur's id again, and reports
// whether cur was still in that life (ok). If it was, nothing after cur
// on the cursor's path had been retired, and nid is next's id in the life
// that next pointer led to; if not, the walk starts again from the cursor.
func hop[T any](cur *segment[T], cid uint64, next *segment[T]) (nid uint64, ok bool) {
	nid = next.id.Load()
	sched.Point() // cur may be retired here
	return nid, cur.id.Load() == cid
}

// cursorSeg returns the segment the cursor names and its id, waiting
// (yielding) while that id is retiredID: the cursor has just moved to a
// segment that a grow has published but not yet given its id.
//
// The cursor is loaded again after the id, and then the id: a segment read
// from the cursor may be retired, reused and published again, with a larger
// id, before its id is read, while the cursor has gone on; taking that id
// for the cursor's would make a walker believe every segment before it was
// given up. Equal ids at the two reads put x in one life from the first to
// the second (no two lives share an id), and the cursor named x in between.
func (c *Chan[T]) cursorSeg() (*segment[T], uint64) {
	for {
		x := c.cursor.Load()
		xid := x.id.Load()
		sched.Point() // x may be retired and reused here
		if xid != retiredID && c.cursor.Load() == x && x.id.Load() == xid {
			return x, xid
		}
		runtime.Gosched()
	}
}

// grow links a successor after the tail cur, whose id the caller read as cid,
// and returns cur's successor, ours or the one a concurrent grow linked
// first, or nil if cur is no longer in that life. The new segment is a
// retired one reclaim hands over, or one from the spare list (seed 002,
// Appendix A), or a new one; a segment that lost the race goes to the spare
// list.
//
// A segment that some goroutine may still hold from an earlier life (one
// from reclaim or from the spare list) gets its new id only once it is
// published: a walker that read the new id in a segment whose publishing
// compare-and-swap then failed would serve its cell in a segment nobody else
// reaches. Between the two, walkers that reach it read retiredID and wait at
// the cursor. A new segment, which nobody can hold from before, is published
// with its id.
func (c *Chan[T]) grow(cur *segment[T], cid uint64) *segment[T] {
	// Segments are reused: hold cur in the life the caller saw.
	if !cur.hold(cid) {
		// Removed once a successor was linked (the caller's hop check
		// then looks at cur's id again), or retired, or reused.
		return cur.next.Load()
	}
	defer cur.release()
	// early: n may show its id before it is published (nobody can hold
	// it from an earlier life): only a new segment.
	n, early := c.reclaim(), false
	if n == nil {
		n = c.spares.get()
	}
	if n == nil {
		n, early = c.newSegment(cid+1, nil, 0), true
	}
	if early {
		n.id.Store(cid + 1)
	}
	n.prev.Store(cur)
	if cur.next.CompareAndSwap(nil, n) { // nil → n: n is published
		if !early {
			sched.Point() // published, without its id yet
			n.id.Store(cid + 1)
		}
		if cur.removed() {
			// cur was fully cancelled while it was the tail, when it could
			// not be removed; now it can.
			cur.remove()
		}
		return n
	}
	n.prev.Store(nil)
	n.id.Store(retiredID) // so that it shows no id when it is next published
	c.spares.put(n)
	return cur.next.Load()
}

func (c *Chan[T]) mixed() bool { return c.capacity <= 0 }

// moveForward points root at to (whose id is toID) unless it already names a
// segment at least as far. It fails when to was removed or retired before it
// could take its reference, or has been reused since (a root must not name a
// segment that waits on the spare list to be published again: every walk
// that started there would go through the cursor until it was).
func (c *Chan[T]) moveForward(root *atomic.Pointer[segment[T]], to *segment[T], toID uint64) bool {
	for {
		cur := root.Load()
		// cur may be in a later life by now, with a larger id: then the
		// root is left where it is, which only makes later walks longer.
		if cur.id.Load() >= toID {
			return true
		}
		if !to.hold(toID) {
			return false
		}
		if root.CompareAndSwap(cur, to) {
			cur.release()
			c.cleanPrev()
			return true
		}
		to.release()
	}
}

// cleanPrev clears the prev pointer of the oldest root: nothing before it is
// reachable from a root, so nothing needs to find it, and keeping the pointer
// would keep every segment ever used alive. The segment is held while its
// pointer is cleared, since the roots may have left it and reclaim reused it
// after they were read.
//
// The store is skipped when the pointer is already nil, as it is at most
// moves (a published segment's prev, once cleared, never becomes non-nil
// again in that life: grow sets one only before it publishes the segment,
// and remove replaces only one that is not nil): a store takes the header's
// line from the cores that read it.
// Measured at GOMAXPROCS 2, a producer and a consumer moving batches of 64
// through a 1024-slot channel: 6.5% less time per value. Running cleanPrev
// only at one move in eight saved 9% there, but made two producers and two
// consumers 7% slower, for a reason not pinned down; it was not kept.
func (c *Chan[T]) cleanPrev() {
	m := c.sendSeg.Load()
	mid := m.id.Load()
	if r := c.recvSeg.Load(); r.id.Load() < mid {
		m, mid = r, r.id.Load()
	}
	if c.capacity > 0 {
		if b := c.bufSeg.Load(); b.id.Load() < mid {
			m, mid = b, b.id.Load()
		}
	}
	if m.prev.Load() == nil {
		return
	}
	if mid != retiredID && m.hold(mid) {
		m.prev.Store(nil)
		m.release()
	}
}

// findAndMove finds the segment for id starting at start, which the caller
// read from root before taking its ticket, and moves root forward to it. The
// result's id, returned with it, is larger than id if that segment was
// given up.
func (c *Chan[T]) findAndMove(root *atomic.Pointer[segment[T]], start *segment[T], id uint64) (*segment[T], uint64) {
	for {
		s, sid := c.findSeg(start, id)
		if c.moveForward(root, s, sid) {
			if root == &c.recvSeg {
				// Receives move the cursor along too, so that the
				// segments of a burst go once it is received, although no
				// grow follows (see "Reuse").
				if x := c.reclaim(); x != nil {
					c.spares.put(x)
				}
			}
			return s, sid
		}
	}
}

// ===== Reuse =====
//
// A channel reuses the segments that every party is done with, until its
// first removal (remove sets reuseOff).
//
// A buffered channel's expansions act on cells other than their own: the
// receive of ticket r expands cell r + capacity. Before the first hole
// that expansion is implicit, made by that receive, and the receive stores
// consumed in its own cell only after it: so a segment whose cells are all
// consumed has had every expansion of its receives, and every expansion
// into it came from a receive at or before it, whose segment the cursor
// retired first (in list order). While a receive's cell holds the value
// it took (not yet consumed) its expansion needs no hold: the segment of
// r + capacity cannot be retired before r's (expandImplicit, and its copy
// in recvOp). A registration is not enough: others may cancel it. After the first
// hole, expansions are explicit (B): a receive takes an expansion ticket b
// that need not be its own cell's plus the capacity, and may lie before
// it; cell b's sender may have found room below R + capacity, and its
// receiver taken the value, before the expansion comes. So an explicit
// expansion holds b's segment in b's life before it looks at the cell
// (expandAt); a hold fails only on a segment retired or removable, whose
// cells are all final, where the expansion has nothing to do (consumed,
// holeSeen, cancelledRecv). Its walk there checks its hops (findSeg); its
// quick looks (nothingToExpand) read only ids and next pointers; and the
// walk that moves the buffer root along where cell b's sender has no
// ticket yet (advanceBufSeg) moves it only through moveForward, which
// holds its target in the life whose id it read. Values from a later life
// lead those only to a longer walk, or to a root that is further on than
// it need be. Only a receive whose own cell holds the value it took, not
// yet consumed, keeps its segment and the later ones from retiring, and
// skips the hold there (pin); a registration may be cancelled by others
// at any moment, and pins nothing.
//
// Terminal cells: every receive that gets a value writes consumed in its
// cell as its last action on it (after reading elem); a cell given up
// (cancelledRecv, cancelledSend) stays as it is, except that in a buffered
// channel the receiver of a hole still owes a step there (its expansion,
// or the settle of one already made: see recvCell), and marks it holeSeen
// when it has met it. Until then the hole is not final: a receive that
// found its segment retired would go to the cursor and take a new ticket
// without that step, settled would never reach R again, and every full
// verdict after it would wait for ever. A segment all of whose
// cells are consumed has no party left to act on it: each send acts on its
// cell before its receive can take the value, and each receive has written
// its mark. A segment with a given-up cell may still see the late
// compare-and-swap of the partner of that cell, which fails harmlessly as
// long as the segment is never reused.
//
// The cursor names the oldest segment not yet retired; reclaim retires
// segments from it in list order, one retirer at a time. Retirement: every
// cell consumed or given up, no reference (no root names the segment and
// nobody holds it: a compare-and-swap sets retiredBit only where there is
// none, and no reference can be taken after it), and not the tail. Then
// the id becomes retiredID, the successor's prev pointer to it is cleared,
// the cursor moves to the successor, and a segment with every cell consumed
// is cleared and handed to the grow that asked (or, when a receive moved
// the cursor, put on the spare list); any other is left to the collector.
// Grows and receives that move the receive root to a later segment both
// move the cursor: with grows alone, the cursor stays where it was when a
// burst stops, and keeps every segment of the burst after it alive.
//
// A walker sent to the cursor reads the cursor, the segment's id, and the
// cursor and the id again (cursorSeg): the segment it read may have been
// retired and published again, at the tail, in between.
//
// What a goroutine may still do with a retired segment it holds from before:
//   - a party acts only on its own cell, and only until its last action on
//     it, which every retired segment's cells have seen;
//   - a walker (findSeg) reads ids and next pointers and checks every hop;
//   - a goroutine that is not a party (grow at the tail, Close's walk,
//     cleanPrev) holds the segment first, and a hold fails on a retired
//     segment or a later life.
// The cursor goes only from a segment to its successor, retiring the first
// before it moves, so along its path nothing is retired before everything
// ahead of it on that path. Removal unlinks segments, and the cursor may go
// round one without retiring it; a walker inside it would pass the hop
// check on a stale next pointer. That is why the first removal ends reuse:
// segments are still retired after it (the cursor must keep moving, or it
// would keep every later segment alive), but not reused.

// reclaim retires segments from the cursor on while every party is done
// with them, up to reclaimRun of them, and returns the first that can be
// reused, cleared, or nil; further ones that can be go to the spare list.
// Retiring more than one per call lets the cursor catch up after a party
// held it back.
func (c *Chan[T]) reclaim() *segment[T] {
	if !c.reclaiming.CompareAndSwap(false, true) {
		return nil
	}
	defer c.reclaiming.Store(false)
	var got *segment[T]
	for range reclaimRun {
		x, ok := c.retire()
		if !ok {
			break
		}
		if x == nil {
			continue
		}
		if got == nil {
			got = x
		} else {
			c.spares.put(x) // its id is retiredID until a grow publishes it
		}
	}
	return got
}

// reclaimRun bounds the segments one reclaim retires.
const reclaimRun = 4

// retire retires the segment at the cursor if every party is done with it
// (ok), and returns it cleared if it can be reused. The caller holds
// reclaiming.
func (c *Chan[T]) retire() (*segment[T], bool) {
	x := c.cursor.Load()
	if x.next.Load() == nil {
		return nil, false // the tail stays
	}
	// The segment's last ticket is most often the one whose parties are
	// not done yet (the receives of a segment finish roughly in ticket
	// order): look at its cell first, before the whole array. Without this
	// look the scan was 9% of the time of producers and consumers on 1024
	// slots.
	if st := x.cell(segSize - 1).state.Load(); st != stConsumed && st != stCancelledRecv && st != stHoleSeen && st != stCancelledSend {
		return nil, false
	}
	reuse := true
	for i := range x.cells {
		switch x.cells[i].state.Load() {
		case stConsumed:
		case stCancelledRecv, stHoleSeen:
			reuse = false
		case stCancelledSend:
			if c.capacity > 0 {
				// A hole whose receiver has not come: that receive still
				// owes its step here (recvCell), and a receive that found
				// its segment retired would take another ticket without it.
				return nil, false
			}
			reuse = false
		default:
			// A party is not done with its cell yet; a holePaid cell
			// waits for its receiver too (see cancelledSend above).
			return nil, false // a party is not done with its cell yet
		}
	}
	// Every cell final; a select may still take a given-up cell back here
	// (rejoin), which then looks for this reclaim.
	sched.Point()
	n := x.counts.Load()
	if n&(pointerMask|retiredBit) != 0 || !x.counts.CompareAndSwap(n, n|retiredBit) {
		return nil, false // a root names it, or someone holds it
	}
	x.id.Store(retiredID)
	sched.Point() // retired, the cursor not moved yet
	next := x.next.Load()
	next.prev.CompareAndSwap(x, nil)
	c.cursor.Store(next)
	if !reuse || c.reuseOff.Load() {
		return nil, true // left to the collector
	}
	if sched.Enabled {
		poison(x)
		sched.Point() // a party that acted on a cell of x now would read poison
	}
	x.prev.Store(nil)
	x.next.Store(nil)
	x.counts.Store(0)
	x.sendRegs.Store(0)
	clear(x.cells[:])
	return x, true
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

// poison fills the cells of the retired segment x with stPoison, in builds
// with the tag chans_perturb, before reclaim clears them for reuse; a party
// that reads a cell of x in between (notPoison) breaks the rule that no
// party acts on a retired segment, and panics.
func poison[T any](x *segment[T]) {
	for i := range x.cells {
		x.cells[i].state.Store(stPoison)
	}
}

// notPoison panics if st is stPoison, in builds with the tag chans_perturb
// (see poison; in other builds it compiles to nothing). Called on the
// states the cell steps load.
func notPoison(st *waiter) {
	if sched.Enabled && st == stPoison {
		panic("chans: a party acted on a cell of a retired segment")
	}
}
