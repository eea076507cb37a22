package chans_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/scalable-go/chans"
)

// TestBatchSequential checks the batch operations against a slice model, one
// goroutine at a time, for every kind: SendMany puts its values in order
// behind what was buffered, TryRecvMany takes what is buffered up to the
// room in dst, and each batch mixes with single operations.
func TestBatchSequential(t *testing.T) {
	forEachKind(t, func(t *testing.T, capacity int) {
		if capacity == 0 {
			return // rendezvous: nothing is buffered; see TestBatchRendezvous
		}
		c := chans.New[int](capacity)
		room := capacity
		if capacity == chans.Unbounded {
			room = 3000
		}
		var model []int
		next := 0
		for round := 0; round < 20; round++ {
			// Send up to the room, half through SendMany, half through Send.
			k := min(room-len(model), 1+round*7%50)
			vs := make([]int, k)
			for i := range vs {
				vs[i] = next
				next++
			}
			h := k / 2
			if n, err := c.SendMany(vs[:h]); n != h || err != nil {
				t.Fatalf("SendMany(%d values) = %d, %v", h, n, err)
			}
			for _, v := range vs[h:] {
				if err := c.Send(v); err != nil {
					t.Fatal(err)
				}
			}
			model = append(model, vs...)
			if n := c.Len(); n != len(model) {
				t.Fatalf("Len = %d, want %d", n, len(model))
			}
			// Receive some: TryRecvMany, TryRecv, RecvMany.
			dst := make([]int, 1+round*5%40)
			n, err := c.TryRecvMany(dst)
			if len(model) == 0 {
				if n != 0 || err != chans.ErrEmpty {
					t.Fatalf("TryRecvMany on empty = %d, %v", n, err)
				}
				continue
			}
			want := min(len(dst), len(model))
			if err != nil || n != want || !slices.Equal(dst[:n], model[:n]) {
				t.Fatalf("TryRecvMany = %d, %v, %v; want %v", n, err, dst[:n], model[:want])
			}
			model = model[n:]
			if len(model) > 0 {
				v, err := c.TryRecv()
				if err != nil || v != model[0] {
					t.Fatalf("TryRecv = %d, %v; want %d", v, err, model[0])
				}
				model = model[1:]
			}
			if len(model) > 0 {
				n, err := c.RecvMany(dst[:1])
				if err != nil || n != 1 || dst[0] != model[0] {
					t.Fatalf("RecvMany = %d, %v, %d; want %d", n, err, dst[0], model[0])
				}
				model = model[1:]
			}
		}
		// Close: buffered values stay receivable, then ErrClosed.
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if n, err := c.SendMany([]int{1, 2}); n != 0 || err != chans.ErrClosed {
			t.Fatalf("SendMany after Close = %d, %v", n, err)
		}
		dst := make([]int, len(model)+5)
		if len(model) > 0 {
			n, err := c.RecvMany(dst)
			if err != nil || n != len(model) || !slices.Equal(dst[:n], model) {
				t.Fatalf("RecvMany after Close = %d, %v, %v; want %v", n, err, dst[:n], model)
			}
		}
		if n, err := c.RecvMany(dst); n != 0 || err != chans.ErrClosed {
			t.Fatalf("RecvMany when closed and drained = %d, %v", n, err)
		}
		if n, err := c.TryRecvMany(dst); n != 0 || err != chans.ErrClosed {
			t.Fatalf("TryRecvMany when closed and drained = %d, %v", n, err)
		}
		if n, err := c.RecvMany(nil); n != 0 || err != nil {
			t.Fatalf("RecvMany(nil) = %d, %v", n, err)
		}
	})
}

// TestBatchRendezvous hands a SendMany's values, in order, to a consumer
// receiving with RecvMany and Recv on a rendezvous channel.
func TestBatchRendezvous(t *testing.T) {
	checkLeaks(t)
	c := chans.New[int](0)
	const total = 10000
	vs := make([]int, total)
	for i := range vs {
		vs[i] = i
	}
	var wg sync.WaitGroup
	wg.Add(1)
	var sendN int
	var sendErr error
	go func() {
		defer wg.Done()
		sendN, sendErr = c.SendMany(vs)
		c.Close()
	}()
	var got []int
	dst := make([]int, 7)
	for {
		n, err := c.RecvMany(dst)
		if err != nil {
			break
		}
		got = append(got, dst[:n]...)
		if v, ok := c.Recv(); ok {
			got = append(got, v)
		}
	}
	wg.Wait()
	if sendN != total || sendErr != nil {
		t.Fatalf("SendMany = %d, %v", sendN, sendErr)
	}
	if !slices.Equal(got, vs) {
		t.Fatalf("received %d values, not the %d sent in order", len(got), total)
	}
}

// TestBatchContext: a cancelled RecvManyContext takes nothing and a
// cancelled SendManyContext reports exactly what it sent.
func TestBatchContext(t *testing.T) {
	forEachKind(t, func(t *testing.T, capacity int) {
		if capacity == chans.Unbounded {
			return
		}
		c := chans.New[int](capacity)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		vs := make([]int, capacity+5)
		for i := range vs {
			vs[i] = i
		}
		n, err := c.SendManyContext(ctx, vs)
		if n != capacity || err != context.Canceled {
			t.Fatalf("SendManyContext(done ctx) = %d, %v; want %d, Canceled", n, err, capacity)
		}
		dst := make([]int, len(vs))
		if capacity > 0 {
			m, err := c.RecvManyContext(ctx, dst)
			if m != capacity || err != nil || !slices.Equal(dst[:m], vs[:capacity]) {
				t.Fatalf("RecvManyContext(done ctx) = %d, %v, %v", m, err, dst[:m])
			}
		}
		if m, err := c.RecvManyContext(ctx, dst); m != 0 || err != context.Canceled {
			t.Fatalf("RecvManyContext(done ctx) on empty = %d, %v", m, err)
		}
	})
}
