package chans

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/scalable-go/chans/internal/sched"
)

// CHANS_BACKEND picks the buffer of the buffered and unbounded channels the
// tests make: "cells" for the cells at any GOMAXPROCS, "ring" for a ring at
// any GOMAXPROCS, "ring-hand" for a ring whose sends hand values to parked
// receives (handRecv) at any GOMAXPROCS, as New's rings do at 1; unset, New
// decides by GOMAXPROCS, as it does for users.
func init() {
	switch os.Getenv("CHANS_BACKEND") {
	case "cells":
		ringMaxProcs, ringMaxProcsUnbounded = 0, 0
	case "ring":
		ringMaxProcs, ringMaxProcsUnbounded = 1<<30, 1<<30
	case "ring-hand":
		ringMaxProcs, ringMaxProcsUnbounded, ringHandMaxProcs = 1<<30, 1<<30, 1<<30
	case "":
	default:
		panic("CHANS_BACKEND: want cells, ring or ring-hand")
	}
}

// checkInvariants is CheckInvariants for a channel with a ring.
func (rb *ringBuf[T]) checkInvariants() error {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	tw, h := rb.tail.Load(), rb.head.Load()
	t := tw & counterMask
	if rb.unbounded != nil {
		rb.unbounded.checkInvariants(tw, h, fail)
	} else {
		if h > t || t-h > rb.n {
			fail("H = %d, T = %d with %d slots", h, t, rb.n)
		}
		rb.checkMarks(h, t, fail)
	}
	if n := rb.sendq.n.Load(); n != 0 || rb.sendq.ws.len() != 0 {
		fail("quiescent, but %d senders (%d entries) on the send queue", n, rb.sendq.ws.len())
	}
	if n := rb.recvq.n.Load(); n != 0 || rb.recvq.ws.len() != 0 {
		fail("quiescent, but %d receivers (%d entries) on the receive queue", n, rb.recvq.ws.len())
	}
	if errs == nil {
		return nil
	}
	return fmt.Errorf("ring invariants (T %#x, H %d): %s", tw, h, strings.Join(errs, "; "))
}

// checkMarks checks, for the store st whose positions from base on are in
// the channel up to limit, that each of its slots shows published for its
// position in [base, limit) and free for the next position it serves
// otherwise.
func (st *ringStore[T]) checkMarks(base, limit uint64, fail func(string, ...any)) {
	for p := base; p < base+st.n; p++ {
		i, want := st.slot(p - st.start.Load()) // free for the send of p
		if p < limit {
			want++ // published
		}
		if m := st.mark(i); m != want {
			fail("slot of position %d (store from %d): mark %d, want %d", p, st.start.Load(), m, want)
		}
	}
}

// checkInvariants checks an unbounded ring's list at a quiescent point:
// no growth under way; the receive store serves H or ends at H; each store
// from it to the send store, the last, shows its part of [H, T) published
// and every other slot free; a store that ended did so full, after at
// least one lap.
func (l *ringList[T]) checkInvariants(tw, h uint64, fail func(string, ...any)) {
	if tw&growBit != 0 {
		fail("quiescent, but a growth is under way")
	}
	t := tw & ringPosMask
	if h > t {
		fail("H = %d, T = %d", h, t)
		return
	}
	st := l.recv.Load()
	if h < st.start.Load() {
		fail("H = %d before the receive store's start %d", h, st.start.Load())
		return
	}
	if rs := l.recvStart.Load(); rs != st.start.Load() {
		fail("recvStart %d, but the receive store starts at %d", rs, st.start.Load())
	}
	seen := map[*ringStore[T]]bool{}
	for n := 0; ; n++ {
		if seen[st] {
			fail("store from %d twice in the list", st.start.Load())
			return
		}
		seen[st] = true
		nx := st.next.Load()
		end := t
		if nx != nil {
			end = nx.start.Load()
			if end-st.start.Load() < st.n {
				fail("store from %d of %d slots ended at %d, before a lap", st.start.Load(), st.n, end)
			}
			if nx.n != min(2*st.n, l.max) {
				fail("store from %d of %d slots followed by one of %d", st.start.Load(), st.n, nx.n)
			}
			if h > end {
				fail("H = %d past the end %d of the receive store (from %d)", h, end, st.start.Load())
				return
			}
		} else if st != l.send.Load() {
			fail("the last store (from %d) is not the send store", st.start.Load())
		}
		base := max(h, st.start.Load())
		if end-base > st.n {
			fail("store from %d of %d slots holds positions %d to %d", st.start.Load(), st.n, base, end)
			return
		}
		st.checkMarks(base, end, fail)
		if nx == nil {
			return
		}
		if n > 64 {
			fail("more than 64 stores from the receive store on")
			return
		}
		st = nx
	}
}

// newCells is New with cells whatever GOMAXPROCS, for the tests of the cell
// protocol; newRing is New with a ring (capacity > 0).
func newCells[T any](capacity int) *Chan[T] {
	return newChan[T](capacity, false, runtime.GOMAXPROCS(0))
}

func newRing[T any](capacity int) *Chan[T] {
	return newChan[T](capacity, true, runtime.GOMAXPROCS(0))
}

// sendSelectWaiting and recvSelectWaiting report whether the oldest
// registration on c's send (receive) queue is a select's that has finished
// its registration round, its try after registering included: it parks,
// or is about to.
func sendSelectWaiting[T any](c *Chan[T]) bool {
	q := &c.rb.sendq
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ws.len() > 0 && q.ws.front().sc != nil && q.ws.front().sc.st.state.Load() == selWaiting
}

func recvSelectWaiting[T any](c *Chan[T]) bool {
	q := &c.rb.recvq
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ws.len() > 0 && q.ws.front().sc != nil && q.ws.front().sc.st.state.Load() == selWaiting
}

// parkedSenders is the number of senders parked on c's ring, or about to
// park after a last look at it.
func parkedSenders[T any](c *Chan[T]) int { return int(c.rb.sendq.n.Load()) }

// TestRingParkedSendersFirst checks that senders parked on a full ring are
// served in the order they parked, before any send that began after them:
// a send that starts once another is parked must not take a slot that a
// receive freed for the parked one. Each round fills the channel, parks one
// sender, then races a receiver against a second sender that starts after
// the first parked.
func TestRingParkedSendersFirst(t *testing.T) {
	for _, k := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("cap=%d", k), func(t *testing.T) {
			for round := range 2000 {
				c := newRing[int](k)
				for i := range k {
					if err := c.TrySend(i); err != nil {
						t.Fatal(err)
					}
				}
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); c.Send(100) }() // parks: the channel is full
				for parkedSenders(c) == 0 {
					runtime.Gosched()
				}
				go func() { defer wg.Done(); c.Send(200) }() // starts after 100 parked
				for i := range k {
					if v, _ := c.Recv(); v != i {
						t.Fatalf("round %d: got %d, want %d", round, v, i)
					}
				}
				a, _ := c.Recv()
				b, _ := c.Recv()
				wg.Wait()
				if a != 100 || b != 200 {
					t.Fatalf("round %d: after the buffered values got %d then %d, want 100 then 200", round, a, b)
				}
			}
		})
	}
}

// TestRingCloseFailsParkedSenders checks that Close fails the senders
// parked on a full ring, with no receive to rescue them, and that their
// values are never received.
func TestRingCloseFailsParkedSenders(t *testing.T) {
	for _, k := range []int{1, 2, 64} {
		t.Run(fmt.Sprintf("cap=%d", k), func(t *testing.T) {
			c := newRing[int](k)
			for i := range k {
				if err := c.TrySend(i); err != nil {
					t.Fatal(err)
				}
			}
			const parked = 5
			errs := make(chan error, parked)
			for i := range parked {
				go func() { errs <- c.Send(1000 + i) }()
			}
			for parkedSenders(c) < parked {
				runtime.Gosched()
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			for range parked {
				if err := <-errs; err != ErrClosed {
					t.Fatalf("parked Send after Close: %v, want ErrClosed", err)
				}
			}
			for i := range k {
				if v, ok := c.Recv(); !ok || v != i {
					t.Fatalf("Recv %d: %d, %v", i, v, ok)
				}
			}
			if v, ok := c.Recv(); ok {
				t.Fatalf("Recv after drain: %d, want closed", v)
			}
		})
	}
}

// onOneP runs f with GOMAXPROCS 1, so that a goroutine made runnable by f
// runs only when f blocks.
func onOneP(t *testing.T, f func()) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
}

// TestRingHandsValueToParkedReceiver checks that a send that finds a plain
// receive parked claims its value for that receive before it returns, so
// that a woken receive never finds the value taken and parks again: a
// TryRecv right after the Send finds the channel empty, and the parked
// receive returns the value, even when its context fires first.
func TestRingHandsValueToParkedReceiver(t *testing.T) {
	for _, capacity := range []int{1, 4, Unbounded} {
		for _, withCtx := range []bool{false, true} {
			onOneP(t, func() {
				c := newRing[int](capacity)
				defer c.Close() // lets the receive go if the check below fails
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				type res struct {
					v   int
					err error
				}
				got := make(chan res, 1)
				go func() {
					var r res
					if withCtx {
						r.v, r.err = c.RecvContext(ctx)
					} else {
						r.v, r.err = c.recv(nil, nil)
					}
					got <- r
				}()
				for c.rb.recvq.n.Load() != 1 { // registered: it parks, or is about to
					runtime.Gosched()
				}
				if err := c.Send(7); err != nil {
					t.Fatal(err)
				}
				if v, err := c.TryRecv(); err != ErrEmpty {
					t.Fatalf("cap %d, ctx %v: TryRecv after the Send = %d, %v; want ErrEmpty: the value was left for any receive, not handed to the parked one",
						capacity, withCtx, v, err)
				}
				cancel()
				if r := <-got; r.v != 7 || r.err != nil {
					t.Fatalf("cap %d, ctx %v: the parked receive returned %d, %v; want 7, nil", capacity, withCtx, r.v, r.err)
				}
			})
		}
	}
}

// startRecv starts a plain receive on c and waits until it is registered
// on c's receive queue (it parks, or is about to); its result comes on the
// channel returned.
func startRecv(c *Chan[int]) <-chan recvResult {
	got := make(chan recvResult, 1)
	go func() {
		v, err := c.recv(nil, nil)
		got <- recvResult{v, err}
	}()
	for c.rb.recvq.n.Load() != 1 {
		runtime.Gosched()
	}
	return got
}

type recvResult struct {
	v   int
	err error
}

// TestRingHandsDirectOnlyWhenEmpty checks that a send (Send or TrySend)
// hands its value straight to a parked receive only while the ring is
// empty: with a value published and not yet passed on (a send between its
// publish and its pass), the parked receive must get that value, and the
// later send's value must stay in the ring behind it.
func TestRingHandsDirectOnlyWhenEmpty(t *testing.T) {
	for _, capacity := range []int{2, 4, Unbounded} {
		for _, try := range []bool{false, true} {
			ringHandsDirectOnlyWhenEmpty(t, capacity, try)
		}
	}
}

func ringHandsDirectOnlyWhenEmpty(t *testing.T, capacity int, try bool) {
	onOneP(t, func() {
		c := newRing[int](capacity)
		defer c.Close() // lets the receive go if a check below fails
		got := startRecv(c)
		if r := c.rb.trySend(1); r != ringOK { // published; the receive not served yet
			t.Fatalf("cap %d: trySend = %d", capacity, r)
		}
		send := c.Send
		if try {
			send = c.TrySend
		}
		if err := send(2); err != nil {
			t.Fatal(err)
		}
		if r := <-got; r.v != 1 || r.err != nil {
			t.Fatalf("cap %d, TrySend %v: the parked receive returned %d, %v; want 1, nil: a later send overtook the value in the ring", capacity, try, r.v, r.err)
		}
		if v, err := c.TryRecv(); v != 2 || err != nil {
			t.Fatalf("cap %d, TrySend %v: TryRecv = %d, %v; want 2, nil", capacity, try, v, err)
		}
		if err := CheckInvariants(c); err != nil {
			t.Error(err)
		}
	})
}

// TestRingHandsDirectNotPastParkedSender checks that a send that starts
// while another is parked does not hand its value to a parked receive
// ahead of the parked send's, even at an instant when the ring is empty: a
// receive has taken the last value and not yet let the parked sender in.
func TestRingHandsDirectNotPastParkedSender(t *testing.T) {
	onOneP(t, func() {
		c, sentB, _ := sendOnFullSlot(t, 0, 100)
		if v, r := c.rb.tryRecv(); r != ringOK || v != 0 { // a receive's claim, before its afterRecv
			t.Fatalf("tryRecv = %d, %d", v, r)
		}
		gotD := startRecv(c) // parks: the ring is empty
		sentE := make(chan error, 1)
		go func() { sentE <- c.Send(200) }() // starts after 100 parked
		for parkedSenders(c) < 2 && len(sentE) == 0 {
			yieldLocal()
		}
		if len(sentE) != 0 {
			t.Fatalf("Send(200) returned %v while Send(100), parked before it began, was still parked", <-sentE)
		}
		c.rb.afterRecv() // the receive's last step: lets the parked senders in
		if r := <-gotD; r.v != 100 || r.err != nil {
			t.Fatalf("the parked receive got %d, %v; want 100, nil", r.v, r.err)
		}
		if v, _ := c.Recv(); v != 200 {
			t.Fatalf("Recv = %d, want 200", v)
		}
		if err, err2 := <-sentB, <-sentE; err != nil || err2 != nil {
			t.Fatalf("Send(100) = %v, Send(200) = %v", err, err2)
		}
	})
}

// TestRingHandsDirectNotAfterClose checks that a send that comes after
// Close has set its bit, before Close has woken the parked receives, fails
// with ErrClosed and hands nothing to a parked receive.
func TestRingHandsDirectNotAfterClose(t *testing.T) {
	for _, capacity := range []int{1, 4, Unbounded} {
		onOneP(t, func() {
			c := newRing[int](capacity)
			got := startRecv(c)
			c.plainCap.Store(0)     // Close's first steps, in its order:
			c.rb.tail.Or(closedBit) // Close takes effect
			if err := c.Send(2); err != ErrClosed {
				t.Errorf("cap %d: Send after Close's bit = %v, want ErrClosed", capacity, err)
			}
			c.rb.recvq.wakeAll() // Close's next step
			if r := <-got; r.err != ErrClosed {
				t.Errorf("cap %d: the parked receive returned %d, %v; want ErrClosed", capacity, r.v, r.err)
			}
		})
	}
}

// TestRingHandsDirectNotToSelect checks that a send that finds a select's
// receive case first on the queue leaves its value in the ring and kicks
// the select, which takes it: a select is not handed values.
func TestRingHandsDirectNotToSelect(t *testing.T) {
	for _, capacity := range []int{1, 4, Unbounded} {
		onOneP(t, func() {
			c := newRing[int](capacity)
			defer c.Close() // lets the select go if a check below fails
			var got int
			cases := []Case{OnRecv(c, func(v int, _ bool) { got = v }), OnRecv(New[int](0), nil)}
			won := make(chan int, 1)
			go func() { won <- Select(cases...) }()
			for !recvSelectWaiting(c) {
				runtime.Gosched()
			}
			if err := c.Send(7); err != nil {
				t.Fatal(err)
			}
			// On one P the select runs only when this goroutine lets it,
			// which random yields (chans_perturb) do inside Send.
			if n := c.Len(); n != 1 && !sched.Enabled {
				t.Fatalf("cap %d: Len after the Send = %d, want 1: the value was not left in the ring for the select", capacity, n)
			}
			for range chances {
				if len(won) != 0 {
					break
				}
				runtime.Gosched()
			}
			if len(won) == 0 {
				t.Fatalf("cap %d: the select was not woken by the Send", capacity)
			}
			if j := <-won; j != 0 || got != 7 {
				t.Fatalf("cap %d: Select = %d with %d; want case 0 with 7", capacity, j, got)
			}
		})
	}
}

// TestRingYieldsBeforeParking checks that a send or receive that registers
// on a ring made at GOMAXPROCS 1 lets the goroutines runnable on its P run
// before it blocks: on one P, this goroutine runs again only when the
// other yields or blocks, and it should find the registration's owner not
// yet blocked, so that serving it needs no wake-up through the scheduler.
// Without the yield the owner blocks first every time. With it, another
// runnable goroutine (a collector worker, a timer) can now and then run
// between the two and let the owner block first, so the test runs twenty
// rounds and asks that the owner was found awake in at least one: it once
// failed on a single round under the race detector in CI.
func TestRingYieldsBeforeParking(t *testing.T) {
	const rounds = 20
	sendsAwake, recvsAwake := 0, 0
	onOneP(t, func() {
		for range rounds {
			// A send on a full slot.
			c, sent, s := sendOnFullSlot(t, 1, 2)
			if s.sleep.state.Load() == sleepAwake {
				sendsAwake++
			}
			if v, _ := c.Recv(); v != 1 {
				t.Fatalf("Recv = %d, want 1", v)
			}
			if err := <-sent; err != nil {
				t.Fatal(err)
			}
			if v, _ := c.Recv(); v != 2 {
				t.Fatalf("Recv = %d, want 2", v)
			}

			// A receive on an empty ring.
			got := make(chan int, 1)
			go func() { v, _ := c.Recv(); got <- v }()
			r := awaitQueued(&c.rb.recvq.mu, &c.rb.recvq.ws)
			if r.sleep.state.Load() == sleepAwake {
				recvsAwake++
			}
			if err := c.Send(3); err != nil {
				t.Fatal(err)
			}
			if v := <-got; v != 3 {
				t.Fatalf("the receive got %d, want 3", v)
			}
		}
	})
	if sendsAwake == 0 {
		t.Errorf("in %d rounds, a send registered on a full ring blocked every time before this goroutine ran", rounds)
	}
	if recvsAwake == 0 {
		t.Errorf("in %d rounds, a receive registered on an empty ring blocked every time before this goroutine ran", rounds)
	}
}

// sendOnFullSlot makes a one-slot ring holding first and starts a Send of
// v on it, which registers on the send queue; it returns the ring, the
// Send's result to come, and its registration once queued.
func sendOnFullSlot(t *testing.T, first, v int) (*Chan[int], <-chan error, *ringSendW[int]) {
	t.Helper()
	c := newRing[int](1)
	if err := c.TrySend(first); err != nil {
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() { sent <- c.Send(v) }() // parks: the ring is full
	return c, sent, awaitQueued(&c.rb.sendq.mu, &c.rb.sendq.ws)
}

// awaitQueued yields until the queue ws, guarded by mu, holds one entry,
// and returns it. It yields to the back of this P's run queue (yieldLocal),
// where the registering goroutine's own yield puts it behind this one.
func awaitQueued[W comparable](mu *sync.Mutex, ws *waitList[W]) W {
	for {
		mu.Lock()
		if ws.len() == 1 {
			w := ws.front()
			mu.Unlock()
			return w
		}
		mu.Unlock()
		yieldLocal()
	}
}

// TestRingSelectPassesWakeOn checks that a select woken for a value on a
// ring, which leaves without taking it (its context is done), passes the
// wake-up on to the next parked receiver: otherwise that receiver would
// stay parked with the value in the channel.
func TestRingSelectPassesWakeOn(t *testing.T) {
	onOneP(t, func() {
		c := newRing[int](1)
		ctx, cancel := context.WithCancel(context.Background())
		sel := make(chan error, 1)
		go func() {
			_, err := SelectContext(ctx, OnRecv(c, nil))
			sel <- err
		}()
		for !recvSelectWaiting(c) { // the select registered, tried and parks
			runtime.Gosched()
		}
		got := make(chan int, 1)
		go func() { v, _ := c.Recv(); got <- v }()
		for c.rb.recvq.n.Load() != 2 { // then the plain receive
			runtime.Gosched()
		}
		if r := c.rb.trySend(7); r != ringOK { // a value, with nobody woken yet
			t.Fatalf("trySend: %v", r)
		}
		cancel()
		c.rb.wakeRecv() // the value's wake-up goes to the select, the oldest
		if err := <-sel; err != context.Canceled {
			t.Fatalf("SelectContext = %v, want context.Canceled", err)
		}
		if n := c.rb.recvq.n.Load(); n != 0 {
			t.Fatalf("the select left with its wake-up: %d receiver still registered, the value unclaimed", n)
		}
		if v := <-got; v != 7 {
			t.Fatalf("Recv = %d, want 7", v)
		}
	})
}

// TestRingSelectPassesHandOffOn is TestRingSelectPassesWakeOn for a select
// woken for a free slot: the parked sender behind it gets the slot.
func TestRingSelectPassesHandOffOn(t *testing.T) {
	onOneP(t, func() {
		c := newRing[int](1)
		if err := c.TrySend(1); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		sel := make(chan error, 1)
		go func() {
			_, err := SelectContext(ctx, OnSend(c, 2, nil))
			sel <- err
		}()
		for !sendSelectWaiting(c) { // the select registered, tried and parks
			runtime.Gosched()
		}
		sent := make(chan error, 1)
		go func() { sent <- c.Send(3) }()
		for parkedSenders(c) != 2 { // then the plain send
			runtime.Gosched()
		}
		if v, r := c.rb.tryRecv(); r != ringOK || v != 1 { // a free slot, with nobody handed it yet
			t.Fatalf("tryRecv = %d, %v", v, r)
		}
		cancel()
		c.rb.handOff() // the slot goes to the select, the oldest
		if err := <-sel; err != context.Canceled {
			t.Fatalf("SelectContext = %v, want context.Canceled", err)
		}
		if n := parkedSenders(c); n != 0 {
			t.Fatalf("the select left with the hand-off: %d sender still parked with a free slot", n)
		}
		if err := <-sent; err != nil {
			t.Fatalf("Send = %v", err)
		}
		if v, _ := c.Recv(); v != 3 {
			t.Fatalf("Recv = %d, want 3", v)
		}
	})
}

// TestRingSelectRetriesWhenWoken checks that a select whose ring case a
// waker took off the queue tries the case again rather than parking on a
// registration that is gone: woken for a free slot (a receive's hand-off)
// it sends, woken for a value (a send's wake-up) it receives.
func TestRingSelectRetriesWhenWoken(t *testing.T) {
	for _, send := range []bool{true, false} {
		onOneP(t, func() {
			c := newRing[int](1)
			var s *Selector
			if send {
				if err := c.TrySend(1); err != nil {
					t.Fatal(err)
				}
				s = NewSelector(OnSend(c, 2, nil))
			} else {
				s = NewSelector(OnRecv(c, nil))
			}
			done := make(chan int, 1)
			go func() { done <- s.Select() }()
			for s.sc.st.state.Load() != selWaiting { // registered and parked
				runtime.Gosched()
			}
			if send {
				c.rb.tryRecv() // a free slot, handed to nobody yet
				c.rb.handOff()
			} else {
				c.rb.trySend(1) // a value, nobody woken yet
				c.rb.wakeRecv()
			}
			for {
				select {
				case <-done:
					return
				default:
				}
				if s.sc.st.state.Load() == selWaiting {
					t.Fatalf("send %v: the woken select parked again on a registration no waker holds", send)
				}
				runtime.Gosched()
			}
		})
	}
}

// TestRingSenderBehindSelectCase checks that a plain send that parked,
// without a look at the ring, behind a select's send case that had
// registered but not yet tried, is not left parked when that case takes
// one slot of several: the case passes the hand-off on.
func TestRingSenderBehindSelectCase(t *testing.T) {
	c := newRing[int](2)
	var call selCall
	call.init()
	call.st.state.Store(selReg)
	k := OnSend(c, 1, nil).k.(*ringSendCase[int])
	c.rb.sendq.add(&k.e, &call) // the first step of register: on the queue, no try yet
	k.in = true
	sent := make(chan error, 1)
	go func() { sent <- c.Send(2) }()
	for parkedSenders(c) != 2 { // the plain send queued behind the case
		runtime.Gosched()
	}
	if !k.try() { // the second step: room for the case
		t.Fatal("the case's try found the ring full")
	}
	k.takeBack()
	if n := parkedSenders(c); n != 0 {
		t.Fatalf("after the case took one slot of two: %d sender parked, Len %d of 2", n, c.Len())
	}
	if err := <-sent; err != nil {
		t.Fatalf("Send = %v", err)
	}
	for want := 1; want <= 2; want++ {
		if v, _ := c.Recv(); v != want {
			t.Fatalf("Recv = %d, want %d", v, want)
		}
	}
}

// TestRingMarksWrap drives single and batch operations through rings of
// 1 to 17 slots for more than 256 laps, so that every slot's mark wraps
// from 255 to 0 (by a single step and inside a run) with its neighbours in
// use, and runs cross word boundaries and the ring's end. After each step
// the ring is quiescent, so the invariants pin every mark; the values
// check FIFO order.
func TestRingMarksWrap(t *testing.T) {
	for n := 1; n <= 17; n++ {
		t.Run(fmt.Sprintf("cap=%d", n), func(t *testing.T) {
			c := newRing[int](n)
			check := func(step string) {
				t.Helper()
				if err := c.rb.checkInvariants(); err != nil {
					t.Fatalf("%s: %v", step, err)
				}
			}
			next, want := 0, 0
			buf := make([]int, n)
			for round := 0; next < 300*n; round++ {
				// Fill to a level that varies by round, singles and runs
				// mixed, then drain part of it.
				fill := 1 + round%n
				for c.Len() < fill {
					if round%2 == 0 {
						if err := c.Send(next); err != nil {
							t.Fatal(err)
						}
						next++
					} else {
						vs := make([]int, fill-c.Len())
						for i := range vs {
							vs[i] = next + i
						}
						k, err := c.SendMany(vs)
						if err != nil || k != len(vs) {
							t.Fatalf("SendMany(%d values) = %d, %v", len(vs), k, err)
						}
						next += k
					}
					check("send")
				}
				drain := 1 + (round/2)%fill
				for drain > 0 {
					k := 1
					if round%3 == 0 {
						var v int
						v, _ = c.Recv()
						buf[0] = v
					} else {
						var err error
						k, err = c.RecvMany(buf[:drain])
						if err != nil {
							t.Fatal(err)
						}
					}
					for _, v := range buf[:k] {
						if v != want {
							t.Fatalf("received %d, want %d", v, want)
						}
						want++
					}
					drain -= k
					check("receive")
				}
			}
		})
	}
}

// TestRingMarkSteps checks step and stepRun byte by byte against adding
// one to each mark of the run alone: every ring size up to 19 (runs within
// a word, across words, past the ring's end, over a word twice), laps
// around the wrap of a mark (127, 128, 255, 256), every start, length and
// kind of run, and random bytes around the run, which must not change.
func TestRingMarkSteps(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for n := uint64(1); n <= 19; n++ {
		var tail, head atomic.Uint64
		rb := newRingBuf[int](int(n), &tail, &head)
		want := make([]uint8, 8*len(rb.marks))
		for _, lap := range []uint64{0, 1, 127, 128, 255, 256, 1000} {
			for start := range n {
				for k := uint64(1); k <= n; k++ {
					for published := range uint8(2) {
						p := lap*n + start
						fillRun(rb, rnd, want, p, k, published)
						storeMarks(rb, want)
						if k == 1 && published == 1 {
							rb.step(start, want[start])
						} else {
							rb.stepRun(p, k, published)
						}
						for j := range k {
							i, _ := rb.slot(p + j)
							want[i]++
						}
						for w := range rb.marks {
							if got, exp := rb.marks[w].Load(), binary.LittleEndian.Uint64(want[8*w:]); got != exp {
								t.Fatalf("n %d, run of %d from position %d (published %d): word %d is %#x, want %#x", n, k, p, published, w, got, exp)
							}
						}
					}
				}
			}
		}
	}
}

// TestRingRunLen checks runLen against reading marks one at a time: every
// ring size up to 19, laps around the wrap of a mark, every start, limit
// and kind of run, and every place for the first slot that does not match
// (or none), with random marks elsewhere.
func TestRingRunLen(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for n := uint64(1); n <= 19; n++ {
		var tail, head atomic.Uint64
		rb := newRingBuf[int](int(n), &tail, &head)
		marks := make([]uint8, 8*len(rb.marks))
		for _, lap := range []uint64{0, 1, 127, 255, 256, 1000} {
			for start := range n {
				for max := uint64(1); max <= n; max++ {
					for published := range uint8(2) {
						for run := range max + 1 { // slots that match before the first that does not
							p := lap*n + start
							fillRun(rb, rnd, marks, p, run, published)
							if run < max {
								i, free := rb.slot(p + run)
								marks[i] = free + published + 1 + uint8(rnd.IntN(255))
							}
							storeMarks(rb, marks)
							if got := rb.runLen(p, max, published); got != run {
								t.Fatalf("n %d, position %d, max %d, published %d: runLen = %d, want %d", n, p, max, published, got, run)
							}
						}
					}
				}
			}
		}
	}
}

// TestRingReceivesDropValues checks that receives leave no reference to
// the values they took in the ring's slots, for single receives and for
// runs that wrap around the ring's end, so that the ring never keeps a
// received value from the garbage collector.
func TestRingReceivesDropValues(t *testing.T) {
	for _, n := range []int{1, 5, 8} {
		c := newRing[*int](n)
		buf := make([]*int, n)
		for round := range 3 * n {
			vs := make([]*int, 1+round%n)
			for i := range vs {
				vs[i] = new(int)
			}
			if k, err := c.SendMany(vs); k != len(vs) || err != nil {
				t.Fatalf("n %d: SendMany = %d, %v", n, k, err)
			}
			if round%2 == 0 {
				if k, err := c.RecvMany(buf[:len(vs)]); k != len(vs) || err != nil {
					t.Fatalf("n %d: RecvMany = %d, %v", n, k, err)
				}
			} else {
				for range vs {
					if _, ok := c.Recv(); !ok {
						t.Fatalf("n %d: Recv failed", n)
					}
				}
			}
			for i, v := range c.rb.vals {
				if v != nil {
					t.Fatalf("n %d, round %d: slot %d still holds a received value", n, round, i)
				}
			}
		}
	}
}

// fillRun sets marks (one byte per slot, in slot order) at random, except
// those of the slots of positions p .. p+k-1, which it sets to free
// (published 0) or published (published 1) for their positions.
func fillRun(rb *ringBuf[int], rnd *rand.Rand, marks []uint8, p, k uint64, published uint8) {
	for i := range marks {
		marks[i] = uint8(rnd.Uint32())
	}
	for j := range k {
		i, free := rb.slot(p + j)
		marks[i] = free + published
	}
}

// storeMarks stores marks (one byte per slot, in slot order) into rb.
func storeMarks(rb *ringBuf[int], marks []uint8) {
	for w := range rb.marks {
		rb.marks[w].Store(binary.LittleEndian.Uint64(marks[8*w:]))
	}
}

// staleVictim is an operation that TestRingStaleMarks and
// TestRingUnboundedStaleStores stop midway: run does it on c and returns
// the value received, or staleMark for a send, which sends staleMark.
type staleVictim struct {
	name string
	send bool
	run  func(c *Chan[int]) (int, error)
}

const staleMark = -1

// stall starts vc on c in a goroutine and returns once it stands at its
// first perturbation point (sched.SetHook); goOn lets it go on and returns
// its result.
func (vc staleVictim) stall(c *Chan[int]) (goOn func() staleResult) {
	return vc.stallAt(c, 0)
}

// stallAt is stall at the perturbation point after the first skip ones;
// every victim passes at least three before it claims a position.
func (vc staleVictim) stallAt(c *Chan[int], skip int) (goOn func() staleResult) {
	stalled, resume := make(chan struct{}), make(chan struct{})
	var passed atomic.Int64
	sched.SetHook(func() {
		if passed.Add(1) == int64(skip)+1 {
			close(stalled)
			<-resume
		}
	})
	done := make(chan staleResult)
	go func() {
		v, err := vc.run(c)
		done <- staleResult{v, err}
	}()
	<-stalled
	sched.SetHook(nil)
	return func() staleResult {
		close(resume)
		return <-done
	}
}

type staleResult struct {
	v   int
	err error
}

func staleVictims() []staleVictim {
	return []staleVictim{
		{"TrySend", true, func(c *Chan[int]) (int, error) { return staleMark, c.TrySend(staleMark) }},
		{"Send", true, func(c *Chan[int]) (int, error) { return staleMark, c.Send(staleMark) }},
		{"SendMany", true, func(c *Chan[int]) (int, error) {
			if n, err := c.SendMany([]int{staleMark}); n != 1 {
				return staleMark, fmt.Errorf("SendMany sent %d of 1: %v", n, err)
			}
			return staleMark, nil
		}},
		{"TryRecv", false, func(c *Chan[int]) (int, error) { return c.TryRecv() }},
		{"Recv", false, func(c *Chan[int]) (int, error) {
			v, ok := c.Recv()
			if !ok {
				return v, ErrClosed
			}
			return v, nil
		}},
		{"RecvMany", false, func(c *Chan[int]) (int, error) {
			var dst [1]int
			n, err := c.RecvMany(dst[:])
			if n != 1 {
				return 0, fmt.Errorf("RecvMany got %d values: %v", n, err)
			}
			return dst[0], err
		}},
	}
}

// TestRingStaleMarks stops one operation at its first perturbation point,
// right after its load of T or H (sched.SetHook: perturbed builds only),
// moves the ring on by 0 to 258 positions while keeping its fill level,
// and lets the operation go on with the stale T or H. The marks it then
// reads may belong to any later lap; the one-byte marks' argument (ring.go)
// says that such a read leads only to a failed claim, another look, or a
// verdict that H and T prove by themselves. So the send must succeed (there
// is room), the receive must get the oldest value, and FIFO order and the
// invariants must hold afterwards.
func TestRingStaleMarks(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the perturbed build (-tags chans_perturb), whose points take a hook")
	}
	const mark = staleMark
	victims := staleVictims()
	for _, vc := range victims {
		for _, n := range []int{1, 2, 3, 9} {
			for _, adv := range []int{0, 1, 2, 127, 128, 129, 254, 255, 256, 257, 258} {
				for _, adv := range []int{adv * n, adv} {
					c := newRing[int](n)
					next, want := 0, 0
					fill := n / 2 // room for a send
					if !vc.send {
						fill = (n + 1) / 2 // a value for a receive
					}
					for range fill {
						c.Send(next)
						next++
					}
					goOn := vc.stall(c)
					for range adv { // the same fill level, T and H moved on
						if fill < n {
							c.Send(next)
							next++
						}
						if v, _ := c.Recv(); v != want {
							t.Fatalf("%s, cap %d: while the victim stood, got %d, want %d", vc.name, n, v, want)
						}
						want++
						if fill == n {
							c.Send(next)
							next++
						}
					}
					r := goOn()
					if r.err != nil {
						t.Fatalf("%s, cap %d, ring moved on by %d: %v (fill %d: no verdict but success is right)", vc.name, n, adv, r.err, fill)
					}
					if !vc.send {
						if r.v != want {
							t.Fatalf("%s, cap %d, ring moved on by %d: got %d, want %d", vc.name, n, adv, r.v, want)
						}
						want++
					}
					if err := c.rb.checkInvariants(); err != nil {
						t.Fatalf("%s, cap %d, ring moved on by %d: %v", vc.name, n, adv, err)
					}
					for c.Len() > 0 {
						v, _ := c.Recv()
						if v == mark && vc.send && want == next {
							want = mark // the victim's value, after every value sent before it
						} else if v != want {
							t.Fatalf("%s, cap %d, ring moved on by %d: drained %d, want %d", vc.name, n, adv, v, want)
						} else {
							want++
						}
					}
					if vc.send && want != mark {
						t.Fatalf("%s, cap %d, ring moved on by %d: the victim's value was not received last", vc.name, n, adv)
					}
				}
			}
		}
	}
}

// TestRingUnboundedStaleStores stops each kind of send and receive on an
// unbounded ring between its load of the list's send (receive) store and
// its load of T (H), moves the channel on, through growths that link new
// stores and receives that leave old ones behind, and lets it go on. A
// send must land after every value sent while it stood and before none of
// them, in the store that serves its position; a receive must take the
// oldest value. With stores of 2 to 8 slots (chans_smallseg) or 32 to
// 1024, the moves cross from no growth to several.
func TestRingUnboundedStaleStores(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the perturbed build (-tags chans_perturb), whose points take a hook")
	}
	const mark = staleMark
	victims := staleVictims()
	first := ringListFirst
	for _, vc := range victims {
		// grow: values sent while the victim stands, kept: how many of
		// them stay in the channel (the rest are received then).
		for _, grow := range []int{0, 1, first - 1, first, first + 1, 3 * first, 12 * first, 40 * first} {
			for _, keep := range []int{0, 1, first, grow} {
				if keep > grow {
					continue
				}
				c := newRing[int](Unbounded)
				next, want := 0, 0
				if !vc.send {
					c.Send(next) // a value for the receive
					next++
				}
				goOn := vc.stall(c)
				for range grow {
					c.Send(next)
					next++
				}
				for c.Len() > keep { // the receiving victim's value too
					if v, _ := c.Recv(); v != want {
						t.Fatalf("%s, %d sent, %d kept: while the victim stood, got %d, want %d", vc.name, grow, keep, v, want)
					}
					want++
				}
				if !vc.send && keep == 0 {
					c.Send(next) // a value for the receive, sent after every other
					next++
				}
				r := goOn()
				if r.err != nil {
					t.Fatalf("%s, %d sent, %d kept: %v", vc.name, grow, keep, r.err)
				}
				if !vc.send {
					if r.v != want {
						t.Fatalf("%s, %d sent, %d kept: got %d, want %d", vc.name, grow, keep, r.v, want)
					}
					want++
				}
				if err := c.rb.checkInvariants(); err != nil {
					t.Fatalf("%s, %d sent, %d kept: %v", vc.name, grow, keep, err)
				}
				for c.Len() > 0 {
					v, _ := c.Recv()
					if v == mark && vc.send && want == next {
						want = mark // the victim's value, after every value sent before it
					} else if v != want {
						t.Fatalf("%s, %d sent, %d kept: drained %d, want %d", vc.name, grow, keep, v, want)
					} else {
						want++
					}
				}
				if vc.send && want != mark {
					t.Fatalf("%s, %d sent, %d kept: the victim's value was not received last", vc.name, grow, keep)
				}
				if err := c.rb.checkInvariants(); err != nil {
					t.Fatalf("%s, %d sent, %d kept, drained: %v", vc.name, grow, keep, err)
				}
			}
		}
	}
}

// TestRingUnboundedReusedStores stops each kind of send and receive on an
// unbounded ring at one of its first three perturbation points, with the
// list's send or receive store loaded (and for a receive, its start, H and
// possibly its next), and while it stands runs rounds that grow the list
// by several stores and drain it, so that receives leave stores behind
// and growths reuse them, the victim's among them, from new starts. The
// victim then goes on holding a store that now serves other positions; a
// send must still land after every value sent while it stood, and a
// receive take the oldest value.
func TestRingUnboundedReusedStores(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the perturbed build (-tags chans_perturb), whose points take a hook")
	}
	onePool(t)
	const mark = staleMark
	reusedTheVictims := 0
	for _, vc := range staleVictims() {
		for skip := range 3 {
			for _, keep := range []int{0, 1, 5} {
				c := newRing[int](Unbounded)
				l := c.rb.unbounded
				next, want := 0, 0
				// Grow to stores of the largest size first, so that the
				// victim holds one that a growth may reuse.
				for range 4 * ringListCap {
					c.Send(next)
					next++
				}
				for c.Len() > 1 {
					if v, _ := c.Recv(); v != want {
						t.Fatalf("%s: got %d, want %d", vc.name, v, want)
					}
					want++
				}
				victimStore := l.recv.Load()
				if vc.send {
					victimStore = l.send.Load()
				}
				from := victimStore.start.Load()
				goOn := vc.stallAt(c, skip)
				reused := false
				for round := 0; round < 50 && !reused; round++ {
					for range 3*ringListCap + round {
						c.Send(next)
						next++
						if st := l.send.Load(); st == victimStore && st.start.Load() != from {
							reused = true
						}
					}
					for c.Len() > keep {
						if v, _ := c.Recv(); v != want {
							t.Fatalf("%s at point %d: while the victim stood, got %d, want %d", vc.name, skip, v, want)
						}
						want++
					}
				}
				if reused {
					reusedTheVictims++
				}
				if !vc.send && c.Len() == 0 {
					c.Send(next) // a value for the receive, sent after every other
					next++
				}
				r := goOn()
				what := fmt.Sprintf("%s at point %d, %d kept (victim's store reused: %v)", vc.name, skip, keep, reused)
				if r.err != nil {
					t.Fatalf("%s: %v", what, r.err)
				}
				if !vc.send {
					if r.v != want {
						t.Fatalf("%s: got %d, want %d", what, r.v, want)
					}
					want++
				}
				if err := c.rb.checkInvariants(); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				for c.Len() > 0 {
					v, _ := c.Recv()
					if v == mark && vc.send && want == next {
						want = mark // the victim's value, after every value sent before it
					} else if v != want {
						t.Fatalf("%s: drained %d, want %d", what, v, want)
					} else {
						want++
					}
				}
				if vc.send && want != mark {
					t.Fatalf("%s: the victim's value was not received last", what)
				}
			}
		}
	}
	// sync.Pool, which keeps the stores left behind, drops some of them at
	// random under the race detector; each case above ran up to 50 rounds
	// until the victim's store came back.
	if reusedTheVictims == 0 {
		t.Fatal("no victim's store was reused while the victim stood: the test does not test reuse")
	}
	t.Logf("the victim's store was reused in %d of %d cases", reusedTheVictims, len(staleVictims())*3*3)
}

// onePool runs the rest of the test with GOMAXPROCS 1: a store that one P
// puts into sync.Pool stays in that P's private slot, where a goroutine
// running on another P does not find it, and the reuse tests need the
// growth they drive to be given the store they have just left behind.
func onePool(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
}

// staleReceivers is the receives among staleVictims.
func staleReceivers() []staleVictim {
	var rs []staleVictim
	for _, vc := range staleVictims() {
		if !vc.send {
			rs = append(rs, vc)
		}
	}
	return rs
}

// staleClaimed is, for each receive among staleVictims, the number of
// perturbation points it passes before the one right after its claim of H
// on an unbounded ring (for stallAt).
var staleClaimed = map[string]int{"TryRecv": 4, "Recv": 4, "RecvMany": 3}

// untilReused runs try, which reports whether the store it needed was
// reused, up to 20 times until it was (sync.Pool drops stores at random
// under the race detector), and fails the test if it never was.
func untilReused(t *testing.T, what string, try func() bool) {
	t.Helper()
	for range 20 {
		if try() {
			return
		}
	}
	t.Fatalf("%s: the store was not reused in 20 tries: the test does not test reuse", what)
}

// reuseRig drives an unbounded ring from the test's goroutine, one value
// per position (value v is sent at position v), for the tests of store
// reuse.
type reuseRig struct {
	t          *testing.T
	c          *Chan[int]
	l          *ringList[int]
	next, want int
}

// newReuseRig returns a rig whose receive store x has the largest size and
// is followed by another store, with H inside x and values after it.
func newReuseRig(t *testing.T) (r *reuseRig, x *ringStore[int]) {
	c := newRing[int](Unbounded)
	r = &reuseRig{t: t, c: c, l: c.rb.unbounded}
	for r.l.send.Load().n < r.l.max {
		r.send(1)
	}
	x = r.l.send.Load()
	r.send(int(r.l.max) + 1) // fills x, grows past it
	for r.l.recv.Load() != x {
		r.recv(1)
	}
	return r, x
}

func (r *reuseRig) send(k int) {
	for range k {
		r.c.Send(r.next)
		r.next++
	}
}

func (r *reuseRig) recv(k int) {
	r.t.Helper()
	for range k {
		if v, _ := r.c.Recv(); v != r.want {
			r.t.Fatalf("got %d, want %d", v, r.want)
		}
		r.want++
	}
}

// growAt drains the ring and moves it on so that the next growth comes at
// position tg, and returns the store that growth links: the last store has
// the largest size, and T ≤ tg - that size.
func (r *reuseRig) growAt(tg uint64) *ringStore[int] {
	r.t.Helper()
	n := int(r.l.max)
	r.recv(r.c.Len())
	for uint64(r.next) < tg-uint64(n) {
		r.send(1)
		r.recv(1)
	}
	if uint64(r.next) != tg-uint64(n) {
		r.t.Fatalf("T = %d, past %d", r.next, tg-uint64(n))
	}
	r.send(n + 1) // fills the last store, then grows at tg
	if st := r.l.send.Load(); st.start.Load() != tg {
		r.t.Fatalf("the last store starts at %d, want a growth at %d", st.start.Load(), tg)
	}
	return r.l.send.Load()
}

// TestRingUnboundedReusedStoreMarks stops a receive right after it has
// loaded its store x and x's start, lets x be left behind and reused from
// a start at 128 laps and one position past its old one, and lets the
// receive go on at H = that start. Computed from the old start, H falls on
// slot 1 at lap 128, whose mark (free for lap 0 modulo 256, published 1) is
// what slot 1 shows now for the position after H: a receive that did not
// check, after its marks, that x was still the receive store would take
// that value, out of order.
func TestRingUnboundedReusedStoreMarks(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the perturbed build (-tags chans_perturb), whose points take a hook")
	}
	onePool(t)
	for _, vc := range staleReceivers() {
		untilReused(t, vc.name, func() bool {
			r, x := newReuseRig(t)
			n, old := r.l.max, x.start.Load()
			goOn := vc.stallAt(r.c, 0)
			for r.l.recv.Load() == x {
				r.recv(1)
			}
			tg := old + 128*n + 1
			reused := r.growAt(tg) == x
			if reused {
				r.recv(int(n)) // H = tg, in x
				r.send(int(n) - 2)
			}
			res := goOn()
			if !reused {
				return false
			}
			if res.err != nil || res.v != r.want {
				t.Fatalf("%s: got %d, %v; want %d (the store it held was reused from %d, was from %d)", vc.name, res.v, res.err, r.want, tg, old)
			}
			r.want++
			r.recv(r.c.Len())
			if err := r.c.rb.checkInvariants(); err != nil {
				t.Fatalf("%s: %v", vc.name, err)
			}
			return true
		})
	}
}

// TestRingUnboundedLeftBehindStore stops a receive r2 between its claim of
// a position in store x and its step (so x is not drained and keeps its
// start and next when left behind), then a receive r1 right after it has
// loaded x as the receive store; lets the list move past x and its next
// store y, and y be reused from a start past H, with H at a position whose
// slot in x is r2's and whose lap there is 128 laps on (the same mark
// byte). Then r1 goes on: x's start is unchanged and H < y's start, so a
// receive that checked only x's start would take r2's value again from x
// and lose H's; r1 must take H's value, r2 its own.
func TestRingUnboundedLeftBehindStore(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the perturbed build (-tags chans_perturb), whose points take a hook")
	}
	onePool(t)
	for _, r1 := range staleReceivers() {
		for _, r2 := range staleReceivers() {
			untilReused(t, r1.name+" then "+r2.name, func() bool {
				r, x := newReuseRig(t)
				y, n := x.next.Load(), r.l.max
				mine := r.want
				goOn2 := r2.stallAt(r.c, staleClaimed[r2.name])
				r.want++
				goOn1 := r1.stallAt(r.c, 0)
				for r.l.recv.Load() == x {
					r.recv(1)
				}
				tg := uint64(r.next) + 2*n
				r.growAt(tg) // y is followed by another store, and left behind next
				laps := (tg+2*n)/(128*n) + 1
				if r.growAt(uint64(mine)+128*n*laps+n) != y {
					goOn1()
					goOn2()
					return false
				}
				h := int(r.c.r.Load()) // ≡ mine modulo 128 laps of x
				res1, res2 := goOn1(), goOn2()
				if res1.err != nil || res1.v != h || res2.err != nil || res2.v != mine {
					t.Fatalf("%s then %s: got %d, %v and %d, %v; want %d and %d", r1.name, r2.name, res1.v, res1.err, res2.v, res2.err, h, mine)
				}
				r.want = h + 1
				r.recv(r.c.Len())
				if err := r.c.rb.checkInvariants(); err != nil {
					t.Fatalf("%s then %s: %v", r1.name, r2.name, err)
				}
				return true
			})
		}
	}
}

// TestRingUnboundedResetAfterClaim stops a TrySend v1 right after it has
// loaded the send store x, moves the list past x (x goes to the pool), and
// stops a second TrySend g inside its growth with x in hand, before its
// claim of T; then lets another send claim that position with a growth of
// its own, so that g's claim fails and g puts x back, and moves T to 128
// laps of x past x's start, where a slot showing a zero mark reads as free.
// Then g and v1 go on. Had g set x's next to nil before its claim (its
// marks it clears before, as they are then), v1 would find x the last store
// and claim a position in it, where
// no receive would ever find its value; both values must be in the
// channel, g's then v1's.
func TestRingUnboundedResetAfterClaim(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the perturbed build (-tags chans_perturb), whose points take a hook")
	}
	onePool(t)
	const gMark = -2
	trySend := func(v int) staleVictim {
		return staleVictim{"TrySend", true, func(c *Chan[int]) (int, error) { return v, c.TrySend(v) }}
	}
	const inGrowth = 4 // TrySend's points: two in sendAt, two at its slot, then the growth's
	heldX := false
	for attempt := 0; attempt < 20 && !heldX; attempt++ {
		c := newRing[int](Unbounded)
		r := &reuseRig{t: t, c: c, l: c.rb.unbounded}
		for r.l.send.Load().n < r.l.max {
			r.send(1)
		}
		x, n := r.l.send.Load(), r.l.max
		goOnV1 := trySend(staleMark).stallAt(c, 0)
		r.send(int(n) + 1) // fills x, grows past it
		for r.l.recv.Load() == x {
			r.recv(1) // leaves x behind: to the pool
		}
		r.recv(c.Len())
		r.send(int(n)) // the last store full: the next send grows
		goOnG := trySend(gMark).stallAt(c, inGrowth)
		if c.s.Load()&growBit != 0 {
			t.Fatal("g stalled after its claim, not before")
		}
		r.send(1) // claims g's position, growing with a store of its own
		if r.l.send.Load() == x {
			continue // the pool gave x to this growth, not g's
		}
		target := x.start.Load() + 128*n*((uint64(r.next)-x.start.Load())/(128*n)+1)
		r.recv(c.Len())
		for uint64(r.next) < target {
			r.send(1)
			r.recv(1)
		}
		resG := goOnG() // fails its claim, puts what it held back, sends at target
		resV1 := goOnV1()
		if resG.err != nil || resV1.err != nil {
			t.Fatalf("g: %v, v1: %v", resG.err, resV1.err)
		}
		if err := c.rb.checkInvariants(); err != nil {
			t.Fatalf("after g and v1 sent: %v", err)
		}
		if a, _ := c.Recv(); a != gMark {
			t.Fatalf("received %d, want g's value %d", a, gMark)
		}
		if b, _ := c.Recv(); b != staleMark {
			t.Fatalf("received %d, want v1's value %d", b, staleMark)
		}
		// g held x if x is back in the pool (the test's own growth
		// allocated, so x did not go anywhere else).
		for !heldX {
			st, _ := r.l.used.Get().(*ringStore[int])
			if st == nil {
				break
			}
			heldX = st == x
		}
	}
	if !heldX {
		t.Fatal("g never held x in 20 tries: the test does not test a growth's failed claim")
	}
}

// TestRingUnboundedLeaveAfterReuse stops a receive that has found its
// store x done with (H at the next store's start) just before it moves the
// list on, lets the list move on without it, x be reused and become the
// receive store again, with the store y that followed it then reused
// after it, and then lets it go on: it must not move the list from x to y,
// which a move keyed on x's address alone would do (the receives would
// then look for H in a store that starts past it, and wait for ever).
func TestRingUnboundedLeaveAfterReuse(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the perturbed build (-tags chans_perturb), whose points take a hook")
	}
	onePool(t)
	for _, vc := range staleReceivers() {
		untilReused(t, vc.name, func() bool {
			r, x := newReuseRig(t)
			y := x.next.Load()
			for r.c.r.Load() < y.start.Load() {
				r.recv(1)
			}
			goOn := vc.stallAt(r.c, 2) // found x done with, in leave
			r.recv(1)                  // moves the list on to y, and x to the pool
			reused := r.growAt(r.c.s.Load()+uint64(r.l.max)) == x
			if reused {
				r.send(int(r.l.max)) // fills x, grows past it
				for r.l.recv.Load() != x {
					r.recv(1) // and leaves y behind
				}
				r.send(int(r.l.max)) // fills the last store, grows past it: y is reused
				reused = r.l.send.Load() == y
			}
			res := goOn()
			if !reused {
				return false
			}
			if res.err != nil || res.v != r.want {
				t.Fatalf("%s: got %d, %v; want %d", vc.name, res.v, res.err, r.want)
			}
			r.want++
			if err := r.c.rb.checkInvariants(); err != nil {
				t.Fatalf("%s: %v", vc.name, err)
			}
			r.recv(r.c.Len())
			return true
		})
	}
}

// TestRingUnboundedNoReuseUnderReceive stops a receive between its claim of
// a position in store x and the step that frees its slot, lets the list
// move past x, and grows it: x must not be reused while that receive is
// under way (its value would be overwritten, its step land on a reset
// mark), so the growth links another store, and the receive then returns
// its own value.
func TestRingUnboundedNoReuseUnderReceive(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the perturbed build (-tags chans_perturb), whose points take a hook")
	}
	onePool(t)
	for _, vc := range staleReceivers() {
		r, x := newReuseRig(t)
		mine := r.want
		goOn := vc.stallAt(r.c, staleClaimed[vc.name])
		if got := r.c.r.Load(); got != uint64(mine)+1 {
			t.Fatalf("%s: stalled with H = %d, want %d: not after its claim", vc.name, got, mine+1)
		}
		r.want++
		for r.l.recv.Load() == x {
			r.recv(1)
		}
		if st := r.growAt(r.c.s.Load() + uint64(r.l.max)); st == x {
			t.Fatalf("%s: a growth reused the store of a receive under way", vc.name)
		}
		res := goOn()
		if res.err != nil || res.v != mine {
			t.Fatalf("%s: got %d, %v; want %d", vc.name, res.v, res.err, mine)
		}
		r.recv(r.c.Len())
		if err := r.c.rb.checkInvariants(); err != nil {
			t.Fatalf("%s: %v", vc.name, err)
		}
	}
}

// TestRingUnboundedGrowth fills an unbounded ring in bursts from one
// goroutine and drains it, checking the list after every step: stores
// double from ringListFirst slots to ringListCap and stay there, a store
// ends only full, values come out in order, and once drained the receive
// store is the send store (nothing older is reachable from the channel).
// Then a queue that stays within the last store moves 1000 values per run
// with no allocation, where one that keeps outgrowing it allocates.
func TestRingUnboundedGrowth(t *testing.T) {
	c := newRing[int](Unbounded)
	l := c.rb.unbounded
	next, want := 0, 0
	check := func(what string) {
		t.Helper()
		if err := c.rb.checkInvariants(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for _, burst := range []int{1, ringListFirst, ringListFirst + 1, 5 * ringListCap, 3, 2 * ringListCap} {
		for range burst {
			if err := c.TrySend(next); err != nil {
				t.Fatalf("TrySend of %d: %v", next, err)
			}
			next++
			check(fmt.Sprintf("after sending %d", next))
		}
		if got := c.Len(); got != next-want {
			t.Fatalf("Len() = %d after %d sent and %d received", got, next, want)
		}
		for want < next {
			v, err := c.TryRecv()
			if err != nil || v != want {
				t.Fatalf("TryRecv = %d, %v; want %d", v, err, want)
			}
			want++
			check(fmt.Sprintf("after receiving %d", want))
		}
		if _, err := c.TryRecv(); err != ErrEmpty {
			t.Fatalf("TryRecv of a drained channel: %v, want ErrEmpty", err)
		}
		if l.recv.Load() != l.send.Load() {
			t.Fatalf("drained after a burst of %d: the receive store (from %d) is not the send store (from %d)", burst, l.recv.Load().start.Load(), l.send.Load().start.Load())
		}
	}
	if n := l.send.Load().n; n != ringListMax(unsafe.Sizeof(0)) || n != ringListCap {
		t.Fatalf("last store of %d slots after bursts past %d, want %d", n, ringListCap, ringListCap)
	}

	if raceOn {
		return // the race detector's own allocations would be counted
	}
	steady := testing.AllocsPerRun(20, func() {
		for i := range 1000 {
			c.TrySend(i)
			c.TrySend(i)
			c.TryRecv()
			c.TryRecv()
		}
	})
	if steady != 0 {
		t.Fatalf("a queue of at most 2 values: %v allocations per 1000 values, want 0", steady)
	}
	var held []int
	growing := testing.AllocsPerRun(20, func() {
		for i := range 1000 {
			c.TrySend(i)
			c.TrySend(i)
			v, _ := c.TryRecv()
			held = append(held[:0], v)
		}
	})
	if growing == 0 {
		t.Fatalf("a queue growing by 1000 values per run allocated nothing: the measure does not see allocations")
	}

	// A queue that grows past several stores and drains, again and again,
	// reuses the stores it left behind. The pool that keeps them is
	// emptied by the garbage collector, which may run during a measure:
	// the best of three must be 0.
	for c.Len() > 0 {
		c.TryRecv()
	}
	cycle := func() {
		for i := range 4 * ringListCap {
			c.TrySend(i)
		}
		for range 4 * ringListCap {
			c.TryRecv()
		}
	}
	cycling := math.Inf(1)
	for range 3 {
		cycling = min(cycling, testing.AllocsPerRun(10, cycle))
	}
	if cycling != 0 {
		t.Fatalf("a queue growing to %d values and drained: %v allocations per round, want 0", 4*ringListCap, cycling)
	}
}

// TestRingUnboundedDuringGrowth stops a send on an unbounded ring inside
// its growth, after it has linked the new store and made it the send
// store but before it clears growBit, and checks what other calls see
// meanwhile: Len counts the grower's value (its send took effect at its
// claim), receives take every value in order, including the grower's, then
// report empty; a TrySelect over a receive finds nothing ready and returns
// (reading growBit as values made it spin until the grower went on);
// Close takes effect, and the grower's send still succeeds.
func TestRingUnboundedDuringGrowth(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the perturbed build (-tags chans_perturb), whose points take a hook")
	}
	c := newRing[int](Unbounded)
	l := c.rb.unbounded
	first := l.send.Load()
	n := int(first.n)
	for i := range n {
		c.Send(i)
	}
	stalled, resume := make(chan struct{}), make(chan struct{})
	var fired atomic.Bool
	sched.SetHook(func() {
		if c.s.Load()&growBit != 0 && l.send.Load() != first && fired.CompareAndSwap(false, true) {
			close(stalled)
			<-resume
		}
	})
	sent := make(chan error)
	go func() { sent <- c.TrySend(n) }()
	<-stalled
	sched.SetHook(nil)

	if got := c.Len(); got != n+1 {
		t.Fatalf("Len() = %d during the growth, want %d", got, n+1)
	}
	for want := 0; want <= n; want++ {
		if v, err := c.TryRecv(); err != nil || v != want {
			t.Fatalf("TryRecv = %d, %v during the growth; want %d", v, err, want)
		}
	}
	if _, err := c.TryRecv(); err != ErrEmpty {
		t.Fatalf("TryRecv of the drained channel during the growth: %v, want ErrEmpty", err)
	}
	if got := c.Len(); got != 0 {
		t.Fatalf("Len() = %d, drained, during the growth", got)
	}
	if j, ok := TrySelect(OnRecv(c, nil)); ok {
		t.Fatalf("TrySelect over a receive of the drained channel = %d, %v; want -1, false", j, ok)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close during the growth: %v", err)
	}
	if _, err := c.TryRecv(); err != ErrClosed {
		t.Fatalf("TryRecv after Close, drained: %v, want ErrClosed", err)
	}
	closedSeen := false
	if j, ok := TrySelect(OnRecv(c, func(_ int, ok bool) { closedSeen = !ok })); j != 0 || !ok || !closedSeen {
		t.Fatalf("TrySelect over a receive of the closed channel = %d, %v (closed seen %v); want 0, true, true", j, ok, closedSeen)
	}
	close(resume)
	if err := <-sent; err != nil {
		t.Fatalf("the grower's TrySend: %v (it took effect before Close)", err)
	}
	if err := c.rb.checkInvariants(); err != nil {
		t.Fatal(err)
	}
	if err := c.TrySend(0); err != ErrClosed {
		t.Fatalf("TrySend after Close: %v", err)
	}
}

// TestRingSlot checks slot against the definition (slot p mod n, free
// mark 2·(p / n) modulo 256) for every store size up to 70, powers of two
// (a shift and a mask) and the others (a division) alike, at positions
// around lap boundaries, the mark's wrap, and far into the stream.
func TestRingSlot(t *testing.T) {
	for n := uint64(1); n <= 70; n++ {
		st := newRingStore[int](int(n))
		for _, base := range []uint64{0, 127 * n, 128 * n, 255 * n, 256 * n, 1 << 40, 1<<62 - 3*n} {
			for p := base; p < base+3*n+2; p++ {
				i, free := st.slot(p)
				if wi, wf := p%n, uint8(2*(p/n)); i != wi || free != wf {
					t.Fatalf("n=%d: slot(%d) = %d, %d; want %d, %d", n, p, i, free, wi, wf)
				}
			}
		}
	}
}
