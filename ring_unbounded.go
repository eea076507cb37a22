package chans

import (
	"runtime"
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
// send's own on; the old store serves the positions before, and once
// receivers are past them nothing points at it: the garbage collector
// reclaims it. So once a burst is received, the channel keeps its last
// store and at most one spare (below), each of at most ringListMax slots.
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
//   - a receive loads the receive store st, then H = h, then st.next: if
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
// Linearization points, as in ring.go: a send takes effect at its claim
// of T (a growth's compare-and-swap is one), a receive at its claim of H,
// Close at its OR of the closed bit into T; a growth under way when Close
// comes keeps that bit as it clears growBit, and its send, which took
// effect before, is received.
//
// Invariants (quiescent): the receive store serves H, or H is its end (the
// next store's start); the send store is the last; for each store, the
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
	// spare is a store made for a growth whose claim failed: never
	// published, it serves the next growth of its size.
	spare atomic.Pointer[ringStore[T]]
	max   uint64 // the size at which stores stop doubling
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
// size, else a new one.
func (l *ringList[T]) grown(st *ringStore[T]) *ringStore[T] {
	n := min(2*st.n, l.max)
	if s := l.spare.Swap(nil); s != nil && s.n == n {
		return s
	}
	return newRingStore[T](int(n))
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
		i, free := st.slot(t - st.start)
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
	nst := l.grown(st) // before the claim: others wait while growBit is set
	if !rb.tail.CompareAndSwap(t, (t+1)|growBit) {
		l.spare.Store(nst) // never published: nobody else holds it
		return false
	}
	// The send takes effect at that claim. Sends wait until growBit is
	// cleared; a receive of t waits until st.next is linked.
	sched.Point()
	nst.start = t
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
		st := l.recv.Load()
		sched.Point() // receives may take st's last values, a growth link its next
		h := rb.head.Load()
		sched.Point() // H may move on, a growth link another store
		if nx := st.next.Load(); nx != nil && h >= nx.start {
			l.recv.CompareAndSwap(st, nx) // st is done with
			continue
		}
		i, free := st.slot(h - st.start)
		sched.Point() // H may move on: a stale mark is read
		m := st.mark(i)
		sched.Point()
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
		p := t - st.start
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
		st := l.recv.Load()
		sched.Point() // receives may take st's last values, a growth link its next
		h := rb.head.Load()
		sched.Point()
		if nx := st.next.Load(); nx != nil && h >= nx.start {
			l.recv.CompareAndSwap(st, nx) // st is done with
			continue
		}
		// H may move on here: stale marks are read.
		p := h - st.start
		k := st.runLen(p, min(uint64(len(dst)), st.n), 1) // published slots
		if k == 0 {
			return 0
		}
		sched.Point()
		if !rb.head.CompareAndSwap(h, h+k) { // the run takes effect
			continue
		}
		sched.Point()
		st.takeRun(p, dst[:k])
		return int(k)
	}
}
