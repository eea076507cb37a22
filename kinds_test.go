package chans_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalable-go/chans"
)

// kinds is the table of channel kinds that drives every behaviour test:
// rendezvous, the smallest buffers, one less, equal and one more than the
// block of the segment layout (64 cells) and the segment size (256 cells in
// normal builds; the package exports no constant for either), a large
// buffer, and unbounded.
var kinds = []int{0, 1, 2, 63, 64, 65, 255, 256, 257, 1024, chans.Unbounded}

// kindName names a capacity in subtest names: "cap=0", "cap=unbounded".
func kindName(capacity int) string {
	if capacity == chans.Unbounded {
		return "cap=unbounded"
	}
	return fmt.Sprintf("cap=%d", capacity)
}

// forEachKind runs f as a subtest for each channel kind, and fails the
// subtest if it leaves goroutines behind.
func forEachKind(t *testing.T, f func(t *testing.T, capacity int)) {
	t.Helper()
	for _, capacity := range kinds {
		t.Run(kindName(capacity), func(t *testing.T) {
			checkLeaks(t)
			f(t, capacity)
		})
	}
}

// ops is the method set that Chan and Handle share. Behaviour tests speak to a
// channel through it so that each one runs through both access paths.
type ops[T any] interface {
	Send(v T) error
	SendContext(ctx context.Context, v T) error
	TrySend(v T) error
	Recv() (T, bool)
	RecvContext(ctx context.Context) (T, error)
	TryRecv() (T, error)
}

var (
	_ ops[int] = (*chans.Chan[int])(nil)
	_ ops[int] = (*chans.Handle[int])(nil)
)

// via selects the access path: the Chan's own methods or a Handle.
type via int

const (
	viaChan via = iota
	viaHandle
)

var vias = []via{viaChan, viaHandle}

func (v via) String() string {
	if v == viaHandle {
		return "via=handle"
	}
	return "via=chan"
}

// open returns the access path v to c for the calling goroutine: c itself, or
// a fresh Handle, which belongs to one goroutine at a time. Each goroutine in a
// test calls open for itself.
func open[T any](v via, c *chans.Chan[T]) ops[T] {
	if v == viaHandle {
		return c.Handle()
	}
	return c
}

// forEachKindVia runs f for each channel kind through each access path.
func forEachKindVia(t *testing.T, f func(t *testing.T, capacity int, v via)) {
	t.Helper()
	forEachKind(t, func(t *testing.T, capacity int) {
		for _, v := range vias {
			t.Run(v.String(), func(t *testing.T) { f(t, capacity, v) })
		}
	})
}

// buffered reports whether a channel of this capacity holds values without a
// receiver (everything but rendezvous).
func buffered(capacity int) bool { return capacity != 0 }

// bounded reports whether sends on a channel of this capacity can block.
func bounded(capacity int) bool { return capacity != chans.Unbounded }

// room is how many values a test may send into an empty channel of this
// capacity without a receiver: the capacity, or n for an unbounded channel.
func room(capacity, n int) int {
	if capacity == chans.Unbounded {
		return n
	}
	return capacity
}

// scale shrinks a stress size by 10 under -short and by 10 under -race, to at
// least 1.
func scale(n int) int {
	if testing.Short() {
		n /= 10
	}
	if raceEnabled {
		n /= 10
	}
	return max(n, 1)
}

// isErr fails the test unless err is want both by == and by errors.Is: the
// package returns its sentinels and ctx.Err() unwrapped.
func isErr(t *testing.T, err, want error, what string) {
	t.Helper()
	if err != want || !errors.Is(err, want) { //nolint:errorlint // == is the property under test
		t.Fatalf("%s: got error %v, want %v (unwrapped)", what, err, want)
	}
}

// noErr fails the test if err is not nil.
func noErr(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error %v", what, err)
	}
}

// spinBound is how many times eventually polls before it gives up. Polls
// yield the processor, so other goroutines progress in between; the bound is
// many orders of magnitude above what a working channel needs.
const spinBound = 1 << 22

// eventually polls f, yielding between polls, until it returns true; it fails
// the test if that takes more than spinBound polls. It proves liveness of a
// non-blocking operation that must succeed once another goroutine has reached
// a blocking call, without sleeping.
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	for i := 0; i < spinBound; i++ {
		if f() {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("%s: did not happen within %d polls", what, spinBound)
}

// yieldALot gives other goroutines a chance to reach a blocking call before
// the test acts. It is never needed for correctness: a test passes whatever
// the interleaving, this only makes the interesting one (a parked waiter)
// likely.
func yieldALot() {
	for i := 0; i < 100; i++ {
		runtime.Gosched()
	}
}

// cancelSoon is a context that cancels itself just after the first call to
// its Err (which still returns nil) or at the second call to its Done. An
// operation checks a context before it waits and then waits on it, so the
// cancellation lands after the check, when the operation has taken its cell
// and is about to park: the cancellation of a parked waiter, made
// deterministic and without a goroutine. (Every real context can be
// cancelled between two such calls.)
type cancelSoon struct {
	done   chan struct{}
	dones  atomic.Int32
	closed atomic.Bool
}

func newCancelSoon() *cancelSoon { return &cancelSoon{done: make(chan struct{})} }

func (c *cancelSoon) cancel() {
	if c.closed.CompareAndSwap(false, true) {
		close(c.done)
	}
}

func (c *cancelSoon) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *cancelSoon) Value(any) any               { return nil }

func (c *cancelSoon) Done() <-chan struct{} {
	if c.dones.Add(1) >= 2 {
		c.cancel()
	}
	return c.done
}

func (c *cancelSoon) Err() error {
	if c.closed.Load() {
		return context.Canceled
	}
	c.cancel()
	return nil
}

// cancelWays are the ways an operation that cannot proceed gets cancelled:
// its context is done before the call, becomes done as it starts to wait, is
// cancelled by another goroutine at some moment, or reaches its deadline.
// Each returns the context
// and a function that waits for the cancelling goroutine, if any.
var cancelWays = []struct {
	name string
	ctx  func() (context.Context, func())
}{
	{"already-done", func() (context.Context, func()) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, func() {}
	}},
	{"cancel-soon", func() (context.Context, func()) {
		return newCancelSoon(), func() {}
	}},
	{"cancel-from-goroutine", func() (context.Context, func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			yieldALot()
			cancel()
		}()
		return ctx, func() { <-done }
	}},
	{"deadline", func() (context.Context, func()) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		return ctx, cancel
	}},
}

// doneContexts returns contexts that are already done, each with what its Err
// must be: cancelled, past its deadline, and cancelled with a custom cause
// (whose Err is still context.Canceled).
func doneContexts() []struct {
	name string
	ctx  context.Context
} {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), epoch)
	cancel2()
	caused, cancel3 := context.WithCancelCause(context.Background())
	cancel3(errCause)
	return []struct {
		name string
		ctx  context.Context
	}{
		{"canceled", cancelled},
		{"deadline", expired},
		{"cause", caused},
	}
}

var (
	errCause = errors.New("custom cause")
	epoch    = time.Unix(0, 0)
)
