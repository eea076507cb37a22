package chans

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"sync/atomic"
)

// Unbounded is the capacity that asks New for a channel whose sends never block.
const Unbounded = -1

// Sentinel errors. They are returned unwrapped, so both == and errors.Is work.
var (
	// ErrClosed reports an operation on a closed channel: a send, a receive on
	// a closed and drained channel, or a second Close.
	ErrClosed = errors.New("chans: channel closed")
	// ErrFull reports that TrySend found no room: the buffer was full and, for
	// a rendezvous channel, no receiver was waiting.
	ErrFull = errors.New("chans: channel full")
	// ErrEmpty reports that TryRecv found nothing: no buffered element and no
	// waiting sender.
	ErrEmpty = errors.New("chans: channel empty")
)

// Chan is a FIFO channel of T values. Create one with New. The zero value
// is not a usable channel: every method but Cap panics on it with a message
// saying to use New. A Chan must not be copied after first use (go vet
// reports copies): share the pointer. All methods may be called from any
// goroutine.
type Chan[T any] struct {
	_ noCopy

	// The layout puts each counter that every operation writes on its own
	// cache line: S (senders and the closed bit), R (receivers) and B (end of
	// the buffer). See doc.go for the algorithm and bounded.go for the cell
	// states.

	_ pad
	// s counts the send tickets handed out; bit 63 is set by Close.
	s atomic.Uint64
	// roomSeen (buffered channels) is a buffer end that a send has seen:
	// max(B, R + capacity) at its loads, a lower bound on the end ever
	// after while the channel is open, since B and R only grow (after
	// Close every use also checks S). A send whose ticket is below it has
	// room without loading B or R, the lines that receives write; it shares
	// S's line, which only sends write. roomFor and claimSends raise it.
	roomSeen atomic.Uint64
	// plainCap is capacity + 1 while the channel is bounded, open and has
	// never had a hole, and 0 from just before the first Close or hole on
	// (and always for an unbounded or zero Chan): what a failing TrySend
	// needs besides S and R, in one load from S's line (plainlyFull).
	plainCap atomic.Uint64
	_        [cacheLine - 24]byte
	// r counts the receive tickets handed out.
	r atomic.Uint64
	_ pad
	// b is the index of the first cell past the buffer (bounded channels).
	b atomic.Uint64
	// settled counts the receive tickets whose buffer expansion has
	// finished (each has made one more cell, not a hole, part of the
	// buffer), and those that owe none because they met a hole an expansion
	// had made good (recvPastHole). full compares it with R. It shares B's
	// cache line, which the expansion has just written.
	settled atomic.Uint64
	_       pad

	// Roots of the segment list, read before taking a ticket: the segment of
	// the last send, receive and buffer expansion. Each holds a pointer
	// reference on its segment, so that segments they name are never removed.
	sendSeg atomic.Pointer[segment[T]]
	recvSeg atomic.Pointer[segment[T]]
	bufSeg  atomic.Pointer[segment[T]]

	// closeAt is the send ticket count at Close (math.MaxUint64 while open):
	// sends with tickets below it may still deliver, none at or above it do.
	closeAt atomic.Uint64
	// roomEnd is openMark while no Close has begun, closingMark from the
	// moment one begins until it takes effect, and then a lower bound, read
	// by the winning Close before its OR, on the end of the room at the OR:
	// max(B, R + capacity). A send whose ticket came before Close may still
	// deliver after Close if its ticket is below it. See bounded.go, "Close
	// and the room".
	roomEnd atomic.Uint64
	// holeFrom (buffered channels) is noHoles until the first send that may
	// leave a hole in the buffer, and then the receive ticket count R0 at
	// that moment: receive tickets below it expand the buffer implicitly, to
	// ticket + capacity, without touching B or settled. See bounded.go,
	// "Buffer end".
	holeFrom atomic.Uint64

	// selfPending names a parked select that could not register one of its
	// cases here because that case's ticket met its own other case's
	// registration (select.go); operations about to park here kick it.
	selfPending atomic.Pointer[selCall]

	// rb is the ring of a buffered channel made with GOMAXPROCS at most
	// ringMaxProcs, or of an unbounded one made with GOMAXPROCS at most
	// ringMaxProcsUnbounded (ring.go, ring_unbounded.go), nil otherwise. A
	// channel with a ring uses s and r as the ring's tail and head, and
	// plainCap, and none of the other fields above: no segment.
	rb       *ringBuf[T]
	capacity int       // as given to New
	spin     uint16    // rounds of loads spun before parking (spinBeforePark); 0: none
	yield    yieldMode // how a parking operation yields before it blocks (yieldBeforePark); see await
	spares   spareList[T]

	// cursor names the oldest segment not yet retired (segment.go,
	// "Reuse"); reclaiming is held by the one goroutine retiring at a time;
	// reuseOff is set by the channel's first removal, and ends reuse.
	cursor     atomic.Pointer[segment[T]]
	reclaiming atomic.Bool
	reuseOff   atomic.Bool
}

// New returns a channel with the given capacity: 0 for a rendezvous channel,
// k > 0 for a channel buffering up to k values, or Unbounded. Any other
// negative capacity panics.
//
// A buffered channel made while GOMAXPROCS is 1 takes room for its
// capacity at once, as make(chan T, k) does, and allocates nothing after.
// An unbounded channel made while GOMAXPROCS is at most 2 takes room as its
// queue grows, and allocates nothing while the queue stays within the room
// it has. Other channels take memory as values arrive and the garbage
// collector reclaims it (see "How it works" in the package documentation).
func New[T any](capacity int) *Chan[T] {
	if capacity < Unbounded {
		panic(fmt.Sprintf("chans: New called with negative capacity %d (want 0, a positive size, or Unbounded)", capacity))
	}
	procs := runtime.GOMAXPROCS(0)
	ring := capacity > 0 && procs <= ringMaxProcs || capacity == Unbounded && procs <= ringMaxProcsUnbounded
	return newChan[T](capacity, ring, procs)
}

// newChan is New at the given GOMAXPROCS, with a ring (a buffered or
// unbounded channel's) or cells.
func newChan[T any](capacity int, ring bool, procs int) *Chan[T] {
	c := &Chan[T]{capacity: capacity}
	if ring {
		c.rb = newRingBuf[T](capacity, &c.s, &c.r)
		c.rb.handRecv = procs <= ringHandMaxProcs
		c.plainCap.Store(uint64(capacity + 1))
		return c
	}
	c.closeAt.Store(openMark)
	c.roomEnd.Store(openMark)              // lowered by Close
	c.holeFrom.Store(noHoles)              // lowered by the first send that may leave a hole
	c.plainCap.Store(uint64(capacity + 1)) // 0 if Unbounded; cleared before roomEnd or holeFrom moves
	if capacity > 0 {
		c.b.Store(uint64(capacity))
	}
	roots := uint64(2)
	if capacity > 0 {
		roots = 3
	}
	s := c.newSegment(0, nil, roots)
	c.cursor.Store(s)
	c.sendSeg.Store(s)
	c.recvSeg.Store(s)
	if capacity > 0 {
		c.bufSeg.Store(s) // only buffered channels expand a buffer
	}
	c.spin, c.yield = spinBeforePark(capacity, procs), yieldBeforePark(capacity, procs)
	return c
}

// Cap returns the capacity given to New: 0, a positive size, or Unbounded.
func (c *Chan[T]) Cap() int { return c.capacity }

// Handle returns a new Handle on c, with waiters of its own. See Handle.
func (c *Chan[T]) Handle() *Handle[T] {
	c.mustBeMade()
	return &Handle[T]{c: c, ws: newWaiter(opSend), wr: newWaiter(opRecv)}
}

// Handle gives one goroutine that sends or receives on a Chan in a loop a
// waiter of its own to park on, and a count that speeds up TryRecv. Its methods
// behave exactly as the Chan methods of the same name; they differ in speed
// only, in two ways. A blocking send or receive through a Handle parks on a
// waiter the Handle keeps, rather than one taken from and returned to a
// shared pool: on the machines measured (2 cores) that made no measurable
// difference, parking rows included. And a TryRecv through a Handle
// remembers how many values it has seen sent: while the channel holds a
// backlog of values sent before that look, it takes them without reading
// the memory that senders write. A goroutine that polls a busy channel
// with TryRecv, while others send on other cores, gains from a Handle: at
// GOMAXPROCS 2 on a 2-core VM such loops took 0.5x-0.8x the time of the
// same loops through the Chan (on 64 slots with both cores close together,
// the same time). Code that has no other reason to hold one should use
// the Chan's methods. On a buffered channel made while GOMAXPROCS was 1,
// which parks its operations on queues of its own, a Handle's methods are
// the Chan's.
//
// A Handle is safe for use by several goroutines at once: an operation that
// finds the Handle's waiter in use by another goroutine takes one from the
// pool, as the Chan's methods do. An idle Handle keeps nothing of the
// channel alive beyond the Chan itself.
//
// A Handle cannot be a select case: OnRecv and OnSend take a *Chan, which
// Handle.Chan returns.
type Handle[T any] struct {
	_  noCopy
	c  *Chan[T]
	ws *waiter // parks this handle's sends
	wr *waiter // parks this handle's receives
	// seen is a count of send tickets a TryRecv through the Handle loaded
	// (sentFor).
	seen atomic.Uint64
}

// Chan returns the channel h operates on.
func (h *Handle[T]) Chan() *Chan[T] { return h.c }

// Send sends v on c, blocking while the channel has no room. It returns nil
// once v is delivered (buffered, or taken by a receiver for a rendezvous
// channel) and ErrClosed if the channel is closed first; then v was not
// delivered and will never be received.
//
// Send takes effect when v enters the channel: when it is buffered, or taken
// by a receiver. A Send that fails takes effect after Close.
func (c *Chan[T]) Send(v T) error { return c.send(nil, v, nil) }

// SendContext is Send that gives up when ctx is done. It returns nil, ErrClosed,
// or ctx.Err() as is; a send that returns ctx.Err() delivered nothing. If ctx
// is already done and the send cannot proceed at once, it returns without
// blocking.
func (c *Chan[T]) SendContext(ctx context.Context, v T) error {
	return c.sendContext(ctx, v, nil)
}

// TrySend sends v only if that needs no waiting: it returns ErrFull if the
// buffer is full and (for a rendezvous channel) no receive is waiting or
// under way, ErrClosed if
// the channel is closed (even if it is also full), and nil once v is
// delivered. It never fails spuriously: ErrFull means that the channel was
// full at one instant during the call.
func (c *Chan[T]) TrySend(v T) error {
	if c.plainlyFull() {
		return ErrFull
	}
	return c.trySend(v)
}

// Recv receives the next value. It blocks while the channel is empty and open;
// ok is false once the channel is closed and every value sent before Close has
// been received.
//
// Recv takes effect just after the Send whose value it returns; a Recv that
// reports the channel closed takes effect after Close, once every value sent
// before Close has been received.
func (c *Chan[T]) Recv() (v T, ok bool) {
	v, err := c.recv(nil, nil)
	return v, err == nil
}

// RecvContext is Recv that gives up when ctx is done. It returns the value and
// nil, ErrClosed when closed and drained, or ctx.Err() as is; a receive that
// returns ctx.Err() took nothing. A value handed over at the moment ctx fired
// is returned with nil rather than dropped.
func (c *Chan[T]) RecvContext(ctx context.Context) (T, error) {
	return c.recvContext(ctx, nil)
}

// TryRecv receives a value only if that needs no waiting. It returns ErrEmpty
// if nothing is buffered and no sender waits, ErrClosed if the channel is
// closed and drained. It never fails spuriously: ErrEmpty means that the
// channel was empty at one instant during the call. When the channel is
// plainly empty it writes no shared memory, so polling it is cheap.
func (c *Chan[T]) TryRecv() (T, error) {
	if c.plainlyEmpty() {
		var zero T
		return zero, ErrEmpty
	}
	return c.tryRecv()
}

// All returns an iterator that receives values until the channel is closed and
// drained. Breaking out of the loop takes no value beyond those yielded.
func (c *Chan[T]) All() iter.Seq[T] { return all(c.Recv) }

func all[T any](recv func() (T, bool)) iter.Seq[T] {
	return func(yield func(T) bool) {
		for {
			v, ok := recv()
			if !ok || !yield(v) {
				return
			}
		}
	}
}

// AllContext is All that also stops when ctx is done: it receives values
// until the channel is closed and drained or ctx is done, whichever comes
// first, and once ctx is done it yields nothing more, even values still
// buffered. It takes no value beyond those it yielded: a value handed over
// just as ctx fired is yielded, not dropped, and breaking out of the loop
// takes nothing more. A nil ctx panics. Each value yielded takes effect as
// the RecvContext that received it.
func (c *Chan[T]) AllContext(ctx context.Context) iter.Seq[T] {
	return c.allContext(ctx, nil)
}

// allContext is AllContext, parking on w if it is not nil.
func (c *Chan[T]) allContext(ctx context.Context, w *waiter) iter.Seq[T] {
	if ctx == nil {
		panic("chans: nil Context")
	}
	done := ctx.Done()
	return func(yield func(T) bool) {
		for {
			select {
			case <-done:
				return
			default:
			}
			v, err := c.recv(done, w) // errCancelled when done closed first: nothing taken
			if err != nil || !yield(v) {
				return
			}
		}
	}
}

// Send is Chan.Send through h.
func (h *Handle[T]) Send(v T) error { return h.c.send(nil, v, h.ws) }

// SendContext is Chan.SendContext through h.
func (h *Handle[T]) SendContext(ctx context.Context, v T) error {
	return h.c.sendContext(ctx, v, h.ws)
}

// TrySend is Chan.TrySend through h.
func (h *Handle[T]) TrySend(v T) error { return h.c.TrySend(v) }

// Recv is Chan.Recv through h.
func (h *Handle[T]) Recv() (v T, ok bool) {
	v, err := h.c.recv(nil, h.wr)
	return v, err == nil
}

// RecvContext is Chan.RecvContext through h.
func (h *Handle[T]) RecvContext(ctx context.Context) (T, error) {
	return h.c.recvContext(ctx, h.wr)
}

// TryRecv is Chan.TryRecv through h. While the values sent before h last
// looked are not all received, it does not look again.
func (h *Handle[T]) TryRecv() (T, error) { return h.c.tryRecvSeen(&h.seen) }

// All is Chan.All through h.
func (h *Handle[T]) All() iter.Seq[T] { return all(h.Recv) }

// AllContext is Chan.AllContext through h.
func (h *Handle[T]) AllContext(ctx context.Context) iter.Seq[T] {
	return h.c.allContext(ctx, h.wr)
}

// Close is Chan.Close.
func (h *Handle[T]) Close() error { return h.c.Close() }

// Len is Chan.Len.
func (h *Handle[T]) Len() int { return h.c.Len() }

// Cap is Chan.Cap.
func (h *Handle[T]) Cap() int { return h.c.Cap() }

// noCopy lets go vet's copylocks check report copies of the struct holding it.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
