// Package bench compares chans with native Go channels under `go test -bench`.
// It has no API: the benchmarks live in its test files, and this file holds the
// one small interface they run on, with an adapter per implementation, so that
// every workload runs on both in the same process.
//
// Sub-benchmark names are key=value pairs that benchstat can slice, for
// example BenchmarkMPMC/impl=chans/cap=1024/work=100/g=P. See
// bench/results/README.md for the commands.
package bench

import (
	"github.com/scalable-go/chans"
)

// Queue is a channel of ints as the benchmarks see it.
//
// Operations that take a few nanoseconds also come as loops (TryRecvN,
// TrySendN, PairsN): a call through an interface costs about 1.5 ns, which
// would blur the ratio between two 4 ns operations.
type Queue interface {
	Send(v int)
	Recv() (v int, ok bool)
	TrySend(v int) bool
	TryRecv() (v int, ok bool)
	Close()

	// Local returns the access path for one goroutine: the queue itself, or a
	// new Handle for chans-handle. Call it outside the timed region.
	Local() Queue

	// TryRecvN does n TryRecv and returns how many succeeded.
	TryRecvN(n int) int
	// TrySendN does n TrySend of 0 and returns how many succeeded.
	TrySendN(n int) int
	// PairsN does n Send+Recv pairs and returns the sum received (the values
	// sent are 1..n).
	PairsN(n int) int
}

// Impl is one implementation under test.
type Impl struct {
	Name string // the value of the impl= key
	// New makes a queue: capacity 0, k > 0, or chans.Unbounded. Native
	// channels have no unbounded kind; they get a buffer of unboundedBuf
	// elements, which benchmarks set to the number of messages of the run.
	New func(capacity, unboundedBuf int) Queue
}

var (
	native      = Impl{"native", newNative}
	chansChan   = Impl{"chans", newChans}
	chansHandle = Impl{"chans-handle", newChansHandle}

	// impls lists native first, so that benchstat -col /impl takes it as the
	// baseline column.
	impls = []Impl{native, chansChan, chansHandle}
	// chanImpls is native and the Chan methods, for workloads where a Handle
	// changes nothing or where run time is short.
	chanImpls = []Impl{native, chansChan}
)

// ---------------------------------------------------------------- native

type nativeQueue struct{ c chan int }

func newNative(capacity, unboundedBuf int) Queue {
	if capacity < 0 {
		capacity = max(unboundedBuf, 1)
	}
	return nativeQueue{make(chan int, capacity)}
}

func (q nativeQueue) Send(v int) { q.c <- v }
func (q nativeQueue) Recv() (int, bool) {
	v, ok := <-q.c
	return v, ok
}
func (q nativeQueue) TrySend(v int) bool {
	select {
	case q.c <- v:
		return true
	default:
		return false
	}
}
func (q nativeQueue) TryRecv() (int, bool) {
	select {
	case v, ok := <-q.c: // ok is false once closed and drained, as for chans
		return v, ok
	default:
		return 0, false
	}
}
func (q nativeQueue) Close()       { close(q.c) }
func (q nativeQueue) Local() Queue { return q }

func (q nativeQueue) TryRecvN(n int) int {
	c, got := q.c, 0
	for range n {
		select {
		case <-c:
			got++
		default:
		}
	}
	return got
}

func (q nativeQueue) TrySendN(n int) int {
	c, got := q.c, 0
	for range n {
		select {
		case c <- 0:
			got++
		default:
		}
	}
	return got
}

func (q nativeQueue) PairsN(n int) int {
	c, sum := q.c, 0
	for i := 1; i <= n; i++ {
		c <- i
		sum += <-c
	}
	return sum
}

// ---------------------------------------------------------------- chans

type chansQueue struct{ c *chans.Chan[int] }

func newChans(capacity, _ int) Queue { return chansQueue{chans.New[int](capacity)} }

func (q chansQueue) Send(v int)           { q.c.Send(v) }
func (q chansQueue) Recv() (int, bool)    { return q.c.Recv() }
func (q chansQueue) TrySend(v int) bool   { return q.c.TrySend(v) == nil }
func (q chansQueue) TryRecv() (int, bool) { v, err := q.c.TryRecv(); return v, err == nil }
func (q chansQueue) Close()               { q.c.Close() }
func (q chansQueue) Local() Queue         { return q }

func (q chansQueue) TryRecvN(n int) int {
	c, got := q.c, 0
	for range n {
		if _, err := c.TryRecv(); err == nil {
			got++
		}
	}
	return got
}

func (q chansQueue) TrySendN(n int) int {
	c, got := q.c, 0
	for range n {
		if c.TrySend(0) == nil {
			got++
		}
	}
	return got
}

func (q chansQueue) PairsN(n int) int {
	c, sum := q.c, 0
	for i := 1; i <= n; i++ {
		c.Send(i)
		v, _ := c.Recv()
		sum += v
	}
	return sum
}

// ---------------------------------------------------------------- chans-handle

// handleQueue is a chans.Chan reached through a Handle. The queue New returns
// holds one for the goroutine that made it; Local makes a new one.
type handleQueue struct{ h *chans.Handle[int] }

func newChansHandle(capacity, _ int) Queue {
	return handleQueue{chans.New[int](capacity).Handle()}
}

func (q handleQueue) Send(v int)           { q.h.Send(v) }
func (q handleQueue) Recv() (int, bool)    { return q.h.Recv() }
func (q handleQueue) TrySend(v int) bool   { return q.h.TrySend(v) == nil }
func (q handleQueue) TryRecv() (int, bool) { v, err := q.h.TryRecv(); return v, err == nil }
func (q handleQueue) Close()               { q.h.Chan().Close() }
func (q handleQueue) Local() Queue         { return handleQueue{q.h.Chan().Handle()} }

func (q handleQueue) TryRecvN(n int) int {
	h, got := q.h, 0
	for range n {
		if _, err := h.TryRecv(); err == nil {
			got++
		}
	}
	return got
}

func (q handleQueue) TrySendN(n int) int {
	h, got := q.h, 0
	for range n {
		if h.TrySend(0) == nil {
			got++
		}
	}
	return got
}

func (q handleQueue) PairsN(n int) int {
	h, sum := q.h, 0
	for i := 1; i <= n; i++ {
		h.Send(i)
		v, _ := h.Recv()
		sum += v
	}
	return sum
}
