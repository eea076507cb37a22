package chans_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/scalable-go/chans"
)

// TestFromChan checks that FromChan forwards every value of a native
// channel in order and closes the Chan once the native channel is closed,
// on every kind, with the forwarding goroutine gone afterwards; and that
// the Chan takes part in a select beside a chans channel.
func TestFromChan(t *testing.T) {
	const n = 200
	forEachSelKind(t, func(t *testing.T, capacity int) {
		native := make(chan int)
		go func() {
			for i := 0; i < n; i++ {
				native <- i
			}
			close(native)
		}()
		c := chans.FromChan(native, capacity)
		if c.Cap() != capacity {
			t.Fatalf("Cap() = %d, want %d", c.Cap(), capacity)
		}
		other := chans.New[int](1)
		want, closed := 0, false
		sel := chans.NewSelector(
			chans.OnRecv(c, func(v int, ok bool) {
				if !ok {
					closed = true
					return
				}
				if v != want {
					t.Fatalf("received %d, want %d", v, want)
				}
				want++
			}),
			chans.OnRecv(other, func(v int, _ bool) {
				if v != -1 {
					t.Fatalf("other gave %d", v)
				}
			}))
		for !closed {
			if want%10 == 0 {
				_ = other.TrySend(-1)
			}
			sel.Select()
		}
		if want != n {
			t.Fatalf("received %d values before the close, want %d", want, n)
		}
	})
}

// TestFromChanUserClose checks FromChan's documented answer to a Chan
// closed by its user: the forwarding goroutine drops the one value it next
// receives from the native channel and ends (checkLeaks sees it end), and
// values the user has not let it take stay in the native channel.
func TestFromChanUserClose(t *testing.T) {
	for _, capacity := range []int{0, 1, chans.Unbounded} {
		t.Run(kindName(capacity), func(t *testing.T) {
			checkLeaks(t)
			native := make(chan int, 3)
			native <- 1
			c := chans.FromChan(native, capacity)
			if v, ok := c.Recv(); !ok || v != 1 {
				t.Fatalf("Recv got (%d, %v), want 1", v, ok)
			}
			noErr(t, c.Close(), "Close")
			native <- 2 // the goroutine takes it, fails to send it, drops it and ends
			eventually(t, "the goroutine takes the value", func() bool { return len(native) == 0 })
			native <- 3
			if v, ok := c.Recv(); ok {
				t.Fatalf("the closed Chan gave %d", v)
			}
			if v := <-native; v != 3 {
				t.Errorf("the native channel gave %d, want 3", v)
			}
			// checkLeaks fails the test if the goroutine is still running.
		})
	}
}

// TestFromChanNil checks that FromChan with a nil channel starts no
// goroutine and returns an empty open channel, never ready in a select.
func TestFromChanNil(t *testing.T) {
	checkLeaks(t)
	before := runtime.NumGoroutine()
	c := chans.FromChan[int](nil, 4)
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("FromChan(nil) started %d goroutines", n-before)
	}
	if j, ok := chans.TrySelect(chans.OnRecv(c, nil)); ok {
		t.Fatalf("TrySelect chose %d", j)
	}
	noErr(t, c.Close(), "Close")
}

// TestFromChanInFlight checks the cost FromChan documents: with the Chan
// full and nobody receiving, the goroutine has taken exactly one value
// beyond those buffered, and the rest stay in the native channel.
func TestFromChanInFlight(t *testing.T) {
	for _, capacity := range []int{0, 1, 4} {
		t.Run(kindName(capacity), func(t *testing.T) {
			checkLeaks(t)
			const n = 10
			native := make(chan int, n)
			for i := range n {
				native <- i
			}
			c := chans.FromChan(native, capacity)
			taken := capacity + 1
			eventually(t, "the goroutine fills the Chan", func() bool { return len(native) <= n-taken })
			yieldALot() // time for it to take a value too many, if it would
			if len(native) != n-taken || c.Len() != capacity {
				t.Fatalf("the native channel holds %d and the Chan %d, want %d and %d", len(native), c.Len(), n-taken, capacity)
			}
			close(native)
			for i := range n {
				if v, ok := c.Recv(); !ok || v != i {
					t.Fatalf("Recv got (%d, %v), want %d", v, ok, i)
				}
			}
			if _, ok := c.Recv(); ok {
				t.Fatal("the Chan is not closed after the native channel")
			}
		})
	}
}

// TestAllContext checks AllContext on both access paths: it yields every
// value until the channel is closed and drained; once the context is done
// it yields nothing more, even values still buffered, which the next
// receiver gets; a context cancelled while the loop waits ends it without
// taking the value sent next; breaking out takes nothing beyond what was
// yielded; and a nil context panics.
func TestAllContext(t *testing.T) {
	for _, v := range vias {
		t.Run(v.String(), func(t *testing.T) {
			checkLeaks(t)
			seq := func(c *chans.Chan[int], ctx context.Context) func(func(int) bool) {
				if v == viaHandle {
					return c.Handle().AllContext(ctx)
				}
				return c.AllContext(ctx)
			}
			c := chans.New[int](16)
			for i := range 10 {
				noErr(t, c.Send(i), "Send")
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got []int
			for x := range seq(c, ctx) {
				got = append(got, x)
				if x == 2 {
					cancel()
				}
			}
			if fmt.Sprint(got) != "[0 1 2]" {
				t.Fatalf("yielded %v after cancelling at 2, want [0 1 2]", got)
			}
			if x, ok := c.Recv(); !ok || x != 3 {
				t.Fatalf("next Recv got (%d, %v), want 3", x, ok)
			}
			got = got[:0]
			for x := range seq(c, context.Background()) {
				got = append(got, x)
				if x == 5 {
					break
				}
			}
			if x, ok := c.Recv(); fmt.Sprint(got) != "[4 5]" || !ok || x != 6 {
				t.Fatalf("yielded %v up to the break and the next Recv got (%d, %v), want [4 5] and 6", got, x, ok)
			}
			noErr(t, c.Close(), "Close")
			got = got[:0]
			for x := range seq(c, context.Background()) {
				got = append(got, x)
			}
			if fmt.Sprint(got) != "[7 8 9]" {
				t.Fatalf("drain yielded %v, want [7 8 9]", got)
			}

			for _, way := range cancelWays {
				if way.name == "cancel-soon" {
					continue // it cancels at a call of Err, which AllContext has no need to make
				}
				r := chans.New[int](0)
				ctx, wait := way.ctx()
				for x := range seq(r, ctx) {
					t.Fatalf("%s: yielded %d from an idle channel", way.name, x)
				}
				wait()
				sent := make(chan error, 1)
				go func() { sent <- r.Send(42) }()
				if x, ok := r.Recv(); !ok || x != 42 {
					t.Fatalf("%s: Recv after the loop got (%d, %v)", way.name, x, ok)
				}
				noErr(t, <-sent, "Send")
			}

			defer func() {
				if r := recover(); r == nil {
					t.Error("AllContext(nil) did not panic")
				}
			}()
			var none context.Context // nil: what is tested
			seq(c, none)
		})
	}
}

// TestAllContextRace cancels an AllContext loop at a random moment while a
// producer sends; what the loop yielded, followed by what the channel
// still holds, must be exactly what was sent, in order.
func TestAllContextRace(t *testing.T) {
	rounds := 200
	if testing.Short() || raceEnabled {
		rounds = 50
	}
	forEachSelKind(t, func(t *testing.T, capacity int) {
		for round := range rounds {
			const n = 100
			c := chans.New[int](capacity)
			ctx, cancel := context.WithCancel(context.Background())
			produced := selAsync(func() {
				for i := range n {
					if i == round%n {
						cancel()
					}
					_ = c.Send(i)
				}
				_ = c.Close()
			})
			want := 0
			for x := range c.AllContext(ctx) {
				if x != want {
					t.Fatalf("round %d: yielded %d, want %d", round, x, want)
				}
				want++
			}
			for x := range c.All() {
				if x != want {
					t.Fatalf("round %d: drained %d, want %d", round, x, want)
				}
				want++
			}
			selWait(t, produced, "producer")
			if want != n {
				t.Fatalf("round %d: %d values yielded and drained, want %d", round, want, n)
			}
			cancel()
		}
	})
}
