package chans

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/scalable-go/chans/internal/sched"
)

// ===== Unbounded rings =====
//
// An unbounded channel made while GOMAXPROCS is at most
// ringMaxProcsUnbounded (2) keeps its values in a list of stores
// (ringStore), each a ring of slots with marks as in ring.go, serving a
// range of positions of one stream: T and H count positions over the whole
// list, as they do for a bounded ring. The last
// store serves every position from its start on; while its slots last it is
// used lap after lap, and a queue that stays shorter than it allocates
// nothing. A send that finds the last store full links a new one, twice as
// large up to ringListMax slots, which serves the positions from the
// send's own on; the old store serves the positions before. Once
// receivers are past them, a store of ringListMax slots goes to a pool
// (sync.Pool) from which later growths take it, so a queue that keeps
// growing and draining allocates nothing in steady state; the garbage
// collector empties the pool, and reclaims smaller stores at once. So once
// a burst is received and the collector has run twice, the channel keeps
// its last store and at most one spare (below), each of at most
// ringListMax slots.
//
// Growth: a send that finds the last store st full at T = t (slot t shows
// a mark of an earlier lap and t - H ≥ st.n, as for a bounded ring) claims
// position t for its value with a compare-and-swap T: t → t+1 that also
// sets growBit, which holds every other claim of T off. It then sets
// nst.start = t for the new store nst, writes its value into nst's slot 0
// and publishes it, links st.next = nst, makes nst the list's send store,
// and clears growBit. The send takes effect at that compare-and-swap. A
// send that loads T with growBit set waits, yielding, for the grower, which
// is a few instructions from clearing it; T never goes back to a value it
// had, so a send that loaded T before the growth fails its claim. Receives
// do not look at growBit: a receive of t waits for st.next (below), and
// once it is linked receives may take t and go on while growBit is still
// set, so every reader of T that counts positions masks growBit out.
//
// Which store serves a position: every claim of a position goes through a
// compare-and-swap of the value of T (H) loaded before it, and every store
// is checked after that load:
//   - a send loads the send store st, then T = t without growBit, then
//     st.next: nil there means st was the last store when T was t (a
//     growth links st.next before it clears growBit, and moves T on), so
//     position t is st's if T is still t at the claim;
//   - a receive loads the receive store st (checking it against
//     recvStart, below), then H = h, then st.next: if
//     it is set and h ≥ st.next.start, st is done with (every position it
//     serves has been claimed by a receive) and the receive moves the list's
//     receive store on. Else h < st.next.start or st.next was nil at that
//     load; H passes st's end only after a receive claims the first
//     position of the next store, which it reaches through st.next, so h is
//     at most the end, and position h is st's (h = the end shows as not
//     published: no send claimed it in st, and T > h then, so the receive
//     looks again until st.next is set).
// A store's marks count laps from its start, so the byte argument of
// ring.go holds in each store as it does in a bounded ring.
//
// Reusing stores: a goroutine may hold a store from its last use for as
// long as the scheduler likes, while the store is left behind, reused
// from a new start, left behind again. Every field a reuse writes (marks,
// next, start) is atomic, and three rules keep what such a goroutine does
// harmless:
//   - A store is reused only by a grower, once every slot shows free
//     (drained: no receive stands between its claim and its step). The
//     grower clears the marks first, while the store still has its next
//     (so no send takes it for the last store) and a start behind
//     recvStart (so no receive claims in it), and sets next to nil and
//     the new start only after its claim of T, while it holds growBit.
//     A send claims a
//     position with a compare-and-swap of a T loaded without growBit, so
//     no send that looked at the store before the reuse claims a position
//     in it before it is linked; after, T has moved past every position
//     such a send loaded, and a send that loads T after the reuse reads
//     the store's new start, which the reuse stored before the grower
//     cleared growBit.
//   - The receive store moves on by a compare-and-swap of recvStart, the
//     start of the receive store, and only then is recv stored: starts
//     only grow, so a receive that found a store done with cannot move the
//     list on from it once it has been left behind, even when the same
//     store has been reused and become the receive store again (a
//     compare-and-swap of the recv pointer would succeed there, and move
//     the list back to the store that followed it in its last use).
//     Receives take a store only while its start equals recvStart.
//   - A receive loads recvStart again after its marks, and claims H only
//     if it has not changed: recvStart only grows, so the store was the
//     receive store from the first load to the second, never left behind
//     or reused, and its next was its own; the argument above holds as
//     without reuse. Checking that the store's start is unchanged would
//     not do: a store left behind but not reused (a receive is under way
//     in it, so it is not drained) keeps its start and its old next, and
//     that next may have been reused from a start past H, so that
//     h ≥ next.start fails and the receive reads a slot of the old store
//     at a lap that may show published modulo 256. And read with its old
//     start, a reused store's mark can show published for the position H
//     points at: slot 1 at lap 128 and the first lap's slot 1 have the
//     same byte.
//   - Between a move's compare-and-swap of recvStart and its store of
//     recv, receives find recv's start behind recvStart and wait for the
//     store, yielding, as sends wait for a growth.
//
// Linearization points, as in ring.go: a send takes effect at its claim
// of T (a growth's compare-and-swap is one), a receive at its claim of H,
// Close at its OR of the closed bit into T; a growth under way when Close
// comes keeps that bit as it clears growBit, and its send, which took
// effect before, is received.
//
// Invariants (quiescent): the receive store serves H, or H is its end (the
// next store's start), and recvStart is its start; the send store is the
// last; each store is in the list once; for each store, the
// positions from max(H, start) to min(T, end) show published, the others
// free for the next position the slot serves.

// growBit is set in T while a send links a new store to an unbounded ring.
const growBit = 1 << 62

// ringPosMask takes the position out of a ring's T.
const ringPosMask = growBit - 1

// ringList is the list of stores of an unbounded ring.
type ringList[T any] struct {
	send atomic.Pointer[ringStore[T]] // the last store
	recv atomic.Pointer[ringStore[T]] // the store of H, or one that ends at H
	// recvStart is the start of the receive store. A receive moves the
	// list on with a compare-and-swap of recvStart, then stores recv:
	// starts only grow, where a store's address comes back once the store
	// is reused, so no receive that looked at the list before can move it
	// on again, or back.
	recvStart atomic.Uint64
	// spare is a store made for a growth whose claim failed: never
	// published, it serves the next growth of its size.
	spare atomic.Pointer[ringStore[T]]
	max   uint64 // the size at which stores stop doubling
	// used holds stores of max slots that receives have left behind, for
	// growths to reuse; the garbage collector empties it, so a burst's
	// memory goes once the burst is over.
	used sync.Pool
}

func newRingList[T any]() *ringList[T] {
	l := &ringList[T]{max: ringListMax(unsafe.Sizeof(*new(T)))}
	st := newRingStore[T](ringListFirst)
	l.send.Store(st)
	l.recv.Store(st)
	return l
}

// ringListMax is the largest store for values of the given size: 1024
// slots, fewer where they would take more than 32 KiB, never fewer than
// ringListFirst.
func ringListMax(size uintptr) uint64 {
	m := uint64(ringListCap)
	for m > ringListFirst && uintptr(m)*size > 32<<10 {
		m /= 2
	}
	return m
}

// grown returns a store to follow st: from the spare slot if it has the
// size, else one that receives have left behind (used reports it: the
// grower resets it once its claim holds), else a new one.
func (l *ringList[T]) grown(st *ringStore[T]) (nst *ringStore[T], used bool) {
	n := min(2*st.n, l.max)
	if s := l.spare.Swap(nil); s != nil && s.n == n {
		return s, false
	}
	if n == l.max {
		if s, _ := l.used.Get().(*ringStore[T]); s != nil && s.drained() {
			s.clearMarks()
			return s, true
		}
		// A receive that claimed a position in it has not freed its slot
		// yet (it stands between its claim and its step): leave the store
		// to the garbage collector.
	}
	return newRingStore[T](int(n)), false
}

// drained reports whether every slot of st shows free, so that no
// receive of a position it served is still under way: each receive frees
// its slot after taking the value.
func (st *ringStore[T]) drained() bool {
	const odd = 0x0101010101010101 // bit 0 of each mark: published
	for w := range st.marks {
		if st.marks[w].Load()&odd != 0 {
			return false
		}
	}
	return true
}

// clearMarks makes every slot of st, a drained store that receives have
// left behind, free for lap 0, before its grower's claim of T: st still
// has its next, so no send takes it for the last store, and its start is
// behind recvStart, so no receive claims a position in it (see "Reusing
// stores"). Done here, the stores (and the transfers of the marks' cache
// lines from the core that freed them) keep out of the time other sends
// wait on growBit.
func (st *ringStore[T]) clearMarks() {
	for w := range st.marks {
		st.marks[w].Store(0)
	}
}

// reuse makes st, a store from the pool whose marks are clear, serve the
// positions from start on, as a new store would. Its grower holds growBit,
// so no send claims a position until it is linked; receives that still
// hold st from its last use act on what they read only if recvStart is the
// same after their reads, so the order of the stores here does not matter.
func (st *ringStore[T]) reuse(start uint64) {
	st.next.Store(nil)
	st.start.Store(start)
}

// leave moves the list's receive store on from st, which starts at s, to
// nx, once H has reached nx's start (so every position st served has been
// claimed by a receive), unless another receive has moved it on already;
// a store of max slots is then kept for a later growth.
func (l *ringList[T]) leave(st *ringStore[T], s uint64, nx *ringStore[T]) {
	sched.Point() // st may be left behind, reused, and be the receive store again
	if !l.recvStart.CompareAndSwap(s, nx.start.Load()) {
		return
	}
	sched.Point() // moved on, recv not yet: receives wait
	l.recv.Store(nx)
	if st.n == l.max {
		l.used.Put(st)
	}
}

// sendAt loads the list's send store st and then T = t, and returns them
// once st.next, loaded after T, is nil: st was the last store when T was
// t, so position t is st's if T is still t at a claim (unless t carries
// growBit or the closed bit, which the caller looks at first).
func (l *ringList[T]) sendAt(tail *atomic.Uint64) (*ringStore[T], uint64) {
	for {
		st := l.send.Load()
		sched.Point() // a growth may link a store after st
		t := tail.Load()
		sched.Point() // T may move on, a growth link another store
		if st.next.Load() == nil {
			return st, t
		}
	}
}

// trySendUnbounded claims the next position for v and publishes v there,
// linking a new store when the last is full, or reports closed. The verdict
// holds at its last load of T.
func (rb *ringBuf[T]) trySendUnbounded(v T) ringRes {
	for {
		st, t := rb.unbounded.sendAt(rb.tail)
		if t&closedBit != 0 {
			return ringClosed
		}
		if t&growBit != 0 {
			runtime.Gosched() // a send is linking the next store
			continue
		}
		i, free := st.slot(t - st.start.Load())
		sched.Point() // T may move on: a stale mark is read
		m := st.mark(i)
		sched.Point()
		switch d := int8(m - free); {
		case d == 0: // free for t
			if rb.tail.CompareAndSwap(t, t+1) { // the send takes effect
				sched.Point() // claimed, not published: partners wait
				st.vals[i] = v
				st.publish(i)
				return ringOK
			}
		case d < 0:
			// The slot still serves position t - st.n, which is st's.
			// As for a bounded ring: full at the load of T if t - H ≥
			// st.n, with H loaded after it and at most t.
			h := rb.head.Load()
			switch {
			case h > t:
			case t-h >= st.n:
				if rb.grow(st, t, v) {
					return ringOK
				}
			default:
				runtime.Gosched() // the receive of t - st.n is freeing the slot
			}
		}
		// d > 0: position t was claimed and published; T moved on.
	}
}

// grow claims position t for v in a new store that follows st, if T is
// still t, and links it; it reports whether it did.
func (rb *ringBuf[T]) grow(st *ringStore[T], t uint64, v T) bool {
	l := rb.unbounded
	nst, used := l.grown(st) // before the claim: others wait while growBit is set
	sched.Point()            // a store in hand, not reset: another send may claim t
	if !rb.tail.CompareAndSwap(t, (t+1)|growBit) {
		if used {
			l.used.Put(nst) // not reset: receives may hold it still
		} else {
			l.spare.Store(nst) // never published: nobody else holds it
		}
		return false
	}
	// The send takes effect at that claim. Sends wait until growBit is
	// cleared; a receive of t waits until st.next is linked.
	sched.Point()
	if used {
		nst.reuse(t)
	} else {
		nst.start.Store(t)
	}
	nst.vals[0] = v
	nst.publish(0) // published for t: lap 0 of nst
	st.next.Store(nst)
	sched.Point()
	l.send.Store(nst)
	sched.Point()
	rb.tail.And(^uint64(growBit)) // Close's bit may have come meanwhile: keep it
	return true
}

// tryRecvUnbounded claims the next position that holds a value and takes
// it, or reports empty, or closed and drained; the verdicts hold at its
// last load of T.
func (rb *ringBuf[T]) tryRecvUnbounded() (T, ringRes) {
	l := rb.unbounded
	var zero T
	for {
		// The receive's store, as for a run (recvRunStore): inline here,
		// where a call (recvAt, tried) made the unbounded P/P row 2.7%
		// slower at GOMAXPROCS 1 and 6.9% at 2.
		rs := l.recvStart.Load()
		st := l.recv.Load()
		s := st.start.Load()
		sched.Point() // receives may take st's last values, a growth link its next
		if s != rs {
			runtime.Gosched() // a receive is moving the list on
			continue
		}
		h := rb.head.Load()
		sched.Point() // H may move on, a growth link another store
		if nx := st.next.Load(); nx != nil && h >= nx.start.Load() {
			l.leave(st, s, nx) // st is done with
			continue
		}
		i, free := st.slot(h - s)
		sched.Point() // H may move on: a stale mark is read
		m := st.mark(i)
		sched.Point() // st may be left behind, even reused
		if l.recvStart.Load() != s {
			continue // left behind: m may belong to another use of st
		}
		switch d := int8(m - free - 1); {
		case d == 0: // published for h
			if rb.head.CompareAndSwap(h, h+1) { // the receive takes effect
				sched.Point() // claimed, not freed: senders of the next lap wait
				v := st.vals[i]
				st.vals[i] = zero
				st.step(i, m) // free for the send of position h + st.n
				return v, ringOK
			}
		case d < 0:
			// Position h is not published in st. If no send has claimed
			// it, T ≤ h at the load of T: empty there (and drained, if
			// closed). Else its send is publishing it, or it is the next
			// store's first and the growth is linking it.
			tw := rb.tail.Load()
			if tw&ringPosMask <= h {
				if tw&closedBit != 0 {
					return zero, ringClosed
				}
				return zero, ringEmpty
			}
			runtime.Gosched()
		}
		// d > 0: position h was received already; H moved on.
	}
}

// sendRunUnbounded is sendRun for an unbounded ring: the free slots of the
// last store from T on, at most len(vs); 0 where that store is full (the
// caller's single send then grows it), while a growth is under way, or
// closed.
func (rb *ringBuf[T]) sendRunUnbounded(vs []T) int {
	for {
		st, t := rb.unbounded.sendAt(rb.tail)
		if t&(closedBit|growBit) != 0 {
			return 0
		}
		// T may move on here: stale marks are read.
		p := t - st.start.Load()
		k := st.runLen(p, min(uint64(len(vs)), st.n), 0)
		if k == 0 {
			return 0
		}
		sched.Point()
		if !rb.tail.CompareAndSwap(t, t+k) { // the run takes effect
			continue
		}
		sched.Point()
		st.putRun(p, vs[:k])
		rb.afterSendRun(k)
		return int(k)
	}
}

// recvRunUnbounded is recvRun for an unbounded ring: runs of published
// positions from H on, at most len(dst) in all, each claimed in one store
// (recvRunStore), until a store shows none.
func (rb *ringBuf[T]) recvRunUnbounded(dst []T) int {
	n := 0
	for n < len(dst) {
		k := rb.recvRunStore(dst[n:])
		if k == 0 {
			break
		}
		n += k
	}
	return n
}

// recvRunStore claims the published positions from H on in the receive
// store, at most len(dst), with one compare-and-swap on H; a run ends at
// its store's end, since no slot of the store shows the next position
// published.
func (rb *ringBuf[T]) recvRunStore(dst []T) int {
	l := rb.unbounded
	for {
		rs := l.recvStart.Load()
		st := l.recv.Load()
		s := st.start.Load()
		sched.Point() // receives may take st's last values, a growth link its next
		if s != rs {
			runtime.Gosched() // a receive is moving the list on
			continue
		}
		h := rb.head.Load()
		sched.Point()
		if nx := st.next.Load(); nx != nil && h >= nx.start.Load() {
			l.leave(st, s, nx) // st is done with
			continue
		}
		// H may move on here: stale marks are read.
		p := h - s
		// Published slots; st may be left behind, even reused, meanwhile.
		k := st.runLen(p, min(uint64(len(dst)), st.n), 1)
		sched.Point()
		if l.recvStart.Load() != s {
			continue // left behind: the marks may belong to another use of st
		}
		if k == 0 {
			return 0
		}
		if !rb.head.CompareAndSwap(h, h+k) { // the run takes effect
			continue
		}
		sched.Point()
		st.takeRun(p, dst[:k])
		return int(k)
	}
}
