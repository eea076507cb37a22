package chans_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/scalable-go/chans"
)

// settleTime bounds how long checkLeaks waits for goroutines that finished
// their work to exit. Exiting takes a few milliseconds at worst under -race
// (subtest goroutines included); the bound only decides when to give up.
const settleTime = 3 * time.Second

// checkLeaks fails t if, when t ends, more goroutines run than when
// checkLeaks was called. Tests that use it must not be parallel.
func checkLeaks(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		if t.Failed() {
			return // a failed test may strand goroutines; one report is enough
		}
		if n := settle(before, settleTime); n > before {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("goroutine leak: %d goroutines before the test, %d after\n%s", before, n, buf)
		}
	})
}

// settle waits until no more than want goroutines remain, or bound has
// passed, and returns how many remain. It yields at first and then naps, so
// that a real leak does not burn a core for the whole bound.
func settle(want int, bound time.Duration) int {
	deadline := time.Now().Add(bound)
	n := runtime.NumGoroutine()
	for i := 0; n > want && time.Now().Before(deadline); i++ {
		if i < 1000 {
			runtime.Gosched()
		} else {
			time.Sleep(time.Millisecond)
		}
		n = runtime.NumGoroutine()
	}
	return n
}

// TestCheckLeaksSeesLeak checks the checker: a goroutine blocked for good is
// counted, and one that has been released is not.
func TestCheckLeaksSeesLeak(t *testing.T) {
	// Let goroutines of earlier tests finish exiting first, so that one of
	// them leaving cannot hide the goroutine started below.
	before := runtime.NumGoroutine()
	for settle(before-1, 50*time.Millisecond) < before {
		before = runtime.NumGoroutine()
	}
	stuck := make(chan struct{})
	go func() { <-stuck }()
	if n := settle(before, 100*time.Millisecond); n <= before {
		t.Errorf("a blocked goroutine was not counted: %d before, %d after", before, n)
	}
	close(stuck)
	if n := settle(before, settleTime); n > before {
		t.Errorf("a released goroutine was counted: %d before, %d after", before, n)
	}
}

// big is a value large enough to get its own allocation (no tiny-allocator
// batching), so that a cleanup attached to it runs when, and only when, it
// is unreachable.
type big struct {
	id  int
	pad [1 << 10]byte
}

// watched returns a new big value and a channel that is closed once the
// garbage collector has found the value unreachable.
//
//go:noinline
func watched(id int) (*big, <-chan struct{}) {
	b := &big{id: id}
	done := make(chan struct{})
	runtime.AddCleanup(b, func(done chan struct{}) { close(done) }, done)
	return b, done
}

// waitCollected runs the garbage collector until done is closed, and fails
// the test if it is not after many collections. The wait after each
// collection gives the cleanup goroutine time to run; it is a bound on
// failure, not a synchronisation.
func waitCollected(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	for i := 0; i < 100; i++ {
		runtime.GC()
		select {
		case <-done:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("%s: value still reachable after 100 garbage collections", what)
}

// recvWays are the ways of receiving one value that is known to be there
// or on its way.
var recvWays = []struct {
	name string
	recv func(t *testing.T, o ops[*big]) *big
}{
	{"Recv", func(t *testing.T, o ops[*big]) *big {
		v, ok := o.Recv()
		if !ok {
			t.Fatal("Recv: channel reported closed")
		}
		return v
	}},
	{"RecvContext", func(t *testing.T, o ops[*big]) *big {
		v, err := o.RecvContext(context.Background())
		noErr(t, err, "RecvContext")
		return v
	}},
	{"TryRecv", func(t *testing.T, o ops[*big]) *big {
		var v *big
		eventually(t, "TryRecv of a value being sent", func() bool {
			var err error
			v, err = o.TryRecv()
			return err == nil
		})
		return v
	}},
}

// sendWatched sends a watched value with the given id from a new goroutine
// through its own access path, and returns the collection signal and a wait
// function that reports the sender's error.
//
//go:noinline
func sendWatched(c *chans.Chan[*big], v via, id int) (collected <-chan struct{}, wait func() error) {
	b, done := watched(id)
	var wg sync.WaitGroup
	var err error
	wg.Add(1)
	go func() {
		defer wg.Done()
		err = open(v, c).Send(b)
	}()
	return done, func() error { wg.Wait(); return err }
}

// TestReceivedValueUnreachable checks that a channel does not keep a value
// alive after it has been received: the cell (or the waiter it was handed
// through) is cleared.
func TestReceivedValueUnreachable(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		c := chans.New[*big](capacity)
		o := open(v, c)
		for i, way := range recvWays {
			collected, wait := sendWatched(c, v, i)
			func() { // the received pointer must not outlive this frame
				if got := way.recv(t, o); got.id != i {
					t.Fatalf("%s: received id %d, want %d", way.name, got.id, i)
				}
			}()
			noErr(t, wait(), "Send")
			waitCollected(t, collected, way.name+": received value")
		}
		if n := c.Len(); n != 0 {
			t.Fatalf("Len after receiving everything: %d, want 0", n)
		}
		runtime.KeepAlive(o)
	})
}

// fillBig fills a bounded channel to capacity with unwatched values and
// returns them (the caller keeps them alive, so only the watched value can be
// collected).
func fillBig(t *testing.T, o ops[*big], capacity int) []*big {
	t.Helper()
	var kept []*big
	for i := 0; i < capacity; i++ {
		b := &big{id: -1 - i}
		noErr(t, o.TrySend(b), "TrySend filling the buffer")
		kept = append(kept, b)
	}
	return kept
}

// drainBig receives everything buffered in a closed or quiescent channel and
// checks it is exactly want, in order.
func drainBig(t *testing.T, o ops[*big], want []*big) {
	t.Helper()
	for i, w := range want {
		got, err := o.TryRecv()
		noErr(t, err, "TryRecv draining the buffer")
		if got != w {
			t.Fatalf("drain: value %d has id %d, want id %d", i, got.id, w.id)
		}
	}
	if got, err := o.TryRecv(); err == nil {
		t.Fatalf("drain: extra value with id %d received", got.id)
	}
}

// cancelledSend makes a SendContext of a watched value that must fail with
// ctx.Err(), and returns its collection signal.
//
//go:noinline
func cancelledSend(t *testing.T, o ops[*big], id int, mk func() (context.Context, func())) <-chan struct{} {
	t.Helper()
	b, collected := watched(id)
	ctx, wait := mk()
	err := o.SendContext(ctx, b)
	wait()
	isErr(t, err, ctx.Err(), "SendContext on a full channel")
	return collected
}

// TestCancelledSendValueUnreachable checks that a send cancelled on a full
// channel leaves no reference to its value behind.
func TestCancelledSendValueUnreachable(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		if !bounded(capacity) {
			t.Skip("sends on an unbounded channel never wait")
		}
		c := chans.New[*big](capacity)
		o := open(v, c)
		kept := fillBig(t, o, capacity)
		for i, way := range cancelWays {
			collected := cancelledSend(t, o, i, way.ctx)
			waitCollected(t, collected, way.name+": value of a cancelled send")
		}
		if n := c.Len(); n != capacity {
			t.Fatalf("Len after cancelled sends: %d, want %d", n, capacity)
		}
		drainBig(t, o, kept)
		runtime.KeepAlive(o)
	})
}

// TestClosedSendValueUnreachable checks that the value of a sender woken by
// Close is neither delivered nor kept alive.
func TestClosedSendValueUnreachable(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		if !bounded(capacity) {
			t.Skip("sends on an unbounded channel never wait")
		}
		c := chans.New[*big](capacity)
		o := open(v, c)
		kept := fillBig(t, o, capacity)
		collected, wait := sendWatched(c, v, 1)
		yieldALot()
		noErr(t, c.Close(), "Close")
		isErr(t, wait(), chans.ErrClosed, "Send blocked at Close")
		waitCollected(t, collected, "value of a send that Close failed")
		drainBig(t, o, kept)
		runtime.KeepAlive(o)
	})
}
