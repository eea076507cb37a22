package refchan

import (
	"context"
	"sync"
)

// Mutation names a deliberate bug.
type Mutation int

// The mutations. Each fires on every third call of the operation it breaks,
// so a short history meets it.
const (
	// Drop: a send reports success but delivers nothing.
	Drop Mutation = iota
	// Duplicate: a receive hands out the value it returned last time again.
	Duplicate
	// Swap: a receive holds its value back, returns the next one first and
	// the held one on the following receive.
	Swap
	// SpuriousEmpty: TryRecv reports ErrEmpty without looking.
	SpuriousEmpty
	// CancelledSend: a SendContext whose context is done still delivers
	// when it can, and reports the context's error.
	CancelledSend
	// CancelledRecv: a RecvContext whose context is done still takes a
	// value when it can, reports the context's error, and drops the value.
	CancelledRecv
	// EarlySend: a rendezvous channel that buffers one value, so a Send
	// returns before any receiver took its value. Use with capacity 0.
	EarlySend
	// SelectBoth: a select that commits both cases when it can (sends its
	// value and receives one) and reports only the receive.
	SelectBoth
)

// Mutations lists every mutation.
var Mutations = []Mutation{Drop, Duplicate, Swap, SpuriousEmpty, CancelledSend, CancelledRecv, EarlySend, SelectBoth}

func (m Mutation) String() string {
	if s, ok := batchMutationName(m); ok {
		return s
	}
	return [...]string{"Drop", "Duplicate", "Swap", "SpuriousEmpty", "CancelledSend", "CancelledRecv", "EarlySend", "SelectBoth"}[m]
}

// Mutant is a reference channel with one mutation. Like a Chan, it may be
// used by many goroutines at once.
type Mutant[T any] struct {
	*Chan[T]
	m    Mutation
	k    int
	mu   sync.Mutex
	n    int  // calls of the mutated operation so far
	held bool // a value is held back (Duplicate, Swap)
	v    T
}

// NewMutant returns a channel of capacity k with mutation m. For EarlySend k
// must be 0.
func NewMutant[T any](m Mutation, k int) *Mutant[T] {
	inner := k
	if m == EarlySend {
		if k != 0 {
			panic("refchan: EarlySend needs capacity 0")
		}
		inner = 1
	}
	return &Mutant[T]{Chan: New[T](inner), m: m, k: k}
}

// fire counts a call of the mutated operation and reports whether this one
// is mutated.
func (c *Mutant[T]) fire(m Mutation) bool {
	if c.m != m {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n%3 == 0
}

// Cap returns the capacity the mutant pretends to have.
func (c *Mutant[T]) Cap() int { return c.k }

// Send is Chan.Send, mutated by Drop.
func (c *Mutant[T]) Send(v T) error {
	if c.fire(Drop) {
		return nil
	}
	return c.Chan.Send(v)
}

// SendContext is Chan.SendContext, mutated by Drop and CancelledSend.
func (c *Mutant[T]) SendContext(ctx context.Context, v T) error {
	if c.fire(Drop) {
		return nil
	}
	if ctx.Err() != nil && c.fire(CancelledSend) {
		c.Chan.TrySend(v)
		return ctx.Err()
	}
	return c.Chan.SendContext(ctx, v)
}

// TrySend is Chan.TrySend, mutated by Drop.
func (c *Mutant[T]) TrySend(v T) error {
	if c.fire(Drop) {
		return nil
	}
	return c.Chan.TrySend(v)
}

// takeHeld hands out a value held back by Duplicate or Swap, if any.
func (c *Mutant[T]) takeHeld() (T, bool) {
	var zero T
	if c.m != Duplicate && c.m != Swap {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.held {
		return zero, false
	}
	v := c.v
	c.held, c.v = false, zero
	return v, true
}

// mutateRecv applies Duplicate and Swap to a receive that got v with err.
func (c *Mutant[T]) mutateRecv(v T, err error) (T, error) {
	if err != nil || (c.m != Duplicate && c.m != Swap) || !c.fire(c.m) {
		return v, err
	}
	if c.m == Duplicate {
		c.mu.Lock()
		c.held, c.v = true, v
		c.mu.Unlock()
		return v, nil
	}
	w, werr := c.Chan.TryRecv()
	if werr != nil {
		return v, nil
	}
	c.mu.Lock()
	c.held, c.v = true, v
	c.mu.Unlock()
	return w, nil
}

// Recv is Chan.Recv, mutated by Duplicate and Swap.
func (c *Mutant[T]) Recv() (T, bool) {
	if v, ok := c.takeHeld(); ok {
		return v, true
	}
	v, ok := c.Chan.Recv()
	if !ok {
		return v, false
	}
	v, _ = c.mutateRecv(v, nil)
	return v, true
}

// RecvContext is Chan.RecvContext, mutated by CancelledRecv, Duplicate and
// Swap.
func (c *Mutant[T]) RecvContext(ctx context.Context) (T, error) {
	if v, ok := c.takeHeld(); ok {
		return v, nil
	}
	if ctx.Err() != nil && c.fire(CancelledRecv) {
		var zero T
		c.Chan.TryRecv()
		return zero, ctx.Err()
	}
	return c.mutateRecv(c.Chan.RecvContext(ctx))
}

// TryRecv is Chan.TryRecv, mutated by SpuriousEmpty, Duplicate and Swap.
func (c *Mutant[T]) TryRecv() (T, error) {
	if v, ok := c.takeHeld(); ok {
		return v, nil
	}
	if c.fire(SpuriousEmpty) {
		var zero T
		return zero, ErrEmpty
	}
	return c.mutateRecv(c.Chan.TryRecv())
}

// Select is Chan.Select, mutated by SelectBoth.
func (c *Mutant[T]) Select(ctx context.Context, v T, block bool) (which int, got T, ok bool, err error) {
	if c.m == SelectBoth {
		c.mu.Lock()
		c.n++
		fire := c.n%3 == 0
		c.mu.Unlock()
		if fire && c.Chan.TrySend(v) == nil {
			if w, err := c.Chan.TryRecv(); err == nil {
				return CaseRecv, w, true, nil
			}
			return CaseSend, got, false, nil
		}
	}
	return c.Chan.Select(ctx, v, block)
}
