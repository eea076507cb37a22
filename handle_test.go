package chans_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/scalable-go/chans"
)

// TestHandleShared shares one Handle between several goroutines, on the
// receiving side and on the sending side, and checks that every value sent
// is received exactly once. Handles own the waiter their blocking
// operations park on; two goroutines parking on it at once would read each
// other's values and wake each other (a shared receive Handle lost or
// duplicated values in every round before sharing was made safe).
func TestHandleShared(t *testing.T) {
	forEachKind(t, func(t *testing.T, capacity int) {
		const producers, consumers = 2, 3
		per := scale(20_000)
		c := chans.New[int](capacity)
		hs, hr := c.Handle(), c.Handle() // one Handle for all producers, one for all consumers
		var wg sync.WaitGroup
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range per {
					var err error
					if i%2 == 0 {
						err = hs.Send(p*per + i)
					} else {
						err = hs.SendContext(context.Background(), p*per+i)
					}
					if err != nil {
						t.Errorf("Send: %v", err)
						return
					}
				}
			}()
		}
		got := make([][]int, consumers)
		var cwg sync.WaitGroup
		for k := range consumers {
			cwg.Add(1)
			go func() {
				defer cwg.Done()
				for {
					var v int
					var err error
					if len(got[k])%2 == 0 {
						var ok bool
						if v, ok = hr.Recv(); !ok {
							err = chans.ErrClosed
						}
					} else {
						v, err = hr.RecvContext(context.Background())
					}
					if err != nil {
						return
					}
					got[k] = append(got[k], v)
				}
			}()
		}
		wg.Wait()
		noErr(t, hs.Close(), "Close through the Handle")
		cwg.Wait()
		seen := make([]bool, producers*per)
		n := 0
		for _, vs := range got {
			for _, v := range vs {
				if v < 0 || v >= len(seen) {
					t.Fatalf("received %d, which was never sent", v)
				}
				if seen[v] {
					t.Fatalf("received %d twice", v)
				}
				seen[v] = true
				n++
			}
		}
		if n != len(seen) {
			t.Fatalf("received %d values, sent %d", n, len(seen))
		}
	})
}

// TestHandleMethods checks that a Handle offers what the Chan offers: Len,
// Cap, Close and All, with the Chan's behaviour.
func TestHandleMethods(t *testing.T) {
	forEachKind(t, func(t *testing.T, capacity int) {
		c := chans.New[int](capacity)
		h := c.Handle()
		if h.Chan() != c {
			t.Fatal("Handle.Chan is not the channel it came from")
		}
		if h.Cap() != capacity {
			t.Fatalf("Handle.Cap = %d, want %d", h.Cap(), capacity)
		}
		n := room(capacity, 3)
		for i := range n {
			noErr(t, h.TrySend(i), "TrySend")
		}
		if h.Len() != c.Len() || h.Len() != n {
			t.Fatalf("Handle.Len = %d, Chan.Len = %d, want %d", h.Len(), c.Len(), n)
		}
		noErr(t, h.Close(), "Handle.Close")
		isErr(t, c.Close(), chans.ErrClosed, "Chan.Close after Handle.Close")
		var got []int
		for v := range h.All() {
			got = append(got, v)
		}
		if len(got) != n {
			t.Fatalf("Handle.All yielded %v, want %d values", got, n)
		}
		for i, v := range got {
			if v != i {
				t.Fatalf("Handle.All yielded %v, want 0..%d in order", got, n-1)
			}
		}
	})
}

// TestZeroChanPanics checks that every operation on a zero Chan (one not made
// by New) panics with a message that says to use New, instead of crashing
// inside the package, hanging, or reporting the channel empty or closed.
func TestZeroChanPanics(t *testing.T) {
	ops := map[string]func(c *chans.Chan[int]){
		"Send":        func(c *chans.Chan[int]) { c.Send(1) },
		"SendContext": func(c *chans.Chan[int]) { c.SendContext(context.Background(), 1) },
		"TrySend":     func(c *chans.Chan[int]) { c.TrySend(1) },
		"Recv":        func(c *chans.Chan[int]) { c.Recv() },
		"RecvContext": func(c *chans.Chan[int]) { c.RecvContext(context.Background()) },
		"TryRecv":     func(c *chans.Chan[int]) { c.TryRecv() },
		"Close":       func(c *chans.Chan[int]) { c.Close() },
		"Len":         func(c *chans.Chan[int]) { c.Len() },
		"Handle":      func(c *chans.Chan[int]) { c.Handle() },
		"All": func(c *chans.Chan[int]) {
			for range c.All() {
			}
		},
		"TrySelect": func(c *chans.Chan[int]) { chans.TrySelect(chans.OnRecv(c, nil)) },
		"Select":    func(c *chans.Chan[int]) { chans.Select(chans.OnRecv(c, nil)) },
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, "chans.New") {
					t.Errorf("%s on a zero Chan: panic %q, want one that says to use chans.New", name, msg)
				}
			}()
			var c chans.Chan[int]
			op(&c)
		})
	}
}
