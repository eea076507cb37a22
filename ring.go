package chans

import (
	"context"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/scalable-go/chans/internal/sched"
)

// The ring: the buffer of a buffered channel made while GOMAXPROCS is at
// most ringMaxProcs (1), or of an unbounded one made while it is at most
// ringMaxProcsUnbounded (2). On one P a channel gains nothing
// from the cells' one fetch-and-add per operation, which pays off where
// cores contend, and it pays for every cell with 18-19 bytes of garbage.
// The ring allocates nothing per message: its slots are reused lap after
// lap. An unbounded ring links larger arrays of slots as its queue grows
// (ring_unbounded.go); what follows holds in each of them. Rendezvous
// channels, and the others made with more Ps, use the cells (bounded.go).
//
// ===== Slots, positions and marks =====
//
// Slot i = p mod n (n is the capacity) serves the positions i, i + n,
// i + 2n, ... of the stream, one per lap (the lap of p is p / n). Its value
// is vals[i]; its mark, one byte, says for what, modulo 256:
//
//	2·lap(p)        free: the send of position p may write it
//	2·lap(p) + 1    published: it holds the value of position p
//
// Each step of a slot's life adds one to its mark: its send publishes it,
// its receive frees it for the send of p + n, whose lap is one more. Marks
// are packed eight to a word (marks), so that a run of values (SendMany,
// RecvMany) is published or freed with one atomic add per word rather than
// one store per slot. A step adds 1 to its byte, or takes 255 from it when
// it goes from 255 to 0, so it never carries into a neighbour; only the
// operation that owns a slot's step makes it, so an add never retries.
//
// Tail T counts the positions claimed by sends, with Close's bit (bit 63);
// head H counts those claimed by receives. A send claims position t with a
// compare-and-swap T: t → t + 1, allowed only while slot t shows free for
// t; a receive claims position h with a compare-and-swap H: h → h + 1,
// allowed only while slot h shows published for h. The claimer then writes
// (or reads) the value and steps the mark on.
//
// Why a byte is enough, where a sequence number would need the position:
// every mark is read after a load of T (or H) and acted on only through a
// claim of that same T (H), or through a load of H (T) that decides alone.
// While T = t, slot t can show only three marks: free for t - n (its send
// claimed but not published), published for t - n (its receive may be
// under way), or free for t; while H = h, slot h shows free for h (its
// send may be under way), published for h, or published for h - n (its
// receive under way). Those are consecutive marks, distinct modulo 256, so
// a mark read while T (H) is still at the loaded value is read right, and
// one read after T (H) moved on leads only to a failed claim, to another
// look, or to a load of H (T) whose value with the loaded T (H) proves the
// verdict on its own (full: t - h ≥ n; empty: T ≤ h). The same holds for
// each slot of a run (k ≤ n), claimed with one compare-and-swap of T (H)
// from the value loaded before its marks. A byte leaves room to spare: the
// argument needs three distinct values.
//
// ===== Linearization points =====
//
// A send takes effect at its claim of T, a receive at its claim of H, so the
// value of position p is the p-th sent and the p-th received: FIFO. Close
// takes effect at its OR of the closed bit into T, after which no claim of
// T succeeds. Between a claim and the step of the slot's mark the slot
// is in flight; an operation that meets a slot in flight waits for it
// (yielding, never parking), since its claimer is running and a few
// instructions from the step. So verdicts are exact: a send reports full
// only if T - H reached the capacity at its load of H, a receive reports
// empty (or closed and drained) only if T ≤ H at its load of T.
//
// ===== Waiting =====
//
// A send that finds the ring full parks on the send queue with its value,
// behind any sender parked already; a receive that frees a slot while
// senders are parked moves the oldest one's value into the ring (claiming
// the position on its behalf: that send's linearization point, inside its
// call) and wakes it. So parked senders are served in the order they parked
// (a TrySend or a select's send case that comes as a slot is freed may take
// it first; the parked senders then wait for the next receive).
// A receive that finds the ring empty registers on the receive queue,
// looks again, and parks; every send that publishes a value serves the
// oldest registered receive. In a ring made while GOMAXPROCS is 1
// (handRecv) it claims the value at H on that receive's behalf (that
// receive's linearization point, inside its call) and wakes it with the
// value, as Go's channels hand a value to a parked receiver: a woken
// receive never finds the value gone and parks again, which on one P was
// half the wake-ups with 1000 goroutines on one slot. A send that finds
// such a receive first on the queue, no sender parked and the ring empty
// gives it the value without the ring (handDirect): the send and that
// receive take effect together, at the send's load of T, with four atomic
// writes fewer than a publish followed by a claim. A receive that was not
// parked may still take the value first; the parked one then waits for
// the next send. A receive whose context fires after a waker took it off
// the queue returns the value it was handed. So that a receive is not
// handed a value while it takes one in its own second look, that look is
// made under the queue's lock. With more Ps that lock costs more than the
// hand-off saves (a look that waits for a slot in flight holds up every
// receive and waker: the unbounded ring's producer/consumer rows with 1000
// goroutines took 1.4x-1.6x as long at GOMAXPROCS 2), so there the waker
// only wakes the receive, which looks again: a woken receive that finds
// the ring empty again registers again, and one that leaves without
// looking (its context fired) passes the wake-up on. Close wakes every
// registered receive with nothing handed over: each looks again.
//
// A select's case registers on the same queues, but nothing is handed to
// it: a waker takes the registration off the queue and kicks the select
// (kick: selDirty, see select.go), which then runs its registration pass
// again, trying the case first. A select that leaves without trying a case
// it was woken for passes the wake-up on, so that a value or a free slot
// never waits while another operation is parked for it.
//
// ===== Invariants (checked at quiescent points by CheckInvariants) =====
//
//	H ≤ T (closed bit aside), T - H ≤ n
//	quiescent ⟹ slot of each p in [H, T) shows published for p, every
//	             other slot shows free for the next position q it serves,
//	             both queues are empty
type ringBuf[T any] struct {
	// tail and head are the channel's S and R, on lines of their own (Chan),
	// so that TrySend's and TryRecv's quick verdicts (plainlyFull,
	// plainlyEmpty) serve a ring unchanged; Close clears plainCap before it
	// sets the closed bit, as it does for the cells.
	tail *atomic.Uint64 // positions claimed by sends; bit 63: closed; bit 62: growBit (unbounded)
	head *atomic.Uint64 // positions claimed by receives

	// The slots of a bounded ring (n is the capacity). An unbounded
	// ring leaves them empty and keeps its slots in a list of stores
	// (unbounded: see "Unbounded rings" below).
	ringStore[T]
	unbounded *ringList[T]
	sendq     ringSendQ[T]
	recvq     ringRecvQ[T]
	handRecv  bool // a send claims its value for the parked receive it serves (see "Waiting")
}

// ringStore is an array of slots and their marks. It serves the positions
// from start on: slot i serves start + i, start + i + n, ..., and the laps,
// and so the marks, count from start (slot, stepRun and runLen take
// positions counted from start). A bounded ring's store starts at 0.
type ringStore[T any] struct {
	// start is the first position the store serves. An unbounded ring
	// reuses stores, each time from a new start, so goroutines that hold
	// a store from before may read it while it changes: it is atomic.
	start atomic.Uint64
	n     uint64          // the number of slots
	shift uint64          // log2 n when n is a power of two, else 64 (see slot)
	vals  []T             // vals[i]: the value in slot i
	marks []atomic.Uint64 // slot i's mark: byte i mod 8 (from the low end) of marks[i / 8]
	// next is the store that serves the positions from next.start on,
	// where this one stops serving; nil while this one is the last.
	// Bounded rings have one store, whose next stays nil.
	next atomic.Pointer[ringStore[T]]
}

func newRingStore[T any](n int) *ringStore[T] {
	st := &ringStore[T]{}
	st.init(n)
	return st
}

// init gives st n slots, each free for its position of lap 0 (zero marks).
func (st *ringStore[T]) init(n int) {
	st.n, st.vals, st.marks = uint64(n), make([]T, n), make([]atomic.Uint64, (n+7)/8)
	st.shift = 64
	if n&(n-1) == 0 {
		st.shift = uint64(bits.TrailingZeros64(uint64(n)))
	}
}

// ringMaxProcs is the largest GOMAXPROCS at which New gives a buffered
// channel a ring. At GOMAXPROCS 1 the ring was at or below native channels
// on every buffered row, where the cells were up to 1.86x; at 2 it won the
// uncontended pair and select loops but lost the producer/consumer rows
// with work and with 1000 goroutines to the cells (0.78x-1.12x against
// 0.51x-0.70x), whose fetch-and-adds never retry and whose parked
// operations are often claimed before they block; on 16 cores, from 4 Ps
// on, it was 1.7x-2.8x native without work, and 0.57x-0.64x with work
// where the cells reached 0.38x-0.58x (bench/results: ring-2core-591c3c1,
// sweep-16core-b9cd63c, sweep-16core-fa05220). Measured again at
// GOMAXPROCS 2 once the ring's parking had improved
// (tried-zen5-2core-10263b0): the ring took P producers and P consumers
// on one slot to 0.42x native (cells 1.04x-1.10x), on 64 slots to
// 0.56x-0.61x (1.19x-1.29x) and the select loop to 0.61x-0.72x
// (1.50x-1.82x), but every row with 1000 goroutines to 0.85x-1.86x
// (0.38x-1.06x), whose parked operations contend for the queues'
// sync.Mutex, and 1024 slots without work to 1.32x-1.42x.
var ringMaxProcs = 1

// ringMaxProcsUnbounded is the largest GOMAXPROCS at which New gives an
// unbounded channel a ring. No send of an unbounded ring parks, and a full
// ring grows instead of turning senders away, so the parked-sender
// hand-offs that cost the bounded ring its rows at GOMAXPROCS 2 do not
// arise: there, two producers and two consumers took 20 ns per message on
// the ring against 36 ns on the cells and 39-41 ns on native channels, with
// 1000 goroutines 38 ns against 44 ns (native 42), and with about 100 ns of
// work between operations 113 and 122 ns against 130 and 125 ns (native
// 189-199), on our 2-core VM (bench/results/unbounded-ring-2core-d706333).
// No machine with more cores was at hand to measure past 2.
var ringMaxProcsUnbounded = 2

// ringHandMaxProcs is the largest GOMAXPROCS at which a new ring's sends
// hand their values to parked plain receives (handRecv; see "Waiting").
// Tests raise it to check the hand-off with goroutines running in parallel.
var ringHandMaxProcs = 1

// ringRes is what a non-blocking ring step reports.
type ringRes uint8

const (
	ringOK ringRes = iota
	ringFull
	ringEmpty
	ringClosed
)

// newRingBuf returns a ring of n slots, or an unbounded ring if n is
// Unbounded.
func newRingBuf[T any](n int, tail, head *atomic.Uint64) *ringBuf[T] {
	rb := &ringBuf[T]{tail: tail, head: head}
	if n == Unbounded {
		rb.unbounded = newRingList[T]()
	} else {
		rb.init(n)
	}
	return rb
}

// slot returns the slot of position p and the mark that says it is free
// for p; published for p is that mark plus one.
//
// Every ring operation computes a slot, so when n is a power of two (as
// every unbounded store is, and capacities like 1, 64 and 1024) the lap is
// a shift and the slot a mask: a 64-bit division takes tens of cycles on
// some x86 cores (35-88 on Intel's Skylake server cores), a large share of
// a send or receive that takes 10-30 ns. Other capacities divide.
func (st *ringStore[T]) slot(p uint64) (i uint64, free uint8) {
	if st.shift < 64 {
		return p & (st.n - 1), uint8(2 * (p >> st.shift))
	}
	lap := p / st.n
	return p - lap*st.n, uint8(2 * lap)
}

// mark loads slot i's mark.
func (st *ringStore[T]) mark(i uint64) uint8 {
	return uint8(st.marks[i/8].Load() >> (8 * (i % 8)))
}

// markStep is what adds one to slot i's mark m in its word: 1 in its byte,
// less the carry that 255 + 1 would send into the next byte (for the top
// byte, 0x100 << 56 is 0: that carry leaves the word).
func markStep(i uint64, m uint8) uint64 {
	sh := 8 * (i % 8)
	d := uint64(1) << sh
	if m == 0xff {
		d -= 0x100 << sh
	}
	return d
}

// step adds one to slot i's mark, which is m: the caller owns that step.
func (st *ringStore[T]) step(i uint64, m uint8) { st.marks[i/8].Add(markStep(i, m)) }

// publish steps slot i's mark from free to published, for the send that
// owns the slot: a free mark is even, so adding one never carries.
func (st *ringStore[T]) publish(i uint64) { st.marks[i/8].Add(1 << (8 * (i % 8))) }

// stepRun steps on the marks of the slots of positions p .. p+k-1 (k ≤ n),
// each of which shows free for its position (published 0) or published for
// it (published 1), with one add per chunk: the slots of the run that share
// a word and a lap. Every byte of a chunk holds the same mark m, so its
// add is markStep's summed over the chunk's bytes: one in each, less the
// carries when m is 255. The caller owns those steps.
func (st *ringStore[T]) stepRun(p, k uint64, published uint8) {
	i, m := st.slot(p)
	m += published
	for k > 0 {
		a, b := st.chunk(i, k)
		d := byteMask(a, b) & marksOf(1)
		if m == 0xff {
			d -= d << 8
		}
		st.marks[i/8].Add(d)
		k -= b - a
		if i += b - a; i == st.n {
			i, m = 0, m+2 // the next lap
		}
	}
}

// chunk returns the bytes a to b-1 of slot i's word that a run of left
// slots from slot i covers before the word or the ring ends (left ≥ 1).
func (st *ringStore[T]) chunk(i, left uint64) (a, b uint64) {
	a = i % 8
	return a, min(8, a+left, a+st.n-i)
}

// marksOf is a word of marks, each m.
func marksOf(m uint8) uint64 { return uint64(m) * 0x0101010101010101 }

// byteMask is a word with its bytes a to b-1 all ones (a < b ≤ 8).
func byteMask(a, b uint64) uint64 { return ^uint64(0) >> (64 - 8*b) &^ (1<<(8*a) - 1) }

// trySend claims a position with room for v and publishes v there, or
// reports full or closed. The verdicts hold at its last load of T (closed)
// or of H (full).
func (rb *ringBuf[T]) trySend(v T) ringRes {
	if rb.unbounded != nil {
		return rb.trySendUnbounded(v)
	}
	for {
		t := rb.tail.Load()
		if t&closedBit != 0 {
			return ringClosed
		}
		i, free := rb.slot(t)
		sched.Point() // T may move on: a stale mark is read
		m := rb.mark(i)
		sched.Point()
		switch d := int8(m - free); {
		case d == 0: // free for t
			if rb.tail.CompareAndSwap(t, t+1) { // the send takes effect
				sched.Point() // claimed, not published: partners wait
				rb.vals[i] = v
				rb.publish(i)
				return ringOK
			}
		case d < 0:
			// The slot still serves position t - n. If H, loaded after,
			// is at most t and t - H ≥ n, then T - H ≥ n held at the load
			// of T too (H only grows), with the channel open: full there.
			// If H is past t, the ring has moved on since T was loaded
			// (t - H would wrap): look again. Else the receive of position
			// t - n has claimed the slot and is freeing it: wait.
			h := rb.head.Load()
			switch {
			case h > t:
			case t-h >= rb.n:
				return ringFull
			default:
				runtime.Gosched()
			}
		}
		// d > 0: position t was claimed and published; T moved on.
	}
}

// tryRecv claims the next position that holds a value and takes it, or
// reports empty, or closed and drained. The verdicts hold at its last load
// of T.
func (rb *ringBuf[T]) tryRecv() (T, ringRes) {
	if rb.unbounded != nil {
		return rb.tryRecvUnbounded()
	}
	var zero T
	for {
		h := rb.head.Load()
		i, free := rb.slot(h)
		sched.Point() // H may move on: a stale mark is read
		m := rb.mark(i)
		sched.Point()
		switch d := int8(m - free - 1); {
		case d == 0: // published for h
			if rb.head.CompareAndSwap(h, h+1) { // the receive takes effect
				sched.Point() // claimed, not freed: senders of the next lap wait
				v := rb.vals[i]
				rb.vals[i] = zero
				rb.step(i, m) // free for the send of position h + n
				return v, ringOK
			}
		case d < 0:
			// Position h is not published. If no send has claimed it,
			// T ≤ h ≤ H at the load of T: empty there (and drained, if
			// closed). Else its send is publishing it.
			tw := rb.tail.Load()
			if tw&counterMask <= h {
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

// sendFast is Send's first step: with no sender parked, one try at the slot
// that the loaded T points at, as trySend's first round would make it. It
// reports false, having changed nothing, when anything more is needed
// (parked senders to queue behind, a closed or full ring, a slot in flight,
// a lost claim); send then starts over. Kept apart and small, so that an
// uncontended Send makes one call below Chan.send. On an unbounded ring it
// is trySend's whole loop: such a send never waits, and fails only when
// closed.
func (rb *ringBuf[T]) sendFast(v T) bool {
	// Parked senders go first (see "Waiting"): a send that starts after one
	// parked queues behind it, and hands nothing to a parked receive either,
	// even at an instant when a receive has emptied the ring and not yet let
	// the parked one in. An unbounded ring's sends never park.
	if rb.unbounded == nil && rb.sendq.n.Load() != 0 {
		return false
	}
	if rb.handRecv && rb.recvq.n.Load() != 0 && rb.handDirect(v) {
		return true
	}
	if rb.unbounded != nil {
		if rb.trySendUnbounded(v) != ringOK {
			return false // closed: send says so
		}
		rb.afterSend()
		return true
	}
	t := rb.tail.Load()
	if t&closedBit != 0 {
		return false
	}
	i, free := rb.slot(t)
	sched.Point() // T may move on: a stale mark is read
	if rb.mark(i) != free {
		return false
	}
	sched.Point()
	if !rb.tail.CompareAndSwap(t, t+1) { // the send takes effect
		return false
	}
	sched.Point() // claimed, not published: partners wait
	rb.vals[i] = v
	rb.publish(i)
	rb.afterSend()
	return true
}

// recvFast is Recv's first step: one try at the slot that the loaded H
// points at, as tryRecv's first round would make it. It reports false,
// having changed nothing, unless that slot was published and its claim
// won; recv then starts over. On an unbounded ring it is tryRecv's whole
// loop, which may also move the list's receive store on.
func (rb *ringBuf[T]) recvFast() (v T, ok bool) {
	if rb.unbounded != nil {
		v, r := rb.tryRecvUnbounded()
		if r != ringOK {
			return v, false // recv looks again and waits
		}
		rb.afterRecv()
		return v, true
	}
	h := rb.head.Load()
	i, free := rb.slot(h)
	sched.Point() // H may move on: a stale mark is read
	if rb.mark(i) != free+1 {
		return v, false
	}
	sched.Point()
	if !rb.head.CompareAndSwap(h, h+1) { // the receive takes effect
		return v, false
	}
	sched.Point() // claimed, not freed: senders of the next lap wait
	var zero T
	v, rb.vals[i] = rb.vals[i], zero
	rb.step(i, free+1) // free for the send of position h + n
	rb.afterRecv()
	return v, true
}

// handDirect gives v to the oldest registered receive, if that is a plain
// receive and the ring is empty, without the ring: with handRecv, a send
// that finds a receive parked would otherwise publish v, claim it back on
// the receive's behalf and free its slot again, four atomic writes on the
// ring's words where this makes none. It reports false, having changed
// nothing, if the queue is empty, led by a select's case, or the ring holds
// a value, a slot in flight or the closed bit; the send then goes the usual
// way.
//
// Linearization: T = H at the load of T, which comes after the load of H
// (H only grows, and H ≤ T): the ring is empty and open at that instant,
// and the send takes effect there, followed at once by the receive it
// serves. The receive is pending (registered, and it may leave the queue
// only under the lock held here), so its effect inside its call is legal;
// any send that claims T later is later in the order, and any receive that
// claims H later takes a later value.
func (rb *ringBuf[T]) handDirect(v T) bool {
	q := &rb.recvq
	q.mu.Lock()
	if q.ws.len() == 0 || q.ws.front().sc != nil {
		q.mu.Unlock()
		return false
	}
	h := rb.head.Load()
	sched.Point() // a receive may claim, a send publish, Close set its bit
	if rb.tail.Load() != h {
		q.mu.Unlock()
		return false
	}
	w := q.ws.pop()
	q.n.Add(-1)
	w.v, w.res = v, ringOK // the send takes effect, and the receive just after it
	q.mu.Unlock()
	w.sleep.wake(w.wake) // w is its receiver's from here
	return true
}

// afterSend serves a registered receive, if any, with a value just
// published (pass).
func (rb *ringBuf[T]) afterSend() {
	if rb.recvq.n.Load() != 0 {
		rb.pass(1, false)
	}
}

// afterRecv lets parked senders into a slot just freed (pass).
func (rb *ringBuf[T]) afterRecv() {
	if rb.sendq.n.Load() != 0 {
		rb.pass(0, true)
	}
}

// pass serves parked operations with values just published and a slot or
// more just freed until nothing is left to pass on: each value serves the
// oldest registered receive (wakeRecv), whose claim frees a slot; freed
// slots let parked senders in (handOff, which fills what room there is),
// whose values are then published. A loop, not the two calling each other,
// so that a long alternation of parked receives and parked senders does not
// deepen the stack. Work is passed in, by its callers and by its own steps,
// only after a load of the queue it is for found someone there (values
// after recvq.n ≠ 0, freed after sendq.n ≠ 0), so no count is loaded twice
// and an empty queue costs no lock.
func (rb *ringBuf[T]) pass(values int, freed bool) {
	for values > 0 || freed {
		if values > 0 {
			values--
			if rb.wakeRecv() && rb.sendq.n.Load() != 0 {
				freed = true
			}
			if values > 0 && rb.recvq.n.Load() == 0 {
				values = 0
			}
			continue
		}
		freed = false
		if moved := rb.handOff(); moved > 0 && rb.recvq.n.Load() != 0 {
			values = moved
		}
	}
}

func (rb *ringBuf[T]) trySendErr(v T) error {
	// As sendFast: with no sender parked, a plain receive parked on an empty
	// ring takes the value directly (handDirect).
	if rb.handRecv && rb.recvq.n.Load() != 0 && rb.sendq.n.Load() == 0 && rb.handDirect(v) {
		return nil
	}
	switch rb.trySend(v) {
	case ringOK:
		rb.afterSend()
		return nil
	case ringFull:
		return ErrFull
	}
	return ErrClosed
}

func (rb *ringBuf[T]) tryRecvErr() (T, error) {
	v, r := rb.tryRecv()
	switch r {
	case ringOK:
		rb.afterRecv()
		return v, nil
	case ringEmpty:
		return v, ErrEmpty
	}
	return v, ErrClosed
}

// close is Close: it takes effect at the OR of the closed bit into T.
// plainCap is the channel's, cleared first: plainlyFull must not read the
// closed bit as a full ring.
func (rb *ringBuf[T]) close(plainCap *atomic.Uint64) error {
	plainCap.Store(0)
	if rb.tail.Or(closedBit)&closedBit != 0 {
		return ErrClosed
	}
	sched.Point() // closed; parked senders not failed yet
	// Parked senders: none of their values was claimed (a hand-off under
	// way finds the bit and fails its sender the same way). A select's
	// case is kicked: its next try finds the channel closed.
	q := &rb.sendq
	q.mu.Lock()
	for q.ws.len() > 0 {
		w := q.ws.pop()
		q.n.Add(-1)
		if w.sc != nil {
			w.popped.Store(true)
			kick(w.sc) // a buffered token at most: it does not block under the lock
		} else {
			w.res = ringClosed
			w.sleep.wake(w.wake) // a buffered token at most: it does not block under the lock
		}
	}
	q.mu.Unlock()
	rb.recvq.wakeAll() // they look again and find the channel closed, once drained
	return nil
}

// len is Len: T - H at the load of T, with H the same before and after it
// (a double collect: H only grows). After lenTries rounds in which receives
// moved H, it returns its last count, as the cells' Len does.
func (rb *ringBuf[T]) len() int {
	for try := 0; ; try++ {
		h := rb.head.Load()
		sched.Point()
		t := rb.tail.Load() & ringPosMask
		sched.Point()
		if stable := rb.head.Load() == h; stable || try == lenTries {
			if !stable && lenGaveUp != nil {
				lenGaveUp()
			}
			if h > t {
				return 0
			}
			if rb.unbounded != nil {
				return int(t - h)
			}
			return int(min(t-h, rb.n))
		}
	}
}

// ===== Parked senders =====

// ringSendW is a sender on the send queue: a plain send parked with its
// value (res gets its outcome, then sleep its wake-up), or a select's send
// case (sc, kicked).
type ringSendW[T any] struct {
	res    ringRes // ringOK: the value is in the ring; ringClosed
	sleep  sleeper
	wake   chan struct{} // the token of a send that also waits for a context (sleep.go)
	v      T
	sc     *selCall
	popped atomic.Bool // taken off the queue by a waker or Close
}

type ringSendQ[T any] struct {
	n    atomic.Int64 // senders parked or about to look again; read without the lock
	mu   sync.Mutex
	ws   waitList[*ringSendW[T]]
	pool sync.Pool
}

// send is Send, giving up when done is closed (never, if done is nil).
func (rb *ringBuf[T]) send(done <-chan struct{}, v T) error {
	q := &rb.sendq
	if q.n.Load() == 0 { // nobody parked: no one to pass
		switch rb.trySend(v) {
		case ringOK:
			rb.afterSend()
			return nil
		case ringClosed:
			return ErrClosed
		}
	}
	q.mu.Lock()
	// Announce, then look again: a receive that frees a slot after this
	// look loads n after the announcement and hands off under the lock; one
	// that freed it before lets this look succeed. With others parked
	// ahead, the hand-offs serve them first.
	q.n.Add(1)
	sched.Point()
	r := ringFull
	if q.ws.len() == 0 {
		r = rb.trySend(v)
	} else if rb.tail.Load()&closedBit != 0 {
		r = ringClosed // Close has failed the queue, or waits for this lock to
	}
	if r != ringFull {
		q.n.Add(-1)
		q.mu.Unlock()
		if r == ringClosed {
			return ErrClosed
		}
		rb.afterSend()
		return nil
	}
	w, _ := q.pool.Get().(*ringSendW[T])
	if w == nil {
		w = &ringSendW[T]{wake: make(chan struct{}, 1)}
	}
	w.v = v
	q.ws.push(w)
	q.mu.Unlock()

	rb.yieldBeforePark()
	if done == nil {
		w.sleep.block(w.wake)
	} else if !w.sleep.blockOr(w.wake, done) {
		if q.remove(w) {
			w.sleep.awake() // withdrawn: no waker will wake it
			rb.putSendW(w)
			return errCancelled // nothing claimed on its behalf
		}
		w.sleep.takeToken(w.wake) // a hand-off or Close took it first
	}
	r = w.res
	rb.putSendW(w)
	if r == ringClosed {
		return ErrClosed
	}
	return nil
}

// yieldBeforePark lets the goroutines runnable on this P run, once, before
// a registered send or receive blocks, in a ring made while GOMAXPROCS is 1
// (handRecv): the partner that the operation has just made runnable (the
// receive it woke with a value, the sender whose value it moved into the
// ring) is there, and serves the registration before the owner blocks, so
// that the owner takes its outcome without a wake-up through the scheduler,
// as on the cells' rendezvous and one-slot channels (yieldBeforePark in
// bounded.go). With more Ps, a yielding owner would be taken by another P.
// On our Zen 5 VM at GOMAXPROCS 1, one producer and one consumer on one
// slot took 0.74x native's time with the yield, against 0.96x without
// (medians of eight alternating rounds; with 1000 goroutines 1.10x against
// 1.16x; bench/results/ringpark-zen5-2core-dae5751). Yielding only when
// the operation was alone on its queue did no better with P goroutines
// and worse with 1000 (1.28x).
func (rb *ringBuf[T]) yieldBeforePark() {
	if rb.handRecv {
		yieldLocal()
	}
}

func (rb *ringBuf[T]) putSendW(w *ringSendW[T]) {
	var zero T
	w.v = zero
	rb.sendq.pool.Put(w)
}

// add puts the send case of the select using sc on the queue. w.sc is
// written and read under the lock: a waker that took w off the queue in an
// earlier round may still be kicking.
func (q *ringSendQ[T]) add(w *ringSendW[T], sc *selCall) {
	q.mu.Lock()
	w.sc = sc
	w.popped.Store(false)
	q.ws.push(w)
	q.n.Add(1)
	q.mu.Unlock()
}

// remove takes w off the queue and reports whether it was there; if not, a
// waker or Close took it first.
func (q *ringSendQ[T]) remove(w *ringSendW[T]) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ws.remove(w) {
		q.n.Add(-1)
		return true
	}
	return false
}

// handOff moves the values of parked senders into the ring while it has
// room, oldest first, each send taking effect at its claim, and wakes their
// senders; a Close in the way fails them. A select's send case on the queue
// is kicked instead, and the slot it may take is left to it: the hand-off
// goes past it only while the ring has room beyond the slots left to the
// selects it kicked. A kicked select that sends nothing passes the
// hand-off on, so a free slot never waits while a sender is parked. It
// returns how many values it moved in, for pass to serve parked receives
// with.
func (rb *ringBuf[T]) handOff() int {
	q := &rb.sendq
	q.mu.Lock()
	moved, kicked := 0, uint64(0)
	for q.ws.len() > 0 {
		w := q.ws.front()
		if w.sc == nil {
			if kicked > 0 {
				t := rb.tail.Load() & counterMask
				if h := rb.head.Load(); h <= t && rb.n-(t-h) <= kicked {
					break // the room left is the kicked selects'
				}
			}
			r := rb.trySend(w.v)
			if r == ringFull {
				break // a send that was not parked took the slot; the next receive hands off
			}
			if r == ringOK {
				moved++
			}
			w.res = r
			w.sleep.wake(w.wake) // a buffered token at most: it does not block under the lock
		}
		q.ws.pop()
		q.n.Add(-1)
		if w.sc != nil {
			w.popped.Store(true) // before the kick: the select then finds its case off the queue
			kick(w.sc)           // a buffered token at most: it does not block under the lock
			kicked++
		}
	}
	q.mu.Unlock()
	return moved
}

// ===== Parked receivers =====

// ringRecvW is a receiver on the receive queue: a plain receive, woken
// through sleep (with handRecv, the waker first hands it the value it
// claimed for it, or the closed verdict: v, res), or a select's receive case
// (sc), which a waker kicks.
type ringRecvW[T any] struct {
	sleep  sleeper
	wake   chan struct{} // the token of a receive that also waits for a context (sleep.go)
	sc     *selCall
	popped atomic.Bool // taken off the queue by a waker
	v      T           // the value handed over, if res is ringOK
	res    ringRes     // ringEmpty: nothing handed over (look again)
}

type ringRecvQ[T any] struct {
	n    atomic.Int64 // registered receivers; read without the lock
	mu   sync.Mutex
	ws   waitList[*ringRecvW[T]]
	pool sync.Pool
}

// add registers w; sc is the select whose case it is, nil for a plain
// receive. w.sc is written and read under the lock: a waker that took w off
// the queue in an earlier round may still be waking it.
func (q *ringRecvQ[T]) add(w *ringRecvW[T], sc *selCall) {
	q.mu.Lock()
	q.push(w, sc)
	q.n.Add(1)
	q.mu.Unlock()
}

// push puts w on the queue, under the lock; the caller counts it in n.
func (q *ringRecvQ[T]) push(w *ringRecvW[T], sc *selCall) {
	w.sc = sc
	if sc != nil {
		w.popped.Store(false)
	}
	q.ws.push(w)
}

// remove takes w off the queue and reports whether it was there; if not, a
// wake-up is on its way to it.
func (q *ringRecvQ[T]) remove(w *ringRecvW[T]) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ws.remove(w) {
		q.n.Add(-1)
		return true
	}
	return false
}

// wakeRecv serves the longest-registered receiver, if any. With handRecv a
// plain receive is handed the value at H: the waker claims it on the
// receiver's behalf, which is that receive's linearization point, inside
// its call, and the receiver takes it from its registration when it wakes.
// If there is no value to claim (a receive that was not parked took it
// first), the receiver stays registered for the next send. Without
// handRecv the receiver is only woken, to look again. A select's case is
// kicked. wakeRecv reports whether it claimed a value, freeing a slot, for
// pass to let parked senders into.
func (rb *ringBuf[T]) wakeRecv() bool {
	q := &rb.recvq
	q.mu.Lock()
	if q.ws.len() == 0 {
		q.mu.Unlock()
		return false
	}
	w := q.ws.front()
	sc := w.sc
	claimed := false
	if sc == nil && rb.handRecv {
		v, r := rb.tryRecv()
		if r == ringEmpty {
			q.mu.Unlock()
			return false
		}
		w.v, w.res = v, r
		claimed = r == ringOK
	}
	q.ws.pop()
	q.n.Add(-1)
	if sc != nil {
		w.popped.Store(true)
	}
	q.mu.Unlock()
	wakeTaken(w, sc) // a plain receive's w is its receiver's from here
	return claimed
}

// wakeAll wakes every registered receiver (Close), handing nothing over:
// each looks again and finds the channel closed, once drained. The tokens
// and kicks are buffered: they do not block under the lock.
func (q *ringRecvQ[T]) wakeAll() {
	q.mu.Lock()
	for q.ws.len() > 0 {
		w := q.ws.pop()
		q.n.Add(-1)
		if w.sc != nil {
			w.popped.Store(true)
		}
		wakeTaken(w, w.sc)
	}
	q.mu.Unlock()
}

// wakeTaken wakes a receiver taken off the queue: a plain one through its
// sleeper, a select's case, whose select is sc, with a kick.
func wakeTaken[T any](w *ringRecvW[T], sc *selCall) {
	if sc != nil {
		kick(sc)
	} else {
		w.sleep.wake(w.wake)
	}
}

// waitList is the FIFO of a queue, used under the queue's lock. It reuses
// its array: a pop advances the head, and a push that finds the array full
// moves the entries to its front first, so steady traffic allocates nothing.
type waitList[W comparable] struct {
	buf  []W
	head int
}

func (l *waitList[W]) len() int { return len(l.buf) - l.head }
func (l *waitList[W]) front() W { return l.buf[l.head] }

func (l *waitList[W]) push(w W) {
	if l.head > 0 && len(l.buf) == cap(l.buf) {
		n := copy(l.buf, l.buf[l.head:])
		clear(l.buf[n:])
		l.buf, l.head = l.buf[:n], 0
	}
	l.buf = append(l.buf, w)
}

func (l *waitList[W]) pop() W {
	var zero W
	w := l.buf[l.head]
	l.buf[l.head] = zero
	if l.head++; l.head == len(l.buf) {
		l.buf, l.head = l.buf[:0], 0
	}
	return w
}

// remove takes w out and reports whether it was there.
func (l *waitList[W]) remove(w W) bool {
	for i := l.head; i < len(l.buf); i++ {
		if l.buf[i] == w {
			var zero W
			copy(l.buf[i:], l.buf[i+1:])
			l.buf[len(l.buf)-1] = zero
			l.buf = l.buf[:len(l.buf)-1]
			if l.head == len(l.buf) {
				l.buf, l.head = l.buf[:0], 0
			}
			return true
		}
	}
	return false
}

// recv is Recv, giving up when done is closed (never, if done is nil).
func (rb *ringBuf[T]) recv(done <-chan struct{}) (T, error) {
	q := &rb.recvq
	var zero T
	for {
		v, r := rb.tryRecv()
		if r != ringEmpty {
			return rb.received(v, r)
		}
		w, _ := q.pool.Get().(*ringRecvW[T])
		if w == nil {
			w = &ringRecvW[T]{wake: make(chan struct{}, 1)}
		}
		w.res = ringEmpty
		if rb.handRecv {
			// Announce, then look again, under the lock, so that no waker
			// hands this receive a value while it takes one itself: a send
			// that published before the look is seen by it; one after it
			// loads n after the announcement and hands its value over
			// (wakeRecv) once the lock is free.
			q.mu.Lock()
			q.n.Add(1)
			sched.Point()
			if v, r = rb.tryRecv(); r != ringEmpty {
				q.n.Add(-1)
				q.mu.Unlock()
				q.pool.Put(w)
				return rb.received(v, r)
			}
			q.push(w, nil) // counted in n by the announcement
			q.mu.Unlock()
		} else {
			// Register, then look again, outside the lock (see "Waiting"):
			// a send that published before the look is seen by it; one
			// after it finds the registration and wakes it.
			q.add(w, nil)
			sched.Point()
			if v, r = rb.tryRecv(); r != ringEmpty {
				if !q.remove(w) {
					w.sleep.block(w.wake) // a waker took it off the queue: wait for its wake-up
					rb.afterSend()        // the wake-up was for a value: pass it on
				}
				q.pool.Put(w)
				return rb.received(v, r)
			}
		}
		rb.yieldBeforePark()
		if done == nil {
			w.sleep.block(w.wake)
		} else if !w.sleep.blockOr(w.wake, done) {
			if q.remove(w) {
				w.sleep.awake() // withdrawn: no waker will wake it
				q.pool.Put(w)
				return zero, errCancelled
			}
			w.sleep.takeToken(w.wake) // a waker took it first: a value handed over is returned, not dropped
			if w.res == ringEmpty {
				// Woken with nothing handed over: take what needs no
				// waiting, or pass the wake-up on to another receiver.
				q.pool.Put(w)
				if v, r = rb.tryRecv(); r != ringEmpty {
					return rb.received(v, r)
				}
				rb.afterSend()
				return zero, errCancelled
			}
		}
		if r = w.res; r == ringOK {
			v, w.v = w.v, zero
		}
		q.pool.Put(w)
		switch r {
		case ringOK:
			return v, nil // the waker claimed it for this receive, and let parked senders in
		case ringClosed:
			return zero, ErrClosed
		}
		// Woken with nothing handed over: look again.
	}
}

// received finishes a receive whose tryRecv did not report empty.
func (rb *ringBuf[T]) received(v T, r ringRes) (T, error) {
	if r == ringClosed {
		return v, ErrClosed
	}
	rb.afterRecv()
	return v, nil
}

// sendContext and recvContext are SendContext and RecvContext: with ctx
// done already they only try.
func (rb *ringBuf[T]) sendContext(ctx context.Context, v T) error {
	if err := ctx.Err(); err != nil {
		if e := rb.trySendErr(v); e != ErrFull {
			return e
		}
		return err
	}
	if err := rb.send(ctx.Done(), v); err != errCancelled {
		return err
	}
	return ctx.Err()
}

func (rb *ringBuf[T]) recvContext(ctx context.Context) (T, error) {
	if err := ctx.Err(); err != nil {
		v, e := rb.tryRecvErr()
		if e == ErrEmpty {
			e = err
		}
		return v, e
	}
	v, err := rb.recv(ctx.Done())
	if err == errCancelled {
		err = ctx.Err()
	}
	return v, err
}

// ===== Batches =====

// sendMany is SendMany and SendManyContext: runs of values go in with one
// claim each (sendRun), and where the ring is full one Send waits.
func (rb *ringBuf[T]) sendMany(ctx context.Context, vs []T) (int, error) {
	n := 0
	for n < len(vs) {
		if rb.sendq.n.Load() == 0 { // a batch does not pass parked senders
			if k := rb.sendRun(vs[n:]); k > 0 {
				n += k
				continue
			}
		}
		var err error
		if ctx.Done() != nil {
			err = rb.sendContext(ctx, vs[n])
		} else {
			err = rb.send(nil, vs[n])
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// sendRun claims, with one compare-and-swap on T, the free positions
// t, t+1, ... for a prefix of vs, at most len(vs) and no more than the room
// at its load of H, and publishes the values; the run takes effect at the
// claim, as that many Sends in a row. It returns the run's length, 0 if the
// ring was full or closed, or its next slot not free yet.
func (rb *ringBuf[T]) sendRun(vs []T) int {
	if rb.unbounded != nil {
		return rb.sendRunUnbounded(vs)
	}
	for {
		t := rb.tail.Load()
		if t&closedBit != 0 {
			return 0
		}
		h := rb.head.Load()
		if h > t || t-h >= rb.n {
			return 0 // moved on since the load of T, or full: the caller sends one
		}
		// T may move on here: stale marks are read.
		sched.Point()
		k := rb.runLen(t, min(uint64(len(vs)), rb.n-(t-h)), 0) // free slots; the rest wait for their receivers
		if k == 0 {
			return 0
		}
		sched.Point()
		if !rb.tail.CompareAndSwap(t, t+k) { // the run takes effect
			continue
		}
		sched.Point()
		rb.putRun(t, vs[:k])
		rb.afterSendRun(k)
		return int(k)
	}
}

// recvMany is RecvMany, RecvManyContext and (try) TryRecvMany: one receive
// that may wait, unless a run is there already, then a run of what is
// available.
func (rb *ringBuf[T]) recvMany(ctx context.Context, dst []T, try bool) (int, error) {
	if len(dst) == 0 {
		return 0, nil
	}
	if k := rb.recvRun(dst); k > 0 {
		return k, nil
	}
	var v T
	var err error
	switch {
	case try:
		v, err = rb.tryRecvErr()
	case ctx.Done() != nil:
		v, err = rb.recvContext(ctx)
	default:
		v, err = rb.recv(nil)
	}
	if err != nil {
		return 0, err
	}
	dst[0] = v
	return 1 + rb.recvRun(dst[1:]), nil
}

// recvRun claims, with one compare-and-swap on H, the published positions
// h, h+1, ..., at most len(dst), and takes their values into dst; the run
// takes effect at the claim, as that many Recvs in a row. It returns the
// run's length, 0 if position h is not published.
func (rb *ringBuf[T]) recvRun(dst []T) int {
	if rb.unbounded != nil {
		return rb.recvRunUnbounded(dst)
	}
	for {
		h := rb.head.Load()
		// H may move on here: stale marks are read.
		sched.Point()
		k := rb.runLen(h, min(uint64(len(dst)), rb.n), 1) // published slots
		if k == 0 {
			return 0
		}
		sched.Point()
		if !rb.head.CompareAndSwap(h, h+k) { // the run takes effect
			continue
		}
		sched.Point()
		rb.takeRun(h, dst[:k])
		rb.afterRecv()
		return int(k)
	}
}

// putRun writes vs into the slots of positions p, p+1, ... and publishes
// them (len(vs) ≤ n); takeRun takes the values of those positions into dst
// and frees their slots for the next lap. The caller has claimed the
// positions. The values go in at most two copies: up to the ring's end,
// then from its start.
func (st *ringStore[T]) putRun(p uint64, vs []T) {
	i, _ := st.slot(p)
	c := copy(st.vals[i:], vs)
	copy(st.vals, vs[c:])
	st.stepRun(p, uint64(len(vs)), 0) // published
}

func (st *ringStore[T]) takeRun(p uint64, dst []T) {
	i, _ := st.slot(p)
	c := copy(dst, st.vals[i:])
	clear(st.vals[i : i+uint64(c)])
	if c < len(dst) {
		r := copy(dst[c:], st.vals)
		clear(st.vals[:r])
	}
	st.stepRun(p, uint64(len(dst)), 1) // free for the next lap
}

// afterSendRun serves a registered receive for each of k values just
// published, while any is registered.
func (rb *ringBuf[T]) afterSendRun(k uint64) {
	if rb.recvq.n.Load() != 0 {
		rb.pass(int(k), false)
	}
}

// runLen returns how many of the positions p, p+1, ..., at most max (≤ n),
// have slots whose marks say free (published = 0) or published
// (published = 1) for them, counting up to the first that does not. It
// compares a word of marks at a time (a chunk, see stepRun).
func (st *ringStore[T]) runLen(p, max uint64, published uint8) uint64 {
	i, m := st.slot(p)
	m += published
	for k := uint64(0); k < max; {
		a, b := st.chunk(i, max-k)
		if diff := (st.marks[i/8].Load() ^ marksOf(m)) & byteMask(a, b); diff != 0 {
			return k + uint64(bits.TrailingZeros64(diff))/8 - a
		}
		k += b - a
		if i += b - a; i == st.n {
			i, m = 0, m+2
		}
	}
	return max
}
