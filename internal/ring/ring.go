// Package ring is a bounded FIFO channel on a ring of lap-numbered slots,
// the design that bench/results/tried-2core-a2207e8/ring/DESIGN.md proposes
// for the buffered kinds of chans: it allocates nothing per message, and in
// the prototype it measured 0.75x native channels on a send+receive pair and
// 0.45x to 0.90x on producer/consumer traffic on 2 cores.
//
// It is not used by chans, and will not be as it is: on 16 cores it measured
// 1.2x to 2.8x native channels on producer/consumer traffic from 4 cores on
// (bench/results/sweep-16core-b9cd63c), where the cells of chans, whose
// tickets are fetch-and-adds, do not degrade that way. Its claims are
// compare-and-swaps, and their retries grow with the number of contending
// cores; a ring for chans must take positions by fetch-and-add, as CRQ and
// LPRQ do. It stays as a checked reference for the parts that do not depend
// on how positions are taken: exact verdicts, Close as a bit in the tail,
// cancellation by leaving a queue, FIFO hand-off to parked senders. It has
// the operations the linearizability harness (internal/linz) checks:
// blocking, Try and Context sends and receives, Close with Go's drain
// semantics, Len and Cap.
//
// # How it works
//
// Slot p mod n (n is the capacity) serves position p of the stream. Its
// sequence number says which position may use it next: 2p when the send of
// position p may write it, 2p+1 once that value is published, 2(p+n) once
// the receive of position p has freed it for the send of position p+n. (With
// p, p+1 and p+n instead, a one-slot ring could not tell a published value
// from a freed slot.)
//
// Tail T counts the positions claimed by sends, with Close's bit on top;
// head H counts those claimed by receives. A send claims position t with a
// compare-and-swap T: t → t+1, allowed only while slot t mod n shows t; that
// compare-and-swap is the send's linearization point, and it fails once
// Close has set its bit. A receive claims position h with a compare-and-swap
// H: h → h+1, allowed only while slot h mod n shows h+1; that is the
// receive's linearization point. So the value of position p is the p-th sent
// and the p-th received: FIFO.
//
// Between a claim and the store of the slot's sequence, the slot is in
// flight. An operation that meets a slot in flight waits for it (yielding,
// never parking): the claimer is running and a few instructions from the
// store. So verdicts are exact: a send says full only when T - H reached the
// capacity at the instant it loaded T, a receive says empty (or closed and
// drained) only when T ≤ H at the instant it loaded T.
//
// Blocking. A send that finds the ring full parks on the send queue with its
// value; a receive that frees a slot while senders are parked moves the
// oldest parked sender's value into the ring (claiming the position on its
// behalf, which is that send's linearization point, inside its call) and
// then wakes it. A new send does not pass parked ones: while any is parked
// it parks behind them. So parked senders are served in the order they
// parked, as Go's runtime serves them. A receive that finds the ring empty
// registers on the receive queue, looks again, and parks; every send that
// publishes a value wakes one registered receive, which then tries again.
package ring

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/scalable-go/chans/internal/sched"
)

// The errors, as chans names them.
var (
	ErrClosed = errors.New("ring: channel closed")
	ErrFull   = errors.New("ring: channel full")
	ErrEmpty  = errors.New("ring: channel empty")
)

// errCancelled is what send and recv return when done was closed first.
var errCancelled = errors.New("ring: cancelled")

const (
	closedBit = 1 << 63
	cacheLine = 64
)

type slot[T any] struct {
	seq atomic.Uint64
	v   T
}

// Chan is a bounded FIFO channel of capacity Cap() ≥ 1.
type Chan[T any] struct {
	_    [cacheLine]byte
	tail atomic.Uint64 // positions claimed by sends; bit 63: closed
	_    [cacheLine - 8]byte
	head atomic.Uint64 // positions claimed by receives
	_    [cacheLine - 8]byte

	n     uint64 // the capacity, and the number of slots
	slots []slot[T]
	sendq sendQueue[T]
	recvq recvQueue
}

// New returns a channel of capacity n, which must be at least 1.
func New[T any](n int) *Chan[T] {
	if n < 1 {
		panic("ring: capacity below 1")
	}
	c := &Chan[T]{n: uint64(n), slots: make([]slot[T], n)}
	for i := range c.slots {
		c.slots[i].seq.Store(2 * uint64(i)) // free for the send of position i
	}
	return c
}

// Cap returns the capacity.
func (c *Chan[T]) Cap() int { return int(c.n) }

// Len returns the number of values in the channel at one instant during the
// call: T - H at the load of H, with T the same before and after it.
func (c *Chan[T]) Len() int {
	for {
		t := c.tail.Load() &^ closedBit
		sched.Point()
		h := c.head.Load()
		sched.Point()
		if c.tail.Load()&^closedBit == t {
			return int(t - h)
		}
	}
}

// result is what a non-blocking step reports.
type result uint8

const (
	resOK result = iota
	resFull
	resEmpty
	resClosed
)

// trySend claims a position with room for v and publishes v there, or
// reports full or closed. The verdicts hold at its last load of T.
func (c *Chan[T]) trySend(v T) result {
	for {
		t := c.tail.Load()
		if t&closedBit != 0 {
			return resClosed // closed at this load
		}
		s := &c.slots[t%c.n]
		seq := s.seq.Load()
		sched.Point()
		switch {
		case seq == 2*t:
			if c.tail.CompareAndSwap(t, t+1) { // the send takes effect
				sched.Point() // claimed, not published: partners wait
				s.v = v
				s.seq.Store(2*t + 1) // published
				return resOK
			}
		case seq < 2*t:
			// The slot still serves position t-n. If H, loaded after, is
			// at most t and t - H ≥ n, then T - H ≥ n held at the load of
			// T above too (H only grows), with the channel open: full
			// there. If H is past t, the ring has moved on since T was
			// loaded (t - H would wrap): look again. Else the receive of
			// position t-n has claimed the slot and is freeing it: wait.
			h := c.head.Load()
			switch {
			case h > t:
			case t-h >= c.n:
				return resFull
			default:
				runtime.Gosched()
			}
		}
		// seq > 2t: position t was claimed and published; T moved on.
	}
}

// tryRecv claims the next position that holds a value and takes it, or
// reports empty, or closed and drained. The verdicts hold at its last load
// of T.
func (c *Chan[T]) tryRecv() (T, result) {
	var zero T
	for {
		h := c.head.Load()
		s := &c.slots[h%c.n]
		seq := s.seq.Load()
		sched.Point()
		switch {
		case seq == 2*h+1:
			if c.head.CompareAndSwap(h, h+1) { // the receive takes effect
				sched.Point() // claimed, not freed: senders of the next lap wait
				v := s.v
				s.v = zero
				s.seq.Store(2 * (h + c.n)) // free for the send of position h+n
				return v, resOK
			}
		case seq < 2*h+1:
			// Position h is not published. If no send has claimed it,
			// T ≤ h ≤ H at the load of T: empty there (and drained, if
			// closed). Else its send is publishing it.
			tw := c.tail.Load()
			if tw&^closedBit <= h {
				if tw&closedBit != 0 {
					return zero, resClosed
				}
				return zero, resEmpty
			}
			runtime.Gosched()
		}
		// seq > 2h+1: position h was received already; H moved on.
	}
}

// afterSend wakes a registered receive, if any, for the value just published.
func (c *Chan[T]) afterSend() {
	if c.recvq.n.Load() != 0 {
		c.recvq.wakeOne()
	}
}

// afterRecv lets parked senders into the slot just freed.
func (c *Chan[T]) afterRecv() {
	if c.sendq.n.Load() != 0 {
		c.handOff()
	}
}

// TrySend sends v only if that needs no waiting: nil, ErrFull, or ErrClosed
// (even if the channel is also full).
func (c *Chan[T]) TrySend(v T) error {
	switch c.trySend(v) {
	case resOK:
		c.afterSend()
		return nil
	case resFull:
		return ErrFull
	}
	return ErrClosed
}

// TryRecv receives a value only if that needs no waiting: the value and
// nil, ErrEmpty, or ErrClosed once closed and drained.
func (c *Chan[T]) TryRecv() (T, error) {
	v, r := c.tryRecv()
	switch r {
	case resOK:
		c.afterRecv()
		return v, nil
	case resEmpty:
		return v, ErrEmpty
	}
	return v, ErrClosed
}

// Send sends v, blocking while the channel is full; it returns ErrClosed if
// the channel is closed first.
func (c *Chan[T]) Send(v T) error { return c.send(nil, v) }

// SendContext is Send that gives up when ctx is done, returning ctx.Err();
// it then sent nothing. With ctx done already it only tries.
func (c *Chan[T]) SendContext(ctx context.Context, v T) error {
	if err := ctx.Err(); err != nil {
		if e := c.TrySend(v); e != ErrFull {
			return e
		}
		return err
	}
	if err := c.send(ctx.Done(), v); err != errCancelled {
		return err
	}
	return ctx.Err()
}

// Recv receives the next value, blocking while the channel is empty and
// open; ok is false once it is closed and drained.
func (c *Chan[T]) Recv() (v T, ok bool) {
	v, err := c.recv(nil)
	return v, err == nil
}

// RecvContext is Recv that gives up when ctx is done, returning ctx.Err();
// it then took nothing. With ctx done already it only tries.
func (c *Chan[T]) RecvContext(ctx context.Context) (T, error) {
	if err := ctx.Err(); err != nil {
		v, e := c.TryRecv()
		if e == ErrEmpty {
			e = err
		}
		return v, e
	}
	v, err := c.recv(ctx.Done())
	if err == errCancelled {
		err = ctx.Err()
	}
	return v, err
}

// Close closes the channel: sends fail from here on, parked ones too, and
// receives take what was sent before and then report closed. It takes
// effect at the fetch-and-or on T. A second Close returns ErrClosed.
func (c *Chan[T]) Close() error {
	if c.tail.Or(closedBit)&closedBit != 0 {
		return ErrClosed
	}
	sched.Point() // closed; parked senders not failed yet
	// Parked senders: none of their values was claimed (a hand-off under
	// way finds the bit and fails its sender the same way).
	for _, w := range takeAll(&c.sendq.mu, &c.sendq.ws, &c.sendq.n) {
		w.ch <- resClosed
	}
	c.recvq.wakeAll() // they look again and find the channel closed, once drained
	return nil
}

// ===== Parked senders =====

type sendWaiter[T any] struct {
	ch chan result // resOK: the value is in the ring; resClosed
	v  T
}

type sendQueue[T any] struct {
	n    atomic.Int64 // senders parked or about to look again; read without the lock
	mu   sync.Mutex
	ws   []*sendWaiter[T] // oldest first
	pool sync.Pool
}

// send is Send, giving up when done is closed (never, if done is nil).
func (c *Chan[T]) send(done <-chan struct{}, v T) error {
	q := &c.sendq
	if q.n.Load() == 0 { // nobody parked: no one to pass
		switch c.trySend(v) {
		case resOK:
			c.afterSend()
			return nil
		case resClosed:
			return ErrClosed
		}
	}
	q.mu.Lock()
	// Announce, then look again: a receive that frees a slot after this
	// look loads n after the announcement and hands off under the lock; one
	// that freed it before lets this look succeed. With others parked ahead,
	// the hand-offs serve them first.
	q.n.Add(1)
	sched.Point()
	r := resFull
	if len(q.ws) == 0 {
		r = c.trySend(v)
	} else if c.tail.Load()&closedBit != 0 {
		r = resClosed // Close has failed the queue, or waits for this lock to
	}
	if r != resFull {
		q.n.Add(-1)
		q.mu.Unlock()
		if r == resClosed {
			return ErrClosed
		}
		c.afterSend()
		return nil
	}
	w, _ := q.pool.Get().(*sendWaiter[T])
	if w == nil {
		w = &sendWaiter[T]{ch: make(chan result, 1)}
	}
	w.v = v
	q.ws = append(q.ws, w)
	q.mu.Unlock()

	select {
	case r = <-w.ch:
	case <-done:
		q.mu.Lock()
		if q.remove(w) {
			q.n.Add(-1)
			q.mu.Unlock()
			c.putSendWaiter(w)
			return errCancelled // nothing claimed on its behalf
		}
		q.mu.Unlock()
		r = <-w.ch // a hand-off or Close took it first
	}
	c.putSendWaiter(w)
	if r == resClosed {
		return ErrClosed
	}
	return nil
}

func (c *Chan[T]) putSendWaiter(w *sendWaiter[T]) {
	var zero T
	w.v = zero
	c.sendq.pool.Put(w)
}

// remove takes w off the queue and reports whether it was there.
func (q *sendQueue[T]) remove(w *sendWaiter[T]) bool {
	for i, x := range q.ws {
		if x == w {
			q.ws = append(q.ws[:i], q.ws[i+1:]...)
			return true
		}
	}
	return false
}

// handOff moves the values of parked senders into the ring while it has
// room, oldest first, each send taking effect at its claim, and wakes their
// senders; a Close in the way fails them.
func (c *Chan[T]) handOff() {
	q := &c.sendq
	q.mu.Lock()
	moved := 0
	for len(q.ws) > 0 {
		w := q.ws[0]
		r := c.trySend(w.v)
		if r == resFull {
			break // a send that was not parked took the slot; the next receive hands off
		}
		q.ws[0] = nil
		q.ws = q.ws[1:]
		q.n.Add(-1)
		w.ch <- r
		if r == resOK {
			moved++
		}
	}
	q.mu.Unlock()
	for ; moved > 0; moved-- {
		c.afterSend()
	}
}

// ===== Parked receivers =====

type recvWaiter struct{ ch chan struct{} }

type recvQueue struct {
	n    atomic.Int64 // registered receivers; read without the lock
	mu   sync.Mutex
	ws   []*recvWaiter
	pool sync.Pool
}

func (q *recvQueue) add(w *recvWaiter) {
	q.mu.Lock()
	q.ws = append(q.ws, w)
	q.n.Add(1)
	q.mu.Unlock()
}

// remove takes w off the queue and reports whether it was there; if not, a
// wake-up is on its way to it.
func (q *recvQueue) remove(w *recvWaiter) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, x := range q.ws {
		if x == w {
			q.ws = append(q.ws[:i], q.ws[i+1:]...)
			q.n.Add(-1)
			return true
		}
	}
	return false
}

// wakeOne wakes the longest-registered receiver, if any.
func (q *recvQueue) wakeOne() {
	q.mu.Lock()
	if len(q.ws) == 0 {
		q.mu.Unlock()
		return
	}
	w := q.ws[0]
	q.ws[0] = nil
	q.ws = q.ws[1:]
	q.n.Add(-1)
	q.mu.Unlock()
	w.ch <- struct{}{}
}

func (q *recvQueue) wakeAll() {
	for _, w := range takeAll(&q.mu, &q.ws, &q.n) {
		w.ch <- struct{}{}
	}
}

// takeAll empties a queue under its lock and returns what it held.
func takeAll[W any](mu *sync.Mutex, ws *[]W, n *atomic.Int64) []W {
	mu.Lock()
	all := *ws
	*ws = nil
	n.Add(-int64(len(all)))
	mu.Unlock()
	return all
}

// recv is Recv, giving up when done is closed (never, if done is nil).
func (c *Chan[T]) recv(done <-chan struct{}) (T, error) {
	q := &c.recvq
	for {
		v, r := c.tryRecv()
		if r != resEmpty {
			return c.received(v, r)
		}
		w, _ := q.pool.Get().(*recvWaiter)
		if w == nil {
			w = &recvWaiter{ch: make(chan struct{}, 1)}
		}
		q.add(w)
		sched.Point()
		// Look again after registering: a send that published before
		// this look is seen by it; one after it finds the registration.
		if v, r = c.tryRecv(); r != resEmpty {
			if !q.remove(w) {
				<-w.ch
				c.afterSend() // the wake-up was for a value: pass it on
			}
			q.pool.Put(w)
			return c.received(v, r)
		}
		select {
		case <-w.ch:
			q.pool.Put(w)
		case <-done:
			if q.remove(w) {
				q.pool.Put(w)
				var zero T
				return zero, errCancelled
			}
			<-w.ch
			q.pool.Put(w)
			// Woken as done fired: take what needs no waiting, or pass
			// the wake-up on to another receiver.
			if v, r = c.tryRecv(); r != resEmpty {
				return c.received(v, r)
			}
			c.afterSend()
			var zero T
			return zero, errCancelled
		}
	}
}

// received finishes a receive whose tryRecv did not report empty.
func (c *Chan[T]) received(v T, r result) (T, error) {
	if r == resClosed {
		return v, ErrClosed
	}
	c.afterRecv()
	return v, nil
}
