package workload

import (
	"fmt"

	"github.com/scalable-go/chans"
)

// Implementation names accepted in Config.Impl.
const (
	Native      = "native"       // a Go chan
	Chans       = "chans"        // chans.Chan methods
	ChansHandle = "chans-handle" // a chans.Handle per goroutine
)

// Impls returns the implementation names, native first.
func Impls() []string { return []string{Native, Chans, ChansHandle} }

// channel is one channel under test. Workloads reach it through endpoints, one
// per goroutine, so that chans-handle can give each goroutine its own Handle.
type channel interface {
	// endpoint returns the access path for one goroutine. Call it before the
	// timed region: for chans-handle it allocates a Handle.
	endpoint() endpoint
	close()
}

// endpoint is what one goroutine uses. Operations that take only nanoseconds
// come as loops (pairs, failRecv, failSend): an interface call costs about
// 1.5 ns on our machines, which would blur a 4 ns operation.
type endpoint interface {
	send(v int)
	recv() (v int, ok bool)
	// pairs does n send+receive pairs, calling w.Do before each, and returns
	// the sum of the values received (the values sent are 1..n).
	pairs(n int, w *Work) int
	// failRecv does n TryRecv and returns how many succeeded.
	failRecv(n int) int
	// failSend does n TrySend and returns how many succeeded.
	failSend(n int) int
}

// newChannel makes a channel of the given implementation and capacity (0, k
// > 0, or -1 for unbounded). Native channels have no unbounded kind: they get
// a buffer of unboundedBuf elements, which workloads set to the number of
// messages of the run, so that no send ever waits.
func newChannel(impl string, capacity, unboundedBuf int) (channel, error) {
	if capacity < -1 {
		return nil, fmt.Errorf("workload: capacity %d (want 0, a positive size, or -1 for unbounded)", capacity)
	}
	switch impl {
	case Native:
		if capacity < 0 {
			capacity = max(unboundedBuf, 1)
		}
		return nativeChan{make(chan int, capacity)}, nil
	case Chans:
		return chansChan{chans.New[int](capacity)}, nil
	case ChansHandle:
		return chansHandleChan{chans.New[int](capacity)}, nil
	}
	return nil, fmt.Errorf("workload: unknown implementation %q (want one of %v)", impl, Impls())
}

func checkImpl(impl string) error {
	for _, s := range Impls() {
		if impl == s {
			return nil
		}
	}
	return fmt.Errorf("workload: unknown implementation %q (want one of %v)", impl, Impls())
}

// ---------------------------------------------------------------- native

type nativeChan struct{ c chan int }

func (n nativeChan) endpoint() endpoint { return n }
func (n nativeChan) close()             { close(n.c) }
func (n nativeChan) send(v int)         { n.c <- v }
func (n nativeChan) recv() (int, bool) {
	v, ok := <-n.c
	return v, ok
}

func (n nativeChan) pairs(k int, w *Work) int {
	c, sum := n.c, 0
	for i := 1; i <= k; i++ {
		w.Do()
		c <- i
		sum += <-c
	}
	return sum
}

func (n nativeChan) failRecv(k int) int {
	c, got := n.c, 0
	for range k {
		select {
		case <-c:
			got++
		default:
		}
	}
	return got
}

func (n nativeChan) failSend(k int) int {
	c, got := n.c, 0
	for range k {
		select {
		case c <- 0:
			got++
		default:
		}
	}
	return got
}

// ---------------------------------------------------------------- chans

type chansChan struct{ c *chans.Chan[int] }

func (x chansChan) endpoint() endpoint { return x }
func (x chansChan) close()             { x.c.Close() }
func (x chansChan) send(v int)         { x.c.Send(v) }
func (x chansChan) recv() (int, bool)  { return x.c.Recv() }

func (x chansChan) pairs(k int, w *Work) int {
	c, sum := x.c, 0
	for i := 1; i <= k; i++ {
		w.Do()
		c.Send(i)
		v, _ := c.Recv()
		sum += v
	}
	return sum
}

func (x chansChan) failRecv(k int) int {
	c, got := x.c, 0
	for range k {
		if _, err := c.TryRecv(); err == nil {
			got++
		}
	}
	return got
}

func (x chansChan) failSend(k int) int {
	c, got := x.c, 0
	for range k {
		if c.TrySend(0) == nil {
			got++
		}
	}
	return got
}

// ---------------------------------------------------------------- chans-handle

type chansHandleChan struct{ c *chans.Chan[int] }

func (x chansHandleChan) endpoint() endpoint { return chansHandle{x.c.Handle()} }
func (x chansHandleChan) close()             { x.c.Close() }

type chansHandle struct{ h *chans.Handle[int] }

func (x chansHandle) send(v int)        { x.h.Send(v) }
func (x chansHandle) recv() (int, bool) { return x.h.Recv() }

func (x chansHandle) pairs(k int, w *Work) int {
	h, sum := x.h, 0
	for i := 1; i <= k; i++ {
		w.Do()
		h.Send(i)
		v, _ := h.Recv()
		sum += v
	}
	return sum
}

func (x chansHandle) failRecv(k int) int {
	h, got := x.h, 0
	for range k {
		if _, err := h.TryRecv(); err == nil {
			got++
		}
	}
	return got
}

func (x chansHandle) failSend(k int) int {
	h, got := x.h, 0
	for range k {
		if h.TrySend(0) == nil {
			got++
		}
	}
	return got
}
