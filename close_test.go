package chans_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/scalable-go/chans"
)

// checkClosedDrained checks every operation on a closed channel with nothing
// left to receive: sends fail with ErrClosed at once (in the test goroutine,
// so a blocking call hangs the test), receives report closed, All yields
// nothing, Len is 0.
func checkClosedDrained(t *testing.T, c *chans.Chan[int], o ops[int]) {
	t.Helper()
	isErr(t, o.Send(1), chans.ErrClosed, "Send on a closed channel")
	isErr(t, o.SendContext(context.Background(), 1), chans.ErrClosed, "SendContext on a closed channel")
	isErr(t, o.TrySend(1), chans.ErrClosed, "TrySend on a closed channel")
	if got, ok := o.Recv(); ok || got != 0 {
		t.Fatalf("Recv on a closed, drained channel = %d, %v; want 0, false", got, ok)
	}
	got, err := o.RecvContext(context.Background())
	isErr(t, err, chans.ErrClosed, "RecvContext on a closed, drained channel")
	if got != 0 {
		t.Fatalf("RecvContext returned %d with ErrClosed, want the zero value", got)
	}
	_, err = o.TryRecv()
	isErr(t, err, chans.ErrClosed, "TryRecv on a closed, drained channel")
	for _, d := range doneContexts() {
		// Both answers are true of a closed channel and a done context.
		if err := o.SendContext(d.ctx, 1); err != chans.ErrClosed && err != d.ctx.Err() {
			t.Fatalf("SendContext(%s) on a closed channel: %v, want ErrClosed or ctx.Err()", d.name, err)
		}
		if _, err := o.RecvContext(d.ctx); err != chans.ErrClosed && err != d.ctx.Err() {
			t.Fatalf("RecvContext(%s) on a closed, drained channel: %v, want ErrClosed or ctx.Err()", d.name, err)
		}
	}
	for v := range c.All() {
		t.Fatalf("All on a closed, drained channel yielded %d", v)
	}
	if n := c.Len(); n != 0 {
		t.Fatalf("Len() of a closed, drained channel = %d, want 0", n)
	}
}

// TestCloseTwice checks that only the first Close succeeds.
func TestCloseTwice(t *testing.T) {
	forEachKind(t, func(t *testing.T, capacity int) {
		c := chans.New[int](capacity)
		noErr(t, c.Close(), "first Close")
		isErr(t, c.Close(), chans.ErrClosed, "second Close")
		isErr(t, c.Close(), chans.ErrClosed, "third Close")
		if got := c.Cap(); got != capacity {
			t.Fatalf("Cap() after Close = %d, want %d", got, capacity)
		}
	})
}

// TestCloseEmpty checks every operation on a channel closed while empty.
func TestCloseEmpty(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		c := chans.New[int](capacity)
		noErr(t, c.Close(), "Close")
		checkClosedDrained(t, c, open(v, c))
	})
}

// TestCloseKeepsBuffered checks that values buffered before Close stay
// receivable, in order and by every way of receiving, and that the channel
// reports closed only once they are gone. A full bounded channel refuses a
// TrySend with ErrClosed, not ErrFull, and a Send does not block.
func TestCloseKeepsBuffered(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		if !buffered(capacity) {
			t.Skip("a rendezvous channel buffers nothing")
		}
		c := chans.New[int](capacity)
		o := open(v, c)
		n := room(capacity, 100)
		for i := 0; i < n; i++ {
			noErr(t, o.TrySend(i), "TrySend")
		}
		noErr(t, c.Close(), "Close")
		isErr(t, o.TrySend(-1), chans.ErrClosed, "TrySend on a closed (and full) channel")
		isErr(t, o.Send(-1), chans.ErrClosed, "Send on a closed (and full) channel")
		isErr(t, o.SendContext(context.Background(), -1), chans.ErrClosed, "SendContext on a closed channel")
		for i := 0; i < n; i++ {
			if got := c.Len(); got != n-i {
				t.Fatalf("Len() = %d, want %d", got, n-i)
			}
			var got int
			switch i % 4 {
			case 0:
				var ok bool
				if got, ok = o.Recv(); !ok {
					t.Fatalf("Recv reported closed with %d values buffered", n-i)
				}
			case 1:
				var err error
				got, err = o.RecvContext(context.Background())
				noErr(t, err, "RecvContext on a closed channel with values buffered")
			case 2:
				var err error
				got, err = o.TryRecv()
				noErr(t, err, "TryRecv on a closed channel with values buffered")
			case 3:
				for got = range c.All() {
					break
				}
			}
			if got != i {
				t.Fatalf("received %d after Close, want %d", got, i)
			}
		}
		checkClosedDrained(t, c, o)
	})
}

// TestCloseWakesBlockedSenders parks senders of every kind behind a full
// channel and closes it: each wakes with ErrClosed, none of their values is
// ever received, and the buffered values still are.
func TestCloseWakesBlockedSenders(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		if !bounded(capacity) {
			t.Skip("sends on an unbounded channel never wait")
		}
		c := chans.New[int](capacity)
		o := open(v, c)
		for i := 0; i < capacity; i++ {
			noErr(t, o.TrySend(i), "TrySend filling")
		}
		const senders = 9
		errs := make([]error, senders)
		var wg sync.WaitGroup
		for i := 0; i < senders; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = sendWays[i%3].send(open(v, c), 1000+i)
			}()
		}
		yieldALot()
		noErr(t, c.Close(), "Close")
		wg.Wait()
		for i, err := range errs {
			isErr(t, err, chans.ErrClosed, fmt.Sprintf("%s blocked at Close", sendWays[i%3].name))
		}
		for i := 0; i < capacity; i++ {
			got, ok := o.Recv()
			if !ok || got != i {
				t.Fatalf("Recv = %d, %v; want buffered value %d", got, ok, i)
			}
		}
		checkClosedDrained(t, c, o)
	})
}

// TestCloseWakesBlockedReceivers parks receivers of every kind on an empty
// channel and closes it: each wakes and reports closed.
func TestCloseWakesBlockedReceivers(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		c := chans.New[int](capacity)
		const receivers = 8
		errs := make([]error, receivers)
		var wg sync.WaitGroup
		for i := 0; i < receivers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%4 == 3 {
					for got := range c.All() {
						errs[i] = fmt.Errorf("All yielded %d on a channel nobody sent to", got)
					}
					errs[i] = chans.ErrClosed
					return
				}
				var got int
				got, errs[i] = recvWaysInt[i%4].recv(open(v, c))
				if errs[i] == nil {
					errs[i] = fmt.Errorf("received %d on a channel nobody sent to", got)
				}
			}()
		}
		yieldALot()
		noErr(t, c.Close(), "Close")
		wg.Wait()
		for i, err := range errs {
			isErr(t, err, chans.ErrClosed, fmt.Sprintf("receiver %d blocked at Close", i))
		}
		checkClosedDrained(t, c, open(v, c))
	})
}

// TestCloseWhileRanging closes a channel while a goroutine ranges over All:
// the loop yields every value sent, in order, and then ends.
func TestCloseWhileRanging(t *testing.T) {
	forEachKind(t, func(t *testing.T, capacity int) {
		c := chans.New[int](capacity)
		n := scale(5000)
		got := make(chan []int)
		go func() {
			var vals []int
			for v := range c.All() {
				vals = append(vals, v)
			}
			got <- vals
		}()
		for i := 0; i < n; i++ {
			noErr(t, c.Send(i), "Send")
		}
		noErr(t, c.Close(), "Close")
		vals := <-got
		if len(vals) != n {
			t.Fatalf("All yielded %d values, want %d", len(vals), n)
		}
		for i, v := range vals {
			if v != i {
				t.Fatalf("All yielded %d at position %d", v, i)
			}
		}
	})
}

// TestCloseRace races two closers against producers and consumers using
// every operation: exactly one Close succeeds, sends after it fail at once,
// no sent value is lost or duplicated, per-producer order holds at each
// consumer, and once a receiver saw the channel closed and drained no later
// receive gets a value (see runTraffic).
func TestCloseRace(t *testing.T) {
	rounds := max(2, scale(100))
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		for r := 0; r < rounds && !t.Failed(); r++ {
			runTraffic(t, capacity, v, traffic{
				producers:   3,
				consumers:   3,
				perProducer: 200,
				closers:     2,
				seed:        uint64(r),
			})
		}
	})
}
