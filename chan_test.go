package chans_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scalable-go/chans"
)

// errGaveUp is what a polling way of sending or receiving returns when its
// partner never showed up.
var errGaveUp = errors.New("test: polled spinBound times without success")

// sendWays are the ways of sending one value that wait until it is
// delivered. The polling way must not meet the polling receive on a
// rendezvous channel (neither would ever wait), so index 3 of both lists polls
// and tests pair send way i with receive way i+1.
var sendWays = []struct {
	name string
	send func(o ops[int], v int) error
}{
	{"Send", func(o ops[int], v int) error { return o.Send(v) }},
	{"SendContext", func(o ops[int], v int) error { return o.SendContext(context.Background(), v) }},
	{"SendContext/cancellable", func(o ops[int], v int) error {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		return o.SendContext(ctx, v)
	}},
	{"TrySend/poll", func(o ops[int], v int) error {
		for i := 0; i < spinBound; i++ {
			if err := o.TrySend(v); err != chans.ErrFull {
				return err
			}
			runtime.Gosched()
		}
		return errGaveUp
	}},
}

// recvWaysInt are the ways of receiving one value that wait for it; see
// sendWays for the pairing rule.
var recvWaysInt = []struct {
	name string
	recv func(o ops[int]) (int, error)
}{
	{"Recv", func(o ops[int]) (int, error) {
		v, ok := o.Recv()
		if !ok {
			return v, chans.ErrClosed
		}
		return v, nil
	}},
	{"RecvContext", func(o ops[int]) (int, error) { return o.RecvContext(context.Background()) }},
	{"RecvContext/cancellable", func(o ops[int]) (int, error) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		return o.RecvContext(ctx)
	}},
	{"TryRecv/poll", func(o ops[int]) (int, error) {
		for i := 0; i < spinBound; i++ {
			if v, err := o.TryRecv(); err != chans.ErrEmpty {
				return v, err
			}
			runtime.Gosched()
		}
		return 0, errGaveUp
	}},
}

// sendWay and recvWay pick the ways for the i-th value of a stream.
func sendWay(i int) int { return i % len(sendWays) }
func recvWay(i int) int { return (i + 1) % len(recvWaysInt) }

func TestNewCapLen(t *testing.T) {
	forEachKind(t, func(t *testing.T, capacity int) {
		c := chans.New[int](capacity)
		if got := c.Cap(); got != capacity {
			t.Errorf("Cap() = %d, want %d", got, capacity)
		}
		if got := c.Len(); got != 0 {
			t.Errorf("Len() of a new channel = %d, want 0", got)
		}
	})
}

func TestNewBadCapacityPanics(t *testing.T) {
	for _, capacity := range []int{-2, -3, -64, -1000, math.MinInt} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatalf("New(%d) did not panic", capacity)
				}
				if msg := fmt.Sprint(r); !strings.Contains(msg, fmt.Sprint(capacity)) {
					t.Fatalf("New(%d) panicked with %q, which does not name the value", capacity, msg)
				}
			}()
			chans.New[int](capacity)
		})
	}
}

// mustPanic fails the test unless f panics.
func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func TestNilContextPanics(t *testing.T) {
	var nilCtx context.Context // a nil interface, as a careless caller passes it
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		c := chans.New[int](capacity)
		o := open(v, c)
		// Cannot proceed: nothing buffered, and (rendezvous) no receiver.
		mustPanic(t, "RecvContext(nil) on an empty channel", func() { o.RecvContext(nilCtx) })
		if !buffered(capacity) {
			mustPanic(t, "SendContext(nil) on a rendezvous channel", func() { o.SendContext(nilCtx, 1) })
			return
		}
		// Could proceed: there is room, then there is a value.
		mustPanic(t, "SendContext(nil) with room", func() { o.SendContext(nilCtx, 1) })
		noErr(t, o.TrySend(2), "TrySend")
		mustPanic(t, "RecvContext(nil) with a value buffered", func() { o.RecvContext(nilCtx) })
		// The panics changed nothing (a send that panicked delivered nothing).
		if n := c.Len(); n != 1 {
			t.Fatalf("Len after panicking calls = %d, want 1", n)
		}
		got, err := o.TryRecv()
		noErr(t, err, "TryRecv")
		if got != 2 {
			t.Fatalf("TryRecv = %d, want 2 (the value sent after the panics)", got)
		}
	})
}

func TestSentinelErrors(t *testing.T) {
	errs := []error{chans.ErrClosed, chans.ErrFull, chans.ErrEmpty}
	for i, a := range errs {
		if a == nil || a.Error() == "" {
			t.Fatalf("sentinel %d is nil or has no message", i)
		}
		for j, b := range errs {
			if i != j && errors.Is(a, b) {
				t.Fatalf("sentinels %v and %v are not distinct", a, b)
			}
		}
	}
}

// TestSequentialModel drives one goroutine's random sequence of every
// operation against a model queue and checks each result and Len after each
// step: buffered sends succeed exactly while there is room, try-ops never
// fail spuriously, values come out in order, and a cancelled operation with
// an already-done context either completes or leaves the model unchanged.
func TestSequentialModel(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		c := chans.New[int](capacity)
		o := open(v, c)
		done, cancel := context.WithCancel(context.Background())
		cancel()
		rng := rand.New(rand.NewPCG(uint64(capacity+2), uint64(v)))
		// Alternate filling and draining phases, so the queue runs from empty
		// to full (to a few hundred, unbounded) and back many times, across
		// many segments.
		phase := max(2*room(capacity, 300), 8)
		steps := max(scale(40000), 20*phase)
		var model []int
		next := 0
		full := func() bool { return bounded(capacity) && len(model) >= capacity }
		for step := 0; step < steps; step++ {
			sending := (step/phase)%2 == 0
			op := rng.IntN(4)
			if sending == (rng.IntN(5) != 0) { // mostly sends while filling, mostly receives while draining
				switch {
				case op == 0: // TrySend: nil exactly when there is room
					err := o.TrySend(next)
					if full() {
						isErr(t, err, chans.ErrFull, fmt.Sprintf("step %d: TrySend with %d buffered", step, len(model)))
					} else {
						noErr(t, err, fmt.Sprintf("step %d: TrySend with %d buffered", step, len(model)))
						model = append(model, next)
					}
				case op == 1 && !full(): // Send with room does not block
					noErr(t, o.Send(next), "Send with room")
					model = append(model, next)
				case op == 2 && !full():
					noErr(t, o.SendContext(context.Background(), next), "SendContext with room")
					model = append(model, next)
				case op == 3: // done context: cannot proceed → ctx.Err(); can → either
					err := o.SendContext(done, next)
					if full() || err != nil {
						isErr(t, err, done.Err(), fmt.Sprintf("step %d: SendContext(done) with %d buffered", step, len(model)))
					} else {
						model = append(model, next)
					}
				}
				next++
			} else {
				switch {
				case op == 0:
					got, err := o.TryRecv()
					if len(model) == 0 {
						isErr(t, err, chans.ErrEmpty, fmt.Sprintf("step %d: TryRecv on an empty channel", step))
					} else {
						noErr(t, err, fmt.Sprintf("step %d: TryRecv with %d buffered", step, len(model)))
						model = checkFront(t, step, model, got)
					}
				case op == 1 && len(model) > 0:
					got, ok := o.Recv()
					if !ok {
						t.Fatalf("step %d: Recv on an open channel reported closed", step)
					}
					model = checkFront(t, step, model, got)
				case op == 2 && len(model) > 0:
					got, err := o.RecvContext(context.Background())
					noErr(t, err, "RecvContext with a value buffered")
					model = checkFront(t, step, model, got)
				case op == 3:
					got, err := o.RecvContext(done)
					if len(model) == 0 || err != nil {
						isErr(t, err, done.Err(), fmt.Sprintf("step %d: RecvContext(done) with %d buffered", step, len(model)))
					} else {
						model = checkFront(t, step, model, got)
					}
				}
			}
			// Len may cost a walk over the buffer: check it at every step on
			// small channels, every 16th on large ones.
			if capacity <= 2*65 || step%16 == 0 {
				if n := c.Len(); n != len(model) {
					t.Fatalf("step %d: Len() = %d, want %d", step, n, len(model))
				}
			}
		}
		// Close keeps what is buffered, in order.
		noErr(t, c.Close(), "Close")
		for len(model) > 0 {
			got, ok := o.Recv()
			if !ok {
				t.Fatalf("Recv after Close reported closed with %d values still buffered", len(model))
			}
			model = checkFront(t, -1, model, got)
		}
		if _, ok := o.Recv(); ok {
			t.Fatal("Recv on a closed, drained channel returned a value")
		}
	})
}

// checkFront checks that got is the model's front value and pops it.
func checkFront(t *testing.T, step int, model []int, got int) []int {
	t.Helper()
	if got != model[0] {
		t.Fatalf("step %d: received %d, want %d (FIFO order)", step, got, model[0])
	}
	return model[1:]
}

// TestFillDrain fills a bounded buffer with TrySend until ErrFull and drains
// it with TryRecv until ErrEmpty, many times over: the k+1-th TrySend and the
// first TryRecv on empty fail, nothing before them does, and values come out
// in order, across as many segments as the rounds take.
func TestFillDrain(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		if !buffered(capacity) {
			t.Skip("a rendezvous channel buffers nothing")
		}
		c := chans.New[int](capacity)
		o := open(v, c)
		n := room(capacity, scale(100000))
		next, want := 0, 0
		for round := 0; round < max(3, 2000/n); round++ {
			for i := 0; i < n; i++ {
				noErr(t, o.TrySend(next), fmt.Sprintf("round %d: TrySend %d of %d", round, i+1, n))
				next++
			}
			if bounded(capacity) {
				isErr(t, o.TrySend(-1), chans.ErrFull, fmt.Sprintf("round %d: TrySend on a full channel", round))
			}
			if got := c.Len(); got != n {
				t.Fatalf("round %d: Len() = %d, want %d", round, got, n)
			}
			for i := 0; i < n; i++ {
				got, err := o.TryRecv()
				noErr(t, err, fmt.Sprintf("round %d: TryRecv %d of %d", round, i+1, n))
				if got != want {
					t.Fatalf("round %d: TryRecv = %d, want %d", round, got, want)
				}
				want++
			}
			_, err := o.TryRecv()
			isErr(t, err, chans.ErrEmpty, fmt.Sprintf("round %d: TryRecv on a drained channel", round))
			if got := c.Len(); got != 0 {
				t.Fatalf("round %d: Len() after draining = %d, want 0", round, got)
			}
		}
	})
}

// TestRendezvousTryOpsAlone checks that, with nobody on the other side, a
// rendezvous channel refuses every try-op and buffers nothing.
func TestRendezvousTryOpsAlone(t *testing.T) {
	for _, v := range vias {
		t.Run(v.String(), func(t *testing.T) {
			c := chans.New[int](0)
			o := open(v, c)
			for i := 0; i < 100; i++ {
				isErr(t, o.TrySend(i), chans.ErrFull, "TrySend with no receiver")
				_, err := o.TryRecv()
				isErr(t, err, chans.ErrEmpty, "TryRecv with no sender")
				if n := c.Len(); n != 0 {
					t.Fatalf("Len() = %d, want 0", n)
				}
			}
		})
	}
}

// TestRendezvousSendWaitsForReceiver checks that a send on a rendezvous
// channel returns only after a receiver took the value: the receiver flags
// that it started before it calls Recv, and the sender, once Send returned,
// must see the flag. A Send that returned early (buffered its value) is
// caught by that check or by the one before Recv.
func TestRendezvousSendWaitsForReceiver(t *testing.T) {
	checkLeaks(t)
	for _, v := range vias {
		t.Run(v.String(), func(t *testing.T) {
			c := chans.New[int](0)
			var started, returned atomic.Bool
			var sawStarted bool
			var err error
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				err = open(v, c).Send(7)
				sawStarted = started.Load()
				returned.Store(true)
			}()
			yieldALot()
			if returned.Load() {
				t.Fatal("Send on a rendezvous channel returned with no receiver")
			}
			started.Store(true)
			got, ok := open(v, c).Recv()
			wg.Wait()
			noErr(t, err, "Send")
			if !ok || got != 7 {
				t.Fatalf("Recv = %d, %v; want 7, true", got, ok)
			}
			if !sawStarted {
				t.Fatal("Send returned before any receiver started")
			}
		})
	}
}

// TestRendezvousSendContextWithoutReceiver checks that a rendezvous send with
// no receiver waits until its context is done, returns ctx.Err(), and leaves
// nothing behind for a later receiver.
func TestRendezvousSendContextWithoutReceiver(t *testing.T) {
	checkLeaks(t)
	for _, v := range vias {
		t.Run(v.String(), func(t *testing.T) {
			c := chans.New[int](0)
			o := open(v, c)
			for i, way := range cancelWays {
				ctx, wait := way.ctx()
				err := o.SendContext(ctx, i)
				wait()
				isErr(t, err, ctx.Err(), way.name+": SendContext with no receiver")
				_, err = o.TryRecv()
				isErr(t, err, chans.ErrEmpty, way.name+": TryRecv after the cancelled send")
				isErr(t, o.TrySend(-1), chans.ErrFull, way.name+": TrySend after the cancelled send")
			}
			if n := c.Len(); n != 0 {
				t.Fatalf("Len() = %d, want 0", n)
			}
		})
	}
}

// TestRendezvousTrySendToWaitingReceiver checks that TrySend on a rendezvous
// channel succeeds once a receiver waits (it keeps trying until the receiver
// has arrived, which proves liveness) and that the receiver got exactly that
// value; with the receiver gone, TrySend fails again.
func TestRendezvousTrySendToWaitingReceiver(t *testing.T) {
	checkLeaks(t)
	for _, v := range vias {
		t.Run(v.String(), func(t *testing.T) {
			c := chans.New[int](0)
			o := open(v, c)
			for i, way := range recvWaysInt[:3] { // the blocking ways
				var got int
				var err error
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					got, err = way.recv(open(v, c))
				}()
				eventually(t, way.name+": TrySend to a waiting receiver", func() bool {
					err := o.TrySend(100 + i)
					if err != nil && err != chans.ErrFull {
						t.Fatalf("TrySend: %v", err)
					}
					return err == nil
				})
				wg.Wait()
				noErr(t, err, way.name)
				if got != 100+i {
					t.Fatalf("%s received %d, want %d", way.name, got, 100+i)
				}
				isErr(t, o.TrySend(-1), chans.ErrFull, "TrySend after the receiver left")
			}
			// Several receivers waiting at once each get one value.
			const n = 4
			results := make(chan int, n)
			for i := 0; i < n; i++ {
				go func() {
					got, ok := open(v, c).Recv()
					if !ok {
						got = -1
					}
					results <- got
				}()
			}
			for i := 0; i < n; i++ {
				eventually(t, "TrySend to one of several receivers", func() bool { return o.TrySend(i) == nil })
			}
			seen := make(map[int]bool)
			for i := 0; i < n; i++ {
				seen[<-results] = true
			}
			for i := 0; i < n; i++ {
				if !seen[i] {
					t.Fatalf("value %d was not received; received %v", i, seen)
				}
			}
		})
	}
}

// TestRendezvousTryRecvFromWaitingSender checks that TryRecv on a rendezvous
// channel succeeds once a sender waits, gets its value, and that the sender's
// call then returns nil.
func TestRendezvousTryRecvFromWaitingSender(t *testing.T) {
	checkLeaks(t)
	for _, v := range vias {
		t.Run(v.String(), func(t *testing.T) {
			c := chans.New[int](0)
			o := open(v, c)
			for i, way := range sendWays[:3] { // the blocking ways
				var err error
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					err = way.send(open(v, c), 100+i)
				}()
				var got int
				eventually(t, way.name+": TryRecv from a waiting sender", func() bool {
					var err error
					got, err = o.TryRecv()
					if err != nil && err != chans.ErrEmpty {
						t.Fatalf("TryRecv: %v", err)
					}
					return err == nil
				})
				wg.Wait()
				noErr(t, err, way.name)
				if got != 100+i {
					t.Fatalf("TryRecv = %d, want %d", got, 100+i)
				}
				_, err = o.TryRecv()
				isErr(t, err, chans.ErrEmpty, "TryRecv after the sender left")
			}
		})
	}
}

// TestFIFOTwoGoroutines streams values from one goroutine to another through
// every pairing of send and receive ways; the receiver must see 0, 1, 2, ...
func TestFIFOTwoGoroutines(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		c := chans.New[int](capacity)
		n := scale(20000)
		errc := make(chan error, 1)
		go func() {
			o := open(v, c)
			for i := 0; i < n; i++ {
				if err := sendWays[sendWay(i)].send(o, i); err != nil {
					errc <- fmt.Errorf("%s(%d): %w", sendWays[sendWay(i)].name, i, err)
					return
				}
			}
			errc <- nil
		}()
		o := open(v, c)
		for i := 0; i < n; i++ {
			way := recvWaysInt[recvWay(i)]
			got, err := way.recv(o)
			if err != nil {
				t.Fatalf("%s for value %d: %v", way.name, i, err)
			}
			if got != i {
				t.Fatalf("%s: received %d, want %d", way.name, got, i)
			}
		}
		noErr(t, <-errc, "sender")
		if n := c.Len(); n != 0 {
			t.Fatalf("Len() = %d, want 0", n)
		}
	})
}

// TestTryRecvAfterCompletedSend checks that TryRecv does not fail spuriously
// across goroutines: once a Send has returned nil on a buffered channel, and
// nobody else receives, a TryRecv that starts afterwards must get the value.
func TestTryRecvAfterCompletedSend(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		if !buffered(capacity) {
			t.Skip("a rendezvous Send completes only with a receiver")
		}
		c := chans.New[int](capacity)
		n := scale(5000)
		sent := make(chan error) // unbuffered: the sender's Send returned before the receive below
		go func() {
			o := open(v, c)
			for i := 0; i < n; i++ {
				sent <- sendWays[i%3].send(o, i)
			}
		}()
		o := open(v, c)
		for i := 0; i < n; i++ {
			noErr(t, <-sent, "Send")
			got, err := o.TryRecv()
			noErr(t, err, fmt.Sprintf("TryRecv after Send(%d) returned", i))
			if got != i {
				t.Fatalf("TryRecv = %d, want %d", got, i)
			}
		}
	})
}

// TestTrySendAfterCompletedRecv checks that TrySend does not fail spuriously
// across goroutines: once a receive from a full buffered channel has
// returned, and nobody else sends, a TrySend that starts afterwards must find
// room.
func TestTrySendAfterCompletedRecv(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		if !buffered(capacity) || !bounded(capacity) {
			t.Skip("needs a bounded buffer")
		}
		c := chans.New[int](capacity)
		o := open(v, c)
		for i := 0; i < capacity; i++ {
			noErr(t, o.TrySend(i), "TrySend filling")
		}
		n := scale(5000)
		// Lockstep: the receiver takes one value per turn and reports it over
		// an unbuffered channel, so its receive returned before the TrySend
		// below, and no other receive is in progress during it.
		turn, recvd := make(chan struct{}), make(chan error)
		go func() {
			o := open(v, c)
			for i := 0; i < n; i++ {
				<-turn
				got, err := recvWaysInt[i%3].recv(o)
				if err == nil && got != i {
					err = fmt.Errorf("received %d, want %d", got, i)
				}
				recvd <- err
			}
		}()
		for i := 0; i < n; i++ {
			turn <- struct{}{}
			noErr(t, <-recvd, "receive")
			noErr(t, o.TrySend(capacity+i), fmt.Sprintf("TrySend after receive %d returned", i))
			isErr(t, o.TrySend(-1), chans.ErrFull, "TrySend on the refilled channel")
		}
		for i := n; i < n+capacity; i++ {
			got, err := o.TryRecv()
			noErr(t, err, "TryRecv draining")
			if got != i {
				t.Fatalf("TryRecv = %d, want %d", got, i)
			}
		}
	})
}

// TestBlockedReceiversGetValues parks several receivers on an empty channel;
// each value sent then goes to exactly one of them.
func TestBlockedReceiversGetValues(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		c := chans.New[int](capacity)
		const n = 8
		results := make(chan int, n)
		for i := 0; i < n; i++ {
			go func() {
				got, err := recvWaysInt[i%3].recv(open(v, c))
				if err != nil {
					got = -1
				}
				results <- got
			}()
		}
		yieldALot()
		o := open(v, c)
		for i := 0; i < n; i++ {
			noErr(t, sendWays[i%3].send(o, i), "send to waiting receivers")
		}
		seen := make([]bool, n)
		for i := 0; i < n; i++ {
			got := <-results
			if got < 0 || got >= n || seen[got] {
				t.Fatalf("received %d: out of range, failed, or a duplicate", got)
			}
			seen[got] = true
		}
		if n := c.Len(); n != 0 {
			t.Fatalf("Len() = %d, want 0", n)
		}
	})
}

// TestBlockedSendersResume fills a bounded channel and parks senders behind
// it; receiving then yields the buffered values first, then each parked
// sender's values in that sender's order, and every sender returns nil.
func TestBlockedSendersResume(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		if !bounded(capacity) {
			t.Skip("sends on an unbounded channel never wait")
		}
		c := chans.New[int](capacity)
		o := open(v, c)
		for i := 0; i < capacity; i++ {
			noErr(t, o.TrySend(i), "TrySend filling")
		}
		const senders, each = 4, 50
		errc := make(chan error, senders)
		for s := 0; s < senders; s++ {
			go func() {
				o := open(v, c)
				for i := 0; i < each; i++ {
					if err := sendWays[i%3].send(o, 1000*(s+1)+i); err != nil {
						errc <- err
						return
					}
				}
				errc <- nil
			}()
		}
		yieldALot()
		for i := 0; i < capacity; i++ {
			got, ok := o.Recv()
			if !ok || got != i {
				t.Fatalf("Recv = %d, %v; want buffered value %d", got, ok, i)
			}
		}
		last := make([]int, senders)
		for i := 0; i < senders*each; i++ {
			got, err := recvWaysInt[i%3].recv(o)
			noErr(t, err, "receive")
			s, seq := got/1000-1, got%1000
			if s < 0 || s >= senders || seq != last[s] {
				t.Fatalf("received %d: want sender %d's value %d next", got, s, last[max(0, min(s, senders-1))])
			}
			last[s]++
		}
		for s := 0; s < senders; s++ {
			noErr(t, <-errc, "sender")
		}
		if n := c.Len(); n != 0 {
			t.Fatalf("Len() = %d, want 0", n)
		}
	})
}

// TestUnboundedNeverFull checks that TrySend and Send on an unbounded channel
// never refuse, however many values are buffered.
func TestUnboundedNeverFull(t *testing.T) {
	checkLeaks(t)
	for _, v := range vias {
		t.Run(v.String(), func(t *testing.T) {
			c := chans.New[int](chans.Unbounded)
			o := open(v, c)
			n := scale(200000)
			for i := 0; i < n; i++ {
				if i%2 == 0 {
					noErr(t, o.TrySend(i), fmt.Sprintf("TrySend with %d buffered", i))
				} else {
					noErr(t, o.Send(i), "Send")
				}
			}
			if got := c.Len(); got != n {
				t.Fatalf("Len() = %d, want %d", got, n)
			}
			for i := 0; i < n; i++ {
				got, err := o.TryRecv()
				noErr(t, err, "TryRecv")
				if got != i {
					t.Fatalf("TryRecv = %d, want %d", got, i)
				}
			}
			// Again with receives behind it: R + capacity must not wrap
			// round into a full verdict.
			for i := 0; i < 3; i++ {
				noErr(t, o.TrySend(i), fmt.Sprintf("TrySend after %d receives", n+i))
				noErr(t, o.TrySend(i), fmt.Sprintf("TrySend after %d receives, one buffered", n+i))
				for range 2 {
					_, err := o.TryRecv()
					noErr(t, err, "TryRecv")
				}
			}
		})
	}
}

// TestAllBreakTakesNothingMore checks that breaking out of a range over All
// takes no value beyond those yielded: the next receive gets the next value.
func TestAllBreakTakesNothingMore(t *testing.T) {
	forEachKind(t, func(t *testing.T, capacity int) {
		c := chans.New[int](capacity)
		const n = 10
		errc := make(chan error, 1)
		go func() {
			for i := 0; i < n; i++ {
				if err := c.Send(i); err != nil {
					errc <- err
					return
				}
			}
			errc <- c.Close()
		}()
		want := 0
		for got := range c.All() {
			if got != want {
				t.Fatalf("All yielded %d, want %d", got, want)
			}
			want++
			if want == 3 {
				break
			}
		}
		got, ok := c.Recv()
		if !ok || got != 3 {
			t.Fatalf("Recv after breaking out of All = %d, %v; want 3, true", got, ok)
		}
		// A second range resumes where the first stopped and ends at Close.
		want = 4
		for got := range c.All() {
			if got != want {
				t.Fatalf("second range over All yielded %d, want %d", got, want)
			}
			want++
		}
		if want != n {
			t.Fatalf("second range over All ended after %d, want %d", want, n)
		}
		noErr(t, <-errc, "sender")
	})
}

// TestElementTypes checks values of other shapes go through intact and in
// order: zero-sized, strings, and arrays larger than a word.
func TestElementTypes(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		roundTrip(t, capacity, v, func(i int) struct{} { return struct{}{} })
		roundTrip(t, capacity, v, func(i int) string { return fmt.Sprintf("value %d", i) })
		roundTrip(t, capacity, v, func(i int) [5]int64 {
			return [5]int64{int64(i), -int64(i), int64(i) << 20, math.MaxInt64 - int64(i), 42}
		})
	})
}

// roundTrip streams mk(0), mk(1), ... from one goroutine to another and
// checks they arrive equal and in order.
func roundTrip[T comparable](t *testing.T, capacity int, v via, mk func(int) T) {
	t.Helper()
	const n = 300
	c := chans.New[T](capacity)
	errc := make(chan error, 1)
	go func() {
		o := open(v, c)
		for i := 0; i < n; i++ {
			if err := o.Send(mk(i)); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	o := open(v, c)
	for i := 0; i < n; i++ {
		got, ok := o.Recv()
		if !ok || got != mk(i) {
			t.Fatalf("%T: value %d: got %v, %v; want %v", got, i, got, ok, mk(i))
		}
	}
	noErr(t, <-errc, fmt.Sprintf("%T sender", *new(T)))
}
