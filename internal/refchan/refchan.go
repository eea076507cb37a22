// Package refchan is a small, obviously correct channel used as the baseline
// of the checker's self-tests, and mutants of it that the checker must reject.
//
// Chan keeps all of its state under one mutex, like Go's runtime channel:
// a buffer, a queue of parked senders and a queue of parked receivers, and
// a closed flag. An operation that can complete completes under the lock;
// one that cannot parks a waiter and sleeps on the waiter's own channel. The
// goroutine that completes a waiter does so under the lock and then wakes it,
// so a woken waiter finds its outcome already decided.
//
// Invariants, under mu:
//
//	len(recvq) > 0 implies len(buf) == 0 and len(sendq) == 0
//	len(sendq) > 0 implies len(buf) == cap (for unbounded: never)
//	closed implies len(sendq) == 0 and len(recvq) == 0
package refchan

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
)

// Unbounded is the capacity of a channel whose sends never block.
const Unbounded = -1

// The sentinel errors, with the meanings of the chans package.
var (
	ErrClosed = errors.New("refchan: channel closed")
	ErrFull   = errors.New("refchan: channel full")
	ErrEmpty  = errors.New("refchan: channel empty")
)

// Chan is the reference channel.
type Chan[T any] struct {
	mu     sync.Mutex
	k      int
	buf    []T
	sendq  []*waiter[T]
	recvq  []*waiter[T]
	closed bool
	// changed, if not nil, is closed and cleared at the next change that
	// may make a select's case ready; selects wait on it.
	changed chan struct{}
}

// notify wakes the selects waiting for a change.
func (c *Chan[T]) notify() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// waiter is a parked call. Its fields other than ready are written under
// the channel's lock by whoever decides its outcome (done set), before ready
// is closed.
type waiter[T any] struct {
	v     T
	done  bool
	err   error
	ready chan struct{}
}

// New returns a channel of capacity k: 0 rendezvous, k > 0 buffered, or
// Unbounded.
func New[T any](k int) *Chan[T] {
	if k < Unbounded {
		panic("refchan: negative capacity")
	}
	return &Chan[T]{k: k}
}

func (c *Chan[T]) hasRoom() bool { return c.k < 0 || len(c.buf) < c.k }

func (c *Chan[T]) finish(w *waiter[T], err error) {
	w.done, w.err = true, err
	close(w.ready)
}

// trySendLocked delivers v if that needs no waiting.
func (c *Chan[T]) trySendLocked(v T) (error, bool) {
	if c.closed {
		return ErrClosed, true
	}
	c.notify()
	if len(c.recvq) > 0 {
		w := c.recvq[0]
		c.recvq = c.recvq[1:]
		w.v = v
		c.finish(w, nil)
		return nil, true
	}
	if c.hasRoom() {
		c.buf = append(c.buf, v)
		return nil, true
	}
	return nil, false
}

// tryRecvLocked takes a value if that needs no waiting.
func (c *Chan[T]) tryRecvLocked() (T, error, bool) {
	var zero T
	if len(c.buf) > 0 || len(c.sendq) > 0 {
		c.notify()
	}
	if len(c.buf) > 0 {
		v := c.buf[0]
		c.buf[0] = zero
		c.buf = c.buf[1:]
		if len(c.sendq) > 0 { // the first parked sender now has room
			w := c.sendq[0]
			c.sendq = c.sendq[1:]
			c.buf = append(c.buf, w.v)
			c.finish(w, nil)
		}
		return v, nil, true
	}
	if len(c.sendq) > 0 { // rendezvous
		w := c.sendq[0]
		c.sendq = c.sendq[1:]
		c.finish(w, nil)
		return w.v, nil, true
	}
	if c.closed {
		return zero, ErrClosed, true
	}
	return zero, nil, false
}

// park waits for w's outcome or for ctx. On cancellation it removes w from
// q unless w was completed first, in which case the completed outcome wins.
func (c *Chan[T]) park(ctx context.Context, w *waiter[T], q *[]*waiter[T]) {
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	select {
	case <-w.ready:
		return
	case <-done:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.done {
		return
	}
	for i, x := range *q {
		if x == w {
			*q = append((*q)[:i:i], (*q)[i+1:]...)
			break
		}
	}
	w.done, w.err = true, ctx.Err()
}

func (c *Chan[T]) send(ctx context.Context, v T) error {
	c.mu.Lock()
	if err, ok := c.trySendLocked(v); ok {
		c.mu.Unlock()
		return err
	}
	if ctx != nil && ctx.Err() != nil {
		c.mu.Unlock()
		return ctx.Err()
	}
	w := &waiter[T]{v: v, ready: make(chan struct{})}
	c.sendq = append(c.sendq, w)
	c.notify()
	c.mu.Unlock()
	c.park(ctx, w, &c.sendq)
	return w.err
}

func (c *Chan[T]) recv(ctx context.Context) (T, error) {
	c.mu.Lock()
	if v, err, ok := c.tryRecvLocked(); ok {
		c.mu.Unlock()
		return v, err
	}
	if ctx != nil && ctx.Err() != nil {
		c.mu.Unlock()
		var zero T
		return zero, ctx.Err()
	}
	w := &waiter[T]{ready: make(chan struct{})}
	c.recvq = append(c.recvq, w)
	c.notify()
	c.mu.Unlock()
	c.park(ctx, w, &c.recvq)
	return w.v, w.err
}

// Send sends v, blocking while there is no room.
func (c *Chan[T]) Send(v T) error { return c.send(context.Background(), v) }

// SendContext is Send that gives up when ctx is done.
func (c *Chan[T]) SendContext(ctx context.Context, v T) error { return c.send(ctx, v) }

// TrySend sends v only if that needs no waiting.
func (c *Chan[T]) TrySend(v T) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err, ok := c.trySendLocked(v); ok {
		return err
	}
	return ErrFull
}

// Recv receives the next value; ok is false once closed and drained.
func (c *Chan[T]) Recv() (T, bool) {
	v, err := c.recv(context.Background())
	return v, err == nil
}

// RecvContext is Recv that gives up when ctx is done.
func (c *Chan[T]) RecvContext(ctx context.Context) (T, error) { return c.recv(ctx) }

// TryRecv receives a value only if that needs no waiting.
func (c *Chan[T]) TryRecv() (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, err, ok := c.tryRecvLocked(); ok {
		return v, err
	}
	var zero T
	return zero, ErrEmpty
}

// Close closes the channel: parked senders fail with ErrClosed, parked
// receivers (there are some only if nothing is buffered) report closed.
func (c *Chan[T]) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.closed = true
	c.notify()
	for _, w := range c.sendq {
		c.finish(w, ErrClosed)
	}
	for _, w := range c.recvq {
		c.finish(w, ErrClosed)
	}
	c.sendq, c.recvq = nil, nil
	return nil
}

// Len returns the number of buffered values.
func (c *Chan[T]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.buf)
}

// Cap returns the capacity given to New.
func (c *Chan[T]) Cap() int { return c.k }

// The cases a select can commit (see linz.SelectFunc).
const (
	CaseNone = -1
	CaseSend = 0
	CaseRecv = 1
)

// Select commits one of two cases on c, sending v and receiving, choosing
// at random when both are ready: a TrySelect if block is false, a Select
// that gives up when ctx (if not nil) is done otherwise. A waiting select
// registers nowhere; it waits for the next change of c and looks again. So
// two selects waiting on a rendezvous channel do not meet each other (the
// reference is linearizable, not maximally live), and TrySend sees no
// receiver in a waiting select.
func (c *Chan[T]) Select(ctx context.Context, v T, block bool) (which int, got T, ok bool, err error) {
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	for {
		c.mu.Lock()
		sendReady := c.closed || len(c.recvq) > 0 || c.hasRoom()
		recvReady := c.closed || len(c.buf) > 0 || len(c.sendq) > 0
		if sendReady && recvReady {
			sendReady = rand.IntN(2) == 0
		}
		switch {
		case sendReady:
			err, _ := c.trySendLocked(v)
			c.mu.Unlock()
			return CaseSend, got, false, err
		case recvReady:
			got, err, _ := c.tryRecvLocked()
			c.mu.Unlock()
			return CaseRecv, got, err == nil, nil
		case !block:
			c.mu.Unlock()
			return CaseNone, got, false, nil
		case ctx != nil && ctx.Err() != nil:
			c.mu.Unlock()
			return CaseNone, got, false, ctx.Err()
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-done:
		}
	}
}
