package chans_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/scalable-go/chans"
)

// The heap tests measure the live heap after a full collection, before and
// after a long run, on a channel that stays reachable throughout. They are
// not parallel (the heap is the process's). Their full sizes are the issue's
// (a million operations, ten million streamed values); under -short or -race
// they run fewer operations and scale the bound with the count, never below
// minLimit, which stays several times below what a leak of the cells used
// would hold (each test says how much that is).

const (
	mib      = 1 << 20
	minLimit = mib / 2
)

// heapSize returns a heap test's operation count, full or reduced (under
// -short or -race), and its bound: perMillion bytes for each million
// operations, at least minLimit.
func heapSize(full, reduced int, perMillion uint64) (n int, limit uint64) {
	n = full
	if testing.Short() || raceEnabled {
		n = reduced
	}
	return n, max(minLimit, perMillion*uint64(n)/1_000_000)
}

// payload is the element of the streaming tests: 32 bytes, so that a channel
// that keeps its used cells (40 bytes each with the cell's state word) grows
// past the bounds below by a wide margin even at the reduced sizes.
type payload [4]int64

// liveHeap returns the heap in use by reachable objects: HeapAlloc right
// after two full collections (the second sweeps what the first freed, and
// runs cleanups queued by the first).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// checkGrowth fails the test if the live heap grew by limit or more since
// base.
func checkGrowth(t *testing.T, base, limit uint64, what string) {
	t.Helper()
	now := liveHeap()
	if now > base && now-base >= limit {
		t.Fatalf("%s: live heap grew by %.2f MiB (from %.1f to %.1f MiB), want less than %.2f MiB",
			what, float64(now-base)/mib, float64(base)/mib, float64(now)/mib, float64(limit)/mib)
	}
	t.Logf("%s: live heap %+.2f MiB", what, (float64(now)-float64(base))/mib)
}

// stream passes n values through c from this goroutine, keeping at most
// window in flight (and no more than the capacity), and checks each value.
// For a rendezvous channel a second goroutine receives.
func stream(t *testing.T, c *chans.Chan[payload], n, window int) {
	t.Helper()
	if c.Cap() == 0 {
		errc := make(chan error, 1)
		go func() {
			for i := 0; i < n; i++ {
				if err := c.Send(payload{int64(i)}); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
		for i := 0; i < n; i++ {
			if got, ok := c.Recv(); !ok || got[0] != int64(i) {
				t.Fatalf("Recv = %v, %v; want value %d", got[0], ok, i)
			}
		}
		noErr(t, <-errc, "sender")
		return
	}
	if bounded(c.Cap()) {
		window = min(window, c.Cap())
	}
	for i := 0; i < n+window; i++ {
		if i < n {
			if err := c.TrySend(payload{int64(i)}); err != nil {
				t.Fatalf("TrySend of value %d with %d in flight: %v", i, min(i, window), err)
			}
		}
		if j := i - window + 1; j >= 0 && j < n {
			got, err := c.TryRecv()
			if err != nil || got[0] != int64(j) {
				t.Fatalf("TryRecv = %d, %v; want value %d", got[0], err, j)
			}
		}
	}
}

// TestHeapCancelledRecvStorm cancels a million receives on an idle channel of
// each kind, each as it parks, and checks that the live heap grew by less
// than 8 MiB and that the channel still works. A channel that kept the
// cancelled cells (40 bytes each) would hold 38 MiB at the full size, and
// 1.3 MiB at the reduced one (bound 0.5 MiB). Through a Handle the count is
// a quarter.
func TestHeapCancelledRecvStorm(t *testing.T) {
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		n, limit := heapSize(1_000_000, 1<<15, 8*mib)
		if v == viaHandle {
			n, limit = heapSize(1<<18, 1<<15, 8*mib)
		}
		c := chans.New[payload](capacity)
		o := open(v, c)
		base := liveHeap()
		for i := 0; i < n; i++ {
			ctx := newCancelSoon()
			if _, err := o.RecvContext(ctx); err != ctx.Err() {
				t.Fatalf("cancelled RecvContext %d: got %v, want %v", i, err, ctx.Err())
			}
		}
		checkGrowth(t, base, limit, fmt.Sprintf("%d cancelled receives", n))
		// A send and a receive still work.
		errc := make(chan error, 1)
		go func() { errc <- open(v, c).Send(payload{42}) }()
		if got, ok := o.Recv(); !ok || got[0] != 42 {
			t.Fatalf("Recv after the storm = %d, %v; want 42, true", got[0], ok)
		}
		noErr(t, <-errc, "Send after the storm")
		if n := c.Len(); n != 0 {
			t.Fatalf("Len() after the storm = %d, want 0", n)
		}
		runtime.KeepAlive(o)
	})
}

// TestHeapUnboundedStream streams 1e7 values (2^19 under -short or -race)
// through an unbounded channel with at most 1024 in flight and checks that
// the live heap grew by less than 16 MiB (0.8 MiB reduced) at each quarter
// of the run. A channel that kept its used segments would hold 380 MiB (20
// MiB reduced).
func TestHeapUnboundedStream(t *testing.T) {
	checkLeaks(t)
	n, limit := heapSize(10_000_000, 1<<19, 16*mib/10)
	c := chans.New[payload](chans.Unbounded)
	base := liveHeap()
	for q := 1; q <= 4; q++ {
		stream(t, c, n/4, 1024)
		checkGrowth(t, base, limit, fmt.Sprintf("%d/4 of %d values streamed", q, n))
	}
	runtime.KeepAlive(c)
}

// TestHeapUnboundedStreamConcurrent is TestHeapUnboundedStream with a
// producer and a consumer goroutine using Handles, so that the consumer parks
// and the producer wakes it; a token channel keeps at most 1024 values in
// flight.
func TestHeapUnboundedStreamConcurrent(t *testing.T) {
	checkLeaks(t)
	n, limit := heapSize(2_000_000, 1<<17, 8*mib)
	c := chans.New[payload](chans.Unbounded)
	base := liveHeap()
	tokens := make(chan struct{}, 1024)
	errc := make(chan error, 1)
	go func() {
		h := c.Handle()
		for i := 0; i < n; i++ {
			tokens <- struct{}{}
			if err := h.Send(payload{int64(i)}); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	h := c.Handle()
	for i := 0; i < n; i++ {
		got, ok := h.Recv()
		<-tokens
		if !ok || got[0] != int64(i) {
			t.Fatalf("Recv = %d, %v; want %d", got[0], ok, i)
		}
	}
	noErr(t, <-errc, "producer")
	checkGrowth(t, base, limit, fmt.Sprintf("%d values streamed by two goroutines", n))
	runtime.KeepAlive(c)
}

// TestHeapIdleHandle checks, for each kind, that streaming values leaves the
// heap bounded (the control: no Handle exists yet), then uses a Handle once,
// leaves it idle but reachable while as many values stream through the
// channel by its own methods, and checks again: the idle Handle pinned
// nothing. Each stream is 2^20 values (2^16 under -short or -race), bound
// 8 MiB (0.5 MiB); keeping the used segments would hold 40 MiB (2.5 MiB).
// The Handle still works afterwards, in order with the Chan's methods.
func TestHeapIdleHandle(t *testing.T) {
	forEachKind(t, func(t *testing.T, capacity int) {
		n, limit := heapSize(1<<20, 1<<16, 8*mib)
		if capacity == 0 {
			n, limit = heapSize(1<<18, 1<<16, 8*mib) // each value switches goroutines
		}
		c := chans.New[payload](capacity)
		base := liveHeap()
		stream(t, c, n, 1024)
		checkGrowth(t, base, limit, fmt.Sprintf("control, no Handle: %d values streamed", n))

		h := c.Handle()
		handleRoundTrip(t, c, h, 1)
		base = liveHeap()
		stream(t, c, n, 1024)
		checkGrowth(t, base, limit, fmt.Sprintf("%d values streamed past an idle Handle", n))
		handleRoundTrip(t, c, h, 2)
		runtime.KeepAlive(h)
	})
}

// handleRoundTrip sends a value through h and receives it with the Chan,
// then the other way round.
func handleRoundTrip(t *testing.T, c *chans.Chan[payload], h *chans.Handle[payload], x int64) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- h.Send(payload{x}) }()
	if got, ok := c.Recv(); !ok || got[0] != x {
		t.Fatalf("Chan.Recv of a Handle's send = %d, %v; want %d", got[0], ok, x)
	}
	noErr(t, <-errc, "Handle.Send")
	go func() { errc <- c.Send(payload{-x}) }()
	if got, ok := h.Recv(); !ok || got[0] != -x {
		t.Fatalf("Handle.Recv of the Chan's send = %d, %v; want %d", got[0], ok, -x)
	}
	noErr(t, <-errc, "Chan.Send")
}

// TestHeapBurstReturns fills a channel with a burst of 1e6 values (2^16
// under -short or -race), on a buffered channel with room for all of them
// and on an unbounded one, drains it, and checks that the live heap is back
// within 1 MiB (0.5 MiB reduced) of where it started: the segments of a
// burst go once receivers are past them. So that the check cannot pass for
// not seeing the burst at all, it also checks that the full channel held at
// least the values' own 32 bytes each (32 MiB, 2 MiB reduced). A buffered
// channel with a ring allocates its room at New: there the burst must not
// grow the heap at all. An unbounded ring grows as the cells do.
func TestHeapBurstReturns(t *testing.T) {
	checkLeaks(t)
	n, limit := heapSize(1_000_000, 1<<16, mib)
	for _, capacity := range []int{n, chans.Unbounded} {
		t.Run(kindName(capacity), func(t *testing.T) {
			c := chans.New[payload](capacity)
			base := liveHeap()
			for i := 0; i < n; i++ {
				if err := c.TrySend(payload{int64(i)}); err != nil {
					t.Fatalf("TrySend of value %d: %v", i, err)
				}
			}
			if capacity != chans.Unbounded && chans.UsesRing(c) {
				// A ring holds room for its capacity from New on, as a
				// native channel does: the burst must allocate nothing.
				checkGrowth(t, base, limit, fmt.Sprintf("a burst of %d values into a ring", n))
			} else if full := liveHeap(); full < base || full-base < uint64(n)*32 {
				t.Fatalf("%d values buffered: live heap grew by %.2f MiB, less than the values' own %.2f MiB: the measure does not see the burst",
					n, (float64(full)-float64(base))/mib, float64(n)*32/mib)
			}
			for i := 0; i < n; i++ {
				if got, err := c.TryRecv(); err != nil || got[0] != int64(i) {
					t.Fatalf("TryRecv = %d, %v; want value %d", got[0], err, i)
				}
			}
			checkGrowth(t, base, limit, fmt.Sprintf("a burst of %d values received", n))
			runtime.KeepAlive(c)
		})
	}
}
