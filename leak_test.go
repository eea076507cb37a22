package chans_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/scalable-go/chans"
)

// leakBound bounds how long a leak check waits for goroutines that have
// finished their work to exit. Exiting takes a few milliseconds at worst
// under -race; the bound only decides when to give up and report.
const leakBound = 3 * time.Second

// findLeaks reports the goroutines that goleak finds beyond those its
// options ignore, giving goroutines that are on their way out until
// leakBound to exit. goleak.Find alone gives them about half a second,
// which a loaded machine running the race detector can exceed.
func findLeaks(opts ...goleak.Option) error {
	deadline := time.Now().Add(leakBound)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
	}
}

// TestMain fails the test binary if goroutines outlive a passing run,
// whichever test started them.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := findLeaks(); err != nil {
			fmt.Fprintf(os.Stderr, "goroutine leak after all tests passed: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// checkLeaks fails t if, when t ends, goroutines run that did not run when
// checkLeaks was called. Goroutines are told apart by identity, not counted,
// so an unrelated goroutine exiting cannot hide a leaked one. Tests that use
// it must not be parallel: goroutines of a test running beside them would
// count as leaked.
func checkLeaks(t *testing.T) {
	t.Helper()
	existing := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		if t.Failed() {
			return // a failed test may strand goroutines; one report is enough
		}
		if err := findLeaks(existing); err != nil {
			t.Errorf("goroutine leak: %v", err)
		}
	})
}

// TestCheckLeaksSeesLeak checks the checker: a goroutine parked for good on
// a Chan is reported even when an unrelated goroutine that ran before the
// check began exits meanwhile (which a goroutine count would miss), and once
// released it is not reported.
func TestCheckLeaksSeesLeak(t *testing.T) {
	unrelated, unrelatedDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(unrelatedDone)
		<-unrelated
	}()
	existing := goleak.IgnoreCurrent()

	c := chans.New[int](0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Recv()
	}()
	close(unrelated)
	<-unrelatedDone
	if err := goleak.Find(existing); err == nil {
		t.Error("a goroutine parked in Recv was not reported")
	}
	if err := c.Send(1); err != nil {
		t.Fatalf("Send: %v", err)
	}
	<-done
	if err := findLeaks(existing); err != nil {
		t.Errorf("a released goroutine was reported: %v", err)
	}
}

// big is a value large enough to get its own allocation (no tiny-allocator
// batching), so that a cleanup attached to it runs when, and only when, it
// is unreachable.
type big struct {
	id int
	_  [1 << 10]byte
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
