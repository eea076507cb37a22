package refchan

import "context"

// Batch operations of the reference channel, as the chans package defines
// them: SendMany is len(vs) consecutive Sends, stopping at the first that
// fails; RecvMany waits for one value as Recv does and then takes, under
// the lock, every value available up to len(dst); TryRecvMany takes what
// is available without waiting.

// SendMany sends the values of vs in order and returns how many it sent,
// with the error of the first send that failed.
func (c *Chan[T]) SendMany(vs []T) (int, error) { return c.sendMany(context.Background(), vs) }

// SendManyContext is SendMany that gives up when ctx is done.
func (c *Chan[T]) SendManyContext(ctx context.Context, vs []T) (int, error) {
	return c.sendMany(ctx, vs)
}

func (c *Chan[T]) sendMany(ctx context.Context, vs []T) (int, error) {
	for i, v := range vs {
		if err := c.send(ctx, v); err != nil {
			return i, err
		}
	}
	return len(vs), nil
}

// RecvMany waits for a value, or for the channel to be closed and drained,
// and then receives every value available, up to len(dst).
func (c *Chan[T]) RecvMany(dst []T) (int, error) { return c.recvMany(context.Background(), dst) }

// RecvManyContext is RecvMany that gives up when ctx is done.
func (c *Chan[T]) RecvManyContext(ctx context.Context, dst []T) (int, error) {
	return c.recvMany(ctx, dst)
}

func (c *Chan[T]) recvMany(ctx context.Context, dst []T) (int, error) {
	if len(dst) == 0 {
		return 0, nil
	}
	v, err := c.recv(ctx)
	if err != nil {
		return 0, err
	}
	dst[0] = v
	c.mu.Lock()
	defer c.mu.Unlock()
	return 1 + c.takeLocked(dst[1:]), nil
}

// TryRecvMany receives every value available, up to len(dst), without
// waiting: ErrEmpty if there is none, ErrClosed once closed and drained.
func (c *Chan[T]) TryRecvMany(dst []T) (int, error) {
	if len(dst) == 0 {
		return 0, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.takeLocked(dst); n > 0 {
		return n, nil
	}
	if c.closed {
		return 0, ErrClosed
	}
	return 0, ErrEmpty
}

// takeLocked receives every value available, up to len(dst).
func (c *Chan[T]) takeLocked(dst []T) int {
	n := 0
	for n < len(dst) {
		v, err, ok := c.tryRecvLocked()
		if !ok || err != nil {
			break
		}
		dst[n] = v
		n++
	}
	return n
}

// The batch mutations. Each fires on every third batch call of at least two
// values.
const (
	// BatchSendSwap: a send batch sends its first two values in the wrong
	// order.
	BatchSendSwap Mutation = 100 + iota
	// BatchRecvSwap: a receive batch returns its first two values in the
	// wrong order.
	BatchRecvSwap
)

// BatchMutations lists the batch mutations.
var BatchMutations = []Mutation{BatchSendSwap, BatchRecvSwap}

func batchMutationName(m Mutation) (string, bool) {
	switch m {
	case BatchSendSwap:
		return "BatchSendSwap", true
	case BatchRecvSwap:
		return "BatchRecvSwap", true
	}
	return "", false
}

// SendMany is Chan.SendMany, mutated by BatchSendSwap.
func (c *Mutant[T]) SendMany(vs []T) (int, error) {
	return c.SendManyContext(context.Background(), vs)
}

// SendManyContext is Chan.SendManyContext, mutated by BatchSendSwap.
func (c *Mutant[T]) SendManyContext(ctx context.Context, vs []T) (int, error) {
	if len(vs) < 2 || !c.fire(BatchSendSwap) {
		return c.Chan.SendManyContext(ctx, vs)
	}
	swapped := append([]T{vs[1], vs[0]}, vs[2:]...)
	return c.Chan.SendManyContext(ctx, swapped)
}

// RecvMany is Chan.RecvMany, mutated by BatchRecvSwap.
func (c *Mutant[T]) RecvMany(dst []T) (int, error) {
	return c.swapRecv(dst)(c.Chan.RecvMany(dst))
}

// RecvManyContext is Chan.RecvManyContext, mutated by BatchRecvSwap.
func (c *Mutant[T]) RecvManyContext(ctx context.Context, dst []T) (int, error) {
	return c.swapRecv(dst)(c.Chan.RecvManyContext(ctx, dst))
}

// TryRecvMany is Chan.TryRecvMany, mutated by BatchRecvSwap.
func (c *Mutant[T]) TryRecvMany(dst []T) (int, error) {
	return c.swapRecv(dst)(c.Chan.TryRecvMany(dst))
}

// swapRecv returns what applies BatchRecvSwap to the result of a receive
// batch into dst.
func (c *Mutant[T]) swapRecv(dst []T) func(int, error) (int, error) {
	return func(n int, err error) (int, error) {
		if n >= 2 && c.fire(BatchRecvSwap) {
			dst[0], dst[1] = dst[1], dst[0]
		}
		return n, err
	}
}
