package chans_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/scalable-go/chans"
)

// TestDoneContextCannotProceed checks that an operation that cannot proceed
// returns ctx.Err() as is, and at once, when its context is already done (the
// calls run in the test goroutine: blocking would hang the test). The error
// is ctx.Err() itself: context.Canceled, context.DeadlineExceeded, and
// context.Canceled (not the cause) for a context cancelled with a cause.
func TestDoneContextCannotProceed(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		c := chans.New[int](capacity)
		o := open(v, c)
		for _, d := range doneContexts() {
			want := d.ctx.Err()
			_, err := o.RecvContext(d.ctx)
			isErr(t, err, want, d.name+": RecvContext on an empty channel")
			if d.name == "cause" && (errors.Is(err, errCause) || !errors.Is(err, context.Canceled)) {
				t.Fatalf("RecvContext returned %v: want context.Canceled, not the cause", err)
			}
			if d.name == "deadline" && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("RecvContext returned %v, want context.DeadlineExceeded", err)
			}
		}
		if !bounded(capacity) {
			return
		}
		for i := 0; i < capacity; i++ {
			noErr(t, o.TrySend(i), "TrySend filling")
		}
		for _, d := range doneContexts() {
			isErr(t, o.SendContext(d.ctx, -1), d.ctx.Err(), d.name+": SendContext on a full channel")
		}
		if n := c.Len(); n != capacity {
			t.Fatalf("Len() = %d after refused sends, want %d", n, capacity)
		}
		for i := 0; i < capacity; i++ {
			got, err := o.TryRecv()
			noErr(t, err, "TryRecv draining")
			if got != i {
				t.Fatalf("TryRecv = %d, want %d (a refused send delivered?)", got, i)
			}
		}
		_, err := o.TryRecv()
		isErr(t, err, chans.ErrEmpty, "TryRecv after draining")
	})
}

// TestDoneContextCanProceed checks an operation that could proceed, given a
// context that is already done: it may complete or return ctx.Err(), and
// either way nothing is lost or duplicated.
func TestDoneContextCanProceed(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		c := chans.New[int](capacity)
		o := open(v, c)
		for _, d := range doneContexts() {
			for i := 0; i < 20; i++ {
				if !buffered(capacity) {
					// A waiting sender: take its value, or leave it for Recv.
					errc := make(chan error, 1)
					go func() { errc <- open(v, c).Send(i) }()
					yieldALot()
					got, err := o.RecvContext(d.ctx)
					if err != nil {
						isErr(t, err, d.ctx.Err(), d.name+": RecvContext with a waiting sender")
						var ok bool
						if got, ok = o.Recv(); !ok {
							t.Fatal("Recv reported closed")
						}
					}
					noErr(t, <-errc, "the waiting sender")
					if got != i {
						t.Fatalf("%s: received %d, want %d", d.name, got, i)
					}
					continue
				}
				// Room to send: SendContext either buffers the value or not.
				err := o.SendContext(d.ctx, i)
				if err != nil {
					isErr(t, err, d.ctx.Err(), d.name+": SendContext with room")
					if n := c.Len(); n != 0 {
						t.Fatalf("%s: a refused SendContext left Len() = %d", d.name, n)
					}
					noErr(t, o.TrySend(i), "TrySend")
				}
				// A buffered value: RecvContext either takes it or leaves it.
				got, err := o.RecvContext(d.ctx)
				if err != nil {
					isErr(t, err, d.ctx.Err(), d.name+": RecvContext with a value buffered")
					if n := c.Len(); n != 1 {
						t.Fatalf("%s: a refused RecvContext left Len() = %d, want 1", d.name, n)
					}
					got, err = o.TryRecv()
					noErr(t, err, "TryRecv of the value RecvContext left")
				}
				if got != i {
					t.Fatalf("%s: received %d, want %d", d.name, got, i)
				}
				_, err = o.TryRecv()
				isErr(t, err, chans.ErrEmpty, "TryRecv on the drained channel")
			}
		}
	})
}

// TestCancelWaitingRecv cancels a receive that waits on an empty channel in
// every way: it returns ctx.Err() and takes nothing. A value sent afterwards
// goes to the next receiver, not to the cancelled one; on a rendezvous
// channel, TrySend finds no receiver.
func TestCancelWaitingRecv(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		c := chans.New[int](capacity)
		o := open(v, c)
		for i, way := range cancelWays {
			ctx, wait := way.ctx()
			_, err := o.RecvContext(ctx)
			wait()
			isErr(t, err, ctx.Err(), way.name+": RecvContext on an empty channel")
			if n := c.Len(); n != 0 {
				t.Fatalf("%s: Len() = %d after a cancelled receive, want 0", way.name, n)
			}
			if !buffered(capacity) {
				isErr(t, o.TrySend(i), chans.ErrFull, way.name+": TrySend after the receiver gave up")
				continue
			}
			noErr(t, o.TrySend(i), "TrySend")
			got, err := o.TryRecv()
			noErr(t, err, way.name+": TryRecv of the value sent after a cancelled receive")
			if got != i {
				t.Fatalf("%s: TryRecv = %d, want %d", way.name, got, i)
			}
		}
	})
}

// TestCancelWaitingSend cancels a send that waits on a full channel in every
// way: it returns ctx.Err() and delivers nothing; the buffered values stay,
// in order; on a rendezvous channel, TryRecv finds no sender.
func TestCancelWaitingSend(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		if !bounded(capacity) {
			t.Skip("sends on an unbounded channel never wait")
		}
		c := chans.New[int](capacity)
		o := open(v, c)
		next, want := 0, 0
		for i := 0; i < capacity; i++ {
			noErr(t, o.TrySend(next), "TrySend filling")
			next++
		}
		for _, way := range cancelWays {
			ctx, wait := way.ctx()
			err := o.SendContext(ctx, -1)
			wait()
			isErr(t, err, ctx.Err(), way.name+": SendContext on a full channel")
			if n := c.Len(); n != capacity {
				t.Fatalf("%s: Len() = %d after a cancelled send, want %d", way.name, n, capacity)
			}
			if !buffered(capacity) {
				_, err := o.TryRecv()
				isErr(t, err, chans.ErrEmpty, way.name+": TryRecv after the sender gave up")
				continue
			}
			// Move the window: take the oldest value, add a new one.
			got, err := o.TryRecv()
			noErr(t, err, "TryRecv")
			if got != want {
				t.Fatalf("%s: TryRecv = %d, want %d", way.name, got, want)
			}
			want++
			noErr(t, o.TrySend(next), "TrySend")
			next++
			isErr(t, o.TrySend(-1), chans.ErrFull, "TrySend on the refilled channel")
		}
		for ; want < next; want++ {
			got, err := o.TryRecv()
			noErr(t, err, "TryRecv draining")
			if got != want {
				t.Fatalf("TryRecv = %d, want %d", got, want)
			}
		}
		_, err := o.TryRecv()
		isErr(t, err, chans.ErrEmpty, "TryRecv after draining")
	})
}

// TestCancelledStormThenTraffic cancels many waiting operations, one after
// another and from many goroutines at once, then checks that the channel
// still works: Len is exact, try-ops see no phantom waiter, and a stream of
// values arrives complete and in order.
func TestCancelledStormThenTraffic(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		c := chans.New[int](capacity)
		o := open(v, c)
		// One goroutine: receives cancelled as they park, on the empty channel.
		n := scale(20000)
		for i := 0; i < n; i++ {
			ctx := newCancelSoon()
			if _, err := o.RecvContext(ctx); err != ctx.Err() {
				t.Fatalf("cancelled RecvContext %d: %v", i, err)
			}
		}
		// Many goroutines: receives parked at once, then all cancelled.
		const parked = 64
		ctx, cancel := context.WithCancel(context.Background())
		errs := make(chan error, parked)
		for i := 0; i < parked; i++ {
			go func() {
				_, err := open(v, c).RecvContext(ctx)
				errs <- err
			}()
		}
		yieldALot()
		cancel()
		for i := 0; i < parked; i++ {
			isErr(t, <-errs, context.Canceled, "parked RecvContext")
		}
		checkQuiescent(t, c, o, 0)

		// The same for sends on a full channel.
		if bounded(capacity) {
			for i := 0; i < capacity; i++ {
				noErr(t, o.TrySend(i), "TrySend filling")
			}
			for i := 0; i < n; i++ {
				ctx := newCancelSoon()
				if err := o.SendContext(ctx, -1); err != ctx.Err() {
					t.Fatalf("cancelled SendContext %d: %v", i, err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			for i := 0; i < parked; i++ {
				go func() { errs <- open(v, c).SendContext(ctx, -1) }()
			}
			yieldALot()
			cancel()
			for i := 0; i < parked; i++ {
				isErr(t, <-errs, context.Canceled, "parked SendContext")
			}
			checkQuiescent(t, c, o, capacity)
			for i := 0; i < capacity; i++ {
				got, err := o.TryRecv()
				noErr(t, err, "TryRecv draining")
				if got != i {
					t.Fatalf("TryRecv = %d, want %d", got, i)
				}
			}
		}

		// Traffic afterwards: complete and in order.
		m := scale(5000)
		errc := make(chan error, 1)
		go func() {
			o := open(v, c)
			for i := 0; i < m; i++ {
				if err := o.Send(i); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
		for i := 0; i < m; i++ {
			got, ok := o.Recv()
			if !ok || got != i {
				t.Fatalf("Recv = %d, %v; want %d", got, ok, i)
			}
		}
		noErr(t, <-errc, "sender")
		checkQuiescent(t, c, o, 0)
	})
}

// checkQuiescent checks a channel nobody is using and that holds n values:
// Len is n, and the try-ops answer as the count says (and change nothing).
func checkQuiescent(t *testing.T, c *chans.Chan[int], o ops[int], n int) {
	t.Helper()
	if got := c.Len(); got != n {
		t.Fatalf("Len() = %d, want %d", got, n)
	}
	capacity := c.Cap()
	if n == 0 {
		_, err := o.TryRecv()
		isErr(t, err, chans.ErrEmpty, "TryRecv on a quiescent empty channel")
	}
	if bounded(capacity) && n == capacity {
		isErr(t, o.TrySend(-1), chans.ErrFull, "TrySend on a quiescent full channel")
	}
}

// TestCancelConservation runs producers and consumers whose contexts are
// cancelled at random moments (before the call, as it parks, or by another
// goroutine at any time), with try-ops mixed in: every send that returned nil
// is received exactly once, a send or receive that returned ctx.Err() had no
// effect, and per-producer order holds at each consumer. Half the rounds
// also race two closers against the traffic.
func TestCancelConservation(t *testing.T) {
	rounds := max(2, scale(60))
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		for r := 0; r < rounds && !t.Failed(); r++ {
			runTraffic(t, capacity, v, traffic{
				producers:   3,
				consumers:   3,
				perProducer: scale(3000),
				cancel:      true,
				closers:     2 * (r % 2),
				seed:        uint64(r),
			})
		}
	})
}

// TestRecvCancelledAsValueArrives hands values to receivers whose contexts
// fire at about the same moment, many times: a value is either returned with
// nil or left for the next receiver, never dropped (the sender's nil is
// matched by exactly one receipt).
func TestRecvCancelledAsValueArrives(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		c := chans.New[int](capacity)
		n := scale(3000)
		var got []int
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // the receiver: each receive races its own cancellation
			defer wg.Done()
			o := open(v, c)
			for {
				ctx, cancel := context.WithCancel(context.Background())
				go cancel()
				val, err := o.RecvContext(ctx)
				cancel()
				switch err {
				case nil:
					got = append(got, val)
				case chans.ErrClosed:
					return
				case context.Canceled:
				default:
					t.Errorf("RecvContext: %v", err)
					c.Close() // release the sender
					return
				}
			}
		}()
		o := open(v, c)
		for i := 0; i < n; i++ {
			if err := o.Send(i); err != nil {
				wg.Wait()
				t.Fatalf("Send(%d): %v", i, err)
			}
		}
		noErr(t, c.Close(), "Close")
		wg.Wait()
		if len(got) != n {
			t.Fatalf("received %d values, sent %d", len(got), n)
		}
		for i, val := range got {
			if val != i {
				t.Fatalf("received %d at position %d", val, i)
			}
		}
	})
}
